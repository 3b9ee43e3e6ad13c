"""Journals replay under the behaviour they were recorded under (shoed.table.controller.BEHAVIOUR).

A checkpoint without `behaviour` is behaviour 1: the table takes what comes as it did when such journals
were written, so that they replay byte for byte (tests/corpus/journals-behaviour-1/). A daemon's power-on
asks for the newest; the table takes it between two shoes, never within one."""

from __future__ import annotations

import json

from shoed.rules.ruleset import load_ruleset
from shoed.table import TableController
from shoed.table.controller import BEHAVIOUR
from shoed.table.replay import checkpoint_record, controller_from_checkpoint

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
    assert table.behaviour == BEHAVIOUR == 2 and table.checkpoint()["behaviour"] == 2


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


def test_journals_an_earlier_version_recorded_in_the_cases_behaviour_2_changed_replay_as_recorded():
    # Written by shoed before behaviour 2 (the code of that day, its own Journal): an unread face-down
    # burn, a game card while the burn was due, a card drawn while an unreadable card waited. Replayed
    # under the behaviour they name (none: 1), every event as recorded, and the journal verifies.
    from pathlib import Path

    from shoed.journal import verify
    from shoed.journal.replay import replay_journal

    cases = Path(__file__).parent / "corpus" / "behaviour-1-cases"
    names = sorted(p.name for p in cases.iterdir())
    assert names == ["game_card_in_burn", "unread_burn", "unread_pending"]
    for name in names:
        assert verify(cases / name).ok, name
        result = replay_journal(cases / name)
        assert result.identical and result.events > 10, (name, result.differences[:1])
