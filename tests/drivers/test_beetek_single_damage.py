"""Every single-byte damage inside a Bee-Tek card token, tried exhaustively.

decision (shoed/drivers/beetek.py): a token that is recognisably a card but does not parse
intact is one `unreadable` reading, never guessed. The link has no checksum, so one byte
can only be told apart where it breaks the token's shape; this holds each case to it:
- a byte lost, any byte (0-255) put in, or any byte put in place of one, anywhere in the
  token, leaves exactly one reading that is not noise for it: the card itself, or
  `unreadable` -- never nothing (the next card would take its place in the coup) and never
  two (one card counted twice);
- a card read from a damaged token is the one sent, except where a rank or suit letter is
  changed into another rank or suit (`4S` -> `5S`), which no shape can catch;
- the next token is read intact.
"""

from __future__ import annotations

import pytest

from shoed.drivers.beetek import token_reading, tokens
from shoed.rules.cards import RANK_LETTERS, SUITS

NEXT = b" [Game]<Card:9D> "
SENT = [
    (b"[Game]<Card:4S>", ("card", "4S", "game")),
    (b"[Game]<Card:10H>", ("card", "TH", "game")),
    (b"[Manual Burn Cards]<Card:h3>", ("card", "3H", "burn")),
    (b"[Game]<Game>", ("unreadable", None, "game")),
]
RANK_OR_SUIT = set((RANK_LETTERS + SUITS + RANK_LETTERS.lower() + SUITS.lower() + "01").encode())


def damaged(token: bytes):
    for pos in range(len(token) + 1):
        for byte in range(256):
            yield "insert", pos, token[:pos] + bytes([byte]) + token[pos:]
    for pos in range(len(token)):
        yield "drop", pos, token[:pos] + token[pos + 1:]
        for byte in range(256):
            if byte != token[pos]:
                yield "change", pos, token[:pos] + bytes([byte]) + token[pos + 1:]


def readings(data: bytes) -> list[tuple]:
    out = []
    for token in tokens(data):
        if token.kind == "garbled" and not token.looks_like_card:
            continue  # noise: the driver reports it together with the rest of the stretch
        r = token_reading(token, "beetek:test", token.start, 0, 0)
        out.append((r.kind, r.card, r.mode))
    return out


@pytest.mark.parametrize("token, sent", SENT, ids=[t.decode() for t, _ in SENT])
def test_one_damaged_byte_leaves_one_reading_never_a_guess(token, sent):
    failures = []
    for how, pos, data in damaged(token):
        got = readings(b" " + data + NEXT)
        if not got or got[-1] != ("card", "9D", "game"):
            failures.append((how, pos, data, got, "the next card"))
            continue
        mine = got[:-1]
        if len(mine) != 1:
            failures.append((how, pos, data, got, "one reading"))
            continue
        kind, card, _ = mine[0]
        if kind == "card" and mine[0] != sent:
            changed = how == "change" and token[pos] in RANK_OR_SUIT and data[pos] in RANK_OR_SUIT
            if not changed:
                failures.append((how, pos, data, got, "the card sent"))
        elif kind not in ("card", "unreadable"):
            failures.append((how, pos, data, got, "a card or unreadable"))
    assert not failures, f"{len(failures)} cases, e.g. {failures[:5]}"
