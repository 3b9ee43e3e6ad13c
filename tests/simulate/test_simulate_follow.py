"""The virtual dealer's memory of the cards it holds (shoed/simulate/follow.py).

The follower reads the cards the table asks for from the shoe's events as they go out,
and keeps only those the table may still ask for: a run without end holds a bounded few.
"""

from __future__ import annotations

from shoed.simulate import VirtualShoe
from shoed.simulate.dealer import CARD, UNREADABLE, ShoeEvent
from shoed.simulate.follow import TableFollower


def follower(plain: bool) -> tuple[VirtualShoe, TableFollower]:
    shoe = VirtualShoe(seed=1, plain=plain, keep_truth=False)
    return shoe, TableFollower(shoe, "T1", "ipc:///nowhere-e", "ipc:///nowhere-s", "ipc:///nowhere-c")


def out(shoe: VirtualShoe, n: int, card: str, kind: str = CARD) -> None:
    shoe._record(ShoeEvent(n=n, kind=kind, shoe=1, card=card, mode="game", recipient="player"))


def test_a_plain_shoes_dealer_names_each_unidentified_draw_and_forgets_the_rest():
    shoe, dealer = follower(plain=True)
    cards = [f"{rank}S" for rank in "A23456789TJQK"] * 40  # 520 draws
    for n, card in enumerate(cards):
        out(shoe, n, card)
        # The table sees each draw; every 50th it could not identify.
        dealer.on({"kind": "card", "recipient": "unreadable" if n % 50 == 7 else "player"})
        if n % 50 == 20:
            assert dealer._unreadable_card() == cards[n - 13]
        assert len(dealer._draws) <= 14  # from the oldest draw the table may still ask for
    assert dealer.entered == 10 and dealer.unidentified == [507]


def test_a_draw_the_table_has_not_seen_yet_is_kept():
    shoe, dealer = follower(plain=True)
    for n, card in enumerate(["2H", "3H", "4H"]):
        out(shoe, n, card)
    dealer.on({"kind": "card", "recipient": "player"})
    dealer.on({"kind": "card", "recipient": "unreadable"})
    assert list(dealer._draws) == ["3H", "4H"] and dealer._first_draw == 1
    assert dealer._unreadable_card() == "3H"
    assert dealer._unreadable_card() is None  # nothing more asked for


def test_a_reading_shoes_dealer_enters_the_unreadable_game_cards_in_order():
    shoe, dealer = follower(plain=False)
    out(shoe, 0, "5C")
    out(shoe, 1, "6C", UNREADABLE)
    out(shoe, 2, "7C")
    out(shoe, 3, "8C", UNREADABLE)
    assert dealer._unreadable_card() == "6C"
    assert dealer._unreadable_card() == "8C"
    assert dealer._unreadable_card() is None
    assert not dealer._unread and not dealer._draws and shoe.events_out == 4 and shoe.cards_out == 4


def test_a_draw_never_asked_for_does_not_hold_every_later_one():
    # The table could not identify a draw, then voided its coup instead of asking for it.
    from shoed.simulate.follow import DRAWS_KEPT

    shoe, dealer = follower(plain=True)
    for n in range(3 * DRAWS_KEPT):
        out(shoe, n, "9S")
        dealer.on({"kind": "card", "recipient": "unreadable" if n == 5 else "player"})
    assert len(dealer._draws) <= DRAWS_KEPT and dealer.unidentified == []
