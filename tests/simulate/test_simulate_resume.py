"""The virtual shoe resumes the table's shoe where the journal left it (shoed/simulate/resume.py):
stopped at any point of a shoe (the burn, a coup half dealt, a complete coup waiting for its
confirm, between coups, after the last coup), the table rebuilt as it was, the resumed deal goes
on to a balanced close with no coup voided and no misdeal.
"""

from __future__ import annotations

import json

import pytest

from harness.records import controller_inputs
from shoed.rules.ruleset import load_ruleset
from shoed.simulate.dealer import DealSetup, deal
from shoed.simulate.resume import ResumeError, check_resume, resume_state
from shoed.table import TableController

RULES = load_ruleset("macau-statutory")


def stop_points() -> dict[str, int]:
    """Where to stop in seed 5's shoe: the number of shoe events the table had taken."""
    events = list(deal(DealSetup(RULES, seed=5)))
    burns = [i for i, e in enumerate(events) if e.kind == "card" and e.mode == "burn"]
    coup3 = [i for i, e in enumerate(events) if e.is_card and e.coup == 3]
    confirm3 = next(i for i, e in enumerate(events) if e.kind == "button" and e.button == "confirm" and e.coup == 3)
    last = next(i for i, e in enumerate(events) if e.kind == "button" and e.button == "confirm" and e.last)
    return {"before_the_first_burn": burns[0], "in_the_burn": burns[1] + 1, "coup_half_dealt": coup3[1] + 1,
            "coup_complete": confirm3, "between_coups": confirm3 + 1, "after_the_last_coup": last + 1}


POINTS = stop_points()


@pytest.mark.parametrize("where", POINTS)
def test_the_resumed_deal_goes_on_with_the_tables_shoe_to_a_balanced_close(where):
    stop = POINTS[where]
    table = TableController("t1", RULES, RULES.decks)
    events: list[dict] = []
    before = controller_inputs(list(deal(DealSetup(RULES, seed=5)))[:stop], source="native:/tmp/a/shoe")
    for item in before:
        events += table.feed(item).events
    state = check_resume(json.loads(json.dumps(resume_state(table))))  # through its file, as the daemon writes it
    resumed = list(deal(DealSetup(RULES, seed=6, resume=state)))
    assert resumed[0].kind != "shoe_inserted"
    after = controller_inputs(resumed, source="native:/tmp/b/shoe", start_ns=before[-1]["utc_ns"] + 10**9)
    for item in after:
        item["mono_ns"] += before[-1]["mono_ns"]
        events += table.feed(item).events
    kinds = [e["kind"] for e in events]
    assert kinds.count("shoe.opened") == 1 and "coup.void" not in kinds and "misdeal" not in kinds, where
    closed = [e["reconciliation"] for e in events if e["kind"] == "shoe.closed"]
    assert len(closed) == 1 and closed[0]["balanced"] and closed[0]["unaccounted"] == 0
    results = [e["coup"] for e in events if e["kind"] == "coup.result"]
    assert results == list(range(1, len(results) + 1)) and "shoe.finished" in kinds


def test_a_table_with_no_shoe_open_resumes_nothing():
    assert resume_state(TableController("t1", RULES, RULES.decks)) is None


@pytest.mark.parametrize("change, says", [
    ({"phase": "shuffling"}, "phase"), ({"left": ["1X"]}, "left"), ({"order": ["banker"] * 5}, "order"),
    ({"coup": -1}, "coup"), ({"decisions": [["dealer", True]]}, "decisions"),
])
def test_a_bad_resume_file_is_one_clear_error(change, says):
    table = TableController("t1", RULES, RULES.decks)
    for item in controller_inputs(list(deal(DealSetup(RULES, seed=5)))[:40]):
        table.feed(item)
    with pytest.raises(ResumeError, match=says):
        check_resume(resume_state(table) | change)
