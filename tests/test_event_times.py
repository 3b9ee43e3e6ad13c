"""Event times in seq order (shoed.daemon.loop.TableLoop._in_time_order): an input handled after a
later-stamped one takes the time of the one before; a wall clock stepped back is followed."""

from __future__ import annotations

import collections
import types

from shoed.daemon.loop import TableLoop
from shoed.journal import Journal
from shoed.rules.ruleset import load_ruleset
from shoed.table import TableController
from shoed.table.replay import checkpoint_record

S = 1_000_000_000
T0 = 1_790_000_000 * S


def table_loop(tmp_path) -> TableLoop:
    rules = load_ruleset("punto-banco")
    journal = Journal(tmp_path, "t1")
    table = TableController("t1", rules, rules.decks)
    journal.open_shoe("table", first=[checkpoint_record(table)])
    return TableLoop(types.SimpleNamespace(live_odds=False), None, None, journal, table, None,  # type: ignore[arg-type]
                     types.SimpleNamespace(publishers=[]), collections.deque(maxlen=100), lambda rc: None)


def test_times_in_seq_order(tmp_path):
    loop = table_loop(tmp_path)
    items = [
        {"kind": "power", "state": "on", "clean": True, "sources": ["shoe"], "mono_ns": 10 * S, "utc_ns": T0},
        {"kind": "shoe_inserted", "source": "shoe", "mono_ns": 12 * S, "utc_ns": T0 + 2 * S},
        # read before the shoe's step was handled: it takes that step's time, its own kept
        {"kind": "alarm", "code": "E7", "source": "shoe", "mono_ns": 11 * S, "utc_ns": T0 + 1 * S},
        # the wall clock stepped back an hour: the monotonic clock goes on, utc follows the wall clock
        {"kind": "clock", "what": "step", "step_ns": -3600 * S, "utc_before_ns": T0 + 3 * S, "mono_ns": 13 * S, "utc_ns": T0 - 3597 * S},
        {"kind": "alarm", "code": "E8", "source": "shoe", "mono_ns": 14 * S, "utc_ns": T0 - 3596 * S},
    ]
    for item in items:
        loop.handle(item)
    loop.journal.close()
    assert (items[2]["mono_ns"], items[2]["utc_ns"]) == (12 * S, T0 + 2 * S)
    assert (items[2]["read_mono_ns"], items[2]["read_utc_ns"]) == (11 * S, T0 + 1 * S)
    assert [(i["mono_ns"], i["utc_ns"]) for i in items[3:]] == [(13 * S, T0 - 3597 * S), (14 * S, T0 - 3596 * S)]
    assert "read_utc_ns" not in items[3] and "read_utc_ns" not in items[4]
    events = list(loop.recent)
    step = next(e for e in events if e["kind"] == "table.clock_step")
    after = [e for e in events if e["seq"] > step["seq"]]
    assert step["utc"].startswith("2026-09-21T13:") and after and all(e["utc"] > step["utc"] for e in after)


def test_a_wall_clock_stepped_back_is_followed_only_from_the_clock_step(tmp_path):
    # Under a second back (no step is reported): the time of the one before. An input stamped after a step
    # but handled before its `clock` input: the time of the one before too. From the clock step on: the new time.
    loop = table_loop(tmp_path)
    items = [
        {"kind": "power", "state": "on", "clean": True, "sources": ["shoe"], "mono_ns": 10 * S, "utc_ns": T0},
        {"kind": "alarm", "code": "E1", "source": "shoe", "mono_ns": 11 * S, "utc_ns": T0 + S - S // 2},
        {"kind": "alarm", "code": "E2", "source": "shoe", "mono_ns": 12 * S, "utc_ns": T0 - 3598 * S},
        {"kind": "clock", "what": "step", "step_ns": -3600 * S, "utc_before_ns": T0 + 3 * S,
         "mono_ns": 13 * S, "utc_ns": T0 - 3597 * S},
    ]
    items.insert(1, {"kind": "alarm", "code": "E0", "source": "shoe", "mono_ns": 10 * S + 1, "utc_ns": T0 + S})
    for item in items:
        loop.handle(item)
    loop.journal.close()
    events = list(loop.recent)
    utcs = [e["utc"] for e in events]
    step = next(i for i, e in enumerate(events) if e["kind"] == "table.clock_step")
    assert utcs[:step] == sorted(utcs[:step])  # never back before the step
    assert items[2]["utc_ns"] == T0 + S and items[2]["read_utc_ns"] == T0 + S - S // 2
    assert items[3]["utc_ns"] == T0 + S and items[3]["read_utc_ns"] == T0 - 3598 * S
    assert items[4]["utc_ns"] == T0 - 3597 * S and "read_utc_ns" not in items[4]


def test_a_restart_on_a_wall_clock_set_back_says_so_first_and_times_go_on_from_the_journal(tmp_path):
    # The journal's last input is an hour ahead of the wall clock now (set back while the daemon was down): the
    # start says so (a clock step from the journal's time), and the power-on follows the clock from there.
    import time

    ahead = time.time_ns() + 3600 * S
    loop = table_loop(tmp_path)
    loop.controller.feed({"kind": "power", "state": "off", "mono_ns": 5 * S, "utc_ns": ahead})
    loop.since_journal(loop.controller.now_utc)
    loop.handle({"kind": "power", "state": "on", "clean": True, "sources": ["shoe"]})
    events = list(loop.recent)
    assert [e["kind"] for e in events] == ["table.clock_step", "table.started"]
    assert events[0]["step_ns"] < -3590 * S and events[1]["utc"] >= events[0]["utc"]
    # Under a second behind: no step; the journal's time until the clock passes it.
    loop = table_loop(tmp_path / "b")
    near = time.time_ns() + S // 2
    loop.controller.feed({"kind": "power", "state": "off", "mono_ns": 5 * S, "utc_ns": near})
    loop.since_journal(near)
    item = {"kind": "power", "state": "on", "clean": True, "sources": ["shoe"]}
    loop.handle(item)
    assert [e["kind"] for e in loop.recent] == ["table.started"] and item["utc_ns"] >= near
