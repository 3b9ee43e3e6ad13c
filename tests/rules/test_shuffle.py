"""The shuffler's order as pure functions: commitment and reveal, the cut found from the first cards,
every dealt card checked against the order, and the weak-shuffle threshold tested both ways."""

from __future__ import annotations

import random

import pytest

from shoed.rules import shuffle as sh
from shoed.rules.cards import full_deck

CARDS = [str(card) for card in full_deck()]


def shoe(decks: int = 8, seed: int = 1) -> list[str]:
    cards = CARDS * decks
    random.Random(seed).shuffle(cards)
    return cards


def dealt_from(order: list[str], offset: int) -> list[str]:
    return order[offset:] + order[:offset]


# ----- commitment ----------------------------------------------------------------------------------------------


def test_commitment_checks_against_its_reveal_and_nothing_else():
    order, salt = shoe(), bytes(range(32))
    commitment = sh.commit(order, salt)
    assert len(commitment) == 64 and sh.commit(order, salt) == commitment
    assert sh.reveal_matches(commitment, order, salt)
    swapped = order[:]
    swapped[10], swapped[11] = swapped[11], swapped[10]
    if swapped != order:
        assert not sh.reveal_matches(commitment, swapped, salt)
    assert not sh.reveal_matches(commitment, order, bytes(32))
    assert not sh.reveal_matches(commitment, order[:-1], salt)
    assert not sh.reveal_matches(commitment, order + ["XX"], salt)  # not a card: no, not an exception
    assert sh.commit(order, bytes(range(1, 33))) != commitment


def test_a_commitment_needs_a_real_salt():
    with pytest.raises(ValueError, match="salt"):
        sh.commit(shoe(), b"short")


# ----- alignment -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(40))
def test_the_cut_is_found_from_the_first_cards_and_is_the_true_one(seed):
    rng = random.Random(seed)
    order = shoe(8, seed)
    offset = rng.randrange(len(order))
    tracker = sh.Tracker(order)
    dealt = dealt_from(order, offset)
    for card in dealt[: sh.ALIGN_MAX]:
        check = tracker.dealt(card)
        assert check.ok and not check.unaligned
        if check.aligned:
            break
    n = tracker.dealt_count
    assert tracker.offset == offset and check.offset == offset
    assert sh.find_offsets(order, dealt[:n]) == [offset]  # unambiguous with exactly these cards
    assert len(sh.find_offsets(order, dealt[: n - 1])) > 1 or n == 1
    assert n <= 5
    for card in dealt[n:]:
        assert tracker.dealt(card).ok
    assert tracker.dealt_count == len(order)


def test_an_unreadable_card_before_the_cut_is_found_is_a_wildcard():
    order = shoe(8, 3)
    dealt = dealt_from(order, 100)
    tracker = sh.Tracker(order)
    assert tracker.unknown() is None
    for card in dealt[1:8]:
        check = tracker.dealt(card)
        if check.aligned:
            break
    assert tracker.offset == 100
    assert tracker.unknown() == tracker.at(tracker.next - 1)  # takes the place due and names it


def test_cards_of_another_shoe_never_align():
    tracker = sh.Tracker(shoe(8, 4))
    checks = [tracker.dealt(card) for card in shoe(8, 5)[:6]]
    assert checks[-1].unaligned and not tracker.aligned


def deal_with(order: list[str], offset: int, fault) -> tuple[list[sh.Check], list[str]]:
    dealt = dealt_from(order, offset)
    fault(dealt)
    tracker = sh.Tracker(order)
    return [tracker.dealt(card) for card in dealt[:60]], dealt


def findings(checks):
    return [c.mismatch for c in checks if c.mismatch], [c.resolved for c in checks if c.resolved]


ORDER = shoe(8, 7)
AT = 30  # the dealt position of the fault: well after the cut is found


def test_a_substituted_card_is_caught_at_its_position_with_the_card_expected():
    def switch(dealt):
        dealt[AT] = next(c for c in CARDS if c not in (dealt[AT], dealt[AT + 1]))

    checks, dealt = deal_with(ORDER, 55, switch)
    (found,), (resolved,) = findings(checks)
    assert (found.position, found.expected, found.got) == (AT, ORDER[(55 + AT) % 416], dealt[AT])
    assert found.order_position == (55 + AT) % 416
    assert resolved.kind == sh.SUBSTITUTED and resolved.position == AT
    assert all(c.ok for c in checks[AT + 1:])


def test_an_inserted_card_is_caught():
    def insert(dealt):
        dealt.insert(AT, next(c for c in CARDS if c not in (dealt[AT], dealt[AT + 1])))

    checks, _ = deal_with(ORDER, 55, insert)
    (found,), (resolved,) = findings(checks)
    assert found.position == AT and resolved.kind == sh.INSERTED
    assert all(c.ok for c in checks[AT + 1:])


def test_a_removed_card_is_caught():
    def remove(dealt):
        assert dealt[AT] != dealt[AT + 1]
        del dealt[AT]

    checks, _ = deal_with(ORDER, 55, remove)
    (found,), (resolved,) = findings(checks)
    assert found.position == AT and found.expected == ORDER[(55 + AT) % 416]
    assert resolved.kind == sh.REMOVED
    assert all(c.ok for c in checks[AT + 1:])


def test_two_cards_out_of_order_are_caught():
    def swap(dealt):
        dealt[AT], dealt[AT + 1] = dealt[AT + 1], dealt[AT]

    checks, _ = deal_with(ORDER, 55, swap)
    (found,), (resolved,) = findings(checks)
    assert found.position == AT and resolved.kind == sh.OUT_OF_ORDER
    assert all(c.ok for c in checks[AT + 1:])


def test_a_mismatch_nothing_explains_stops_the_checking_rather_than_guess():
    def scramble(dealt):
        dealt[AT:AT + 3] = ["AC", "AC", "AC"] if dealt[AT] != "AC" else ["KD", "KD", "KD"]

    checks, _ = deal_with(ORDER, 55, scramble)
    found, resolved = findings(checks)
    assert resolved[0].kind == sh.UNEXPLAINED and found[0].position == AT


# ----- shuffle quality ----------------------------------------------------------------------------------------


def riffle(cards: list[str], rng: random.Random) -> list[str]:
    """One riffle (Gilbert-Shannon-Reeds): a weak shuffle that leaves long runs together."""
    cut = sum(rng.random() < 0.5 for _ in cards)
    left, right, out = cards[:cut], cards[cut:], []
    while left or right:
        if rng.random() < len(left) / (len(left) + len(right)):
            out.append(left.pop(0))
        else:
            out.append(right.pop(0))
    return out


@pytest.mark.parametrize("seed", range(10))
def test_a_weak_shuffle_is_flagged_with_its_run_and_where_it_lies(seed):
    rng = random.Random(seed)
    previous = shoe(8, 100 + seed)[:402]
    order = riffle(previous + shoe(8, 100 + seed)[402:], rng)  # one riffle: runs of the old order survive
    run = sh.longest_surviving_run(previous, order)
    assert sh.is_weak(run, 8)
    assert tuple(previous[run.previous:run.previous + run.length]) == run.cards
    assert tuple((order + order)[run.position:run.position + run.length]) == run.cards


def test_random_shuffles_are_flagged_no_more_often_than_the_stated_rate():
    """300 seeded random shoes: at a false-alarm rate of 1 in 1,000, 0.3 alarms are expected; a threshold one
    shorter would give about 7 (P(longest >= 4) is about 2.4 % for 8 decks)."""
    rng = random.Random(2026)
    alarms = 0
    for _ in range(300):
        previous, order = shoe(8, rng.randrange(1 << 30))[:402], shoe(8, rng.randrange(1 << 30))
        alarms += sh.is_weak(sh.longest_surviving_run(previous, order), 8)
    assert alarms <= 2


def test_the_run_found_is_the_longest():
    previous = list("ABCDEFGH")
    order = list("xABxCDEFyGH")
    run = sh.longest_surviving_run(previous, order)
    assert (run.length, run.previous, run.position, run.cards) == (4, 2, 4, tuple("CDEF"))
    wrapped = sh.longest_surviving_run(list("ABCDE"), list("DExxABC"))  # read cyclically: the cut
    assert wrapped.length == 5 and wrapped.position == 4


def test_thresholds_grow_with_the_shoe():
    assert sh.weak_run_threshold(1) <= sh.weak_run_threshold(6) <= sh.weak_run_threshold(8)
    assert sh.weak_run_threshold(16) == sh.weak_run_threshold(8)


# ----- sealing ---------------------------------------------------------------------------------------------------

KEY = bytes(range(32))


def test_sealed_cards_open_only_with_their_key_and_context():
    cards = shoe()[:64]
    sealed = sh.seal_cards(KEY, cards, "ctx 1")
    assert sh.unseal_cards(KEY, sealed, "ctx 1") == cards
    assert sh.seal_cards(KEY, cards, "ctx 1") == sealed  # synthetic nonce: a replay seals alike
    assert sh.seal_cards(KEY, cards[::-1], "ctx 1")[:24] != sealed[:24]  # other cards, other nonce
    assert not any(card_hex in sealed for card_hex in (sh.order_bytes(cards[:4]).hex(),))
    for key, context in ((bytes(32), "ctx 1"), (KEY, "ctx 2")):
        with pytest.raises(ValueError, match="does not open"):
            sh.unseal_cards(key, sealed, context)
    tampered = sealed[:-2] + ("00" if sealed[-2:] != "00" else "01")
    with pytest.raises(ValueError, match="does not open"):
        sh.unseal_cards(KEY, tampered, "ctx 1")


def test_order_key_files():
    assert sh.read_key(KEY.hex().encode() + b"\n") == KEY
    with pytest.raises(ValueError, match="64 hex digits"):
        sh.read_key(KEY)  # 32 raw bytes: not told apart from 32 characters of text, refused
    with pytest.raises(ValueError, match="64 hex digits"):
        sh.read_key(b"too short")


def test_a_card_put_back_comes_out_again_in_its_place_before_and_after_the_cut_is_found():
    order = shoe(8, 5)
    dealt = dealt_from(order, 123)
    tracker = sh.Tracker(order)
    assert tracker.dealt(dealt[0]).ok and tracker.returned(dealt[0]) == 0  # before the cut is found
    assert tracker.dealt_count == 0 and len(tracker._candidates) == len(order)
    for card in dealt[:40]:
        assert tracker.dealt(card).ok
    assert tracker.aligned and tracker.returned(dealt[39]) == 39
    assert tracker.returned(dealt[39]) is None  # not the last card out now
    assert all(tracker.dealt(card).ok for card in dealt[39:60])
    # A card out of order opens a mismatch; put back, it is forgotten, and the right card is in order.
    assert tracker.dealt(dealt[61]).mismatch is not None and tracker.returned(dealt[61]) == 60
    assert tracker.dealt(dealt[60]).ok and tracker.dealt(dealt[61]).ok and not tracker.lost
