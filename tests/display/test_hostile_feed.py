"""A display fed by a hostile table: malformed events and snapshots, escapes and markup in its
strings, a flood of results, road steps that contradict their results.

The table is a PUB and a ROUTER on real ZeroMQ sockets, speaking shoed's wire format and
answering `snapshot` and `events` as shoed.net.snapshot does; the display is the `Feed` of
`shoed watch` on a real TableClient, or `shoed watch --once` itself. A display drops and counts
what it cannot show, shows the rest, and never lets a string from the wire drive the terminal.
"""

from __future__ import annotations

import copy
import io
import threading
import time

import pytest
import zmq
from rich.console import Console

from harness.processes import run_shoed
from shoed.display.live import Feed
from shoed.display.state import TEXT_MAX, apply, coups_held, fold, initial
from shoed.display.terminal import render, screen_text
from shoed.net import wire
from shoed.net.client import TableClient
from shoed.rules.roads import Outcome, RoadBuilder, roads

TABLE = "t1"
UTC = "2026-01-01T00:00:00Z"
SNAP = {"table": TABLE, "ruleset": "punto-banco", "decks": 8, "seq": 10,
        "shoe": {"id": "S1", "phase": "dealing", "cards_left": 400},
        "coups": [{"coup": 1, "winner": "banker", "player_total": 3, "banker_total": 7,
                   "player_cards": ["3H", "KC"], "banker_cards": ["7S", "KD"]}],
        "coup": {"state": "open", "number": 2, "player_cards": [], "banker_cards": []}}
# A window title (OSC 0), a hyperlink (OSC 8), a clear screen, a C1 CSI and a right-to-left override.
ESC = "\x1b]0;OWNED\x07\x1b]8;;http://evil.example/\x07CLICK\x1b]8;;\x07\x1b[2J\x9b31m\u202e"
RAW = ("\x1b", "\x07", "\x9b", "\u202e")


class HostileTable:
    """A table's two endpoints on loopback; `events` are published once the first snapshot has been
    asked for, then heartbeats carry the last seq."""

    def __init__(self, events: list[dict], snapshot: dict | None = None) -> None:
        self.events = [{"table": TABLE, "seq": 11 + i, "utc": UTC, **e} for i, e in enumerate(events)]
        self.snapshot = SNAP if snapshot is None else snapshot
        self.ctx = zmq.Context()
        self.pub = self.ctx.socket(zmq.PUB)
        self.pub.sndhwm = 0
        self.pub.linger = 0
        self.pub.bind("tcp://127.0.0.1:*")
        self.router = self.ctx.socket(zmq.ROUTER)
        self.router.linger = 0
        self.router.bind("tcp://127.0.0.1:*")
        self.events_endpoint = self.pub.getsockopt_string(zmq.LAST_ENDPOINT)
        self.snapshot_endpoint = self.router.getsockopt_string(zmq.LAST_ENDPOINT)
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        asked = None
        sent = False
        beat = 0.0
        while not self.stop.is_set():
            if self.router.poll(20):
                peer, raw = self.router.recv_multipart()
                req = wire.decode(raw)
                if req.get("op") == "snapshot":
                    self.router.send_multipart([peer, wire.encode({"id": req.get("id"), "ok": True, "table": TABLE,
                                                                   "seq": 10, "state": self.snapshot})])
                    asked = asked or time.monotonic()
                elif req.get("op") == "events":
                    got = [e for e in self.events if req["from"] <= e["seq"] <= req["to"]]
                    self.router.send_multipart([peer, wire.encode({"id": req.get("id"), "ok": True, "events": got})])
                    self.router.send_multipart([peer, wire.encode({"id": req.get("id"), "ok": True, "done": True,
                                                                   "count": len(got)})])
            now = time.monotonic()
            if not sent and asked is not None and now - asked > 0.3:  # the subscription has reached us
                for e in self.events:
                    self.pub.send_multipart([wire.topic_for(TABLE, e["kind"]).encode(), wire.encode(e)])
                sent = True
            if now - beat > 0.5:
                last = self.events[-1]["seq"] if sent and self.events else 10
                self.pub.send_multipart([f"{TABLE}.heartbeat".encode(),
                                         wire.encode({"table": TABLE, "seq": last, "kind": "heartbeat"})])
                beat = now

    def close(self) -> None:
        self.stop.set()
        self.thread.join(5)
        self.pub.close(0)
        self.router.close(0)
        self.ctx.term()


@pytest.fixture
def hostile():
    tables: list[HostileTable] = []

    def make(events: list[dict], snapshot: dict | None = None) -> HostileTable:
        tables.append(HostileTable(events, snapshot))
        return tables[-1]

    yield make
    for table in tables:
        table.close()


def feed_until(table: HostileTable, seq: int, timeout: float = 20) -> Feed:
    feed = Feed(TableClient(table.events_endpoint, table.snapshot_endpoint, TABLE, request_timeout=1.0), TABLE)
    deadline = time.monotonic() + timeout
    try:
        while feed.client.last_seq is None or feed.client.last_seq < seq:
            assert time.monotonic() < deadline, f"seq {seq} never came: {feed.client.stats}"
            feed.poll(0.1)
        feed.poll(0.1)
    finally:
        feed.client.close()
    return feed


def terminal_output(state, width: int = 140, height: int = 60) -> str:
    """What a colour terminal is sent: rich's own styles are CSI sequences; nothing else may be."""
    out = io.StringIO()
    console = Console(file=out, width=width, height=height, force_terminal=True, color_system="truecolor",
                      legacy_windows=False)
    console.print(render(state))
    return out.getvalue()


MALFORMED = [
    {"kind": "coup.result", "coup": 2, "player_total": 1, "banker_total": 2},  # no winner
    {"kind": "coup.result", "coup": 2, "winner": "x"},
    {"kind": "card", "coup": 2, "recipient": "player", "card": 7},
    {"kind": "misdeal", "coup": 2, "misdeal": {"id": "x", "correctable": True, "kind": "k", "correction": "c"}},
    {"kind": "misdeal", "coup": 2, "misdeal": {"id": 1e300, "correctable": True}},
    {"kind": "table.started", "utc": 12345},
    {"kind": "coup.opened", "utc": 12345},
    {"kind": "shoe.odds", "probabilities": {"banker": "x"}},
    {"kind": "shoe.odds", "probabilities": [1, 2]},
    {"kind": "shoe.odds", "favourable": 5},
    {"kind": "shoe.cut_card", "last_coup": "[/]"},
    {"kind": "card", "coup": "[/]", "recipient": "player", "card": "AS"},
    {"kind": "alarm", "active": True},  # no alarm named
]


@pytest.mark.timeout(60)
def test_malformed_events_are_dropped_and_counted_the_rest_shown(hostile):
    good = {"kind": "coup.result", "coup": 2, "winner": "player", "player_total": 9, "banker_total": 2,
            "player_cards": ["9H", "KC"], "banker_cards": ["2S", "KD"]}
    table = hostile(MALFORMED + [{"kind": "table.started", "utc": None, "clean": True}, good])
    feed = feed_until(table, 11 + len(MALFORMED) + 1)
    state = feed.state
    assert state.dropped == len(MALFORMED), state.dropped_why
    assert [o.winner for o in state.results] == ["B", "P"] and state.seq == 11 + len(MALFORMED) + 1
    text = screen_text(state, 140)
    assert f"{len(MALFORMED)} malformed messages dropped" in text and "PLAYER WINS 9 to 2" in text
    terminal_output(state)  # drawn without an error


@pytest.mark.timeout(60)
@pytest.mark.parametrize("snap", [
    SNAP | {"coups": [1]},
    SNAP | {"alarms": ["a"]},
    SNAP | {"shoe": ["x"]},
    SNAP | {"waiting": "x"},
    SNAP | {"shoe": SNAP["shoe"] | {"remaining_by_rank": 5}},
    SNAP | {"pending_misdeals": [{"id": "abc"}]},
    SNAP | {"coups": [{"coup": 1, "player_total": 1}]},  # a result without a winner
    SNAP | {"coups": [{"coup": n, "winner": "banker"} for n in range(1, 1001)]},  # more than 8 decks hold
])
def test_watch_once_outlives_a_malformed_snapshot(hostile, snap):
    table = hostile([], snapshot=snap)
    proc = run_shoed("watch", table.events_endpoint, "--snapshot", table.snapshot_endpoint, "--once",
                     "--timeout", "3", timeout=60)
    assert "Traceback" not in proc.stderr, proc.stderr
    assert proc.returncode != 0 or "malformed" in proc.stdout  # no snapshot taken: none shown


@pytest.mark.timeout(60)
def test_strings_from_the_wire_never_reach_the_terminal_raw(hostile):
    markup = "[link=http://evil.example/]x[/link][/]"
    long = "L" * 100_000
    snap = SNAP | {"ruleset": "rs" + ESC, "locked": "lock" + ESC, "fallback": "fb" + ESC,
                   "shoe": SNAP["shoe"] | {"id": "S1" + ESC + long, "phase": "dealing" + ESC},
                   "devices": {"dev" + ESC: "lost"},
                   "pending_misdeals": [{"id": 1, "kind": "k" + ESC, "correction": "c" + ESC}]}
    events = [
        {"kind": "coup.opened", "coup": 2},
        {"kind": "card", "coup": 2, "recipient": "player", "card": ESC + "AS", "total": 1},
        {"kind": "shoe.cut_card", "last_coup": 3},
        {"kind": "shoe.odds", "cards_left": 300, "probabilities": {markup + ESC: 0.5, "banker": 0.45},
         "player_expectation": {"banker": -0.01}, "favourable": [markup + ESC]},
        {"kind": "table.stopped", "utc": "2026" + ESC, "clean": True},
        {"kind": "coup.void", "coup": 2, "reason": "dealer error" + ESC + markup},
        {"kind": "misdeal", "coup": 3, "misdeal": {"id": 2, "kind": "k" + ESC, "correction": "c" + ESC,
                                                   "correctable": True}},
    ]
    table = hostile(events, snapshot=snap)
    state = feed_until(table, 11 + len(events) - 1).state
    assert state.dropped == 0 and state.last.reason.startswith("dealer error")
    for value in (state.shoe, state.ruleset, state.locked, state.fallback, state.phase, state.note, state.last.reason,
                  *state.pending[0][1:], *dict(state.devices), *state.odds["probabilities"]):
        assert not any(c in value for c in RAW) and len(value) <= TEXT_MAX, value
    for width, height in ((140, 60), (80, 24)):
        out = terminal_output(state, width, height)
        assert "\x1b]" not in out and "\x9b" not in out and "\u202e" not in out and "\x07" not in out
    text = screen_text(state, 200)
    assert "[link=http://evil.example/]" in text  # markup shown as the text it is, never a link
    assert "\\x1b]0;OWNED\\x07" in text  # escapes shown as their names


def test_one_line_names_c1_controls_and_format_characters():
    from shoed.net.wire import one_line

    assert one_line("a\x9bb\u202ec\u2066d\u200be\x1b\x85") == "a\\x9bb\\u202ec\\u2066d\\u200be\\x1b\\x85"


# ----- a flood of results -----------------------------------------------------------
@pytest.mark.timeout(120)
def test_a_flood_of_results_without_road_steps_is_folded_in_linear_time(hostile):
    n = 3000
    flood = [{"kind": "coup.result", "coup": i, "winner": ("banker", "player")[i % 2], "player_total": 1,
              "banker_total": 2} for i in range(2, n + 2)]
    table = hostile(flood)
    started = time.monotonic()
    feed = feed_until(table, 10 + n, timeout=60)
    took = time.monotonic() - started
    held = coups_held(8)
    assert len(feed.state.results) == held and feed.state.dropped == n + 1 - held
    assert feed.state.roads == roads(feed.state.results)
    assert took < 15, took  # 26.8 s for 2,767 results when each was laid out again


def test_results_without_steps_cost_the_same_late_in_a_shoe_as_early():
    def fold_results(k: int) -> float:
        state = fold([{"kind": "shoe.opened", "seq": 1, "shoe": "S", "decks": 16, "ruleset": "r"}])
        items = [{"kind": "coup.result", "seq": 2 + i, "coup": i + 1, "winner": ("banker", "player", "tie")[i % 3]}
                 for i in range(k)]
        t = time.perf_counter()
        for item in items:
            state = apply(state, item)
        took = time.perf_counter() - t
        assert state.roads == roads(state.results) and len(state.results) == k
        return took / k

    early, late = min(fold_results(20) for _ in range(3)), min(fold_results(coups_held(16)) for _ in range(3))
    assert late < 2.5 * early, (early, late)  # each result laid out again: 5 times more for 208 than for 20


def test_an_older_state_folds_on_as_if_alone():
    """The fold is pure: a state kept and folded again (a test, a second screen) gives what it gave."""
    base = fold([{"kind": "shoe.opened", "seq": 1, "shoe": "S", "decks": 8, "ruleset": "r"}]
                + [{"kind": "coup.result", "seq": 2 + i, "coup": i + 1, "winner": "banker"} for i in range(5)])
    one = apply(base, {"kind": "coup.result", "seq": 7, "coup": 6, "winner": "player"})
    two = apply(base, {"kind": "coup.result", "seq": 7, "coup": 6, "winner": "tie"})
    again = apply(one, {"kind": "coup.result", "seq": 8, "coup": 7, "winner": "player"})
    assert one.roads == roads("BBBBBP") and two.roads == roads("BBBBBT") and again.roads == roads("BBBBBPP")


def test_past_what_a_shoe_holds_voids_misdeals_and_devices_are_dropped():
    state = fold([{"kind": "shoe.opened", "seq": 1, "shoe": "S", "decks": 1, "ruleset": "r"}])
    held = coups_held(1)
    items = [{"kind": "coup.void", "seq": 2 + i, "coup": i + 1, "reason": "r"} for i in range(held + 5)]
    items += [{"kind": "misdeal", "seq": 100 + i, "misdeal": {"id": i, "kind": "k", "correctable": True,
                                                              "correction": "c"}} for i in range(held + 5)]
    items += [{"kind": "device.lost", "seq": 200 + i, "source": f"d{i}"} for i in range(100)]
    state = fold(items, state)
    assert len(state.voids) == held and len(state.pending) == held and len(state.devices) == 64
    assert state.dropped == 5 + 5 + 36


# ----- road steps ----------------------------------------------------------------------
def _results_with_steps(winners: str) -> tuple[object, RoadBuilder, int]:
    builder = RoadBuilder()
    state = fold([{"kind": "snapshot", "seq": 10, "state": SNAP | {"coups": []}}])
    seq = 11
    for i, w in enumerate(winners, 1):
        step = builder.add(Outcome(w, False, False, False)).to_json()
        state = apply(state, {"kind": "coup.result", "seq": seq, "coup": i, "player_total": 1, "banker_total": 2,
                              "winner": {"B": "banker", "P": "player", "T": "tie"}[w], "road": step})
        seq += 1
    return state, builder, seq


def test_a_road_step_that_contradicts_its_result_is_not_shown():
    state, builder, seq = _results_with_steps("BBP")
    assert state.roads == roads("BBP")
    banker = builder.add(Outcome("B", False, False, False)).to_json()
    # coup 4: the event says Player, its road step Banker
    after = apply(state, {"kind": "coup.result", "seq": seq, "coup": 4, "winner": "player", "road": banker})
    assert [o.winner for o in after.results] == ["B", "B", "P", "P"]
    assert after.roads == roads("BBPP")  # the big road agrees with the statistics and the bead plate
    # a step of another position, or with marks other than the event's
    wrong = copy.deepcopy(banker) | {"position": 9}
    assert apply(state, {"kind": "coup.result", "seq": seq, "coup": 4, "winner": "banker",
                         "road": wrong}).roads == roads("BBPB")
    paired = copy.deepcopy(banker) | {"banker_pair": True}
    assert apply(state, {"kind": "coup.result", "seq": seq, "coup": 4, "winner": "banker",
                         "road": paired}).roads == roads("BBPB")


@pytest.mark.parametrize("spoil", ["big_road_winner", "derived_colour", "ask_colour"])
def test_a_road_step_with_unknown_letters_is_not_shown(spoil):
    state, builder, seq = _results_with_steps("BBPPB")
    step = builder.add(Outcome("B", False, False, False)).to_json()
    if spoil == "big_road_winner":
        step["big_road"]["winner"] = "X"
    elif spoil == "derived_colour":
        for name in ("big_eye_boy", "small_road", "cockroach_pig"):
            if step.get(name):
                step[name]["colour"] = "Z"
    else:
        step["ask_road"]["banker"]["big_eye_boy"] = "Z"
    after = apply(state, {"kind": "coup.result", "seq": seq, "coup": 6, "winner": "banker", "road": step})
    assert after.roads == roads("BBPPBB")
    screen_text(after)  # drawn


# ----- the snapshot's table ---------------------------------------------------------------
def test_a_snapshot_names_the_table_the_client_checked():
    state = apply(initial(TABLE), {"table": TABLE, "kind": "snapshot", "seq": 10, "state": SNAP | {"table": "t9"}})
    assert state.table == TABLE and state.snapshots == 1
