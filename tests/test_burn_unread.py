"""A face-down burn card the reader could not read, at the table: the shoe still closes balanced."""

from shoed.rules.ruleset import load_ruleset
from shoed.table import TableController

T0 = 1_790_000_000_000_000_000


def test_a_shoe_with_an_unread_burn_card_closes_balanced():
    ruleset = load_ruleset("punto-banco")
    table = TableController("t1", ruleset, ruleset.decks)
    clock = iter(range(1, 100))

    def feed(**item):
        n = next(clock)
        return table.feed({"mono_ns": n * 10**9, "utc_ns": T0 + n * 10**9, "source": "shoe", **item})

    feed(kind="shoe_inserted")
    feed(kind="card", card="2H")  # exposed: two cards to burn
    feed(kind="unreadable")  # face down, not read: it need not be
    feed(kind="card", card="5S")
    for card in ["4C", "3D", "2S", "2C", "TC"]:  # P 4C 2S (6) stands, B 3D 2C (5) draws TC
        feed(kind="card", card=card)
    feed(kind="button", button="confirm")
    step = feed(kind="shoe_removed")
    closed = [e for e in step.events if e["kind"] == "shoe.closed"]
    assert len(closed) == 1
    rec = closed[0]["reconciliation"]
    assert (rec["seen"], rec["burned"], rec["burned_unread"], rec["in_coups"]) == (7, 3, 1, 5)
    assert rec["unaccounted"] == 0 and rec["balanced"] is True
    assert rec["left_in_shoe"] == rec["capacity"] - 8
    assert sum(rec["categories"].values()) == rec["capacity"]
    assert table.snapshot()["shoe"]["cards_left"] == rec["left_in_shoe"]
