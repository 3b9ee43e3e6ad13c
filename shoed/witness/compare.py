"""`journal verify --witness`: does the journal on the box still hold what the witness saw?

The chain proves that no record was changed *inside* the journal; it cannot
prove that the journal was not cut short at a record boundary, that its last
files were not deleted, or that it was not replaced wholesale by another run's
journal that chains just as well. The witness kept, off the box, the heads the
table published (file, jseq, hash) and the events it received; here each is
looked up in the journal:

- a head in a file the journal no longer has: the file was deleted
  (`deleted`, or `missing` when later files are still there);
- a head past the end of its file: the file was cut short (`truncated`);
- a head whose record hashes differently: the record was changed
  (`differs`), or, when no head the witness saw is left in the journal, the
  journal was replaced (`replaced`);
- events the witness received that the journal no longer holds, or holds
  otherwise (`events_missing`, `events_differ`);
- no journal of a table the witness saw (`no_journal`);
- a table the witness holds nothing of (`unseen`: it never followed that
  table, or this is not the database it writes).

Files before the oldest file kept are gone like any other (`missing`) unless
the caller says they were archived (`archived_before`): then they are a note,
when the files kept hold heads the witness saw.

Each finding is one line per table and kind, with a count and the first
instance. The journal's own integrity is `shoed.journal.reader.verify`'s.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from shoed.files import open_regular
from shoed.journal.chain import HEAD_LINE_MAX, HEADER_KIND
from shoed.journal.store import read_regular
from shoed.journal.reader import journal_files
from shoed.journal.recall import events_of
from shoed.witness.store import SeenHead, WitnessStore

_decoder = msgspec.json.Decoder()


@dataclass(frozen=True, slots=True)
class Finding:
    table: str
    kind: str  # deleted, missing, truncated, differs, replaced, no_journal, unseen, events_missing, events_differ
    text: str
    count: int = 1

    def to_json(self) -> dict:
        return {"table": self.table, "kind": self.kind, "text": self.text, "count": self.count}

    def __str__(self) -> str:
        return f"table {self.table}: {self.text}"


@dataclass(slots=True)
class WitnessReport:
    url: str
    tables: list[str] = field(default_factory=list)
    heads: int = 0  # heads looked up
    events: int = 0  # events looked up
    findings: list[Finding] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # what could not be checked, and why

    @property
    def ok(self) -> bool:
        return not self.findings

    def to_json(self) -> dict:
        return {"url": self.url, "ok": self.ok, "tables": self.tables, "heads": self.heads, "events": self.events,
                "findings": [f.to_json() for f in self.findings], "notes": self.notes}


@dataclass(slots=True)
class JournalFile:
    name: str
    hashes: list[str | None]  # by jseq - 1; None for a line that does not parse
    events: list[dict]


def _header(path: Path) -> tuple[str, int] | None:
    """(table, file number) from a file's first line; None when it cannot be read."""
    try:
        with open_regular(path) as f:  # a FIFO named like a journal file must not stall the comparison
            record = _decoder.decode(f.readline(HEAD_LINE_MAX))
    except (OSError, msgspec.DecodeError, UnicodeDecodeError, RecursionError):
        return None
    if not isinstance(record, dict) or record.get("kind") != HEADER_KIND:
        return None
    table, number = record.get("table"), record.get("file_seq")
    if not isinstance(table, str) or not isinstance(number, int) or isinstance(number, bool):
        return None
    return table, number


def read_file(path: Path) -> JournalFile:
    """A file's hashes and events from its lines as they are. A final line without its newline is
    not a record yet."""
    lines = read_regular(path).split(b"\n")
    lines.pop()  # after the last newline: empty, or a torn tail
    hashes: list[str | None] = []
    events: list[dict] = []
    for line in lines:
        try:
            record = _decoder.decode(line)
        except (msgspec.DecodeError, UnicodeDecodeError, RecursionError):
            record = None
        if not isinstance(record, dict):
            hashes.append(None)
            continue
        digest = record.get("hash")
        hashes.append(digest if isinstance(digest, str) else None)
        if record.get("kind") == "step":
            events.extend(e for e in events_of(record) if isinstance(e.get("seq"), int))
    return JournalFile(path.name, hashes, events)


def journal_tables(path: str | os.PathLike) -> dict[str, list[tuple[int, Path]]]:
    """Each table's files at `path` (a directory or one file), by file number, from their headers.
    A file without a readable header is left to the chain's verification to name."""
    tables: dict[str, list[tuple[int, Path]]] = {}
    for chain in journal_files(path).tables:
        for file, _ in chain:
            header = _header(file)
            if header is not None:
                tables.setdefault(header[0], []).append((header[1], file))
    return {t: sorted(files) for t, files in tables.items()}


def _short(digest: str | None) -> str:
    return (digest or "none")[:16]


@dataclass(slots=True)
class _Tally:
    """How many, and the first one, of a kind of finding."""

    count: int = 0
    first: Any = None
    last: Any = None

    def add(self, item: Any) -> None:
        if self.count == 0:
            self.first = item
        self.last = item
        self.count += 1


def compare_table(
    table: str, files: list[tuple[int, Path]], store: WitnessStore, notes: list[str] | None = None,
    archived_before: int | None = None,
) -> tuple[int, int, list[Finding]]:
    """(heads looked up, events looked up, findings) for one table, a journal file at a time.
    Files numbered below `archived_before` and older than the oldest file kept (archived by a
    retention policy; the chain's verification notes it too) and their events are not looked up
    when a head the witness saw is found in the files kept: a line goes to `notes` instead.
    Without `archived_before` such files are missing like any other."""
    seen_files = store.head_files(table)
    heads = sum(seen_files.values())
    matched = 0
    differs = _Tally()
    truncated: list[tuple[int, str, int, SeenHead]] = []
    events_differ = _Tally()
    journal_seqs: set[int] = set()
    for number, path in files:
        jf = read_file(path)
        last_cut: SeenHead | None = None
        for seen in store.heads(table, number):
            jseq, digest = seen.head.jseq, seen.head.hash
            if jseq > len(jf.hashes) or jseq < 1:
                last_cut = seen
            elif jf.hashes[jseq - 1] != digest:
                differs.add((seen, jf.hashes[jseq - 1]))
            else:
                matched += 1
        if last_cut is not None:
            truncated.append((number, jf.name, len(jf.hashes), last_cut))
        by_seq = {e["seq"]: e for e in jf.events}
        journal_seqs.update(by_seq)
        if by_seq:
            for event in store.events(table, min(by_seq), max(by_seq)):
                mine = by_seq.get(event.seq)
                if mine is not None and mine != event.event:
                    events_differ.add(event.seq)
    first_kept = files[0][0] if files else None
    # Archived only if what is kept is the chain the witness saw: else they are gone like any other.
    older = [n for n in seen_files if first_kept is not None and n < first_kept
             and archived_before is not None and n < archived_before] if matched else []
    first_seq = min(journal_seqs) if older and journal_seqs else None
    missing = _Tally()
    checked = 0
    archived = 0
    for seq in store.seqs(table):
        if first_seq is not None and seq < first_seq:
            archived += 1
            continue
        checked += 1
        if seq not in journal_seqs:
            missing.add(seq)
    if older and notes is not None:
        notes.append(f"table {table}: files {min(older)}..{max(older)} are older than the oldest file kept "
                     f"({first_kept}) and archived (--archived-before {archived_before}); their "
                     f"{sum(seen_files[n] for n in older)} heads and {archived} events were not looked up")
    heads -= sum(seen_files[n] for n in older)

    out: list[Finding] = []
    if not seen_files and not checked:
        out.append(Finding(table, "unseen", "the witness holds nothing of this table: it never followed it, or "
                                            "this is not the database it writes"))
        return 0, 0, out
    present = {number for number, _ in files}
    gone = sorted(n for n in seen_files if n not in present and n not in older)
    if not files:
        if heads:
            last = store.heads(table, max(seen_files))[-1]
            out.append(Finding(table, "no_journal",
                               f"no journal here, but the witness saw {heads} heads up to file {last.head.file} "
                               f"jseq {last.head.jseq} (hash {_short(last.head.hash)}, {last.received_utc})", heads))
    elif matched == 0 and differs.count:
        seen, now = differs.first
        out.append(Finding(table, "replaced",
                           f"the journal was replaced: none of the {heads} heads the witness saw is in it "
                           f"(file {seen.head.file} jseq {seen.head.jseq}: witness {_short(seen.head.hash)}, "
                           f"journal {_short(now)})", heads))
    else:
        last_file = max(present)
        for number in gone:
            seen = store.heads(table, number)[-1]
            kind = "deleted" if number > last_file else "missing"
            where = f"the journal ends with file {last_file}" if kind == "deleted" else "later files are still there"
            out.append(Finding(table, kind,
                               f"file {number} is gone ({where}); the witness saw it up to jseq {seen.head.jseq} "
                               f"(hash {_short(seen.head.hash)}, {seen.received_utc})"))
        for number, name, length, seen in truncated:
            out.append(Finding(table, "truncated",
                               f"file {number} ({name}) ends at jseq {length}; the witness saw jseq "
                               f"{seen.head.jseq} (hash {_short(seen.head.hash)}, {seen.received_utc})"))
        if differs.count:
            seen, now = differs.first
            out.append(Finding(table, "differs",
                               f"{differs.count} records differ from what the witness saw, first file "
                               f"{seen.head.file} jseq {seen.head.jseq} (witness {_short(seen.head.hash)}, "
                               f"journal {_short(now)})", differs.count))
    if missing.count:
        end = f"events up to seq {max(journal_seqs)}" if journal_seqs else "no events"
        out.append(Finding(table, "events_missing",
                           f"{missing.count} events the witness received are not in the journal (seq "
                           f"{missing.first}..{missing.last}; the journal holds {end})", missing.count))
    if events_differ.count:
        out.append(Finding(table, "events_differ",
                           f"{events_differ.count} events differ from what the witness received (first seq "
                           f"{events_differ.first})", events_differ.count))
    return heads, checked, out


def compare(path: str | os.PathLike, store: WitnessStore, tables: list[str] | None = None,
            archived_before: int | None = None) -> WitnessReport:
    """Look up what the witness saw in the journal at `path`. Without `tables`: the tables whose
    journal is at `path`, or every table the witness knows when it knows none of those, or, when it
    knows no table at all, the journal's (each `unseen`)."""
    from shoed.witness.store import describe

    journal = journal_tables(path)
    if tables is None:
        known = store.tables()
        # None in common (a journal deleted whole, or put back under another table's name): all of them.
        tables = sorted(t for t in journal if t in known) or known or sorted(journal)
    report = WitnessReport(describe(store.url), list(tables))
    for table in tables:
        heads, events, found = compare_table(table, journal.get(table, []), store, report.notes, archived_before)
        report.heads += heads
        report.events += events
        report.findings.extend(found)
    return report
