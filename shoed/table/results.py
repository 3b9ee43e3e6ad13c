"""A shoe's results from the table's events and snapshots: the one fold of "results less voids".

The rules (`shoed.rules.roads`) know outcomes and roads, not the table's events. This module
reads the events the controller publishes (`coup.result`, `coup.void`, `shoe.opened`, their
kinds taken from the schema) and a snapshot's `coups` list, and gives the shoe's outcomes:
every result less those voided after it (the table takes a voided result back:
`TableController._void`). The displays, `shoed report` and `shoed command status` use it.
Pure: no I/O, no clock.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from shoed.rules.roads import WINNERS, Outcome, ResultsError
from shoed.table import events as ev

SHOE_OPENED = str(ev.ShoeOpened.__struct_config__.tag)
COUP_RESULT = str(ev.CoupResult.__struct_config__.tag)
COUP_VOID = str(ev.CoupVoid.__struct_config__.tag)


def outcome_of(record: dict[str, Any]) -> Outcome | None:
    """A `coup.result` event, or a coup of a snapshot's `coups` list, as an
    Outcome; None for a void (voids are not results). A record that names no
    winner is an error: a result is never guessed."""
    if record.get("void") or record.get("kind") == COUP_VOID:
        return None
    winner = WINNERS.get(str(record.get("winner")))
    if winner is None:
        raise ResultsError(f"coup {record.get('coup')}: no winner in {sorted(record)}")
    return Outcome(winner, bool(record.get("banker_pair")), bool(record.get("player_pair")),
                   bool(record.get("natural")))


@dataclass(frozen=True, slots=True)
class ShoeResults:
    """A shoe's results so far, with the table's coup number of each: every `coup.result` less
    those voided after it."""

    outcomes: tuple[Outcome, ...] = ()
    coups: tuple[int | None, ...] = ()

    def after(self, event: dict[str, Any]) -> ShoeResults:
        """The results after one event: `coup.result` adds one, a `coup.void` of the coup that
        has just had its result takes it back (the pit voided it before the confirm),
        `shoe.opened` starts again; any other event changes nothing."""
        kind = event.get("kind")
        if kind == SHOE_OPENED:
            return NO_RESULTS
        if kind == COUP_RESULT:
            outcome = outcome_of(event)
            if outcome is not None:
                return ShoeResults(self.outcomes + (outcome,), self.coups + (event.get("coup"),))
        elif kind == COUP_VOID and self.coups and self.coups[-1] == event.get("coup"):
            return ShoeResults(self.outcomes[:-1], self.coups[:-1])
        return self

    @classmethod
    def of_coups(cls, coups: Iterable[dict[str, Any]]) -> ShoeResults:
        """From a snapshot's `coups` list (results and voids, in order: a voided result is not in it)."""
        pairs = [(c.get("coup"), o) for c in coups if (o := outcome_of(c)) is not None]
        return cls(tuple(o for _, o in pairs), tuple(n for n, _ in pairs))


NO_RESULTS = ShoeResults()


def results_of(coups: Iterable[dict[str, Any]]) -> tuple[Outcome, ...]:
    """The results of a snapshot's `coups` list (results and voids, in order)."""
    return ShoeResults.of_coups(coups).outcomes


def results_from_events(events: Iterable[dict[str, Any]], shoe: str | None = None) -> tuple[Outcome, ...]:
    """The results of one shoe from its events in seq order (ShoeResults.after). With `shoe`,
    only that shoe's events count."""
    results = NO_RESULTS
    for event in events:
        if shoe is None or event.get("shoe") == shoe:
            results = results.after(event)
    return results.outcomes
