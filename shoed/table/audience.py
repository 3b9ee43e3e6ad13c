"""Who may see what: the display audience and the surveillance audience.

The table has two audiences. Surveillance (CURVE-authenticated, keys on an
allow-list) sees every event as journaled. The players' displays see only
what the table shows the players: a card's identity once it is faced on the
layout, never a burn card dealt face down, never a card that may still be
dealt later (an extra card drawn by mistake, a card waiting for a misdeal
correction, a card returned to the shoe), and none of surveillance's
alarms or the odds of the remaining shoe (from which the burn cards' ranks
could be worked out), nor anything from which a face-down card could be
worked out: the journal's chain head (a record's hash, over fields a display
could guess but for the card), a misdeal's or an alarm's text and details
(which may name a card), a squeezed card's hand total, the cards a closed
shoe left by identity, and a shuffled shoe's revealed order and salt (the
order gives the face-down burns, and at a shoe closed before its end, taken
out to clear a jam, every card still in it: the next coups).

This module is the one place that decides it: a pure function from an event
to the display's copy of it (or a `withheld` placeholder that keeps only its
place in the sequence), and one
from the table's snapshot to the display's snapshot. The publisher, the
snapshot and the catch-up endpoints all go through it. What comes out stays
valid against the event schema (`shoed schema`): fields are withheld by
setting them to null or leaving them out, where the schema allows it.

`reveal` says when a card dealt to a hand is faced: "dealt" (punto-banco:
the card is turned as it is dealt) or "result" (squeezed games: the cards
are turned when the coup completes, and `coup.result` carries them all).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from shoed.table.events import LOCKING_ALARMS

Event = dict[str, Any]  # an event as published (the plain form of a shoed.table.events struct)

DISPLAY = "display"
SURVEILLANCE = "surveillance"
AUDIENCES = (DISPLAY, SURVEILLANCE)
REVEALS = ("dealt", "result")

# Events a display never gets: the odds (and whether a bet favours the player),
# a second reader's copy of a card, and surveillance's alarms.
SURVEILLANCE_ONLY_KINDS = frozenset({"shoe.odds", "card.duplicate"})
SURVEILLANCE_ONLY_ALARMS = frozenset({"favourable_bet"})
# The fields every event has (shoed.table.events.Base), which a display's copy keeps; a `withheld`
# placeholder keeps them too, with its own kind.
WITHHELD_FIELDS = ("table", "seq", "shoe", "coup", "mono_ns", "utc")
COMMON_FIELDS = ("kind", *WITHHELD_FIELDS)
# An alarm's text and details may name a card (a foreign card "9H seen 33 times", the card a
# shuffled order has next): the display gets its name, its state, the reader it concerns and who
# cleared it, nothing more.
ALARM_SHOWN = frozenset({*COMMON_FIELDS, "alarm", "active", "source", "by"})
# The chain head on each published event and in the snapshot (docs/witness.md): a record's hash,
# over fields a display could guess but for a face-down card, which a guess checked against the
# hash gives away. Only surveillance gets it (the witness reads the surveillance endpoints).
JOURNAL_FIELDS = ("journal", "journal_head")
# A shuffled shoe's reveal at its close: the display gets which shuffle and its commitment; the order
# and the salt (with which the order is checked against the commitment) are surveillance's.
REVEAL_SHOWN = frozenset({"shuffle", "commitment"})
LOCKED = "locked"  # what a display gets of the text that locked the table, where no alarm names it
HAND_RECIPIENTS = ("player", "banker")


WITHHELD = "withheld"


def withheld(event: Event) -> Event:
    """What a display gets for an event it may not see: its place in the sequence, nothing more
    (so that the display's seq runs on unbroken and a gap still means a loss)."""
    return {"kind": WITHHELD, **{k: event[k] for k in WITHHELD_FIELDS if k in event}}


def _without_card(event: Event) -> Event:
    """The event with its card's identity withheld; `card_withheld` tells a card that was read
    (and counts as seen) from one the reader could not identify. A hand's total after the card
    would give its value: it goes too."""
    return {**{k: v for k, v in event.items() if k != "total"}, "card": None, "card_withheld": True}


def _misdeal_shown(detail: dict[str, Any]) -> dict[str, Any]:
    """A misdeal as a display gets it: without its card, and its reason (a text that may name the
    card: "5D was read in burn mode") told by its kind alone."""
    shown = {k: v for k, v in detail.items() if k != "card"}
    if "reason" in shown:
        shown["reason"] = str(detail.get("kind") or "misdeal").replace("_", " ")
    return shown


def display_event(event: Event, reveal: str = "dealt") -> Event:
    """The display audience's copy of one event: the event itself, a copy with the
    fields it may not see withheld, or a `withheld` placeholder in its place.

    Pure: the event given is not changed."""
    kind = event.get("kind")
    if kind in SURVEILLANCE_ONLY_KINDS:
        return withheld(event)
    if kind == "card":
        faced = event.get("recipient") in HAND_RECIPIENTS and reveal == "dealt"
        return event if faced or event.get("card") is None else _without_card(event)
    if kind == "shoe.burn":
        return event if event.get("exposed") or event.get("card") is None else _without_card(event)
    if kind == "misdeal":
        detail = event.get("misdeal")
        return {**event, "misdeal": _misdeal_shown(detail)} if isinstance(detail, dict) else event
    if kind == "misdeal.corrected":
        # enter_card: the card is dealt at once, in the `card` event that follows (faced then only
        # where cards are faced as they are dealt).
        if event.get("card") is not None and (event.get("correction") != "enter_card" or reveal != "dealt"):
            return _without_card(event)
        return event
    if kind == "alarm":
        if event.get("alarm") in SURVEILLANCE_ONLY_ALARMS:
            return withheld(event)
        return {k: v for k, v in event.items() if k in ALARM_SHOWN}
    if kind == "coup.void" and reveal == "result":
        # Squeezed cards are faced at the result: a coup voided before it never showed them (one voided after
        # its result had them shown there already).
        return {**event, "player_cards": [], "banker_cards": []}
    if kind == "shoe.closed":
        shown = {**event, "reconciliation": _reconciliation_shown(event.get("reconciliation"))}
        if isinstance(event.get("reveal"), dict):
            shown["reveal"] = {k: v for k, v in event["reveal"].items() if k in REVEAL_SHOWN}
        return shown
    if kind == "table.started" and event.get("locked") is not None:
        return {**event, "locked": LOCKED}  # its text is the alarm's (a forged frame's bytes name a card)
    return event


def _reconciliation_shown(reconciliation: Any) -> Any:
    """A closed shoe's reconciliation without the cards it left by identity (with the cards a display saw
    faced, they give the face-down ones) and with its excess counted, not named (the identities of foreign
    cards, which the display was shown withheld, and of face-down burns). The counts stay."""
    if not isinstance(reconciliation, dict):
        return reconciliation
    shown = {k: v for k, v in reconciliation.items() if k not in ("left_by_identity", "excess")}
    excess = reconciliation.get("excess")
    if isinstance(excess, dict):
        shown["excess_cards"] = sum(n for n in excess.values() if isinstance(n, int))
    return shown


def display_snapshot(snapshot: dict[str, Any], reveal: str = "dealt") -> dict[str, Any]:
    """The display audience's copy of the table's snapshot (see TableController.snapshot)."""
    snap = {k: v for k, v in snapshot.items() if k not in JOURNAL_FIELDS}
    shoe = snap.get("shoe")
    if isinstance(shoe, dict):
        # Counts by rank include the face-down burn cards and the cards waiting for a correction.
        snap["shoe"] = {k: v for k, v in shoe.items() if k != "remaining_by_rank"}
        if "reconciliation" in shoe:
            snap["shoe"]["reconciliation"] = _reconciliation_shown(shoe["reconciliation"])
    snap["odds"] = None
    snap["pending_misdeals"] = [_misdeal_shown(p) for p in snapshot.get("pending_misdeals") or []]
    alarms = snapshot.get("alarms")
    if isinstance(alarms, dict):
        snap["alarms"] = {name: name for name in alarms if name not in SURVEILLANCE_ONLY_ALARMS}
        if snapshot.get("locked"):  # its text is the alarm's: the display gets the alarm's name
            snap["locked"] = next((name for name in LOCKING_ALARMS if name in alarms), "integrity")
    waiting = snapshot.get("waiting")
    if isinstance(waiting, dict) and waiting.get("for") == "unlock":  # its text quotes the lock's
        from shoed.table.waits import unlock_text  # (the table's own module: imported where a table is locked)

        snap["waiting"] = {**waiting, "text": unlock_text(snap.get("locked") or LOCKED)}
    coup = snap.get("coup")
    coups = snapshot.get("coups")
    if reveal == "result" and isinstance(coups, list):  # voided coups' cards, as their coup.void shows them
        snap["coups"] = [{**c, "player_cards": [], "banker_cards": []} if isinstance(c, dict) and c.get("void")
                         else c for c in coups]
    if reveal == "result" and isinstance(coup, dict) and not coup.get("complete"):
        snap["coup"] = {**coup, "player_cards": [], "banker_cards": [], "player_total": None,
                        "banker_total": None, "player_pair": None, "banker_pair": None, "natural": None}
    return snap


def for_audience(audience: str, reveal: str = "dealt") -> tuple[Callable[[Event], Event], Callable[[dict[str, Any]], dict[str, Any]]]:
    """(event filter, snapshot filter) of an audience: the identity for surveillance."""
    if audience == SURVEILLANCE:
        return (lambda event: event), (lambda snapshot: snapshot)
    if audience != DISPLAY:
        raise ValueError(f"unknown audience {audience!r}; known: {', '.join(AUDIENCES)}")
    return (lambda event: display_event(event, reveal)), (lambda snapshot: display_snapshot(snapshot, reveal))
