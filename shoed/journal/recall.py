"""Recall: the last coups of a journal, as the regulator asks to see them.

"The last coup and at least nine before it (cards in draw order, totals,
outcome, void flag) can be shown in their original order, also while the
system is in an error state" (table-game-standards.md item 1). Pure: it takes
journal records (already read and checked) and returns coup lines.

The coups come from events of kind "coup.result" and "coup.void" (also
spelled "coup_result" and "void"). Where an event sits inside a record is
decided by `events_of` alone, so a change to the record schema is a change to
that one function.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from shoed.rules.coup import draw_order
from shoed.net.wire import one_line

# Event kinds, as the brief named them and as shoed.table.events names them.
RESULT = frozenset({"coup_result", "coup.result"})
VOID = frozenset({"void", "coup.void"})


def events_of(record: dict) -> list[dict]:
    """The events a journal record carries: the daemon's `{"kind": "step",
    "input": {...}, "events": [...]}` (an input journalled with its events),
    `{"kind": "event", "event": {...}}`, or the record itself when it is a
    flat event."""
    event = record.get("event")
    if isinstance(event, dict):
        return [event]
    events = record.get("events")
    if isinstance(events, list):
        return [e for e in events if isinstance(e, dict)]
    return [record]


@dataclass(slots=True)
class CoupLine:
    shoe: object
    coup: object
    player_cards: list[str] = field(default_factory=list)
    banker_cards: list[str] = field(default_factory=list)
    player_total: int | None = None
    banker_total: int | None = None
    winner: str | None = None
    natural: bool = False
    player_pair: bool = False
    banker_pair: bool = False
    void: bool = False
    void_reason: str | None = None
    seq: int | None = None  # the result's event seq (or the void's, for a coup voided before its result)
    utc: str | None = None  # when the result was recorded (or the void, for a coup voided before it)
    void_by: str | None = None  # who voided it (the key's name), when the void says
    void_utc: str | None = None

    @property
    def draw_order(self) -> list[str]:
        """Player, Banker, Player, Banker, then the Player's third card, then the Banker's."""
        return draw_order(self.player_cards, self.banker_cards)

    def to_json(self) -> dict:
        return {
            "shoe": self.shoe,
            "coup": self.coup,
            "draw_order": self.draw_order,
            "player_cards": self.player_cards,
            "banker_cards": self.banker_cards,
            "player_total": self.player_total,
            "banker_total": self.banker_total,
            "winner": self.winner,
            "natural": self.natural,
            "player_pair": self.player_pair,
            "banker_pair": self.banker_pair,
            "void": self.void,
            "void_reason": self.void_reason,
            "seq": self.seq,
            "utc": self.utc,
            "void_by": self.void_by,
            "void_utc": self.void_utc,
        }

    def describe(self) -> str:
        parts = [f"shoe {self.shoe} coup {self.coup}:"]
        if self.player_cards or self.banker_cards:
            parts.append(f"Player {' '.join(self.player_cards) or '-'} ({_total(self.player_total)})")
            parts.append(f"Banker {' '.join(self.banker_cards) or '-'} ({_total(self.banker_total)})")
        if self.void:
            by = f" (by {self.void_by}, {self.void_utc})" if self.void_by else f" ({self.void_utc})" if self.void_utc \
                else ""
            parts.append(f"VOID: {self.void_reason or 'no reason given'}{by}")
        else:
            extras = [
                name
                for name, on in (
                    ("natural", self.natural),
                    ("player pair", self.player_pair),
                    ("banker pair", self.banker_pair),
                )
                if on
            ]
            parts.append(("tie" if self.winner == "tie" else f"{self.winner} wins") + "".join(f", {x}" for x in extras))
        if self.utc is not None or self.seq is not None:
            parts.append(f"[{self.utc or '?'}, seq {self.seq if self.seq is not None else '?'}]")
        return one_line("  ".join(parts))


def _total(value: int | None) -> str:
    return "?" if value is None else str(value)


def _cards(value) -> list[str]:
    return [str(c) for c in value] if isinstance(value, list) else []


def recall(records: Iterable[dict], last: int = 10) -> list[CoupLine]:
    """The last `last` coups in their original order (the order each was first
    recorded); a void recorded for a coup marks that coup void."""
    coups: dict[tuple, CoupLine] = {}
    for record in records:
        for event in events_of(record):
            kind = event.get("kind")
            if kind not in RESULT and kind not in VOID:
                continue
            key = (repr(event.get("shoe")), repr(event.get("coup")))
            line = coups.get(key)
            if line is None:
                line = coups[key] = CoupLine(event.get("shoe"), event.get("coup"))
            seq, utc = event.get("seq"), event.get("utc")
            if kind in RESULT or line.seq is None:
                line.seq = seq if isinstance(seq, int) and not isinstance(seq, bool) else None
                line.utc = utc if isinstance(utc, str) else None
            if kind in RESULT:
                line.player_cards = _cards(event.get("player_cards"))
                line.banker_cards = _cards(event.get("banker_cards"))
                line.player_total = event.get("player_total")
                line.banker_total = event.get("banker_total")
                line.winner = event.get("winner")
                line.natural = bool(event.get("natural"))
                line.player_pair = bool(event.get("player_pair"))
                line.banker_pair = bool(event.get("banker_pair"))
            else:
                line.void = True
                line.void_reason = event.get("reason")
                by = event.get("by")
                line.void_by = by if isinstance(by, str) else None
                line.void_utc = utc if isinstance(utc, str) else None
                if not (line.player_cards or line.banker_cards):  # a coup voided before its result
                    line.player_cards = _cards(event.get("player_cards"))
                    line.banker_cards = _cards(event.get("banker_cards"))
    return list(coups.values())[-last:] if last > 0 else []
