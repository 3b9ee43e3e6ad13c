"""Held alarms and what clears them (docs/events.md, docs/operators.md).

Every held alarm is cleared by something: the state that raised it ending, `unlock`, or, for
those that tell of something that happened (a foreign card, readers that disagreed, a card out
of the shuffled order, a weak shuffle, a deck found incomplete, an order refused), the pit's
`clear_alarm` once it has seen to them. A dealer's key cannot clear one, an alarm that clears by
itself is refused with what clears it, and clearing one changes nothing else.
"""

from __future__ import annotations

from shoed.rules.cards import full_deck
from shoed.table.events import CLEARED_BY, HELD_ALARMS, PIT_CLEARED_ALARMS, validate
from tests.test_table import Clock, dealer_inputs, run


def table_with_foreign_card():
    """Coup 1 voided by a foreign card: the foreign_card alarm held."""
    table, _ = run(dealer_inputs(coups=1, decks=6)[:-3])
    for _ in range(7):
        table.shoe.note(full_deck()[0])  # the shoe has already seen seven aces of clubs
    step = table.feed({"kind": "card", "card": "AC", "mode": "game"})
    assert "foreign_card" in table.alarms and "coup.void" in [e["kind"] for e in step.events]
    return table


def test_every_held_alarm_has_a_way_to_clear():
    assert set(PIT_CLEARED_ALARMS) | set(CLEARED_BY) == HELD_ALARMS
    assert not set(PIT_CLEARED_ALARMS) & set(CLEARED_BY)


def test_the_pit_clears_a_foreign_card_alarm_and_nothing_else_changes():
    table = table_with_foreign_card()
    at = Clock()
    at.n = 50_000
    refused = table.feed(at("command", cmd="clear_alarm", args={"alarm": "foreign_card"}, client="dealer-1",
                            role="dealer"))
    assert refused.reply == {"ok": False, "error": "clear_alarm needs the pit or surveillance role; dealer-1 is dealer"}
    assert refused.events == [] and "foreign_card" in table.alarms
    before = table.snapshot()
    step = table.feed(at("command", cmd="clear_alarm", args={"alarm": "foreign_card"}, client="pit-1", role="pit"))
    assert step.reply == {"ok": True}
    assert [(e["kind"], e["alarm"], e["active"], e.get("by")) for e in step.events] == [
        ("alarm", "foreign_card", False, "pit-1")]
    for event in step.events:
        validate(event)
    after = table.snapshot()
    assert "foreign_card" not in after["alarms"]
    # Nothing else moved: the coup, its void, the shoe's counts.
    assert {k: v for k, v in after.items() if k not in ("alarms", "seq", "utc", "mono_ns", "waiting")} == \
        {k: v for k, v in before.items() if k not in ("alarms", "seq", "utc", "mono_ns", "waiting")}
    again = table.feed(at("command", cmd="clear_alarm", args={"alarm": "foreign_card"}, client="pit-1", role="pit"))
    assert again.reply == {"ok": False, "error": "the alarm foreign_card is not raised"} and again.events == []


def test_an_alarm_that_clears_by_itself_is_not_the_pits_to_clear():
    table, _ = run(dealer_inputs(coups=1))
    at = Clock()
    at.n = 50_000
    table.feed(at("tamper", source="shoe"))
    assert "tamper" in table.alarms
    step = table.feed(at("command", cmd="clear_alarm", args={"alarm": "tamper"}, client="pit-1", role="pit"))
    assert step.reply == {"ok": False, "error": "the alarm tamper is not the pit's to clear: "
                                                "it clears when the shoe reports its case closed"}
    assert "tamper" in table.alarms and step.events == []
    table.feed(at("integrity", text="journal corrupt"))
    step = table.feed(at("command", cmd="clear_alarm", args={"alarm": "integrity"}, client="pit-1", role="pit"))
    assert step.reply == {"ok": False, "error": "the alarm integrity is not the pit's to clear: "
                                                "it holds the table: `unlock` clears it"}
    assert table.locked


def test_a_notice_is_cleared_while_the_table_is_held():
    table = table_with_foreign_card()
    at = Clock()
    at.n = 50_000
    table.feed(at("integrity", text="journal corrupt"))
    assert table.locked
    step = table.feed(at("command", cmd="clear_alarm", args={"alarm": "foreign_card"}, client="cctv",
                         role="surveillance"))
    assert step.reply == {"ok": True} and table.locked and "integrity" in table.alarms
    assert "foreign_card" not in table.alarms


def test_a_deck_found_incomplete_stays_raised_until_the_pit_has_seen_to_it():
    from shoed.simulate.shuffler import shuffle_run
    from tests.test_table_shuffler import Feed, faults

    run_ = shuffle_run(22, decks=6, shoes=1, faults=faults("missing-card"))
    feed = Feed()
    feed.shuffler(run_, 1)
    assert "deck_incomplete" in feed.table.alarms
    feed("command", cmd="open_shoe", args={}, client="pit-1", role="pit")
    assert feed.table.shoe is not None and "deck_incomplete" in feed.table.alarms  # opened: still to see to
    feed("command", cmd="clear_alarm", args={"alarm": "deck_incomplete"}, client="pit-1", role="pit")
    assert feed.reply == {"ok": True} and "deck_incomplete" not in feed.table.alarms
    assert feed.alarms("deck_incomplete")[-1]["active"] is False
