"""Replaying a journal through the table controller.

One mechanism serves two purposes: at start-up the daemon rebuilds its state
by replaying the current shoe's file, and `shoed replay` lets surveillance
drive every recorded input through the same controller and see any event that
differs from what was recorded.

Journal records written by the daemon (besides the journal's own file header):
- `checkpoint`: at the head of each file: the table, its ruleset and the
  controller state carried over (seq, locks, a freshly opened shoe). A file's
  checkpoint may name another ruleset or decks than the file before it ended
  with (the daemon adopts a newly configured ruleset between shoes, in a file
  of its own), never another table; a checkpoint within a file names what the
  table replayed so far runs, or it is a difference;
- `step`: one input (as received, with its timestamps and raw bytes) and the
  events it produced, written together, fsync'd before anything is
  acknowledged or published.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol

import msgspec

from shoed.rules.ruleset import load_ruleset, with_decks
from shoed.table import Step, TableController, WorkOutOdds
from shoed.table.events import canonical

CHECKPOINT = "checkpoint"
STEP = "step"
HEADER = "journal_file"  # a file's first record (shoed.journal.chain)

# What a checkpoint names besides the state: the table, and the rules it deals under. Within a file
# none of them changes; at the head of a file, after the one before it, only the table stays.
NAMES = ("table", "ruleset", "decks")
SEAM_NAMES = ("table",)


def checkpoint_record(table: TableController) -> dict[str, Any]:
    return {
        "kind": CHECKPOINT,
        "table": table.table_id,
        "ruleset": table.ruleset.name,
        "decks": table.decks,
        "auto_confirm": table.auto_confirm,
        "state": table.checkpoint(),
    }


def names(table: TableController) -> dict[str, Any]:
    """What a checkpoint record of `table` names besides its state (NAMES)."""
    return {"table": table.table_id, "ruleset": table.ruleset.name, "decks": table.decks}


def step_record(item: dict[str, Any], events: list[dict[str, Any]]) -> dict[str, Any]:
    return {"kind": STEP, "input": item, "events": events}


def controller_from_checkpoint(record: dict[str, Any], order_key: bytes | None = None) -> TableController:
    ruleset = load_ruleset(record["ruleset"])
    decks = int(record["decks"])
    if not 1 <= decks <= 16:  # no shoe holds more (the shoe protocol's DECKS_MAX); a ruleset's range may narrow later
        raise ValueError(f"a checkpoint naming {decks} decks")
    if ruleset.min_decks <= decks <= ruleset.max_decks:
        ruleset = with_decks(ruleset, decks)
    return TableController.from_checkpoint(
        record["table"], ruleset, decks, record.get("state", {}), auto_confirm=bool(record.get("auto_confirm")),
        order_key=order_key,
    )


class UnusableRecord(Exception):
    """A journal record whose chain is intact but that is not of the journal's form: the controller
    cannot take it (an input that is no object, a field of the wrong type, a checkpoint without its
    state). Whoever wrote it was not shoed, or wrote it wrong: the replay stops there, and the
    daemon refuses to start on it, as on a broken chain."""

    def __init__(self, jseq: object, file: str | None, reason: str) -> None:
        super().__init__(f"{file or 'the journal'} jseq {jseq}: {reason}")
        self.jseq, self.file, self.reason = jseq, file, reason


# What a malformed record makes the controller raise (an AttributeError on `.get` of a list, an int()
# of a text, a missing key, a time beyond what the platform can write). The same types from a bug are reported the same
# way, with their message.
_MALFORMED = (AttributeError, TypeError, ValueError, KeyError, IndexError, OverflowError)


def _unusable(exc: Exception, jseq: object, file: str | None) -> UnusableRecord:
    return UnusableRecord(jseq, file, f"a record the table cannot take ({type(exc).__name__}: {exc})")


class RecordedStep(Protocol):
    """A step record read with its events left as the line's bytes (shoed.journal.chain.StepLine)."""

    input: dict[str, Any]
    events: Any  # the recorded events' bytes, as written: bytes or a buffer over them
    jseq: int


# A replay keeps the first DIFFERENCES_KEPT differences whole and counts the rest, and keeps a difference's
# events only where the two sides together are DIFFERENCE_BYTES or less: a forged record (a checkpoint naming a
# shoe of megabytes, after which every event differs) must not make the report, and the memory behind it, grow
# with the journal. What is left out is said (Difference.left_out, JournalReplay.more_differences).
DIFFERENCES_KEPT = 100
DIFFERENCE_BYTES = 256 * 1024


@dataclass
class Difference:
    jseq: int | None
    file: str | None
    seq: int | None
    reason: str
    recorded: list[Any] = field(default_factory=list)
    replayed: list[Any] = field(default_factory=list)
    left_out: int = 0  # the bytes of the two sides' events not kept (over DIFFERENCE_BYTES together)

    def to_json(self) -> dict[str, Any]:
        return {
            "file": self.file, "jseq": self.jseq, "seq": self.seq, "reason": self.reason,
            "recorded": self.recorded, "replayed": self.replayed,
            **({"left_out_bytes": self.left_out} if self.left_out else {}),
        }


def keep_difference(differences: list[Difference], difference: Difference) -> int:
    """Add `difference` to `differences` if fewer than DIFFERENCES_KEPT are kept; 1 if it was only counted."""
    if len(differences) >= DIFFERENCES_KEPT:
        return 1
    differences.append(difference)
    return 0


@dataclass
class Replay:
    """The state of a replay: the controller and what differed so far."""

    controller: TableController | None = None
    steps: int = 0
    events: int = 0
    differences: list[Difference] = field(default_factory=list)
    more_differences: int = 0  # differences counted past DIFFERENCES_KEPT
    last_record: dict[str, Any] | None = None
    # What the journal's past tells the daemon that starts on it:
    stopped_clean: bool = False  # the last record is the daemon's own stop
    # The last step ended a coup (or the burn) and its live odds were not recorded: the effect.
    odds_due: WorkOutOdds | None = None
    order_key: bytes | None = field(default=None, repr=False)  # opens a shuffler's sealed order (docs/shuffler.md)
    # Where the table's ruleset and decks are set: its first checkpoint's, then each checkpoint's that names
    # others ({file, table, ruleset, decks}).
    rulesets: list[dict[str, Any]] = field(default_factory=list)
    seam: bool = False  # a file's header came, and no record of that file after it yet

    def feed(self, record: dict[str, Any], file: str | None = None) -> list[dict[str, Any]]:
        """Take one journal record; return the events its input produced again. UnusableRecord if the
        record is not of the journal's form."""
        try:
            return self._feed(record, file)
        except _MALFORMED as exc:
            raise _unusable(exc, record.get("jseq"), file) from exc

    def _feed(self, record: dict[str, Any], file: str | None) -> list[dict[str, Any]]:
        kind = record.get("kind")
        self.last_record = record
        seam, self.seam = self.seam, kind == HEADER
        if kind == STEP and self.controller is not None:
            recorded = record.get("events", [])
            return self._step(record["input"], canonical(recorded), record.get("jseq"), file, recorded).events
        self.stopped_clean, self.odds_due = False, None
        if kind == CHECKPOINT:
            controller = self.controller
            if controller is None:
                self.controller = controller_from_checkpoint(record, self.order_key)
                self.rulesets.append(ruleset_set(record, file))
            else:
                replayed = names(controller)
                difference = checkpoint_difference(self.checkpoint_now(), record, file, replayed,
                                                   SEAM_NAMES if seam else NAMES)
                if difference is None and not seam:  # shoed writes one only as a file's first record
                    difference = Difference(record.get("jseq"), file, None, "a checkpoint within a file: shoed "
                                            "writes one only at the head of a shoe's file")
                if difference is not None:
                    self.more_differences += keep_difference(self.differences, difference)
                if difference is not None or any(record.get(k) != replayed[k] for k in NAMES):
                    # The table goes on from the checkpoint: the state on record, under the rules it names.
                    self.controller = controller_from_checkpoint(record, self.order_key)
                    if (record.get("ruleset"), record.get("decks")) != (replayed["ruleset"], replayed["decks"]):
                        self.rulesets.append(ruleset_set(record, file))
            return []
        if kind == STEP:  # and no controller yet
            self.more_differences += keep_difference(
                self.differences, Difference(record.get("jseq"), file, None, "a step before any checkpoint"))
        return []

    def feed_line(self, line: RecordedStep, file: str | None = None) -> Step | None:
        """Take one step read as a StepLine (shoed.journal.chain), its events left as the line's
        bytes. Returns the step (None before any checkpoint)."""
        self.last_record, self.seam = None, False
        if self.controller is None:
            self.stopped_clean, self.odds_due = False, None
            self.more_differences += keep_difference(
                self.differences, Difference(line.jseq, file, None, "a step before any checkpoint"))
            return None
        try:
            return self._step(line.input, bytes(line.events), line.jseq, file)
        except _MALFORMED as exc:
            raise _unusable(exc, line.jseq, file) from exc

    def _step(self, item: dict[str, Any], recorded: bytes, jseq: int | None, file: str | None,
              parsed: list[Any] | None = None) -> Step:
        """Drive one recorded input through the controller: the canonical bytes of the events it gives
        again are compared with the recorded ones (`parsed`, those events as values, is only for the
        report of a difference)."""
        assert self.controller is not None
        step = self.controller.feed(item)
        typed = step.typed
        self.steps += 1
        self.events += len(typed)
        self.stopped_clean = item.get("kind") == "power" and item.get("state") == "off"
        odds_due = next((e for e in step.effects if type(e) is WorkOutOdds), None) if step.effects else None
        if odds_due is None and item.get("kind") == "power" and item.get("state") == "on":
            # The daemon works out the odds a stop cut off after its power-on: a stop before they were recorded
            # leaves them due still.
            odds_due = self.odds_due
        self.odds_due = odds_due
        replayed = canonical(typed)
        if replayed != recorded:
            if len(self.differences) >= DIFFERENCES_KEPT:
                self.more_differences += 1
                return step
            size = len(recorded) + len(replayed)
            if size > DIFFERENCE_BYTES:  # neither side parsed nor kept: said by its size
                first = typed[0].seq if typed else None
                self.differences.append(Difference(jseq, file, first, "replayed events differ from the recorded ones",
                                                   left_out=size))
                return step
            if parsed is None:
                parsed = msgspec.json.decode(recorded)
            first = parsed[0].get("seq") if parsed and isinstance(parsed[0], dict) else (
                typed[0].seq if typed else None)
            self.differences.append(Difference(jseq, file, first, "replayed events differ from the recorded ones",
                                               parsed, step.events))
        return step

    def checkpoint_now(self) -> dict[str, Any] | None:
        """The controller's checkpoint, or None where none can be taken (no controller yet,
        or a shoe with cards seen)."""
        controller = self.controller
        return controller.checkpoint() if controller is not None and controller.checkpointable else None


def ruleset_set(record: dict[str, Any], file: str | None) -> dict[str, Any]:
    """Where a checkpoint sets the table's ruleset and decks (`shoed replay` names each)."""
    return {"file": file, "table": record.get("table"), "ruleset": record.get("ruleset"), "decks": record.get("decks")}


def checkpoint_difference(now: dict[str, Any] | None, record: dict[str, Any], file: str | None,
                          replayed: dict[str, Any] | None = None, kept: tuple[str, ...] = NAMES) -> Difference | None:
    """How the replayed table differs from a checkpoint record, or None: its state `now` (None: no
    checkpoint can be taken, nothing to compare), and of what it names (`replayed`, as `names` gives
    them; None: not compared) those that must stay (`kept`: NAMES within a file, SEAM_NAMES at the head
    of the next one). The state is compared on what the record holds: a journal written before a field
    was added to the checkpoint does not have it, and must still replay identically."""
    recorded = record.get("state") or {}
    state_differs = now is not None and {k: now.get(k) for k in recorded} != recorded
    named = [k for k in kept if record.get(k) != replayed[k]] if replayed is not None else []
    if not state_differs and not named:
        return None
    seq = now.get("seq") if now is not None else None
    if not named:
        return Difference(record.get("jseq"), file, seq, "checkpoint differs from the replayed state",
                          [record.get("state")], [now])
    reason = f"checkpoint names another {', '.join(named)} than the replayed table" + (
        "; its state differs too" if state_differs else "")
    assert replayed is not None
    return Difference(record.get("jseq"), file, seq, reason,
                      [{k: record.get(k) for k in named}] + ([record.get("state")] if state_differs else []),
                      [{k: replayed[k] for k in named}] + ([now] if state_differs else []))


def replay(
    records: Iterable[tuple[str | None, dict[str, Any]]],
) -> Iterator[tuple[dict[str, Any], list[dict[str, Any]], Replay]]:
    """Replay (file, record) pairs in order; yields each record with its replayed events."""
    state = Replay()
    for file, record in records:
        yield record, state.feed(record, file), state
