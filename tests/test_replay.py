"""`shoed replay`: the recorded inputs through the same controller; differences reported;
replayed events published for a display."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import zmq

from shoed.journal import Journal, iter_records
from shoed.table.replay import Replay, checkpoint_record, step_record
from shoed.rules.ruleset import load_ruleset
from shoed.table import TableController
from harness.processes import rss_kb
from tests.conftest import run_shoed
from tests.test_table import T0, dealer_inputs


def write_journal(directory, inputs, tamper_at=None):
    """A journal as the daemon writes it: a checkpoint, then one step per input."""
    table = TableController("t1", load_ruleset("punto-banco"), 6)
    with Journal(directory, "t1") as journal:
        journal.open_shoe("table", first=[checkpoint_record(table)])
        for i, item in enumerate(inputs):
            events = table.feed(item).events
            if i == tamper_at and events:
                events = [dict(events[0], card="KS" if events[0].get("card") != "KS" else "QS")] + events[1:]
            journal.append(step_record(item, events))
    return table


def test_replay_reproduces_the_recorded_events(tmp_path):
    table = write_journal(tmp_path / "j", dealer_inputs(coups=12))
    proc = run_shoed("replay", str(tmp_path / "j"), "--json")
    report = json.loads(proc.stdout)
    assert proc.returncode == 0 and report["identical"] is True
    assert report["events"] == table.seq


def test_replay_reports_a_recorded_event_that_the_rules_do_not_give(tmp_path):
    inputs = dealer_inputs(coups=5)
    index = next(i for i, x in enumerate(inputs) if x["kind"] == "card" and x["mode"] == "game")
    write_journal(tmp_path / "j", inputs, tamper_at=index)  # sealed properly: only replay can tell
    assert run_shoed("journal", "verify", str(tmp_path / "j")).returncode == 0
    proc = run_shoed("replay", str(tmp_path / "j"), "--json")
    report = json.loads(proc.stdout)
    assert proc.returncode == 1 and not report["identical"]
    assert report["differences"][0]["jseq"] == index + 3  # header, checkpoint, then the steps


def test_a_stall_after_a_shoe_file_opened_replays_as_recorded():
    # A shoe's file starts with the checkpoint taken as the shoe opened; the dealer then waits
    # past the stall time before the burn. The restored table times the stall from the same
    # moment as the live one (the wait is in the checkpoint), so its alarm is the same bytes.
    from harness.records import controller_inputs
    from shoed.simulate.dealer import DealSetup, deal

    ruleset = load_ruleset("punto-banco")
    opening = controller_inputs(deal(DealSetup(ruleset, seed=1, shoes=1)))[0]
    live = TableController("t1", ruleset, 6)
    assert [e["kind"] for e in live.feed(opening).events] == ["shoe.opened"]
    restored = TableController.from_checkpoint("t1", ruleset, 6, live.checkpoint())
    later = 200_000_000_000
    tick = {"kind": "tick", "mono_ns": opening["mono_ns"] + later, "utc_ns": opening["utc_ns"] + later,
            "stall_after_s": 120.0}
    alarm = live.feed(dict(tick)).events
    assert [(e["kind"], e["alarm"]) for e in alarm] == [("alarm", "stalled")] and "(200 s)" in alarm[0]["text"]
    assert restored.feed(dict(tick)).events == alarm


def test_odds_a_stop_cut_off_are_due_after_a_power_on_a_second_stop_cut_off():
    """Killed between a coup's record and its odds, started (the power-on journaled), killed again before the
    odds were worked out: the next start still works them out."""
    rules = load_ruleset("punto-banco")
    table = TableController("t1", rules, 6)
    records = [checkpoint_record(table)]
    items = [{"kind": "shoe_inserted", "source": "shoe"},
             *({"kind": "card", "card": c, "mode": "burn", "source": "shoe"} for c in ("AH", "2C")),
             *({"kind": "card", "card": c, "mode": "game", "source": "shoe"} for c in ("9S", "9D", "KS", "KD")),
             {"kind": "power", "state": "on", "clean": False, "sources": ["shoe"]}]
    for n, item in enumerate(items, start=1):
        item |= {"mono_ns": n * 10**9, "utc_ns": T0 + n * 10**9}
        records.append(step_record(item, table.feed(item).events))
    state = Replay()
    for record in records[:-1]:
        state.feed(record)
    due = state.odds_due
    assert due is not None  # the coup's odds: cut off by the first stop
    state.feed(records[-1])
    assert state.odds_due is due and not state.differences


def test_replay_state_equals_the_live_state(tmp_path):
    table = write_journal(tmp_path / "j", dealer_inputs(coups=20))
    state = Replay()
    for record in iter_records(tmp_path / "j"):
        state.feed(record)
    assert not state.differences and state.controller.snapshot() == table.snapshot()


def published(tmp_path, count: int, *options: str, timeout: float) -> list[tuple[float, bytes, bytes]]:
    """`shoed replay` of the journal in tmp_path/j publishing with `options`: (arrival time, topic, payload)
    of each of the first `count` messages a subscriber receives within `timeout` seconds."""
    endpoint = f"ipc://{tmp_path}/replay"
    ctx = zmq.Context()
    sub = ctx.socket(zmq.SUB)
    sub.setsockopt(zmq.SUBSCRIBE, b"t1.")
    sub.connect(endpoint)
    proc = subprocess.Popen([sys.executable, "-m", "shoed", "replay", str(tmp_path / "j"), "--publish", endpoint,
                             *options], stdout=subprocess.PIPE, text=True)
    got = []
    deadline = time.monotonic() + timeout
    while len(got) < count and time.monotonic() < deadline:
        if sub.poll(200):
            topic, payload = sub.recv_multipart()
            got.append((time.monotonic(), topic, payload))
    assert proc.wait(20) == 0
    sub.close()
    ctx.term()
    return got


def test_replay_publishes_for_a_display(tmp_path):
    table = write_journal(tmp_path / "j", dealer_inputs(coups=3))
    seqs = []
    for _, topic, payload in published(tmp_path, table.seq, "--speed", "1000", timeout=20):
        event = json.loads(payload)
        assert topic.decode() == f"t1.{event['kind'].split('.')[0]}"
        seqs.append(event["seq"])
    assert seqs == list(range(1, table.seq + 1))


def arrival_spread(tmp_path, *pace):
    """Publish a journal that spans 2 s of recorded time; the seconds between the
    first and the last event's arrival at a subscriber."""
    inputs = dealer_inputs(coups=2)
    first, last = inputs[0]["mono_ns"], inputs[-1]["mono_ns"]
    stretched = [dict(x, mono_ns=first + (x["mono_ns"] - first) * 2_000_000_000 // (last - first)) for x in inputs]
    table = write_journal(tmp_path / "j", stretched)
    arrivals = [at for at, _, _ in published(tmp_path, table.seq, *pace, timeout=30)]
    assert len(arrivals) == table.seq
    return arrivals[-1] - arrivals[0]


def test_replay_publishes_at_the_recorded_pace_by_default(tmp_path):
    # The help promises the recorded pace unless --speed or --max says otherwise.
    assert arrival_spread(tmp_path) >= 1.5


def test_replay_publishes_flat_out_with_max(tmp_path):
    assert arrival_spread(tmp_path, "--max") < 1.0


def test_replay_refuses_a_speed_that_is_not_above_zero(tmp_path):
    write_journal(tmp_path / "j", dealer_inputs(coups=1))
    proc = run_shoed("replay", str(tmp_path / "j"), "--publish", f"ipc://{tmp_path}/p", "--speed", "0")
    assert proc.returncode == 2 and "--speed is a number above 0" in proc.stderr


def test_auto_confirm_comes_with_the_power_on_and_replays(tmp_path):
    """A shoe without buttons configured after the file's checkpoint was written (a restart with
    another setting): the setting is journaled with the power-on input, so the live table
    auto-confirms from then on and the replay of the file learns it there and gives the same events."""
    cards = [x for x in dealer_inputs(coups=5) if x["kind"] == "card"]
    inputs = [{"kind": "power", "state": "on", "clean": True, "sources": [], "auto_confirm": True,
               "recovery": []}, *cards]
    table = write_journal(tmp_path / "j", inputs)
    assert table.auto_confirm is True
    assert table.coup_no >= 4 and not table.pending  # the first card opened the shoe, each card after a result a coup
    state = Replay()
    for record in iter_records(tmp_path / "j"):
        state.feed(record)
    assert not state.differences and state.controller.snapshot() == table.snapshot()
    assert state.controller.auto_confirm is True


def test_a_display_joins_a_published_replay_midway_and_follows_it_to_the_end(tmp_path):
    """docs/surveillance.md, "Show it again": `shoed watch` on a replay's endpoint. The replay
    serves the replayed table's snapshot beside its events and a heartbeat in a long pause."""
    from shoed.display.live import Feed
    from shoed.display.state import LIVE
    from shoed.net.client import TableClient

    inputs = dealer_inputs(coups=4)
    first, last = inputs[0]["mono_ns"], inputs[-1]["mono_ns"]
    spread = [dict(x, mono_ns=first + (x["mono_ns"] - first) * 3_000_000_000 // (last - first)) for x in inputs]
    pause = len(spread) // 2  # 2.5 s of nothing in the middle: the display must not take it for a lost table
    spread = spread[:pause] + [dict(x, mono_ns=x["mono_ns"] + 2_500_000_000) for x in spread[pause:]]
    table = write_journal(tmp_path / "j", spread)
    events, snapshot = f"ipc://{tmp_path}/replay", f"ipc://{tmp_path}/replay-snapshot"
    proc = subprocess.Popen([sys.executable, "-m", "shoed", "replay", str(tmp_path / "j"), "--publish", events,
                             "--snapshot", snapshot], stdout=subprocess.PIPE, text=True)
    try:
        time.sleep(1.5)  # the shoe is under way
        _, before = rss_kb(proc.pid)
        hostile = zmq.Context.instance().socket(zmq.DEALER)
        hostile.linger = 0
        hostile.connect(snapshot)
        hostile.send(b"x" * (64 << 20))  # far past a request's size: libzmq drops it, and the connection
        time.sleep(0.5)
        hostile.close(0)
        assert rss_kb(proc.pid)[1] - before < 32 << 10  # kB: the 64 MiB message never held in the replay
        feed = Feed(TableClient(events, snapshot, "t1"), "t1")
        deadline = time.monotonic() + 20
        while feed.state.seq != table.seq and time.monotonic() < deadline:
            feed.poll(0.1)
            assert feed.state.connection != "reconnecting", "a pause in the replay looked like a lost table"
        assert feed.client.stats["snapshots"] == 1, json.dumps(feed.client.stats)
        assert feed.client.stats["heartbeats"] >= 1
        assert feed.state.seq == table.seq and feed.state.connection == LIVE
        assert len(feed.state.results) == 4  # the whole shoe so far, from the snapshot and the events after it
        assert feed.state.replay is True  # shown as a replay, never as the live table
        from shoed.display.terminal import header

        assert "replay of the journal" in header(feed.state).plain and "live" not in header(feed.state).plain
        feed.client.close()
    finally:
        assert proc.wait(20) == 0


def test_snapshot_without_publish_is_refused(tmp_path):
    write_journal(tmp_path / "j", dealer_inputs(coups=1))
    proc = run_shoed("replay", str(tmp_path / "j"), "--snapshot", f"ipc://{tmp_path}/s")
    assert proc.returncode == 2 and "--snapshot serves a replay that is published" in proc.stderr


def test_a_published_replay_shows_what_the_displays_were_shown_unless_surveillance_asks(tmp_path):
    """The replay's endpoints have no keys: by default it shows the shoe as the table's display stream
    did (no face-down burn card: shoed.table.audience); `--audience surveillance` shows it all."""
    table = write_journal(tmp_path / "j", dealer_inputs(coups=3))
    journaled = [json.loads(line) for f in sorted((tmp_path / "j").glob("*.jsonl")) for line in f.read_text().splitlines()]
    burns = [e for r in journaled for e in r.get("events") or [] if e["kind"] == "shoe.burn"]
    face_down = [e for e in burns if not e.get("exposed")]
    assert face_down and all(e["card"] for e in face_down)
    for options, shown in (((), False), (("--audience", "surveillance"), True)):
        got = [json.loads(p) for _, _, p in published(tmp_path, table.seq, "--speed", "1000", *options, timeout=20)]
        assert [e["seq"] for e in got] == list(range(1, table.seq + 1))
        seen = {e["seq"]: e.get("card") for e in got if e["kind"] == "shoe.burn"}
        assert [seen[e["seq"]] for e in face_down] == ([e["card"] for e in face_down] if shown else [None] * len(face_down))


def test_one_file_replayed_on_its_own_says_what_it_did_not_prove(tmp_path):
    write_journal(tmp_path / "j", dealer_inputs(coups=2))
    (file,) = sorted((tmp_path / "j").glob("*.jsonl"))
    proc = run_shoed("replay", str(file))
    assert proc.returncode == 0 and "every replayed event is identical" in proc.stdout
    assert f"note: {file.name} replayed on its own: its link to the file before it" in proc.stderr
    assert "note:" not in run_shoed("replay", str(tmp_path / "j")).stderr


def test_a_shuffle_of_a_trillion_decks_on_record_replays_at_once(tmp_path):
    # A chain-intact journal whose shuffle_started claims 10**12 decks: the replay says the shuffle is
    # invalid and ends, as quickly as any other (the decks are never counted one by one).
    table = TableController("t1", load_ruleset("punto-banco"), 6)
    with Journal(tmp_path / "j", "t1") as journal:
        journal.open_shoe("table", first=[checkpoint_record(table)])
        for i, item in enumerate([
                {"kind": "shuffle_started", "source": "shuffler:/dev/s", "detail": {"shuffle": 1, "decks": 10**12}},
                {"kind": "shuffle_completed", "source": "shuffler:/dev/s", "detail": {"shuffle": 1, "cards": 0,
                                                                                       "shoe": 1}}]):
            journal.append(step_record(item | {"mono_ns": i + 1, "utc_ns": 1_790_000_000_000_000_000 + i}, []))
    proc = run_shoed("replay", str(tmp_path / "j"), "--json", "--jobs", "1", timeout=30)
    report = json.loads(proc.stdout)
    assert report["steps"] == 2 and report["corrupt"] is None
    replayed = [e for d in report["differences"] for e in d["replayed"]]
    assert any(e["kind"] == "alarm" and e["alarm"] == "shuffle_order_invalid"
               and "not 1 to 16" in e["text"] for e in replayed)
    (completed,) = [e for e in replayed if e["kind"] == "shuffle.completed"]
    assert completed["verified"] is False and len(completed["problems"]) == 1
