"""What the virtual shoe puts on the wire for each shoe event, in either format.

Pure functions: a shoe event becomes a native protocol message
(firmware_protocol.messages; a plain shoe's card is a draw) or a Bee-Tek ASCII token
(docs/standards/beetek-shoe.md). The Bee-Tek shoe reports only card
reads, unreadable reads and alarms; buttons, the cut card and the shoe going in
and out have no token and are not sent.
"""

from __future__ import annotations

from firmware_protocol import messages as m
from shoed.rules.cards import RANK_LETTERS, parse_card
from shoed.simulate.dealer import (
    ALARM,
    BUTTON,
    CARD,
    CUT_CARD,
    SHOE_INSERTED,
    SHOE_REMOVED,
    UNREADABLE,
    ShoeEvent,
)

BUTTON_CODES = {name: code for code, name in m.BUTTON_NAMES.items()}
MODES = {"game": m.MODE_GAME, "burn": m.MODE_BURN}

# Bee-Tek operating modes, as the shoe prints them.
BEETEK_GAME = "Game"
BEETEK_BURN = "Manual Burn Cards"
BEETEK_ALARM = "GameAlarm"


def native_message(event: ShoeEvent, seq: int = 0, plain: bool = False) -> m.Message:
    """The native protocol message that reports `event`. A `plain` shoe reads no card: each card out,
    read or not, is a draw seen by its sensor (protocol 1.1, SPEC.md §5.22)."""
    kind = event.kind
    mode = event.mode or "game"
    if plain and kind in (CARD, UNREADABLE):
        return m.Draw(seq=seq, mode=MODES[mode], trigger=m.DRAW_SENSOR)
    if kind == CARD:
        card = parse_card(str(event.card))
        return m.CardRead(
            seq=seq, rank=card.rank, suit=m.WIRE_SUITS.index(card.suit), confidence=255, mode=MODES[mode]
        )
    if kind == UNREADABLE:
        return m.Unreadable(seq=seq, mode=MODES[mode], reason=event.reason or m.UNREADABLE_NO_INDEX)
    if kind == BUTTON:
        return m.Button(seq=seq, button=BUTTON_CODES[str(event.button)])
    if kind == CUT_CARD:
        return m.CutCard(seq=seq)
    if kind == SHOE_INSERTED:
        return m.ShoeInserted(seq=seq)
    if kind == SHOE_REMOVED:
        return m.ShoeRemoved(seq=seq)
    if kind == ALARM:
        return m.Alarm(seq=seq, code=event.code or 0, text=event.text or "")
    raise ValueError(f"no native message for a {kind} event")


def beetek_token(event: ShoeEvent) -> bytes | None:
    """The Bee-Tek token for `event`, or None when that shoe does not report it."""
    kind = event.kind
    mode = BEETEK_BURN if event.mode == "burn" else BEETEK_GAME
    if kind == CARD:
        card = parse_card(str(event.card))
        rank = "10" if card.rank == 10 else RANK_LETTERS[card.rank - 1]
        return f" [{mode}]<Card:{rank}{card.suit}> ".encode("ascii")
    if kind == UNREADABLE:
        return f" [{mode}]<Game> ".encode("ascii")
    if kind == ALARM:
        return f" [{BEETEK_ALARM}]<Alarm:{event.text}> ".encode("ascii")
    return None
