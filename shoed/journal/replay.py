"""Replaying a whole journal, file by file, in one process or several.

Every shoe file of the journal starts with a checkpoint (shoed.table.replay), so a
file can be proved on its own: its records verified (hashes, links, header)
and its inputs driven through a controller built from its checkpoint, with
every event compared. What joins the files is then checked at each seam, in
order: the file links to the last hash of the file before it and follows it
in number and name (`shoed.journal.reader.seam_fault`), and it starts in the
state the file before it ended in, at the same table
(`shoed.table.replay.checkpoint_difference`, as a replay in one pass compares
it). Its checkpoint may name another ruleset or decks (the daemon adopts a
newly configured ruleset between shoes, in a file of its own): no difference,
but named in `rulesets`, where the table's rules are set. So a replay in N
processes proves exactly what a replay in one does, and reports the same
differences; `--jobs 1` takes the same path in this process.

With a corrupt record the replay stops there, as in one pass: what comes
before it is replayed and reported, nothing after it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from shoed.journal import chain as ch
from shoed.journal.chain import StepLine
from shoed.journal.reader import (FileEnd, TornTail, VerifyReport, check_mark, file_records, journal_files, read_marks,
                                  seam_fault, torn_limits)
from shoed.journal.seal import as_keys
from shoed.journal.store import BadRecord
from shoed.table.replay import (CHECKPOINT, SEAM_NAMES, STEP, Difference, Replay, UnusableRecord, checkpoint_difference, keep_difference,
                                names, ruleset_set)

# Called with each record that gave events, and those events (as published): one-process replays only.
OnEvents = Callable[[Any, list], None]

# A file after the first without the table's checkpoint after its header: the state it starts in
# is not on record (shoed opens each file with its checkpoint, in one write).
NO_CHECKPOINT = "no checkpoint after the header: the table's state at the start of this file is not on record"


class ProcessLost(RuntimeError):
    """A replay process ended (killed, out of memory) before it sent its file's replay back."""


@dataclass
class FileReplay:
    """One file replayed on its own (what a worker process sends back)."""

    path: str
    header: dict | None = None  # line 1, for the seam
    end: FileEnd | None = None
    last_jseq: int = 0  # the jseq of its last intact record: where the file ends, for the verified mark
    checkpoint: dict | None = None  # its checkpoint record: the state it starts in
    end_state: dict | None = None  # the controller's state at its end, if a checkpoint can be taken there
    end_names: dict | None = None  # what the controller at its end names: its table, ruleset and decks
    rulesets: list[dict] = field(default_factory=list)  # where its records set the rules (Replay.rulesets)
    steps: int = 0
    events: int = 0
    cards: int = 0
    differences: list[Difference] = field(default_factory=list)
    more_differences: int = 0  # counted past DIFFERENCES_KEPT
    bad: BadRecord | None = None
    torn: TornTail | None = None  # a table's last file ending in a write cut by a stop (never acknowledged)


def replay_file(
    path: Path, name: ch.FileName | None, secret: bytes | None, on_events: OnEvents | None = None,
    order_key: bytes | None = None, on_start: Callable[[Replay], None] | None = None,
    torn_from: int | None = None,
) -> FileReplay:
    """Verify one file and replay its inputs from its own checkpoint (`order_key` opens a shuffler's sealed order).
    `on_start` is given the file's Replay before its first record (its controller is the table as replayed).
    `torn_from`: for a table's last file, where the verified mark ends in it: a last line cut short past it is
    a torn write (`torn`), as start-up and `journal verify` take it, not corruption."""
    out = FileReplay(str(path))
    state = Replay(order_key=order_key)
    if on_start is not None:
        on_start(state)
    last: dict | StepLine | None = None
    cards = 0
    file = path.name
    for item in file_records(path, name, secret, steps=True, torn_from=torn_from):
        if type(item) is StepLine:  # most records: a step, its events compared as bytes
            if item.input.get("kind") == "card":
                cards += 1
            try:
                step = state.feed_line(item, file)
            except UnusableRecord as exc:
                out.bad = BadRecord(str(path), item.jseq, item.jseq, exc.reason)
                break
            if on_events is not None and step is not None and step.typed:
                on_events(item, step.events)
            last = item
            continue
        if isinstance(item, TornTail):
            out.torn = item
            break
        if isinstance(item, BadRecord):
            out.bad = item
            break
        record = cast(dict, item)  # any other record (a step read whole where its line is not the usual form)
        if out.header is None:
            out.header = record
        kind = record.get("kind")
        if kind == CHECKPOINT and out.checkpoint is None:
            out.checkpoint = record
        elif kind == STEP and isinstance(record.get("input"), dict) and record["input"].get("kind") == "card":
            cards += 1
        try:
            events = state.feed(record, file)
        except UnusableRecord as exc:
            out.bad = BadRecord(str(path), record["jseq"], record["jseq"], exc.reason)
            break
        if on_events is not None and events:
            on_events(record, events)
        last = record
    out.cards = cards
    if last is not None and out.header is not None:
        out.end = FileEnd(path.name, out.header["file_seq"], last["hash"])
        out.last_jseq = last["jseq"]
    out.end_state = state.checkpoint_now()
    out.end_names = names(state.controller) if state.controller is not None else None
    out.rulesets = state.rulesets
    out.steps, out.events, out.differences = state.steps, state.events, state.differences
    out.more_differences = state.more_differences
    return out


@dataclass
class JournalReplay:
    """The whole journal's replay: what `shoed replay` reports."""

    files: int = 0
    steps: int = 0
    events: int = 0
    cards: int = 0
    differences: list[Difference] = field(default_factory=list)
    more_differences: int = 0  # differences counted past DIFFERENCES_KEPT, not kept
    corrupt: BadRecord | None = None
    # Where each table's ruleset and decks are set, in order: its first checkpoint's, then each that names
    # others ({file, table, ruleset, decks}).
    rulesets: list[dict] = field(default_factory=list)
    # per table: its last file's torn last line (TornTail.to_json), a write cut by a stop
    torn: dict[str, dict] = field(default_factory=dict)
    # per table: its last file as replayed (where the journal ends, held against the verified mark)
    last_files: dict[str, tuple[ch.FileName, FileReplay]] = field(default_factory=dict, repr=False)

    @property
    def identical(self) -> bool:
        return not self.differences and not self.more_differences and self.corrupt is None


def _job(job: tuple[str, ch.FileName | None, bytes | None, bytes | None, int | None]) -> FileReplay:
    path, name, secret, order_key, torn_from = job
    return replay_file(Path(path), name, secret, order_key=order_key, torn_from=torn_from)


def replay_journal(
    path: str | os.PathLike,
    secret: bytes | None = None,
    *,
    jobs: int = 1,
    on_events: OnEvents | None = None,
    order_key: bytes | None = None,
    on_start: Callable[[Replay], None] | None = None,
) -> JournalReplay:
    """Replay the journal at path (a file or a directory). With jobs > 1 the files are
    replayed in that many processes (on_events and on_start need the one-process order: jobs 1)."""
    if jobs > 1 and (on_events is not None or on_start is not None):
        raise ValueError("events in recorded order need one process (jobs 1)")
    found = journal_files(path)  # .jsonl files not named like journal files are not replayed (verify names them)
    marks = read_marks(Path(path), found.tables) if Path(path).is_dir() else None
    if marks is not None:  # listed again after the marks, as verify lists them
        found = journal_files(path)
    limits = torn_limits(found.tables, marks) if marks is not None else {}
    work = [(str(p), name, secret, order_key,
             limits.get(name.table) if name is not None and i == len(files) - 1 else None)
            for files in found.tables for i, (p, name) in enumerate(files)]
    results = _results(work, jobs, on_events, on_start)
    try:
        total = _join(found.tables, results)
    finally:
        results.close()  # a corrupt file stops the replay: the processes still at work are ended
    if total.corrupt is None and marks is not None:
        total.corrupt = _mark_fault(Path(path), total.last_files, secret, marks)
    return total


def _mark_fault(directory: Path, last_files: dict[str, tuple[ch.FileName, FileReplay]], secret: bytes | None,
                marks: dict[str, bytes | None | OSError]) -> BadRecord | None:
    """What the verified mark beside a table's files says is missing, as start-up and `journal verify`
    hold it (records the mark covers were acknowledged), or None. Only after every file replayed intact:
    where each table ends is where its last file's replay ended (no file is read again)."""
    keys = as_keys(secret)
    for table, (name, last) in last_files.items():
        sealed = last.header is not None and last.header.get("alg") == ch.ALG_FSS
        if sealed and keys.verify_key is None:
            continue  # without the verification key the mark cannot be checked (verify says so)
        report = VerifyReport(ok=True, records=0, files=0)
        tail = {"file": Path(last.path).name, "file_seq": name.file_seq, "jseq": last.last_jseq}
        check_mark(directory, table, tail, keys, report, sealed=sealed, marks=marks)
        if report.first_bad is not None:
            return report.first_bad
    return None


def _results(work: list, jobs: int, on_events: OnEvents | None,
             on_start: Callable[[Replay], None] | None = None) -> Generator[FileReplay, None, None]:
    if jobs <= 1 or len(work) <= 1:
        for p, name, secret, order_key, torn_from in work:
            yield replay_file(Path(p), name, secret, on_events, order_key, on_start, torn_from)
        return
    import multiprocessing
    import threading
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    # Forked workers start at once, but a fork copies only the thread that forks: a lock another
    # thread held then stays held in the child for ever. A process with other threads (a program
    # that embeds the replay) starts its workers afresh instead.
    method = "fork" if threading.active_count() == 1 else "forkserver"
    # When the replay stops early (a corrupt file), the files not yet begun are cancelled and the
    # few at work are let finish: no worker is killed, for one killed while it sends its result
    # would leave the results' lock held and the replay waiting for ever.
    pool = ProcessPoolExecutor(min(jobs, len(work)), mp_context=multiprocessing.get_context(method))
    try:
        # In order, a few files at a time: the seams are checked as the results come.
        yield from pool.map(_job, work, chunksize=max(1, min(16, len(work) // (jobs * 8))))
    except BrokenProcessPool:
        raise ProcessLost("a replay process ended before it sent back its file's replay (killed, or out of "
                          "memory?): nothing was proved; replay again, or with --jobs 1") from None
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _join(tables: list, results: Iterator[FileReplay]) -> JournalReplay:
    total = JournalReplay()
    for files in tables:
        before: FileReplay | None = None
        for _, name in files:
            result = next(results)
            if name is not None and result.header is not None:
                total.last_files[name.table] = (name, result)
            if result.header is not None:
                fault = seam_fault(Path(result.path), result.header, before.end if before else None)
                if fault is not None:
                    total.corrupt = fault
                    return total
                if before is not None and result.checkpoint is not None:
                    file = Path(result.path).name
                    difference = checkpoint_difference(before.end_state, result.checkpoint, file, before.end_names,
                                                       SEAM_NAMES)
                    if difference is not None:
                        total.more_differences += keep_difference(total.differences, difference)
                    if before.end_names is None or (result.checkpoint.get("ruleset"), result.checkpoint.get(
                            "decks")) != (before.end_names["ruleset"], before.end_names["decks"]):
                        total.rulesets.append(ruleset_set(result.checkpoint, file))
                elif before is not None:  # every file after the first starts with the table's checkpoint
                    total.more_differences += keep_difference(
                        total.differences, Difference(2, Path(result.path).name, None, NO_CHECKPOINT))
            total.files += 1
            total.steps += result.steps
            total.events += result.events
            total.cards += result.cards
            for difference in result.differences:
                total.more_differences += keep_difference(total.differences, difference)
            total.more_differences += result.more_differences
            # The file's own: its first checkpoint's where it is the table's first, those named within it.
            total.rulesets += result.rulesets if before is None else result.rulesets[1:]
            if result.bad is not None:
                total.corrupt = result.bad
                return total
            if result.torn is not None and name is not None:
                total.torn[name.table] = result.torn.to_json()
            before = result
    return total
