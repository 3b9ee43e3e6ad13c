"""`shoed watch` against a real daemon: joining, the link's state, a restart, the command line.

docs/integrators.md, "Network": the daemon sends a heartbeat every second when idle, and
silence for more than 3 s means the daemon or the link is gone; the client
reconnects and catches up. The display says "reconnecting" for that time and
carries on by itself.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import time

import pytest

from shoed.display.live import Feed, link_state, local_odds
from shoed.display.state import CONNECTING, LIVE, RECONNECTING, apply, initial
from harness.processes import Daemon, run_shoed

SIM = ("--sim-pace", "0.05", "--sim-seed", "3", "--sim-shoes", "1")


@pytest.mark.parametrize(
    "case, has_snapshot, last_heard, now, expected",
    [
        ("no snapshot yet", False, None, 10.0, CONNECTING),
        ("no snapshot, though heartbeats come", False, 9.5, 10.0, CONNECTING),
        ("heard just now", True, 10.0, 10.0, LIVE),
        ("a heartbeat is due every second: 3 s is still live", True, 7.0, 10.0, LIVE),
        ("over 3 s of silence", True, 6.9, 10.0, RECONNECTING),
    ],
)
def test_link_state(case, has_snapshot, last_heard, now, expected):
    assert link_state(has_snapshot, last_heard, now, 3.0) == expected


def wait(feed: Feed, until, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not until(feed.state):
        assert time.monotonic() < deadline, f"the display never showed {what}: {feed.state.connection}"
        feed.poll(0.1)


def test_the_display_carries_on_across_a_daemon_restart(base):
    from shoed.net.client import TableClient

    d = Daemon(base, *SIM)
    try:
        feed = Feed(TableClient(d.events, d.snapshot, "t1"), "t1")
        wait(feed, lambda s: s.connection == LIVE and len(s.results) >= 2, 30, "two coups")
    finally:
        assert d.stop() == 0
    before = feed.state
    wait(feed, lambda s: s.connection == RECONNECTING, 10, "reconnecting")
    assert feed.state.results[: len(before.results)] == before.results  # what it showed stays on the screen
    d = Daemon(base, *SIM)  # the same journal: the table's seq carries on
    try:
        wait(feed, lambda s: s.connection == LIVE and s.seq > before.seq and s.note and "started" in s.note,
             20, "the table again")
        wait(feed, lambda s: s.coup is not None and s.shoe is not None, 20, "a coup of the new shoe")
        # `shoed watch --once` prints one screen of the running table.
        once = run_shoed("watch", d.events, "--snapshot", d.snapshot, "--once", "--width", "120", timeout=30)
        assert once.returncode == 0, once.stderr
        lines = once.stdout.splitlines()
        assert lines[0].startswith(" Table t1") and "live" in lines[0]
        assert any("Big road" in line for line in lines) and any("Statistics" in line for line in lines)
    finally:
        feed.client.close()
        assert d.stop() == 0


def test_watch_with_a_key_shows_the_surveillance_endpoints_odds(base):
    """The odds and alarm texts go to the surveillance audience only (docs/network.md): `shoed watch
    --key` reads those CURVE endpoints; on the display endpoints the Odds panel says where they are."""
    se, ss = f"ipc://{base}/se", f"ipc://{base}/ss"
    d = Daemon(base, *SIM, "--surveillance-pub", se, "--surveillance-snapshot", ss)
    try:
        d.wait_for(lambda line: line.get("event") == "ready", 30, "ready")
        key, server = base / "keys" / "local-console.key_secret", base / "keys" / "server.key"
        deadline = time.monotonic() + 30
        while True:  # the live odds come after the first coup
            seen = run_shoed("watch", se, "--snapshot", ss, "--key", str(key), "--server-key", str(server),
                             "--once", "--width", "140", timeout=30)
            assert seen.returncode == 0, seen.stderr
            if "cards)" in seen.stdout or time.monotonic() > deadline:
                break
            time.sleep(0.5)
        assert "Odds (" in seen.stdout and "banker" in seen.stdout and "player exp." in seen.stdout, seen.stdout
        plain = run_shoed("watch", d.events, "--snapshot", d.snapshot, "--once", "--width", "140", timeout=30)
        assert plain.returncode == 0 and "surveillance endpoints only" in plain.stdout, plain.stdout
        assert "player exp." not in plain.stdout
        # Without a key the CURVE endpoints never answer; a key that cannot be read is one line.
        refused = run_shoed("watch", se, "--snapshot", ss, "--once", "--timeout", "1")
        assert refused.returncode == 2 and "no snapshot from" in refused.stderr
        bad = run_shoed("watch", se, "--snapshot", ss, "--key", str(base / "nope.key_secret"), "--once")
        assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "cannot load the keys" in bad.stderr
    finally:
        assert d.stop() == 0


def test_once_without_a_daemon_says_so(base):
    proc = run_shoed("watch", f"ipc://{base}/none", "--snapshot", f"ipc://{base}/none-snap", "--once",
                     "--timeout", "1")
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and "no snapshot from" in proc.stderr and "is the daemon running" in proc.stderr


@pytest.mark.parametrize(
    "args, says",
    [
        (["ipc:///tmp/x"], "give the snapshot endpoint with --snapshot"),
        (["--table", "t1.x"], "table id must be"),
    ],
)
def test_bad_arguments_exit_2(args, says):
    proc = run_shoed("watch", *args, "--once", "--timeout", "0.1")
    assert proc.returncode == 2 and says in proc.stderr


def test_default_snapshot_endpoint_is_the_next_port():
    from shoed.commands.watch import snapshot_endpoint

    assert snapshot_endpoint("tcp://127.0.0.1:5556") == "tcp://127.0.0.1:5557"
    assert snapshot_endpoint("tcp://[::1]:7000") == "tcp://[::1]:7001"


def test_odds_computed_here_from_the_snapshot():
    # The snapshot brings the cards left by rank; with no odds in it, the display counts them itself.
    snap = {"table": "t1", "ruleset": "punto-banco", "decks": 6, "coups": [], "coup": None, "alarms": {},
            "pending_misdeals": [], "devices": {}, "locked": None, "seq": 3,
            "shoe": {"id": "s", "phase": "dealing", "cards_left": 312, "remaining_by_rank": [24] * 13}}
    state = apply(initial("t1"), {"kind": "snapshot", "seq": 3, "state": snap})
    odds = local_odds(state)
    assert odds["cards_left"] == 312 and abs(sum(odds["probabilities"][b] for b in ("banker", "player", "tie")) - 1) < 1e-12
    assert local_odds(apply(state, {"kind": "watch.odds", "odds": odds})) is None  # only when there are none
    assert local_odds(apply(state, {"kind": "snapshot", "seq": 3, "state": snap | {"ruleset": "no-such"}})) is None


def test_a_ruleset_file_named_by_a_snapshot_is_never_read(tmp_path, monkeypatch):
    """A hostile snapshot names a file for its ruleset: the display computes odds only for a ruleset
    built in by name, and reads no file named by what came over the wire."""
    import shoed.files

    snap = {"table": "t1", "ruleset": "punto-banco", "decks": 6, "coups": [], "coup": None, "alarms": {},
            "pending_misdeals": [], "devices": {}, "locked": None, "seq": 3,
            "shoe": {"id": "s", "phase": "dealing", "cards_left": 312, "remaining_by_rank": [24] * 13}}
    read: list[str] = []
    monkeypatch.setattr(shoed.files, "read_regular", lambda path, **kw: read.append(str(path)) or b"")
    (tmp_path / "r.toml").write_text("")
    for named in (str(tmp_path / "r.toml"), "../../etc/passwd", "x.toml"):
        state = apply(initial("t1"), {"kind": "snapshot", "seq": 3, "state": snap | {"ruleset": named}})
        assert local_odds(state) is None
    assert read == []


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed (apt-get install tmux)")
def test_shoed_watch_in_a_real_terminal(base):
    d = Daemon(base, *SIM)
    server = f"shoed-watch-test-{base.name}"
    try:
        # The pane's own size, not COLUMNS/LINES a test runner may have exported.
        command = f"env -u COLUMNS -u LINES {sys.executable} -m shoed watch {d.events} --snapshot {d.snapshot}"
        subprocess.run(["tmux", "-L", server, "new-session", "-d", "-x", "130", "-y", "45", command], check=True,
                       timeout=10)
        deadline = time.monotonic() + 30
        text = ""
        while time.monotonic() < deadline:
            text = subprocess.run(["tmux", "-L", server, "capture-pane", "-p"], capture_output=True, text=True,
                                  timeout=10).stdout
            if "\u25cf live" in text and "Coup " in text and "Alarms" in text:
                break
            time.sleep(0.3)
        lines = text.splitlines()
        assert "\u25cf live" in lines[0] and max(len(line) for line in lines) > 120, text  # the whole pane
        for part in ("Coup ", "Statistics", "Odds", "Bead plate", "Big road", "Big eye boy", "Ask road", "Alarms"):
            assert part in text, (part, text)
    finally:
        subprocess.run(["tmux", "-L", server, "kill-server"], check=False, timeout=10)
        assert d.stop() == 0
