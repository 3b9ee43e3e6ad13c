"""The virtual dealer deals real shoes by the rules.

Shoe procedure from the Macau statutory rules (docs/rules/macau-statutory-rules.txt):
Art. II (first card exposed, that many burned; tens and faces count 10, the
cut card at least a number of cards from the end), Art. III (last coup when the
cut card comes out), Art. IX (the tableau) through shoed.rules.coup.Coup, and
Art. X (misdeals) for the injected dealing faults.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

import pytest

from shoed.rules import misdeal as md
from shoed.rules.cards import full_deck, parse_card
from shoed.rules.coup import Coup
from shoed.rules.ruleset import builtin_names, load_ruleset
from shoed.simulate.dealer import (
    BURN,
    BUTTON,
    CARD,
    CUT_CARD,
    EXTRA,
    SHOE_INSERTED,
    SHOE_REMOVED,
    UNREADABLE,
    DealError,
    DealSetup,
    deal,
    shuffled_shoe,
)
from shoed.simulate.faults import FaultPlan, FaultPlanError

PUNTO = load_ruleset("punto-banco")
ROYAL = load_ruleset("baccarat-royal")


def run(ruleset=PUNTO, **kw):
    return list(deal(DealSetup(ruleset, **kw)))


def shoes_of(events):
    out: dict[int, list] = {}
    for e in events:
        out.setdefault(e.shoe, []).append(e)
    return out


def coups_of(shoe_events):
    out: dict[int, list] = {}
    for e in shoe_events:
        if e.coup is not None:
            out.setdefault(e.coup, []).append(e)
    return out


def replay(ruleset, coup_events):
    """Feed one coup's events through the rules engine as the daemon would:
    returns the coup and the misdeals it reported."""
    coup, misdeals = Coup(ruleset), []
    for e in coup_events:
        if e.kind == BUTTON and e.button in ("player_draw", "player_stand", "banker_draw", "banker_stand"):
            side, action = e.button.split("_")
            coup = coup.decide(side, action == "draw")
        elif e.kind == BUTTON and e.button == "confirm":
            misdeal = coup.close()
            if misdeal is not None:
                misdeals.append(misdeal)
        elif e.is_card:
            coup, misdeal = coup.deal(parse_card(e.card))
            if misdeal is not None:
                misdeals.append(misdeal)
    return coup, misdeals


# ---------------------------------------------------------------------------
# Art. II: "the first card of the cards count the number of cards to be sold":
# the first card is exposed and that many cards are burned; tens and faces count 10.
BURN_CASES = [
    ("ace burns 1", 1, 1),
    ("five burns 5", 5, 5),
    ("nine burns 9", 9, 9),
    ("ten burns 10", 10, 10),
    ("jack burns 10", 11, 10),
    ("king burns 10", 13, 10),
]


@pytest.mark.parametrize("case, rank, burned", BURN_CASES, ids=[c[0] for c in BURN_CASES])
def test_burn_count_follows_the_first_card(case, rank, burned):
    seed = next(s for s in range(10_000) if shuffled_shoe(s, 1, PUNTO.decks)[0].rank == rank)
    events = run(seed=seed)
    start = next(i for i, e in enumerate(events) if e.button == "burn_start")
    end = next(i for i, e in enumerate(events) if e.button == "burn_end")
    burn = events[start + 1 : end]
    assert [e.kind for e in events[: start + 1]] == [SHOE_INSERTED, BUTTON]
    assert all(e.kind == CARD and e.mode == "burn" and e.recipient == BURN for e in burn)
    assert parse_card(burn[0].card).rank == rank
    assert len(burn) == 1 + burned  # the exposed card and the cards it burns
    first_game = events[end + 1]
    assert first_game.recipient == "player" and first_game.coup == 1 and first_game.mode == "game"


def test_no_burn_when_the_ruleset_burns_none():
    events = run(replace(PUNTO, burn="none"), seed=3)
    assert events[0].kind == SHOE_INSERTED
    assert events[1].kind == CARD and events[1].recipient == "player"
    assert not any(e.kind == BUTTON and e.button.startswith("burn") for e in events)


# ---------------------------------------------------------------------------
# Every card of the shoe is accounted for: dealt, burned, or left behind the cut card.
@pytest.mark.parametrize("name", builtin_names())
def test_every_card_leaves_the_shoe_once_or_stays_behind(name):
    ruleset = load_ruleset(name)
    events = run(ruleset, seed=11, shoes=2)
    for shoe, evs in shoes_of(events).items():
        decks = evs[0].decks
        assert decks == ruleset.decks
        drawn = [e for e in evs if e.is_card]
        left = evs[-1].left
        assert evs[-1].kind == SHOE_REMOVED
        assert len(drawn) + len(left) == 52 * decks
        assert [e.position for e in drawn] == list(range(len(drawn)))  # in shoe order, none twice
        counts = Counter(e.card for e in drawn) + Counter(left)
        assert counts == Counter(str(c) for c in full_deck() * decks)
        # what was drawn is exactly the shuffled shoe's head
        assert [e.card for e in drawn] == [str(c) for c in shuffled_shoe(11, shoe, decks)[: len(drawn)]]


def test_the_shoes_of_a_run_are_fresh_shuffles():
    events = run(seed=5, shoes=3)
    per_shoe = shoes_of(events)
    assert sorted(per_shoe) == [1, 2, 3]
    orders = [tuple(e.card for e in evs if e.is_card) for evs in per_shoe.values()]
    assert len(set(orders)) == 3
    for evs in per_shoe.values():
        assert evs[0].kind == SHOE_INSERTED and evs[-1].kind == SHOE_REMOVED


# ---------------------------------------------------------------------------
# Art. IX: every coup dealt follows the tableau: complete, no misdeal, the
# result the dealer confirmed is the engine's.
@pytest.mark.parametrize("name", builtin_names())
def test_every_coup_follows_the_tableau(name):
    ruleset = load_ruleset(name)
    events = run(ruleset, seed=7, shoes=2)
    coups = 0
    for evs in shoes_of(events).values():
        for number, cevs in coups_of(evs).items():
            coup, misdeals = replay(ruleset, cevs)
            assert misdeals == [], (name, number, misdeals)
            assert coup.complete
            confirm = [e for e in cevs if e.button == "confirm"]
            assert len(confirm) == 1 and confirm[0] is cevs[-1]
            result = coup.result()
            assert confirm[0].result["winner"] == result.winner
            assert confirm[0].result["player"] == [str(c) for c in result.player_cards]
            assert [e.recipient for e in cevs if e.is_card] == list(coup.order)
            coups += 1
    assert coups > 100


def test_free_choices_are_pressed_before_the_card_baccarat_royal():
    # docs/rules/baccarat-royal.txt, Ziehungstabellen: "freie Wahl" cells are decided by the active player.
    events = run(ROYAL, seed=2, shoes=2)
    decisions = [e for e in events if e.kind == BUTTON and e.button not in ("confirm", "burn_start", "burn_end")]
    assert {e.button for e in decisions} == {"player_draw", "player_stand", "banker_draw", "banker_stand"}
    for evs in shoes_of(events).values():
        for cevs in coups_of(evs).values():
            coup = Coup(ROYAL)
            for e in cevs:
                if e.kind == BUTTON and e.button != "confirm":
                    side = e.button.split("_")[0]
                    assert coup.next == f"decision:{side}"  # pressed exactly when the choice is due
                    coup = coup.decide(side, e.button.endswith("draw"))
                elif e.is_card:
                    coup, misdeal = coup.deal(parse_card(e.card))
                    assert misdeal is None


# ---------------------------------------------------------------------------
# Art. III: "when the card sent to white card brand, is the last inning or only
# be one more innings".
@pytest.mark.parametrize("rule, after", [("current", 0), ("one-more", 1)])
@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_last_coup_rule(rule, after, seed):
    ruleset = replace(PUNTO, last_coup=rule)
    events = run(ruleset, seed=seed)
    cut = [e for e in events if e.kind == CUT_CARD]
    assert len(cut) == 1
    coups = coups_of(events)
    last = max(coups)
    assert last == cut[0].coup + after
    assert coups[last][-1].button == "confirm" and coups[last][-1].last is True
    assert all(cevs[-1].last is False for number, cevs in coups.items() if number != last)
    assert events[-1].kind == SHOE_REMOVED


@pytest.mark.parametrize("rule, after", [("current", 1), ("one-more", 2)])
def test_a_cut_card_out_on_an_extra_card_comes_before_the_next_coup_as_the_table_counts_it(rule, after):
    # The cut card lies right behind coup N's last card, and an extra card is drawn after coup N was
    # complete: the cut card comes out on it. The table counts a complete coup as no longer in
    # progress, so the last coup is N+1 (current) or N+2 (one-more); a dealer that took N as the
    # coup in progress ended the shoe a coup early and waited for a `shoe.finished` that never came.
    from harness.records import controller_inputs
    from shoed.table import TableController

    ruleset = replace(PUNTO, last_coup=rule)
    size = 52 * ruleset.decks
    clean = run(ruleset, seed=7, cut_from_end=20)
    last_card = {e.coup: e.position for e in clean if e.is_card and e.coup}
    n = max(coup for coup, position in last_card.items() if position < size - 20)
    events = run(ruleset, seed=7, cut_from_end=size - last_card[n] - 1, faults=FaultPlan(extra_card_after=(n,)))
    i = next(i for i, e in enumerate(events) if e.kind == CUT_CARD)
    assert events[i].coup == n and events[i + 1].recipient == EXTRA
    coups = coups_of(events)
    assert max(coups) == n + after and coups[n + after][-1].last is True

    table = TableController("t1", ruleset, ruleset.decks)
    out: list[dict] = []
    for item in controller_inputs(events):
        step = table.feed(item).events
        out += step
        for misdeal in [e["misdeal"] for e in step if e["kind"] == "misdeal"]:  # burned, as the dealer does
            out += table.feed({"kind": "command", "cmd": "burn_card", "args": {"misdeal": misdeal["id"]},
                               "client": "dealer", "role": "dealer", "mono_ns": item["mono_ns"] + 1,
                               "utc_ns": item["utc_ns"] + 1}).events
    (cut,) = [e for e in out if e["kind"] == "shoe.cut_card"]
    assert cut["last_coup"] == n + after
    kinds = [e["kind"] for e in out]
    assert kinds[-2:] == ["shoe.finished", "shoe.closed"], kinds[-6:]
    assert out[-1]["reconciliation"]["balanced"] and "coup.void" not in kinds


@pytest.mark.parametrize("cut_from_end", [6, 14, 60, 200])
def test_cut_card_comes_out_before_its_card(cut_from_end):
    events = run(seed=9, cut_from_end=cut_from_end)
    size = 52 * PUNTO.decks
    i = next(i for i, e in enumerate(events) if e.kind == CUT_CARD)
    after = next(e for e in events[i:] if e.is_card)
    assert after.position == size - cut_from_end
    assert len(events[-1].left) <= cut_from_end


def test_deal_setup_errors():
    with pytest.raises(DealError, match="cut card"):
        DealSetup(PUNTO, cut_from_end=312)
    with pytest.raises(DealError, match="decks"):
        DealSetup(PUNTO, decks=0)
    with pytest.raises(DealError, match="shoes"):
        DealSetup(PUNTO, shoes=-1)


def test_shoes_zero_deals_without_end():
    events = deal(DealSetup(PUNTO, seed=1, shoes=0))
    removed = 0
    for e in events:
        removed += e.kind == SHOE_REMOVED
        if removed == 5:
            break
    assert removed == 5  # and the generator would go on


def test_same_seed_same_deal_other_seed_other_deal():
    a, b, c = run(seed=42, shoes=2), run(seed=42, shoes=2), run(seed=43, shoes=2)
    assert [e.to_json() for e in a] == [e.to_json() for e in b]
    assert [e.card for e in a if e.is_card] != [e.card for e in c if e.is_card]


def test_shoe_empty_raises_an_alarm_and_ends_the_shoe():
    # A cut card 3 cards from the end and "one more" coup: the shoe runs dry mid-coup.
    ruleset = replace(PUNTO, last_coup="one-more")
    events = run(ruleset, seed=2, cut_from_end=3)
    alarms = [e for e in events if e.kind == "alarm"]
    assert len(alarms) == 1 and alarms[0].text == "E7 Shoe empty"
    assert events[-2] is alarms[0]  # no confirm: the coup stays incomplete
    assert events[-1].kind == SHOE_REMOVED and events[-1].left == ()
    coup, _ = replay(ruleset, coups_of(events)[alarms[0].coup])
    assert not coup.complete


# ---------------------------------------------------------------------------
# Dealing faults produce what the plan says, and are recorded in the ground truth.
def test_faults_never_change_the_shuffle():
    plain = run(seed=4)
    faulty = run(seed=4, faults=FaultPlan(unreadable=0.2, extra_card=0.2, missing_card=0.2))
    pos = {e.position: e.card for e in plain if e.is_card}
    assert all(pos[e.position] == e.card for e in faulty if e.is_card and e.position in pos)


def test_unreadable_cards_on_schedule_keep_the_real_card():
    events = run(seed=6, faults=FaultPlan(unreadable_at=(1, 12, 30)))
    unreadable = [e for e in events if e.kind == UNREADABLE]
    assert [e.number for e in unreadable] == [1, 12, 30]
    assert unreadable[0].mode == "burn"  # the exposed burn card itself
    assert all(e.fault == "unreadable" and e.card and e.reason in (1, 2) for e in unreadable)
    # the real card still counts: the shoe's accounting is unchanged
    drawn = [e for e in events if e.is_card]
    assert [e.position for e in drawn] == list(range(len(drawn)))


def test_unreadable_rate():
    events = run(seed=6, shoes=4, faults=FaultPlan(unreadable=0.1))
    cards = [e for e in events if e.is_card]
    share = sum(e.kind == UNREADABLE for e in cards) / len(cards)
    assert 0.07 < share < 0.13


def test_extra_card_after_a_complete_coup():
    # Macau statutory rules Art. X: a card drawn after the coup is complete is burned.
    events = run(seed=8, faults=FaultPlan(extra_card_after=(2, 5)))
    extra = [e for e in events if e.recipient == EXTRA]
    assert [e.coup_number for e in extra] == [2, 5]
    for e in extra:
        cevs = coups_of(events)[e.coup]
        assert e.fault == "extra_card" and cevs[-1].button == "confirm"
        assert cevs[-2] is e  # after the coup's last card, before the confirm
        coup, misdeals = replay(PUNTO, cevs)
        assert [m.kind for m in misdeals] == [md.EXTRA_CARD] and coup.complete


def test_missing_card_confirm_while_a_card_is_due():
    events = run(seed=8, faults=FaultPlan(missing_card_in=(3, 4)))
    early = [e for e in events if e.fault == "missing_card"]
    assert [e.coup_number for e in early] == [3, 4]
    for e in early:
        cevs = coups_of(events)[e.coup]
        assert e.kind == BUTTON and e.button == "confirm"
        coup, misdeals = replay(PUNTO, cevs)
        # the early confirm is a missing card; the dealer then deals it and confirms again
        assert [m.kind for m in misdeals] == [md.MISSING_CARD]
        assert misdeals[0].correction == md.DEAL
        assert coup.complete and cevs[-1].button == "confirm" and cevs[-1].fault is None
        i = cevs.index(e)
        assert cevs[i + 1].is_card and cevs[i + 1].recipient == e.recipient  # the card that was due
        assert sum(x.is_card for x in cevs[i + 1 :]) == 1  # it was the last one


def test_foreign_card_is_one_more_than_the_decks_hold():
    events = run(seed=10, faults=FaultPlan(foreign_card_at=(20,)))
    foreign = [e for e in events if e.fault == "foreign_card"]
    assert len(foreign) == 1
    f = foreign[0]
    assert f.position is None and f.mode == "game" and f.number >= 20
    seen = Counter(e.card for e in events if e.is_card and e.number <= f.number)
    assert seen[f.card] == PUNTO.decks + 1  # e.g. a 7th ace of spades in a 6-deck shoe
    # the genuine cards are all still there, in order
    genuine = [e for e in events if e.is_card and e.position is not None]
    assert [e.position for e in genuine] == list(range(len(genuine)))


def test_no_faults_without_a_plan():
    events = run(seed=12, shoes=2)
    assert not any(e.fault for e in events)


@pytest.mark.parametrize(
    "kw, message",
    [
        ({"ber": 1.5}, "ber"),
        ({"lose": -0.1}, "lose"),
        ({"unreadable_at": (0,)}, "unreadable-at"),
        ({"disconnect_every": 0}, "disconnect-every"),
    ],
)
def test_fault_plan_errors(kw, message):
    with pytest.raises(FaultPlanError, match=message):
        FaultPlan(**kw)
