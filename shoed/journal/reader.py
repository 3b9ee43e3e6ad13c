"""Reading a journal back: records in order across files, and proof that none was altered.

`verify` checks every hash and every link, file to file, and names the first
record that is not intact. `iter_records` yields the records of intact files
and raises JournalCorrupt where the chain breaks, after yielding everything
before it: what verifies can still be shown while the table is in an error
state (table-game-standards.md items 1 and 18).

A directory may hold the journals of several tables; each table's files are
one chain, ordered by the file number in their names.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import cast

from shoed.journal import chain as ch
from shoed.journal.recall import recall
from shoed.journal.seal import Keys, SealError, SealState, as_keys
from shoed.files import TooLarge, what_is_at
from shoed.journal.store import (MARK_KIND, BadRecord, Journal, NotRegular, mark_fault, mark_mac, mark_name,
                                 read_regular, seal_name, unreadable, verified_as)


class JournalUnreadable(OSError):
    """A journal file or directory that is there but cannot be read (no permission, an I/O error):
    no verdict on the journal can be given. Its message is one line that names the path."""

    def __str__(self) -> str:
        return f"cannot read the journal at {self.filename}: {self.strerror}"


def _unreadable(exc: OSError, path: str | os.PathLike) -> JournalUnreadable:
    return JournalUnreadable(exc.errno, exc.strerror or str(exc), str(exc.filename or path))


class JournalCorrupt(Exception):
    """Reading reached a record that is not intact; everything before it was yielded."""

    def __init__(self, bad: BadRecord):
        super().__init__(f"journal not intact at {bad}")
        self.bad = bad


@dataclass(slots=True)
class VerifyReport:
    ok: bool
    records: int  # intact records before the first bad one (all of them when ok)
    files: int
    first_bad: BadRecord | None = None
    heads: dict[str, str] = field(default_factory=dict)  # per table: the last intact hash
    anchors: dict[str, str] = field(default_factory=dict)  # per table: what the oldest file kept chains to
    notes: list[str] = field(default_factory=list)
    # per table: where its chain ends (file, file_seq, jseq, hash, last event seq): what a witness compares
    tails: dict[str, dict] = field(default_factory=dict)
    sealed: bool = False  # every file checked with a forward-secure verification key
    # per table: the torn write its last file ends with (TornTail.to_json), not counted in records
    torn: dict[str, dict] = field(default_factory=dict)

    @property
    def head(self) -> str | None:
        """The chain head of the (last) table: compare it with the head kept elsewhere."""
        return next(reversed(self.heads.values()), None)

    def to_json(self) -> dict:
        return {
            "ok": self.ok,
            "records": self.records,
            "files": self.files,
            "first_bad": self.first_bad.to_json() if self.first_bad else None,
            "head": self.head,
            "heads": self.heads,
            "anchors": self.anchors,
            "notes": self.notes,
            "tails": self.tails,
            "sealed": self.sealed,
            "torn": self.torn,
        }

    def fail(self, bad: BadRecord) -> None:
        """Record a fault found by a check after the chain (the first one found is kept)."""
        if self.ok:
            self.ok, self.first_bad = False, bad


@dataclass(frozen=True, slots=True)
class JournalFiles:
    """The files at a path: one chain per table, plus .jsonl files not named like
    journal files (a directory must not hide any)."""

    tables: list[list[tuple[Path, ch.FileName | None]]]
    strays: list[Path]

    @property
    def count(self) -> int:
        return sum(len(files) for files in self.tables)


def journal_files(path: str | os.PathLike) -> JournalFiles:
    """A single file (taken whatever its name), or a directory's journal files
    grouped by table in chain order. Raises FileNotFoundError for a missing path,
    JournalUnreadable for one that cannot be looked at or a directory that cannot be listed."""
    path = Path(path)
    try:
        kind = what_is_at(path)
    except OSError as exc:  # a folder on the way this user may not enter
        raise _unreadable(exc, path) from None
    if kind == "file":
        return JournalFiles([[(path, None)]], [])
    if kind != "folder":
        raise FileNotFoundError(f"no journal at {path}")
    tables: dict[str, list[tuple[Path, ch.FileName | None]]] = {}
    strays = []
    try:
        entries = sorted(os.scandir(path), key=lambda e: e.name)
    except FileNotFoundError:
        raise FileNotFoundError(f"no journal at {path}") from None
    except OSError as exc:
        raise _unreadable(exc, path) from None
    for entry in entries:
        if not entry.name.endswith(".jsonl"):
            continue  # torn-tail evidence, unfinished files, anything else
        parsed = ch.parse_file_name(entry.name)
        if parsed is None:
            strays.append(Path(entry.path))
        else:
            tables.setdefault(parsed.table, []).append((Path(entry.path), parsed))
    chains = [sorted(files, key=lambda f: f[1].file_seq if f[1] else 0) for _, files in sorted(tables.items())]
    return JournalFiles(chains, strays)


@dataclass(frozen=True, slots=True)
class TornTail:
    """A table's last file ending in a torn write (ch.torn_tail, the rule start-up cuts by): a
    last line without its newline, past the verified mark, never acknowledged. Not corruption:
    the daemon cuts it at its next start and keeps it as `<file>.torn-<offset>`."""

    file: str
    line: int
    jseq: int | None
    offset: int  # where the torn line begins: the file's intact records end here
    bytes: int  # the torn line's length
    sha256: str  # of the torn bytes (what `<file>.torn-<offset>` will hold)
    reason: str  # why the line does not read as a record

    def to_json(self) -> dict:
        return {"file": self.file, "line": self.line, "jseq": self.jseq, "offset": self.offset,
                "bytes": self.bytes, "sha256": self.sha256, "reason": self.reason}

    def describe(self) -> str:
        name = Path(self.file).name
        return (f"the last line of {name} (line {self.line}, {self.bytes} bytes from byte {self.offset}) has no "
                "newline: a write cut by a stop (a crash or power cut), never acknowledged, as start-up takes it; "
                f"the daemon cuts it at its next start and keeps it as evidence ({name}.torn-{self.offset}). "
                "The records before it are intact. Records cut from the end look the same: only the witness "
                "(verify --witness) tells them apart")


def verified_offset(raw: bytes | None | OSError, file: str) -> int:
    """How far into the file named `file` the verified mark (as read_marks read it) says it was
    verified: its offset where the mark names this file, else 0. A mark that cannot be read
    covers nothing here; check_mark says what is wrong with it."""
    try:
        mark = json.loads(raw) if isinstance(raw, bytes) else None
    except (ValueError, UnicodeDecodeError, RecursionError):
        return 0
    if not isinstance(mark, dict) or mark.get("file") != file:
        return 0
    offset = mark.get("offset")
    return offset if type(offset) is int and offset > 0 else 0


def torn_limits(tables: list[list[tuple[Path, ch.FileName | None]]],
                marks: dict[str, bytes | None | OSError]) -> dict[str, int]:
    """Per table: the verified mark's offset in its last file, from which that file may end in a
    torn write (`_walk`'s `torn_from`). Only the files of a directory (named, with their marks)."""
    limits: dict[str, int] = {}
    for files in tables:
        path, name = files[-1]
        if name is not None:
            limits[name.table] = verified_offset(marks.get(name.table), path.name)
    return limits


def file_records(
    path: Path, name: ch.FileName | None, secret: bytes | Keys | None, *, links_if_keyed: bool = False,
    steps: bool = False, torn_from: int | None = None,
) -> Iterator[dict | ch.StepLine | BadRecord | TornTail]:
    """One file on its own: yield its intact records in order; a BadRecord at the first
    that is not (or at a header that does not match the file's name), then stop.
    How it joins the file before it is `seam_fault`'s to say. With `steps`, step records
    come as StepLines, their events unparsed (a replay compares their bytes: ch.chain).
    `torn_from`, for a table's last file only: the verified mark's offset in it (0: none); a
    first bad record that is a torn write there (ch.torn_tail) comes as a TornTail instead."""
    first = True
    try:
        data = read_regular(path)
    except (NotRegular, TooLarge) as exc:
        yield BadRecord(str(path), 0, None, unreadable(exc), 0)
        return
    except FileNotFoundError:
        if os.path.islink(path):  # named like a journal file, a link that leads to no file: not the journal's
            yield BadRecord(str(path), 0, None, f"a symbolic link to {os.readlink(path)!r}, which leads to no file", 0)
            return
        raise
    except OSError as exc:  # there, but not to be read by this user: no verdict, not a bad record
        raise _unreadable(exc, path) from None
    for item in ch.chain(data, prev=None, secret=secret, links_if_keyed=links_if_keyed, steps=steps):
        if isinstance(item, ch.Bad):
            if torn_from is not None and ch.torn_tail(data, item, torn_from):
                tail = data[item.offset:]
                yield TornTail(str(path), item.line, item.jseq, item.offset, len(tail),
                               hashlib.sha256(tail).hexdigest(), item.reason)
            else:
                yield BadRecord(str(path), item.line, item.jseq, item.reason, item.offset)
            return
        if first:
            first = False
            # Line 1 is a header, a dict (ch.chain gives StepLines only after it).
            reason = ch.check_header(cast(dict, item), name=name, previous=None)
            if reason is not None:
                yield BadRecord(str(path), 1, 1, reason, 0)
                return
        yield item


@dataclass(frozen=True, slots=True)
class FileEnd:
    """What the next file of a chain must join: the file's name, number and last hash."""

    name: str
    file_seq: int
    hash: str


def seam_fault(path: Path, header: dict, before: FileEnd | None) -> BadRecord | None:
    """Does the file whose header (line 1) this is follow the file that ended as `before`?
    The oldest file of a table (before None) chains to what it claims."""
    if before is None:
        return None
    if header["prev"] != before.hash:
        return BadRecord(str(path), 1, 1, "prev does not link to the last record of the previous file", 0)
    reason = ch.check_header(header, name=None, previous=(before.name, before.file_seq))
    return BadRecord(str(path), 1, 1, reason, 0) if reason is not None else None


def _walk(
    tables: list[list[tuple[Path, ch.FileName | None]]], secret: bytes | Keys | None, *, links_if_keyed: bool = False,
    torn_from: dict[str, int] | None = None,
) -> Iterator[tuple[Path, dict] | BadRecord | TornTail]:
    """Yield (file, record) for every intact record; a BadRecord at the first that
    is not, then stop. The oldest file of each table chains to what it claims.
    `torn_from` (torn_limits): a table's last file that ends in a torn write yields a
    TornTail there, and the walk goes on with the next table."""
    secret = as_keys(secret)  # one ratchet for all the files, walked forward
    for files in tables:
        before: FileEnd | None = None
        for index, (path, name) in enumerate(files):
            header: dict | None = None
            last: dict | None = None
            limit = (torn_from.get(name.table) if torn_from is not None and name is not None
                     and index == len(files) - 1 else None)
            for record in file_records(path, name, secret, links_if_keyed=links_if_keyed, torn_from=limit):
                if isinstance(record, BadRecord):
                    yield record
                    return
                if isinstance(record, TornTail):
                    yield record
                    break
                item = cast(dict, record)  # without `steps`, every record is a dict
                if header is None:
                    header = item
                    fault = seam_fault(path, header, before)
                    if fault is not None:
                        yield fault
                        return
                last = item
                yield path, item
            if header is not None and last is not None:
                before = FileEnd(path.name, header["file_seq"], last["hash"])


def verify(path: str | os.PathLike, secret: bytes | Keys | None = None,
           records: list[dict] | None = None) -> VerifyReport:
    """Check every hash and every link of the journal at path (a file or a directory),
    the continuity of the events' seq, and with a verification key the sealing state
    and the verified mark beside the files. `records`, where given, gets each record read
    (as iter_records gives them), for a reader that shows the journal once it is proved."""
    keys = as_keys(secret)
    found = journal_files(path)
    marks = read_marks(Path(path), found.tables) if Path(path).is_dir() else None
    if marks is not None:  # listed again after the marks: a shoe file opened meanwhile is read too
        found = journal_files(path)
    report = VerifyReport(ok=True, records=0, files=found.count + len(found.strays))
    if found.strays:
        report.ok = False
        report.first_bad = BadRecord(
            str(found.strays[0]), 0, None, "not named like a journal file (<table>-<nnnnnn>-<UTC>-<shoe>.jsonl)"
        )
        return report
    seen_table: dict[Path, str] = {}
    seqs: dict[str, SeqContinuity] = {}
    all_sealed = True
    unkeyed: set[str] = set()
    torn_from = torn_limits(found.tables, marks) if marks is not None else None
    for item in _walk(found.tables, keys, torn_from=torn_from):
        if isinstance(item, BadRecord):
            report.ok = False
            report.first_bad = item
            break
        if isinstance(item, TornTail):
            torn_table = seen_table.get(Path(item.file), "?")
            report.torn[torn_table] = item.to_json()
            report.notes.append(f"table {torn_table}: {item.describe()}")
            continue
        file, rec = item
        table = seen_table.get(file)
        if table is None:
            table = seen_table[file] = rec.get("table", "?")
            all_sealed = all_sealed and rec.get("alg") == ch.ALG_FSS
            if rec.get("alg") == ch.ALG_SHA256:
                unkeyed.add(table)
            if table not in report.anchors:
                report.anchors[table] = rec["prev"]
                if rec.get("file_seq") != 1:
                    report.notes.append(
                        f"table {table}: the oldest file kept is number {rec.get('file_seq')}; "
                        f"the chain is proved from {rec['prev']}, not from the genesis value"
                    )
            report.tails[table] = {"file": file.name, "file_seq": rec.get("file_seq"), "jseq": 0, "hash": None,
                                   "seq": None}
        report.records += 1
        if records is not None:
            records.append(rec)
        report.heads[table] = rec["hash"]
        tail = report.tails[table]
        tail["jseq"], tail["hash"] = rec["jseq"], rec["hash"]
        fault = seqs.setdefault(table, SeqContinuity()).feed(rec)
        if fault is not None:
            report.fail(BadRecord(str(file), rec["jseq"], rec["jseq"], fault))
        tail["seq"] = seqs[table].last
    report.sealed = bool(report.tails) and all_sealed and keys.verify_key is not None
    if report.ok and keys.verify_key is not None and Path(path).is_dir():
        for table, tail in report.tails.items():
            check_sealing_state(Path(path), table, tail, keys, report, marks)
    elif report.ok and not all_sealed and Path(path).is_dir():
        for table, tail in report.tails.items():
            check_mark(Path(path), table, tail, keys, report, sealed=False, marks=marks)
    if report.ok:  # what "intact" proves, said where it is less than a reader may take it for
        for table in sorted(unkeyed):
            report.notes.append(f"table {table}: an unkeyed journal (sha256) is proved against accidents only: "
                                "whoever can write its files can seal the chain again and this check cannot "
                                "tell; a keyed or sealed journal, or the witness (--witness), can")
        if report.sealed:
            for table, tail in report.tails.items():
                report.notes.append(f"table {table}: the last file ({tail['file']}) is sealed with the key the box "
                                    "still holds: a change to it by whoever holds the box is found by the witness "
                                    "only (--witness)")
    return report


class SeqContinuity:
    """Every event's seq is one more than the one before it, across files; a file's
    checkpoint carries on from where the file before it ended. A seq used twice (a
    journal cut back and dealt on, or records re-hashed) or skipped is a fault."""

    def __init__(self) -> None:
        self.last: int | None = None

    def feed(self, rec: dict) -> str | None:
        kind = rec.get("kind")
        if kind == "checkpoint":
            state = rec.get("state")
            seq = state.get("seq") if isinstance(state, dict) else None
            if isinstance(seq, int) and not isinstance(seq, bool):
                if self.last is not None and seq != self.last:
                    return f"the checkpoint carries on from seq {seq}, the journal before it ended at {self.last}"
                self.last = seq
            return None
        if kind != "step" or not isinstance(rec.get("events"), list):
            return None
        for event in rec["events"]:
            seq = event.get("seq") if isinstance(event, dict) else None
            if not isinstance(seq, int) or isinstance(seq, bool) or seq < 0:
                # every event the table journals has its seq: one without is none of its events
                shown = type(seq).__name__ if isinstance(seq, str | dict | list) else repr(seq)
                where = f" after seq {self.last}" if self.last is not None else ""
                return f"an event whose seq is {shown}, not a non-negative int{where}"
            if self.last is not None and seq != self.last + 1:
                what = "reused" if seq <= self.last else "skipped"
                fault = f"event seq {seq} follows {self.last}: seq {what}"
                self.last = seq
                return fault
            self.last = seq
        return None


def check_sealing_state(directory: Path, table: str, tail: dict, keys: Keys, report: VerifyReport,
                        marks: dict[str, bytes | None | OSError] | None = None) -> None:
    """With the verification key: the box's sealing state must be at the epoch of the last
    file (its epoch can only move forward, so files removed from the end show), and the
    verified mark must be authentic and not beyond the end of the journal."""
    seal_path = directory / seal_name(table)
    last_file = directory / tail["file"]
    try:
        state = SealState.from_bytes(read_regular(seal_path), str(seal_path))
    except FileNotFoundError:
        report.notes.append(f"table {table}: no sealing state ({seal_path.name}) here: files removed from the "
                            "end cannot be ruled out by this check (the witness can)")
        state = None
    except (SealError, OSError) as exc:
        report.fail(BadRecord(str(seal_path), 0, None, str(exc)))
        return
    if state is not None:
        if state.key_id != keys.key_id or state.key != keys.epoch_key(state.epoch):
            report.fail(BadRecord(str(seal_path), 0, None, "the sealing state is not of this verification key"))
            return
        if state.epoch > tail["file_seq"]:
            report.fail(BadRecord(str(last_file), 0, None, f"the sealing key is at epoch {state.epoch}, the journal "
                                  f"ends with file {tail['file_seq']}: shoe files were removed from the end"))
            return
    check_mark(directory, table, tail, keys, report, sealed=True, marks=marks)


def read_marks(directory: Path, tables: list) -> dict[str, bytes | None | OSError]:
    """Each table's verified mark as it is now (None: there is none), read before its files are (and
    before they are listed again): a daemon writing the journal meanwhile can only have moved the
    journal on past the mark read."""
    marks: dict[str, bytes | None | OSError] = {}
    for files in tables:
        name = files[0][1] if files else None
        if name is None:
            continue
        try:
            marks[name.table] = read_regular(directory / mark_name(name.table))
        except FileNotFoundError:
            marks[name.table] = None
        except OSError as exc:
            marks[name.table] = exc
    return marks


def check_mark(directory: Path, table: str, tail: dict, keys: Keys, report: VerifyReport, *, sealed: bool,
               marks: dict[str, bytes | None | OSError] | None = None, authenticate: bool = True,
               finished: bool = True) -> None:
    """The verified mark beside the files, where there is one: authentic (under the epoch's key
    for a sealed journal, the secret or none for another) and not beyond the end of the journal,
    as start-up holds it (records the mark covers that are gone were acknowledged). `marks`: the
    marks read before the files (`read_marks`). Without the key its MAC needs (`authenticate`
    false), only its form and its reach are checked. With `finished`, the finished files it lists must be the
    bytes it verified (changed_since_verified; recall, which reads the newest files only, notes them instead)."""
    mark_path = directory / mark_name(table)
    try:
        raw = marks[table] if marks is not None and table in marks else read_regular(mark_path)
        if raw is None:
            raise FileNotFoundError(mark_path)
        if isinstance(raw, OSError):
            raise raw
        mark = json.loads(raw)
    except FileNotFoundError:
        report.notes.append(f"table {table}: no verified mark ({mark_path.name}) here: records cut from the end "
                            "since the table's last start cannot be ruled out by this check (the witness can)")
        return
    except (OSError, ValueError, UnicodeDecodeError, RecursionError):
        report.fail(BadRecord(str(mark_path), 0, None, "the verified mark is not readable"))
        return
    epoch = mark.get("epoch") if isinstance(mark, dict) else None
    try:
        key = keys.epoch_key(epoch) if sealed and isinstance(epoch, int) else keys.secret
    except SealError as exc:
        report.fail(BadRecord(str(mark_path), 0, None, f"the verified mark is not authentic ({exc})"))
        return
    if (not isinstance(mark, dict) or (sealed and not isinstance(epoch, int)) or mark.get("kind") != MARK_KIND
            or mark.get("table") != table or (authenticate and mark_mac(mark, key) != mark.get("mac"))):
        report.fail(BadRecord(str(mark_path), 0, None, "the verified mark is not authentic"))
        return
    fault = mark_fault(mark)
    if fault is not None:
        report.fail(BadRecord(str(mark_path), 0, None, f"the verified mark is not of the form written: {fault}"))
        return
    if mark.get("file_seq", 0) > tail["file_seq"] or (
        mark.get("file_seq") == tail["file_seq"] and mark.get("jseq", 0) > tail["jseq"]
    ):
        report.fail(BadRecord(str(directory / str(mark.get("file"))), mark.get("jseq", 0), mark.get("jseq"),
                              f"verified up to file {mark.get('file_seq')} jseq {mark.get('jseq')}, the journal "
                              f"ends at file {tail['file_seq']} jseq {tail['jseq']}: records were removed"))
        return
    changed = changed_since_verified(directory, table, mark) if finished else None
    if changed is not None:
        report.fail(changed)


def changed_since_verified(directory: Path, table: str, mark: dict) -> BadRecord | None:
    """The first finished file the verified mark lists whose bytes are not those the box verified (its name,
    size and SHA-256, as start-up holds them): a file sealed again whole, its chain intact, is caught so, as
    start-up catches it. A file the mark lists that is not here (archived) is the files' own check's to say."""
    for entry in mark.get("files", []):
        seq, name, size = entry[0], entry[1], entry[2]
        found = sorted(directory.glob(f"{table}-{seq:06d}-*.jsonl"))
        if not found:
            continue
        path = found[0]
        try:
            data = read_regular(path)
        except OSError:
            continue  # not a regular file, or not to be read: the files' own check says so
        if not verified_as(entry, path.name, data):
            return BadRecord(str(path), 0, None, f"not the file verified as number {seq} ({name}, {size} bytes): "
                                                 "its bytes changed since the box verified it")
    return None


def iter_records(path: str | os.PathLike, secret: bytes | Keys | None = None, *,
                 torn: bool = False) -> Iterator[dict]:
    """The records of the journal at path, in order across files. Raises
    JournalCorrupt at the first record that is not intact. With `torn`, a directory's
    table whose last file ends in a torn write (as `verify` tells it) ends there quietly."""
    tables = journal_files(path).tables
    torn_from = None
    if torn and Path(path).is_dir():
        marks = read_marks(Path(path), tables)
        tables = journal_files(path).tables
        torn_from = torn_limits(tables, marks)
    for item in _walk(tables, secret, torn_from=torn_from):
        if isinstance(item, BadRecord):
            raise JournalCorrupt(item)
        if isinstance(item, TornTail):
            continue
        yield item[1]


@dataclass(slots=True)
class Reading:
    """Records read for display, and where reading stopped if the chain broke."""

    records: list[dict]
    stopped_at: BadRecord | None
    notes: list[str]
    tail: dict | None = None  # where the records read end: table, alg, file, file_seq, jseq
    torn: TornTail | None = None  # the torn write the last file ends with, not shown (a note says so)


def read_recent(path: str | os.PathLike, coups: int, secret: bytes | None = None, table: str | None = None) -> Reading:
    """Read the newest part of one table's journal for recall, up to the first
    record that is not intact. Without the secret of a keyed journal, the
    links and the form are checked but the hashes cannot be."""
    tables = journal_files(path).tables
    # The marks are read before the files, as verify reads them (and the files listed again after
    # them): a daemon writing meanwhile can only have moved the journal on past them.
    marks = read_marks(Path(path), tables) if Path(path).is_dir() else None
    if marks is not None:
        tables = journal_files(path).tables
    if table is not None:
        tables = [files for files in tables if files[0][1] is not None and files[0][1].table == table]
        if not tables:
            raise FileNotFoundError(f"no journal of table {table!r} at {path}")
    elif len(tables) > 1:
        names = ", ".join(files[0][1].table for files in tables if files[0][1] is not None)
        raise ValueError(f"journals of several tables here ({names}): name one")
    if not tables:
        return Reading([], None, [f"no journal files at {path}"])
    # Only the newest files are read: one, then twice as many, until they
    # hold the coups asked for (a journal may hold months of shoes).
    files = tables[0]
    take = 1
    while True:
        reading = _read(files[-take:], secret, torn_limits([files], marks) if marks is not None else None)
        if take >= len(files) or len(recall(reading.records, coups)) >= coups:
            reading = _held_to_the_mark(reading, Path(path), marks, secret)
            _changed_since_verified(reading, files[:-take], marks)
            return reading
        take = min(len(files), take * 2)


def _written_since(entry: list, path: Path) -> bool:
    """The file is not the one the mark verified: not even its inode and times (a copy's differ) and,
    read then, not its size and SHA-256 either."""
    if Journal._unchanged(entry, path):
        return False
    try:
        data = read_regular(path)
    except OSError:
        return True
    return len(data) != entry[2] or hashlib.sha256(data).hexdigest() != entry[3]


def _changed_since_verified(reading: Reading, unread: list[tuple[Path, ch.FileName | None]],
                            marks: dict[str, bytes | None | OSError] | None) -> None:
    """The older files recall does not read, against what the verified mark holds of each (size,
    inode, mtime and ctime, as start-up compares them): one written since is named in a note."""
    if reading.stopped_at is not None or not unread or marks is None or unread[0][1] is None:
        return
    raw = marks.get(unread[0][1].table)
    try:
        mark = json.loads(raw) if isinstance(raw, bytes) else None
    except (ValueError, UnicodeDecodeError, RecursionError):
        return
    if not isinstance(mark, dict) or mark_fault(mark) is not None:
        return
    covered = {entry[0]: entry for entry in mark["files"]}
    changed = [path.name for path, name in unread
               if name is not None and name.file_seq in covered and _written_since(covered[name.file_seq], path)]
    if changed:
        reading.notes.append(f"{len(changed)} older file(s) not read here were written since they were verified "
                             f"(the first {changed[0]}): run `shoed journal verify` to prove the whole journal")


def _held_to_the_mark(reading: Reading, directory: Path, marks: dict[str, bytes | None | OSError] | None,
                      secret: bytes | None) -> Reading:
    """The records read end where the verified mark says the journal reaches, as verify and start-up
    hold it: records (or shoe files) cut off below the mark, or a mark that is not authentic, stop
    recall there. Its MAC is checked where recall has the key (unkeyed, or keyed with the secret);
    a sealed journal's needs the verification key (`journal verify --verify-key`)."""
    tail = reading.tail
    if reading.stopped_at is not None or tail is None or marks is None:
        return reading
    alg = tail["alg"]
    authenticate = alg == ch.ALG_SHA256 or (alg == ch.ALG_HMAC and secret is not None)
    report = VerifyReport(ok=True, records=0, files=0)
    check_mark(directory, tail["table"], tail, Keys(secret=secret if alg == ch.ALG_HMAC else None), report,
               sealed=False, marks=marks, authenticate=authenticate, finished=False)
    if not report.ok:
        reading.stopped_at = report.first_bad
    elif not authenticate and marks.get(tail["table"]) is not None:
        reading.notes.append("the verified mark read without its key: its reach checked, its MAC not")
    return reading


def _read(files: list[tuple[Path, ch.FileName | None]], secret: bytes | None,
          torn_from: dict[str, int] | None = None) -> Reading:
    records: list[dict] = []
    stopped = None
    notes: list[str] = []
    tail: dict | None = None
    torn: TornTail | None = None
    seqs = SeqContinuity()  # within what is read, as verify holds the events' seq
    for item in _walk([files], secret, links_if_keyed=True, torn_from=torn_from):
        if isinstance(item, BadRecord):
            stopped = item
            break
        if isinstance(item, TornTail):
            torn = item
            notes.append(item.describe())
            break
        path, rec = item
        fault = seqs.feed(rec)
        if fault is not None:
            stopped = BadRecord(str(path), rec["jseq"], rec["jseq"], fault)
            break
        if rec["jseq"] == 1 and rec.get("alg") == ch.ALG_HMAC and secret is None and not notes:
            notes.append("keyed journal read without its secret: links and form checked, hashes not")
        if rec["jseq"] == 1:  # the file's header
            tail = {"table": rec.get("table"), "alg": rec.get("alg"), "file": path.name,
                    "file_seq": rec.get("file_seq"), "jseq": 1}
        elif tail is not None:
            tail["jseq"] = rec["jseq"]
        records.append(rec)
    return Reading(records, stopped, notes, tail, torn)
