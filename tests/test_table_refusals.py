"""Refused commands in the journal at a bounded cost (shoed.table.refusals, docs/network.md): each key's
first refusals of a minute journaled one by one, their free text cut to 80 characters, the others counted
in one `refused_commands` input when the minute ends; the journal so written replays as recorded."""

from __future__ import annotations

import collections
import json
from types import SimpleNamespace

from shoed.journal import Journal
from shoed.rules.ruleset import load_ruleset
from shoed.table import TableController
from shoed.table.refusals import FULL_PER_WINDOW, KEYS_KEPT, OTHERS, TEXT_KEPT, WINDOW_NS, RefusedCommands
from shoed.table.replay import checkpoint_record
from tests.conftest import run_shoed
from tests.test_table import dealer_inputs

T0 = 1_767_225_600_000_000_000
REASON = "\U0001F0A1" * 200  # the longest reason a void may carry, 4 bytes of UTF-8 each
SECOND = 1_000_000_000


def refused_void(n: int, key: str = "K1", per_second: int = 20, base: int = 0) -> dict:
    """The nth `void` of a dealer's key at `per_second` (from `base`), as the loop makes the command input."""
    at = base + n * SECOND // per_second
    return {"kind": "command", "cmd": "void", "args": {"reason": REASON}, "client": f"console-{key}",
            "client_key": key, "peer": "10.0.0.7:0:0:1", "role": "dealer", "mono_ns": at, "utc_ns": T0 + at}


def test_the_first_of_a_window_are_kept_cut_and_the_rest_counted_in_one_record():
    budget = RefusedCommands()
    kept = [budget.refused(refused_void(n), "void needs the pit or surveillance role") for n in range(20 * 60)]
    journaled = [k for k in kept if k is not None]
    assert len(journaled) == FULL_PER_WINDOW
    assert all(k["args"]["reason"] == "\U0001F0A1" * TEXT_KEPT + "…" and k["cut"] == {"reason": 200}
               for k in journaled)
    assert budget.due(WINDOW_NS - 1) == []  # the window has not ended
    (summary,) = budget.due(WINDOW_NS)
    assert summary == {"kind": "refused_commands", "client": "console-K1", "client_key": "K1",
                       "peer": "10.0.0.7:0:0:1", "role": "dealer", "count": 20 * 60 - FULL_PER_WINDOW,
                       "commands": {"void": 20 * 60 - FULL_PER_WINDOW},
                       "error": "void needs the pit or surveillance role",
                       "first_mono_ns": FULL_PER_WINDOW * SECOND // 20, "first_utc_ns": T0 + FULL_PER_WINDOW * SECOND // 20,
                       "last_mono_ns": (20 * 60 - 1) * SECOND // 20, "last_utc_ns": T0 + (20 * 60 - 1) * SECOND // 20}
    assert budget.windows == {} and budget.next_due is None
    # The next minute begins a window of its own; another key has its own budget meanwhile.
    assert budget.refused(refused_void(20 * 60), "x") is not None
    assert budget.refused(refused_void(20 * 60, key="K2"), "x") is not None


def test_a_window_that_ended_is_counted_before_the_next_and_a_stop_counts_them_all():
    budget = RefusedCommands(full_per_window=1)
    assert budget.refused(refused_void(0), "e") is not None
    assert budget.refused(refused_void(1), "e") is None
    assert budget.refused(refused_void(20 * 61), "e") is not None  # a new window, the old count still due
    assert budget.refused(refused_void(20 * 61 + 1), "e") is None
    first, second = budget.due(61 * SECOND + 1, everything=True)
    assert first["count"] == second["count"] == 1 and first["last_mono_ns"] < second["first_mono_ns"]
    assert budget.due(10**15, everything=True) == []


def test_the_windows_kept_are_bounded_when_every_refusal_comes_from_another_peer():
    """An endpoint without keys: a peer a connection, each refused once (under the budget, so never
    counted). What is kept stays bounded; past the bound the others share one window."""
    budget = RefusedCommands()

    def from_peer(n: int, base: int = 0) -> dict:
        return refused_void(n, per_second=1000, base=base) | {"client_key": None, "peer": f"10.0.0.7:{n}"}

    kept = [budget.refused(from_peer(n), "e") for n in range(3 * KEYS_KEPT)]
    assert len(budget.windows) == KEYS_KEPT + 1 and OTHERS in budget.windows
    shared = 3 * KEYS_KEPT - KEYS_KEPT  # the refusals of the peers past the bound, in one window
    assert sum(k is None for k in kept) == shared - FULL_PER_WINDOW
    late = from_peer(0, base=2 * WINDOW_NS) | {"peer": "10.0.0.8:1"}
    assert budget.refused(late, "e") is not None  # a new peer: the windows ended are swept for it
    assert len(budget.windows) == 1
    (summary,) = budget.due(2 * WINDOW_NS, everything=True)  # the shared window's count
    assert summary["count"] == shared - FULL_PER_WINDOW


def test_a_short_refusal_is_journaled_as_it_came():
    item = refused_void(0) | {"args": {"reason": "x" * TEXT_KEPT}}
    assert RefusedCommands().refused(item, "e") == item


def test_the_loop_journals_a_minute_of_refusals_at_a_bounded_cost_and_the_journal_replays(tmp_path):
    """The daemon's loop (TableLoop.handle) with the real journal: 20 refused voids a second from one
    key for two minutes, then the dealer deals on; the bytes the refusals took, and the replay."""
    import time

    from shoed.daemon.loop import TableLoop

    base = time.monotonic_ns()  # the counts are stamped by the loop's clock, as in the daemon
    directory = tmp_path / "j"
    table = TableController("t1", load_ruleset("punto-banco"), 6)
    with Journal(directory, "t1") as journal:
        journal.open_shoe("table", first=[checkpoint_record(table)])
        loop = TableLoop(SimpleNamespace(live_odds=False), None, None, journal, table, None,  # type: ignore[arg-type]
                         SimpleNamespace(publishers=[]), collections.deque(), lambda code: None)
        inputs = dealer_inputs(coups=3)
        for item in inputs[:8]:
            loop.handle(dict(item, mono_ns=base, utc_ns=T0))
        path = sorted(directory.glob("*.jsonl"))[-1]
        before = path.stat().st_size
        seq = table.seq
        for n in range(20 * 120):
            reply = loop.handle(refused_void(n, base=base))
            assert reply == {"ok": False, "error": "void needs the pit or surveillance role; console-K1 is dealer"}
            loop.journal_refusals(now=refused_void(n, base=base)["mono_ns"])
        loop.journal_refusals(now=base + 200 * SECOND)
        grown = path.stat().st_size - before
        for item in inputs[8:]:
            loop.handle(dict(item, mono_ns=base + 200 * SECOND, utc_ns=T0 + 200 * SECOND))
    records = [json.loads(line) for path in sorted(directory.glob("*.jsonl")) for line in path.read_text().splitlines()]
    refusals = [r["input"] for r in records if r.get("kind") == "step" and r["input"]["kind"] == "command"
                and r["input"]["cmd"] == "void"]
    summaries = [r["input"] for r in records if r.get("kind") == "step" and r["input"]["kind"] == "refused_commands"]
    assert len(refusals) == 2 * FULL_PER_WINDOW and len(summaries) == 2
    assert sum(s["count"] for s in summaries) == 20 * 120 - 2 * FULL_PER_WINDOW
    assert all(not r["events"] for r in records if r.get("kind") == "step" and r["input"]["kind"] in
               ("command", "refused_commands") and r["input"].get("cmd") in ("void", None))
    assert table.seq > seq  # the dealer dealt on after them
    # Two minutes of a key's refusals: 20 records one by one and 2 counts, under 20 kB (each had been 1,228 B).
    assert grown < 20_000, grown
    proc = run_shoed("replay", str(directory), "--json")
    report = json.loads(proc.stdout)
    assert proc.returncode == 0 and report["identical"] is True, report
