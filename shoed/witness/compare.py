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
  otherwise (`events_missing`, `events_differ`).

Each finding is one line per table and kind, with a count and the first
instance. The journal's own integrity is `shoed.journal.reader.verify`'s.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import msgspec

from shoed.journal.chain import HEADER_KIND
from shoed.journal.reader import journal_files
from shoed.journal.recall import events_of
from shoed.witness.store import SeenHead, WitnessStore

_decoder = msgspec.json.Decoder()


@dataclass(frozen=True, slots=True)
class Finding:
    table: str
    kind: str  # deleted, missing, truncated, differs, replaced, no_journal, events_missing, events_differ
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

    @property
    def ok(self) -> bool:
        return not self.findings

    def to_json(self) -> dict:
        return {"url": self.url, "ok": self.ok, "tables": self.tables, "heads": self.heads, "events": self.events,
                "findings": [f.to_json() for f in self.findings]}


@dataclass(slots=True)
class JournalFile:
    name: str
    hashes: list[str | None]  # by jseq - 1; None for a line that does not parse


def _read_file(path: Path) -> tuple[str | None, int | None, JournalFile, list[dict]]:
    """(table, file number, the file's hashes, its events) from the lines as they are.
    A final line without its newline is not a record yet."""
    data = path.read_bytes()
    lines = data.split(b"\n")
    lines.pop()  # after the last newline: empty, or a torn tail
    table = file_seq = None
    hashes: list[str | None] = []
    events: list[dict] = []
    for i, line in enumerate(lines):
        try:
            record = _decoder.decode(line)
        except (msgspec.DecodeError, UnicodeDecodeError, RecursionError):
            record = None
        if not isinstance(record, dict):
            hashes.append(None)
            continue
        digest = record.get("hash")
        hashes.append(digest if isinstance(digest, str) else None)
        if i == 0 and record.get("kind") == HEADER_KIND:
            table, file_seq = record.get("table"), record.get("file_seq")
        elif record.get("kind") == "step":
            events.extend(e for e in events_of(record) if isinstance(e.get("seq"), int))
    return table, file_seq, JournalFile(path.name, hashes), events


@dataclass(slots=True)
class TableJournal:
    files: dict[int, JournalFile] = field(default_factory=dict)
    events: list[dict] = field(default_factory=list)


def read_journal(path: str | os.PathLike) -> dict[str, TableJournal]:
    """Each table's files (by number) and events, as the journal at `path` now holds them."""
    found = journal_files(path)
    tables: dict[str, TableJournal] = {}
    for chain in found.tables:
        for file, _ in chain:
            table, file_seq, hashes, events = _read_file(file)
            if not isinstance(table, str) or not isinstance(file_seq, int):
                continue  # no readable header: the chain's verification names it
            tj = tables.setdefault(table, TableJournal())
            tj.files[file_seq] = hashes
            tj.events.extend(events)
    return tables


def _short(digest: str | None) -> str:
    return (digest or "none")[:16]


def compare_heads(table: str, journal: TableJournal, heads: list[SeenHead]) -> list[Finding]:
    """The heads the witness saw, looked up in one table's journal."""
    if not heads:
        return []
    last_file = max(journal.files, default=0)
    deleted: dict[int, SeenHead] = {}  # file -> the last head seen in it
    truncated: dict[int, SeenHead] = {}
    differs: list[tuple[SeenHead, str | None]] = []
    matched = 0
    for seen in heads:
        head = seen.head
        file = journal.files.get(head.file)
        if file is None:
            if head.file not in deleted or head.jseq > deleted[head.file].head.jseq:
                deleted[head.file] = seen
        elif head.jseq > len(file.hashes):
            if head.file not in truncated or head.jseq > truncated[head.file].head.jseq:
                truncated[head.file] = seen
        elif file.hashes[head.jseq - 1] != head.hash:
            differs.append((seen, file.hashes[head.jseq - 1]))
        else:
            matched += 1
    out: list[Finding] = []
    if not journal.files:
        last = heads[-1]
        return [Finding(table, "no_journal",
                        f"no journal here, but the witness saw {len(heads)} heads up to file {last.head.file} "
                        f"jseq {last.head.jseq} (hash {_short(last.head.hash)}, {last.received_utc})", len(heads))]
    if matched == 0 and differs:
        first, now = differs[0]
        out.append(Finding(table, "replaced",
                           f"the journal was replaced: none of the {len(heads)} heads the witness saw is in it "
                           f"(file {first.head.file} jseq {first.head.jseq}: witness {_short(first.head.hash)}, "
                           f"journal {_short(now)})", len(heads)))
        return out
    for number, seen in sorted(deleted.items()):
        kind = "deleted" if number > last_file else "missing"
        where = (f"the journal ends with file {last_file}" if kind == "deleted"
                 else "later files are still there")
        out.append(Finding(table, kind,
                           f"file {number} is gone ({where}); the witness saw it up to jseq {seen.head.jseq} "
                           f"(hash {_short(seen.head.hash)}, {seen.received_utc})"))
    for number, seen in sorted(truncated.items()):
        file = journal.files[number]
        out.append(Finding(table, "truncated",
                           f"file {number} ({file.name}) ends at jseq {len(file.hashes)}; the witness saw jseq "
                           f"{seen.head.jseq} (hash {_short(seen.head.hash)}, {seen.received_utc})"))
    if differs:
        first, now = differs[0]
        out.append(Finding(table, "differs",
                           f"{len(differs)} records differ from what the witness saw, first file {first.head.file} "
                           f"jseq {first.head.jseq} (witness {_short(first.head.hash)}, journal {_short(now)})",
                           len(differs)))
    return out


def compare_events(table: str, journal: TableJournal, seen: Iterator) -> tuple[int, list[Finding]]:
    """The events the witness received (in seq order), looked up in the journal by seq."""
    by_seq = {e["seq"]: e for e in journal.events}
    last = max(by_seq, default=None)
    checked = 0
    missing: list[int] = []
    differ: list[int] = []
    for event in seen:
        checked += 1
        mine = by_seq.get(event.seq)
        if mine is None:
            missing.append(event.seq)
        elif mine != event.event:
            differ.append(event.seq)
    out = []
    if missing:
        end = "no events" if last is None else f"events up to seq {last}"
        out.append(Finding(table, "events_missing",
                           f"{len(missing)} events the witness received are not in the journal (seq {missing[0]}.."
                           f"{missing[-1]}; the journal holds {end})", len(missing)))
    if differ:
        out.append(Finding(table, "events_differ",
                           f"{len(differ)} events differ from what the witness received (first seq {differ[0]})",
                           len(differ)))
    return checked, out


def compare(path: str | os.PathLike, store: WitnessStore, tables: list[str] | None = None) -> WitnessReport:
    """Look up what the witness saw in the journal at `path`. Without `tables`: the tables whose
    journal is at `path`, or every table the witness knows when it knows none of those."""
    from shoed.witness.store import describe

    journal = read_journal(path)
    known = store.tables()
    if tables is None:
        # None in common (a journal deleted whole, or put back under another table's name): all of them.
        tables = sorted(t for t in journal if t in known) or known
    report = WitnessReport(describe(store.url), list(tables))
    for table in tables:
        tj = journal.get(table, TableJournal())
        heads = store.heads(table)
        report.heads += len(heads)
        report.findings.extend(compare_heads(table, tj, heads))
        checked, found = compare_events(table, tj, store.events(table))
        report.events += checked
        report.findings.extend(found)
    return report
