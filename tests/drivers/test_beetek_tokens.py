"""The Bee-Tek framer and token readings, case by case.

Every case cites docs/standards/beetek-shoe.md ("ref: ...") or, where the
reference is silent, the decision written in shoed/drivers/beetek.py
("decision: ..."). Every byte vector is fed whole, split at every point, and
one byte at a time, and must give the same readings each way.
"""

from __future__ import annotations

import pytest

from shoed.drivers.beetek import MAX_STRETCH, OUTSIDE_ASCII, TokenStream, decode_capture, next_token, token_reading, tokens

# (stream, expected readings as (kind, mode, card, code)), why
CASES = [
    # ref: "A successful read: ` [Game]<Card:4S> `"
    (b" [Game]<Card:4S> ", [("card", "game", "4S", None)], "rank then suit"),
    # ref: "suit-first forms were also seen (`<Card:H3>`), so accept both orders"
    (b" [Game]<Card:H3> ", [("card", "game", "3H", None)], "suit then rank"),
    # ref: "Ranks: `2`-`9`, `T` or `10`, `J`, `Q`, `K`, `A`."
    (b" [Game]<Card:10D> ", [("card", "game", "TD", None)], "ten as 10"),
    (b" [Game]<Card:TD> ", [("card", "game", "TD", None)], "ten as T"),
    (b" [Game]<Card:D10> ", [("card", "game", "TD", None)], "suit first, ten as 10"),
    (b" [Game]<Card:AC> [Game]<Card:KH> [Game]<Card:QS> [Game]<Card:JD> ",
     [("card", "game", "AC", None), ("card", "game", "KH", None), ("card", "game", "QS", None),
      ("card", "game", "JD", None)], "faces and ace"),
    # ref: "Case is not significant."
    (b" [game]<card:4s> ", [("card", "game", "4S", None)], "lower case"),
    (b" [GAME]<CARD:h3> ", [("card", "game", "3H", None)], "mixed case"),
    # ref: "Modes seen: ... `Manual Burn Cards` (the dealer burns cards)"; "burn-mode reads must be kept apart"
    (b" [Manual Burn Cards]<Card:9C> ", [("card", "burn", "9C", None)], "burn card"),
    # ref: "A card that passed the reader but could not be read: ` [Game]<Game> `"
    (b" [Game]<Game> ", [("unreadable", "game", None, "not_read")], "unread game card"),
    # ref: "(also ` [Manual Burn Cards]<Game> `)"
    (b" [Manual Burn Cards]<Game> ", [("unreadable", "burn", None, "not_read")], "unread burn card"),
    # ref: "Alarms: ` [Game]<Alarm:E3 Card Not Read> `" (decision: E3 is an alarm only, not also a card)
    (b" [Game]<Alarm:E3 Card Not Read> ", [("alarm", "game", None, "E3")], "alarm E3"),
    # ref: "` [GameAlarm]<Alarm:...> `"
    (b" [GameAlarm]<Alarm:E7 Shoe Open> ", [("alarm", "game", None, "E7")], "alarm under GameAlarm"),
    # ref: "Warnings: `<W0x01>`, `<W0x02>`, ... possibly without the mode prefix"
    (b" <W0x01> ", [("warning", "game", None, "W0x01")], "warning without mode"),
    (b" [Game]<w0x2A> ", [("warning", "game", None, "W0x2A")], "warning with mode, any case"),
    # ref: "it ignores bytes that are not ASCII": no token from them; they are noise, reported as such
    (b"\xff\xfe [Game]<Card:4S> \x80",
     [("warning", "game", None, "garbled"), ("card", "game", "4S", None), ("warning", "game", None, "garbled")],
     "non-ASCII between tokens"),
    (b"\r\n[Game]<Card:4S>\r\n\x00", [("card", "game", "4S", None), ("warning", "game", None, "garbled")],
     "line ends and NUL between tokens"),
    (b"\r\n[Game]<Card:4S>\r\n", [("card", "game", "4S", None)], "line ends between tokens"),
    # ref: tokens are surrounded by single spaces -- but back to back they still parse
    (b"[Game]<Card:4S>[Game]<Card:5S>", [("card", "game", "4S", None), ("card", "game", "5S", None)], "no spaces"),
    # decision: spaces between mode and body are accepted (the mode is intact)
    (b" [Game] <Card:6S> ", [("card", "game", "6S", None)], "space after mode"),
    # ref: "a garbled token must be reported as unreadable (never guessed)"
    (b" [Game]<Card:4X> ", [("unreadable", "game", None, "garbled")], "bad suit"),
    (b" [Game]<Card:1S> ", [("unreadable", "game", None, "garbled")], "bad rank"),
    (b" [Game]<Card:> ", [("unreadable", "game", None, "garbled")], "empty card"),
    (b" [Game]<Card:4S4> ", [("unreadable", "game", None, "garbled")], "extra character"),
    (b" [Game]<Card :AC> ", [("unreadable", "game", None, "garbled")], "space inserted before the colon"),
    (b" [Game]<Card: AC> ", [("unreadable", "game", None, "garbled")], "space inserted after the colon"),
    (b" [Game]<Card:A C> ", [("unreadable", "game", None, "garbled")], "space inserted inside the card"),
    (b" [Game]< Card:AC> ", [("unreadable", "game", None, "garbled")], "space inserted after '<'"),
    (b" [Game]<Crad:4S> ", [("unreadable", "game", None, "garbled")], "damaged key: near Card"),
    (b" [Game]<Gmae> ", [("unreadable", "game", None, "garbled")], "damaged <Game>"),
    (b" [Game]<Card:4\xb3> ", [("unreadable", "game", None, "garbled")], "non-ASCII byte inside a card token"),
    (b" [Game]<Card:4\x01S> ", [("unreadable", "game", None, "garbled")], "control byte inside a card token"),
    (b" [Game]<Card:4S [Game]<Card:5H> ", [("unreadable", "game", None, "garbled"), ("card", "game", "5H", None)],
     "lost '>': the damaged token is unreadable, the next one is read"),
    # decision: one byte lost or changed at a card token's colon, or a '>' put inside it, still leaves
    # one unreadable card (the dealer enters it), never noise alone (the card's place taken by the next)
    (b" [Game]<Card4S> ", [("unreadable", "game", None, "garbled")], "lost ':'"),
    (b" [Game]<Card;4S> ", [("unreadable", "game", None, "garbled")], "':' changed"),
    (b" [Game]<Card\x804S> ", [("unreadable", "game", None, "garbled")], "':' changed to a non-ASCII byte"),
    (b" [Game]<C:ard:4S> ", [("unreadable", "game", None, "garbled")], "':' put inside the key"),
    (b" [Game]<Ca>rd:4S> ", [("warning", "game", None, "garbled"), ("unreadable", "game", None, "garbled")],
     "'>' put inside the key: one unreadable card for the two pieces"),
    (b" [Game]<Card:>4S> ", [("unreadable", "game", None, "garbled"), ("warning", "game", None, "garbled")],
     "'>' put after the colon: one unreadable card for the two pieces"),
    (b" [Manual Burn Cards]<C>ard:KD> ",
     [("warning", "burn", None, "garbled"), ("unreadable", "burn", None, "garbled")],
     "'>' put inside a burn card's key: the unreadable card keeps its mode"),
    (b" [Game]<>Game> ", [("warning", "game", None, "garbled"), ("unreadable", "game", None, "garbled")],
     "'>' put before an unread card's body"),
    (b" [Game]<Game:> ", [("unreadable", "game", None, "garbled")], "':' put inside an unread card's body"),
    (b" [GameAlarm]\xc5Alarm:E3 Card Not Re:ad> ", [("alarm", "game", None, "garbled")],
     "a broken alarm whose text ends like a card (':ad') is not taken for a card token: an alarm, not noise"),
    (b" []Game\xd8<Game> ", [("warning", "game", None, "garbled"), ("unreadable", "game", None, "not_read")],
     "a broken mode prefix before an unread card: one unreadable card, not two"),
    (b" Game]<Card:4S> ", [("unreadable", "game", None, "garbled")], "lost '[': text glued to the front"),
    (b" xx[Game]<Card:4S> ", [("unreadable", "game", None, "garbled")], "junk glued to the front"),
    # decision: burn and game never mixed: an unknown or missing mode is not a card
    (b" [Gxme]<Card:4S> ", [("unreadable", "game", None, "unknown_mode")], "unknown mode"),
    (b" <Card:4S> ", [("unreadable", "game", None, "no_mode")], "no mode prefix"),
    (b" [Manual Burn Crds <Card:4S> ", [("warning", "game", None, "garbled"), ("unreadable", "game", None, "no_mode")],
     "damaged burn prefix: the card behind it is not taken as a game card"),
    # decision: other noise is a warning, never a card
    (b" hello ", [("warning", "game", None, "garbled")], "stray text"),
    (b" [Game]<Banana> ", [("warning", "game", None, "garbled")], "unknown body"),
    (b" [Game]<Card:4S> zz [Game]<Card:7D> ",
     [("card", "game", "4S", None), ("warning", "game", None, "garbled"), ("card", "game", "7D", None)],
     "noise between good tokens"),
]


def feed(chunks: list[bytes]) -> list[tuple]:
    """Feed chunks as the driver does (the tail kept between reads), then flush the end."""
    stream = TokenStream()
    out = []
    for chunk in chunks:
        out += stream.feed(chunk)
    return out + stream.flush()


def summary(stream: bytes, found) -> list[tuple]:
    result = []
    for offset, token in found:
        assert stream[offset:offset + len(token.raw)] == token.raw  # offsets point at the raw bytes
        r = token_reading(token, "beetek:test", offset, 0, 0)
        result.append((r.kind, r.mode, r.card, r.code))
    return result


@pytest.mark.parametrize("stream, expected, why", CASES, ids=[c[2] for c in CASES])
def test_token_table_whole(stream, expected, why):
    assert summary(stream, feed([stream])) == expected


@pytest.mark.parametrize("stream, expected, why", CASES, ids=[c[2] for c in CASES])
def test_token_table_split_everywhere(stream, expected, why):
    for cut in range(1, len(stream)):
        assert summary(stream, feed([stream[:cut], stream[cut:]])) == expected, f"split at {cut}"


@pytest.mark.parametrize("stream, expected, why", CASES, ids=[c[2] for c in CASES])
def test_token_table_byte_at_a_time(stream, expected, why):
    assert summary(stream, feed([bytes([b]) for b in stream])) == expected


def test_need_more_for_an_unfinished_token():
    # ref: "keeps any unmatched tail for the next read"
    for partial in (b"[", b"[Ga", b"[Game]", b"[Game]<Card:4", b" [Manual Burn Cards]<Car"):
        used, token = next_token(partial)
        assert token is None and used in (0, len(partial) - len(partial.lstrip())), partial


def test_the_kept_tail_is_bounded():
    # A '[' followed by endless text without ']' or '>' is cut, not kept forever.
    stream = b"[" + b"A" * (MAX_STRETCH * 3)
    used, token = next_token(stream)
    assert 0 < used <= MAX_STRETCH and token is not None and token.kind == "garbled"


def test_filler_alone_is_consumed():
    assert next_token(b"  \r\n") == (4, None)
    assert next_token(b"") == (0, None)


def test_bytes_outside_ascii_between_tokens_are_one_stretch_of_noise():
    # Held while they may go on (up to MAX_STRETCH), then one garbled stretch without the spaces around it.
    assert next_token(b"  \xff\r\n") == (2, None)
    used, token = next_token(b"  \xff\r\x00 [", final=False)
    assert used == 5 and token is not None and token.code == OUTSIDE_ASCII and token.raw == b"\xff\r\x00"
    used, token = next_token(b"\x80" * (MAX_STRETCH + 5))
    assert used == MAX_STRETCH + 5 and token is not None and token.code == OUTSIDE_ASCII


def test_decode_capture_gives_offsets_and_rejected_stretches():
    data = b" [Game]<Card:4S> ## [Game]<Card:4X> <W0x01> "
    lines = decode_capture(data)
    assert [(d["offset"], d["length"], d["type"]) for d in lines] == [
        (1, 15, "card"), (17, 2, "rejected"), (20, 15, "rejected"), (36, 7, "warning"),
    ]
    assert lines[1]["rejected"] and lines[2]["rejected"] and "card" in lines[2]["reason"]
    assert lines[0]["card"] == "4S" and lines[0]["mode"] == "Game"


def test_tokens_of_a_long_capture_are_linear():
    # A capture of 20 000 tokens decodes without re-copying the buffer per token.
    data = b" [Game]<Card:4S> " * 20000
    assert len(tokens(data)) == 20000
