"""A display that stayed connected and one that joins late show the same, at every step of the corpus.

The corpus (tests/corpus/journals/) holds whole shoes of five rulesets with misdeals, voids,
failover, power cycles, odds and Royal decisions. Each journal is replayed through the
controller; after every input, a display that saw every event so far (the live one) and a
display that joins now from the controller's snapshot (docs/integrators.md, "Catch-up") must
show the same thing, for both audiences: what a display knows comes from what the table
publishes, never from a copy of the controller's bookkeeping.
"""

from __future__ import annotations

import ast
from dataclasses import replace
from pathlib import Path

import pytest

from shoed.display import state as state_module
from shoed.display.state import apply, fold, initial
from shoed.journal import iter_records
from shoed.rules.roads import RoadBuilder, parse_results, roads, roads_after
from shoed.rules.ruleset import load_ruleset
from shoed.table import TableController, controller, shuffle
from shoed.table.audience import AUDIENCES, for_audience
from shoed.table.events import HELD_ALARMS
from shoed.table.replay import Replay
from tests.corpus.record import JOURNALS, ORDER_KEY, SCENARIOS
from tests.test_table import dealer_inputs

NAMES = [s.name for s in SCENARIOS]


def shown(state):
    """What a display shows, without its own counters, the one-off notices and daemon notes it
    could only have seen live, and what only a snapshot carries. The time a wait began is compared:
    a live display takes it from the event that changed the wait, a late joiner from the snapshot's
    `waiting.since`, and both must say what the table's stall alarm goes by."""
    return replace(state, snapshots=0, events=0, notices=(), note=None, remaining_by_rank=None,
                   odds_local=False)


@pytest.mark.parametrize("audience", AUDIENCES)
@pytest.mark.parametrize("name", NAMES)
def test_a_live_display_and_a_late_joiner_agree_after_every_input(name, audience):
    events_for, snapshot_for = for_audience(audience)
    replay = Replay(order_key=ORDER_KEY)  # the shuffler scenarios' sealed orders
    live = None  # joins before the first input: a snapshot of the table as the journal begins it

    def joining():
        table = replay.controller
        snap = snapshot_for(table.snapshot())
        return apply(initial(table.table_id), {"table": table.table_id, "kind": "snapshot", "seq": snap["seq"],
                                               "state": snap, "reason": "initial"})

    compared = 0
    for record in iter_records(JOURNALS / name):
        live = joining() if live is None and replay.controller is not None else live
        events = replay.feed(record, None)
        if record.get("kind") != "step":
            continue
        live = fold((events_for(e) for e in events), live)
        assert shown(joining()) == shown(live), f"jseq {record['jseq']}: {record['input']}"
        compared += 1
    assert compared > 100


SHOE, CAMERA = "native:/dev/shoe-native", "camera:/dev/shoe-camera"


def failover_and_holds():
    """Inputs of a table with a shoe and a camera over its exit: the readers disagree
    (reader_mismatch), both are lost (no_reader) and one comes back, the camera deals, a
    forged frame locks the table and the pit unlocks it, a tamper alarm comes and goes."""
    inputs = dealer_inputs(coups=6)
    first = next(i for i, x in enumerate(inputs) if x["kind"] == "card" and x["mode"] == "game")
    wrong = "KS" if inputs[first]["card"] != "KS" else "QH"
    pit = {"kind": "command", "client": "pit", "role": "pit"}
    out = [{"kind": "power", "state": "on", "clean": True, "sources": [SHOE, CAMERA]}]
    out += [dict(x, source=SHOE) if x["kind"] == "card" else x for x in inputs[:first]]
    out += [{"kind": "card", "card": wrong, "source": CAMERA}, dict(inputs[first], source=SHOE)]
    out += [{"kind": "link", "link": "lost", "source": SHOE}, {"kind": "link", "link": "lost", "source": CAMERA},
            {"kind": "link", "link": "restored", "source": CAMERA}]
    out += [dict(x, source=CAMERA) if x["kind"] == "card" else x for x in inputs[first + 1:first + 12]]
    out += [{"kind": "link", "link": "restored", "source": SHOE},
            {"kind": "tamper", "active": True, "text": "lid opened", "source": SHOE},
            {"kind": "forged_frame", "source": SHOE, "raw": "00ff", "detail": {"seq": 7, "taken": "00fe"}},
            pit | {"cmd": "unlock"},
            {"kind": "tamper", "active": False, "text": "lid closed", "source": SHOE},
            {"kind": "integrity", "text": "journal damaged"}, pit | {"cmd": "unlock"}]
    out += [dict(x, source=SHOE) if x["kind"] == "card" else x for x in inputs[first + 12:]]
    # A second between inputs: the time a wait began is compared too.
    return [dict(x, mono_ns=(n + 1) * 1_000_000_000, utc_ns=1_767_225_600_000_000_000 + n * 1_000_000_000)
            for n, x in enumerate(out)]


@pytest.mark.parametrize("reveal", ["dealt", "result"])
@pytest.mark.parametrize("audience", AUDIENCES)
def test_held_alarms_failover_and_locks_agree_live_and_late(audience, reveal):
    events_for, snapshot_for = for_audience(audience, reveal)
    table = TableController("t1", load_ruleset("punto-banco"), 6)

    def joining():
        snap = snapshot_for(table.snapshot())
        return apply(initial("t1"), {"table": "t1", "kind": "snapshot", "seq": snap["seq"], "state": snap})

    live, raised = joining(), set()
    for item in failover_and_holds():
        step = table.feed(item)
        live = fold((events_for(e) for e in step.events), live)
        raised |= {e["alarm"] for e in step.events if e["kind"] == "alarm"}
        assert shown(joining()) == shown(live), item
    assert {"reader_mismatch", "no_reader", "forged_frame", "tamper", "integrity"} <= raised
    assert dict(live.alarms).keys() == {"reader_mismatch"} and live.locked is None


def _alarm_names(tree: ast.AST) -> tuple[set[str], set[str]]:
    """Alarm names the controller holds (literals given to `_alarm` or `_hold`) and those it
    emits as one-off notices (`_emit(step, ev.Alarm, alarm=...)`, or the kind as a string)."""
    held, once = set(), set()
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        name = node.args[1] if len(node.args) > 1 else None  # (step, name, ...)
        if node.func.attr in ("_alarm", "_hold") and isinstance(name, ast.Constant):
            held.add(name.value)
        is_alarm = (isinstance(name, ast.Constant) and name.value == "alarm") or (
            isinstance(name, ast.Attribute) and name.attr == "Alarm")  # the kind, or the schema's struct
        if node.func.attr == "_emit" and is_alarm:
            once |= {k.value.value for k in node.keywords if k.arg == "alarm" and isinstance(k.value, ast.Constant)}
    return held, once


def test_the_schema_names_every_alarm_the_controller_holds_and_none_it_does_not():
    held, once = set(), set()
    for module in (controller, shuffle):
        h, o = _alarm_names(ast.parse(Path(module.__file__).read_text()))
        held, once = held | h, once | o
    held |= set(shuffle.FAULT_ALARMS.values()) | {"shuffler_fault"}
    assert held <= HELD_ALARMS, held - HELD_ALARMS
    assert once and not once & HELD_ALARMS, once & HELD_ALARMS
    assert {"no_reader", "reader_mismatch", "unknown_button"} <= held | once  # the walk found the calls


@pytest.mark.parametrize("text", ["BPPBBBBBBBTPPTPBPBBPPPBTTBPBPPPPPPPPBB", "TTBbnPpTTPPBBBBBBBBPBPBPB", "P" * 14, "T"])
def test_road_steps_applied_one_by_one_give_the_whole_roads(text):
    builder, shown_ = RoadBuilder(), roads(())
    for outcome in parse_results(text):
        shown_ = roads_after(shown_, builder.add(outcome).to_json())
        assert shown_ == builder.roads()
    with pytest.raises(ValueError):  # a step that does not follow the roads shown
        roads_after(roads(text[:-1] or "B"), RoadBuilder.from_results("BB").add("P").to_json())


def test_a_live_display_lays_out_no_road_again_while_no_result_is_voided(monkeypatch):
    """Each coup.result carries its road step: the display adds it, it does not lay out every road again."""
    laid_out = []
    monkeypatch.setattr(state_module, "roads", lambda results: laid_out.append(results) or roads(results))
    events = [e for r in iter_records(JOURNALS / "punto-banco") for e in r.get("events", [])]
    live = fold(events)
    assert laid_out == [] and len(live.results) > 40
    assert live.roads == roads(live.results)
