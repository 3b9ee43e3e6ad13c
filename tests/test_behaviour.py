"""Journals replay under the behaviour they were recorded under (shoed.table.controller.BEHAVIOUR).

A checkpoint without `behaviour` is behaviour 1: the table takes what comes as it did when such journals
were written, so that they replay byte for byte (tests/corpus/journals-behaviour-1/). A daemon's power-on
asks for the newest; the table takes it between two shoes, never within one."""

from __future__ import annotations

import json

import pytest

from shoed.rules.ruleset import load_ruleset
from shoed.table import TableController
from shoed.table.controller import BEHAVIOUR
from shoed.journal import iter_records
from shoed.table.replay import checkpoint_record, controller_from_checkpoint
from tests.corpus.cases import CASES, feed_case, new_table, record_case

T0 = 1_790_000_000_000_000_000
RULES = load_ruleset("punto-banco")


class Feed:
    def __init__(self, table: TableController):
        self.table, self.n = table, 0

    def __call__(self, kind: str, **fields) -> list[dict]:
        self.n += 1
        return self.table.feed({"kind": kind, "mono_ns": self.n * 10**9, "utc_ns": T0 + self.n * 10**9,
                                **fields}).events


def behaviour_1() -> TableController:
    """A table rebuilt from a checkpoint an earlier version wrote: no `behaviour` in it."""
    record = json.loads(json.dumps(checkpoint_record(TableController("t1", RULES, RULES.decks))))
    record["state"].pop("behaviour")
    table = controller_from_checkpoint(record)
    assert table.behaviour == 1 and "behaviour" not in table.checkpoint()
    return table


def burn_then(feed: Feed, mode_after: str) -> list[dict]:
    feed("shoe_inserted", source="native:shoe")
    feed("card", card="2H", mode="burn", source="native:shoe")  # the exposed card: two to burn
    feed("card", card="7C", mode="burn", source="native:shoe")
    return feed("card", card="9S", mode=mode_after, source="native:shoe")  # the second, said a game card


def test_a_fresh_table_has_the_newest_behaviour_and_its_checkpoint_says_so():
    table = TableController("t1", RULES, RULES.decks)
    assert table.behaviour == BEHAVIOUR == 4 and table.checkpoint()["behaviour"] == 4


def test_behaviour_1_burns_a_game_card_while_the_burn_is_due_as_it_did():
    old = burn_then(Feed(behaviour_1()), "game")
    new = burn_then(Feed(TableController("t1", RULES, RULES.decks)), "game")
    assert [e["kind"] for e in old][:1] == ["shoe.burn"]
    assert any(e["kind"] == "misdeal" and e["misdeal"]["kind"] == "burn_short" for e in new)


def test_behaviour_1_counts_an_unread_burn_as_it_did():
    for table, unread in ((behaviour_1(), 0), (TableController("t1", RULES, RULES.decks), 1)):
        feed = Feed(table)
        feed("shoe_inserted", source="native:shoe")
        feed("card", card="2H", mode="burn", source="native:shoe")
        feed("unreadable", mode="burn", code="not_read", source="native:shoe")
        assert table.shoe.counts.unread == unread


def test_the_newest_behaviour_comes_with_the_next_shoe_never_within_one():
    table = behaviour_1()
    feed = Feed(table)
    feed("shoe_inserted", source="native:shoe")
    feed("power", state="on", clean=True, sources=["native:shoe"], behaviour=BEHAVIOUR)
    assert (table.behaviour, table.behaviour_next) == (1, BEHAVIOUR)
    assert table.checkpoint()["behaviour_next"] == BEHAVIOUR  # a file opened now carries it over
    feed("card", card="2H", mode="burn", source="native:shoe")
    feed("card", card="7C", mode="burn", source="native:shoe")
    assert [e["kind"] for e in feed("card", card="9S", mode="game", source="native:shoe")][:1] == ["shoe.burn"]
    feed("shoe_removed", source="native:shoe")
    feed("shoe_inserted", source="native:shoe")
    assert (table.behaviour, table.behaviour_next) == (BEHAVIOUR, 0) and table.shoe.counts_unread


def test_between_shoes_the_power_on_gives_the_newest_behaviour_at_once():
    table = behaviour_1()
    Feed(table)("power", state="on", clean=True, sources=["native:shoe"], behaviour=BEHAVIOUR)
    assert table.behaviour == BEHAVIOUR and "behaviour_next" not in table.checkpoint()


# The cases each behaviour changed, as the one before it recorded them: {folder: (cases, the behaviour named)}.
# behaviour-1-cases: written by shoed before behaviour 2 (the code of that day, its own Journal): an unread face-down
# burn, a game card while the burn was due, a card drawn while an unreadable card waited. behaviour-2-cases: written
# under behaviour 2 (tests/corpus/cases.py): a void closing a burn_during_coup, a second end_burn while the first's
# unread card waited, an unreadable burn card while the table was held. behaviour-3-cases: under behaviour 3, a
# confirm while the burn was due and after the shoe's last coup; the newest of two unreadable cards entered unnamed.
EARLIER_CASES = {
    "behaviour-1-cases": (["game_card_in_burn", "unread_burn", "unread_pending"], None),
    "behaviour-2-cases": (["end_burn_after_unread", "locked_unread_burn", "void_burn_during_coup"], 2),
    "behaviour-3-cases": (["confirm_without_coup", "two_unread_entered_unnamed"], 3),
}


@pytest.mark.parametrize("folder", sorted(EARLIER_CASES))
def test_journals_of_the_cases_a_behaviour_changed_replay_as_recorded_under_the_one_before(folder):
    # Replayed under the behaviour they name, every event as recorded, and the journal verifies.
    from pathlib import Path

    from shoed.journal import verify
    from shoed.journal.replay import replay_journal

    cases = Path(__file__).parent / "corpus" / folder
    names, behaviour = EARLIER_CASES[folder]
    assert sorted(p.name for p in cases.iterdir()) == names
    for name in names:
        assert verify(cases / name).ok, name
        result = replay_journal(cases / name)
        assert result.identical and result.events > 8, (name, result.differences[:1])
        checkpoints = [r for r in iter_records(cases / name) if r.get("kind") == "checkpoint"]
        assert {c["state"].get("behaviour") for c in checkpoints} == {behaviour}


# ----- behaviour 3 ------------------------------------------------------------------------------------------------


def _case(name: str) -> tuple[TableController, list[dict]]:
    _, auto_confirm, inputs = CASES[name]
    table = new_table(auto_confirm)
    return table, feed_case(table, inputs)


def _kinds(events: list[dict], kind: str) -> list[dict]:
    return [e for e in events if e["kind"] == kind]


def test_a_misdeal_open_when_its_shoe_closes_ends_with_it_and_the_journal_replays(tmp_path):
    from shoed.journal.replay import replay_journal

    table, events = _case("pending_at_close")
    assert _kinds(events, "misdeal")[0]["misdeal"]["kind"] == "unreadable_card"
    assert _kinds(events, "misdeal.corrected") == []  # enter_card after the shoe was gone: refused
    # The next card opens the next shoe (auto_confirm) and is its exposed burn card, as any shoe's first.
    (opened,) = _kinds(events, "shoe.opened")[1:]
    assert [e["card"] for e in _kinds(events, "shoe.burn") if e["shoe"] == opened["shoe"]] == ["6D"]
    # Written as the daemon writes it, each file replays from its own checkpoint: the next shoe's file too.
    record_case("pending_at_close", tmp_path)
    result = replay_journal(tmp_path)
    assert result.identical and result.events == len(events), result.differences[:1]


def test_enter_card_with_no_shoe_open_says_so():
    _, auto_confirm, inputs = CASES["pending_at_close"]
    table = new_table(auto_confirm)
    steps: list = []
    feed_case(table, inputs[:-1], lambda item, step, before: steps.append(step))  # up to the enter_card
    assert [p["kind"] for p in table.pending] == [] and table.between_shoes
    assert steps[-1].reply == {"ok": False, "error": "no shoe is open"} and steps[-1].events == []


def test_a_void_that_closes_a_burn_during_coup_counts_its_card_with_the_void_coup():
    table, events = _case("void_burn_during_coup")
    (closed,) = _kinds(events, "shoe.closed")
    rec = closed["reconciliation"]
    assert (rec["in_void_coups"], rec["unaccounted"], rec["balanced"]) == (2, 0, True), rec


def test_end_burn_waits_while_an_earlier_end_burns_unread_card_is_to_be_entered():
    from tests.corpus.cases import BEETEK, _card, _pit

    table = new_table(auto_confirm=True)
    inputs = CASES["end_burn_after_unread"][2][:4]  # the ace, an unread game card, 9S, the first end_burn
    events = feed_case(table, [*inputs, _pit("end_burn")])
    assert [m["misdeal"]["kind"] for m in _kinds(events, "misdeal")] == ["burn_short", "burn_short",
                                                                          "unreadable_card"]
    assert _kinds(events, "misdeal.corrected")[-1]["misdeal"] == 1  # the second end_burn was refused
    # In the order the cards came: the unread card entered (the player's first), then 9S (the banker's first).
    table2 = new_table(auto_confirm=True)
    events = feed_case(table2, [*inputs, _pit("enter_card", card="2D"), _pit("end_burn"), _card("KD", "game", BEETEK),
                                _card("3H", "game", BEETEK)])
    dealt = [(e["card"], e["recipient"]) for e in _kinds(events, "card") if e["recipient"] in ("player", "banker")]
    assert dealt == [("2D", "player"), ("9S", "banker"), ("KD", "player"), ("3H", "banker")]
    assert table2.pending == []


def test_an_unreadable_card_while_the_table_is_held_is_neither_burned_nor_dealt():
    from tests.corpus.cases import _card, _pit

    table, events = _case("locked_unread_burn")
    held = events[:next(i for i, e in enumerate(events) if e["kind"] == "alarm" and not e["active"])]
    assert [e["card"] for e in _kinds(held, "shoe.burn")] == ["AH"] and _kinds(held, "coup.opened") == []
    (misdeal,) = _kinds(held, "misdeal")
    assert misdeal["misdeal"]["kind"] == "unreadable_card"
    # The table goes on: the card after it waits for it, and once entered it is the burn card it was.
    assert _kinds(events, "misdeal")[-1]["misdeal"]["kind"] == "card_out_of_sequence"
    table = new_table(auto_confirm=False)
    events = feed_case(table, [*CASES["locked_unread_burn"][2][:5], _pit("enter_card", card="4S"),
                               _card("9S", "game")])
    assert [e["card"] for e in _kinds(events, "shoe.burn")] == ["AH", "4S"]
    assert [(e["card"], e["recipient"]) for e in _kinds(events, "card")][-1] == ("9S", "player")


def test_unreadable_cards_are_entered_in_the_order_they_came_out():
    from tests.corpus.cases import _card, _pit

    table = new_table(auto_confirm=False)
    unread = {"kind": "unreadable", "mode": "game", "code": "no_index", "source": "native:/dev/shoe"}
    steps: list = []
    feed_case(table, [{"kind": "shoe_inserted", "source": "native:/dev/shoe"}, _card("AH", "burn"),
                      _card("3C", "burn"), unread, dict(unread), _pit("enter_card", card="9D", misdeal=2),
                      _pit("enter_card", card="9S", misdeal=1), _pit("enter_card", card="9D", misdeal=2)],
              lambda item, step, before: steps.append(step))
    refused, first, second = (s.reply for s in steps[-3:])
    assert refused == {"ok": False, "error": "misdeal 1 (unreadable_card) came first: enter that card first; "
                                             "nothing was done"}
    assert first == second == {"ok": True}
    assert [str(c) for c in table.coup.player] == ["9S"] and [str(c) for c in table.coup.banker] == ["9D"]


# ----- behaviour 4 ------------------------------------------------------------------------------------------------


def test_a_confirm_with_no_coup_to_confirm_is_refused_and_says_why():
    _, auto_confirm, inputs = CASES["confirm_without_coup"]
    table = new_table(auto_confirm)
    steps: list = []
    events = feed_case(table, inputs, lambda item, step, before: steps.append(step))
    # The command during the burn: its error; the shoe's button: a notice. Neither changes the table.
    assert steps[1].reply == {"ok": False, "error": "no coup to confirm: the burn is due"} and steps[1].events == []
    assert [(e["alarm"], e["text"]) for e in steps[3].events] == [
        ("confirm_refused", "no coup to confirm: the burn is due")]
    assert [e["kind"] for e in steps[10].events] == ["coup.confirmed", "shoe.finished"]
    assert steps[11].reply == {"ok": False, "error": "the shoe's last coup is over: take the shoe out, or close_shoe"}
    assert [e["alarm"] for e in steps[12].events] == ["confirm_refused"]
    assert len(_kinds(events, "shoe.finished")) == 1 and _kinds(events, "shoe.closed")
    # Under behaviour 3 the same inputs said the shoe finished three times.
    old = new_table(auto_confirm)
    old.behaviour = 3
    assert len(_kinds(feed_case(old, inputs), "shoe.finished")) == 3


def _silent_wait_changes(folder: str) -> int:
    """Steps of the plain shoe's corpus journal that moved the table's wait without an event (a display
    that stays connected cannot know of them)."""
    from pathlib import Path

    from shoed.journal import iter_records
    from shoed.table.replay import Replay
    from tests.corpus.record import ORDER_KEY

    replay = Replay(order_key=ORDER_KEY)
    silent = 0
    for record in iter_records(Path(__file__).parent / "corpus" / folder / "shuffler-plain-shoe"):
        before = replay.controller.wait_since if replay.controller is not None else None
        events = replay.feed(record, None)
        if record.get("kind") == "step" and not events and replay.controller.wait_since != before:
            silent += 1
    return silent


def test_a_face_down_burn_identified_later_does_not_move_the_wait():
    # The camera's read that confirms the cut identifies the face-down burns before it: no card out, no event.
    assert _silent_wait_changes("journals") == 0
    assert _silent_wait_changes("journals-behaviour-3") > 0


def test_with_two_cards_to_enter_the_dealer_names_the_one_entered():
    _, auto_confirm, inputs = CASES["two_unread_entered_unnamed"]
    table = new_table(auto_confirm)
    steps: list = []
    events = feed_case(table, inputs, lambda item, step, before: steps.append(step))
    unnamed, first, second = (s.reply for s in steps[5:8])
    assert unnamed == {"ok": False, "error": "2 cards wait to be entered (misdeals 1, 2): name the one entered "
                                             "(misdeal), misdeal 1 first; nothing was done"}
    assert steps[5].events == [] and first == second == {"ok": True}
    assert [(e["card"], e["recipient"]) for e in _kinds(events, "card") if e["card"]][:2] == [
        ("9S", "player"), ("9D", "banker")]
    # Under behaviour 3 the newest card, entered unnamed, took the oldest one's place: the player's.
    old = new_table(auto_confirm, 3)
    assert [(e["card"], e["recipient"]) for e in _kinds(feed_case(old, inputs), "card") if e["card"]][:1] == [
        ("9D", "player")]
    # One card waiting: entered unnamed, as ever.
    table = new_table(auto_confirm)
    events = feed_case(table, [*inputs[:4], {**inputs[5], "args": {"card": "9S"}}])
    assert _kinds(events, "misdeal.corrected")[0]["card"] == "9S"


def test_a_plain_shoes_cut_is_confirmed_only_by_a_card_at_another_place():
    """The exposed card entered by the dealer and read by the camera is one card identified twice: it says no
    more of where the cut lies. Behaviour 3 took the second identification as the confirming card."""
    from shoed.rules.cards import full_deck
    from shoed.rules.shuffle import Tracker
    from shoed.table.shuffle import PlainDraws, _weigh

    order = [str(c) for c in full_deck()]  # one deck: one card finds the cut

    def confirmed_after(behaviour: int, positions: list[int]) -> list[bool]:
        tracker, plain, out = Tracker(order), PlainDraws(), []
        for _ in range(3):
            tracker.unknown()  # three draws, none identified yet
        for position in positions:
            _weigh(plain, tracker, tracker.identify(position, order[(5 + position) % 52]), position, behaviour)
            out.append(plain.confirmed)
        return out

    # order[5] drawn first: the dealer enters it (the cut found), the camera reads it, then the next card.
    assert Tracker(order).aligned is False
    assert confirmed_after(4, [0, 0, 1]) == [False, False, True]
    assert confirmed_after(3, [0, 0, 1]) == [False, True, True]
