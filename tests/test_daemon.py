"""The daemon end to end: real processes, a real pseudo-terminal, real ZeroMQ sockets, real files.

- a subscriber sees a whole shoe;
- a late joiner gets snapshot plus updates with no gap and no duplicate;
- kill -9 mid-coup and restart resumes the coup, every card counted once;
- a flipped byte in the daemon's journal fails `verify` at that record;
- a client without an allowed key cannot void a coup, an allowed one can;
- replay of the recorded shoe reproduces its events exactly.
"""

from __future__ import annotations

import json
import signal
import time
from pathlib import Path

import pytest

from shoed.rules.coup import draw_order as coup_draw_order
from harness.processes import Daemon, Simulator, run_shoed

TABLE = "t1"


def client(d: Daemon):
    from shoed.net.client import TableClient

    return TableClient(d.events, d.snapshot, TABLE)


class Collector:
    """The snapshot and every later event one display receives."""

    def __init__(self, table_client) -> None:
        self.client = table_client
        self.snapshot: dict | None = None
        self.events: list[dict] = []

    def poll(self, timeout: float = 0.05) -> None:
        for item in self.client.poll(timeout):
            if item["kind"] == "snapshot":
                assert self.snapshot is None, "a second snapshot means history was lost"
                self.snapshot = item
            else:
                self.events.append(item)

    @property
    def finished(self) -> bool:
        return self.snapshot is not None and finished(self.events)


def collect_coups(table_client, until, timeout: float = 60.0) -> tuple[dict, list[dict]]:
    """Gather the snapshot and every later event until `until(events)` holds."""
    c = Collector(table_client)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        c.poll(0.2)
        if c.snapshot is not None and until(c.events):
            return c.snapshot, c.events
    raise AssertionError(f"timed out; {len(c.events)} events gathered")


def coups_of(snapshot: dict, events: list[dict]) -> list[int]:
    numbers = [c["coup"] for c in snapshot["state"]["coups"]]
    numbers += [e["coup"] for e in events if e["kind"] in ("coup.result", "coup.void")]
    return numbers


def finished(events):
    return any(e["kind"] == "shoe.finished" for e in events)


def test_subscriber_sees_a_whole_shoe_and_a_late_joiner_matches(base):
    d = Daemon(base, "--sim-pace", "0.01", "--sim-seed", "5", "--sim-shoes", "1")
    try:
        a, b = Collector(client(d)), None
        started = time.monotonic()
        while not (a.finished and b is not None and b.finished):
            assert time.monotonic() - started < 90, "the shoe did not finish"
            a.poll()
            if b is None and time.monotonic() - started > 1.5:
                b = Collector(client(d))  # the late joiner arrives mid-shoe
            if b is not None:
                b.poll()
        assert not finished(b.snapshot["state"].get("events", [])) and b.snapshot["state"]["coups"], "joined mid-shoe"
        early, late = a.client, b.client
        snap_a, ev_a, snap_b, ev_b = a.snapshot, a.events, b.snapshot, b.events
        coups_a, coups_b = coups_of(snap_a, ev_a), coups_of(snap_b, ev_b)
        assert coups_a == list(range(1, len(coups_a) + 1)) and len(coups_a) > 50
        assert coups_b == coups_a, "the late joiner must end with exactly the daemon's coups"
        # (The client drops updates at or below the snapshot's seq, as the Clone pattern says:
        # none of them is delivered twice.)
        seqs = [e["seq"] for e in ev_b]
        assert seqs == list(range(snap_b["seq"] + 1, snap_b["seq"] + 1 + len(seqs)))
        early.close()
        late.close()
    finally:
        assert d.stop() == 0
    # The journal verifies, replays identically, and recall shows the last ten coups in order.
    assert run_shoed("journal", "verify", str(base / "journal")).returncode == 0
    replay = run_shoed("replay", str(base / "journal"), "--json")
    assert replay.returncode == 0 and json.loads(replay.stdout)["identical"] is True
    recall = json.loads(run_shoed("journal", "recall", str(base / "journal"), "--json", check=True).stdout)
    lines = recall["coups"] if isinstance(recall, dict) else recall
    assert [c["coup"] for c in lines] == coups_a[-10:]


def test_flipped_byte_in_the_daemons_journal_fails_verify(base):
    d = Daemon(base, "--sim-pace", "0.01", "--sim-seed", "2", "--sim-shoes", "1")
    d.wait_for(lambda line: line.get("coup", 0) >= 3, 30, "coup 3")
    assert d.stop() == 0
    files = sorted((base / "journal").glob("*.jsonl"))
    target = files[-1]
    target.chmod(0o644)
    data = bytearray(target.read_bytes())
    lines = data.split(b"\n")
    victim = 5  # the sixth line of the shoe's file
    offset = sum(len(x) + 1 for x in lines[:victim]) + len(lines[victim]) // 2
    data[offset] ^= 0x04
    target.write_bytes(bytes(data))
    proc = run_shoed("journal", "verify", str(base / "journal"), "--json")
    assert proc.returncode == 1
    report = json.loads(proc.stdout)
    bad = report["first_bad"]
    assert bad["line"] == victim + 1 and Path(bad["file"]).name == target.name


def test_commands_need_an_allowed_key(base):
    from shoed.net.commands import CommandTimeout, send_command
    from shoed.net.curve import ClientCurve, create_key_pair

    d = Daemon(base, "--sim-pace", "0.05", "--sim-seed", "3", "--sim-shoes", "1")
    try:
        d.wait_for(lambda line: line.get("coup", 0) >= 2, 30, "coup 2")
        keys = base / "keys"
        stranger_dir = base / "stranger"
        stranger_dir.mkdir()
        create_key_pair(stranger_dir, "stranger")
        stranger = ClientCurve.from_files(stranger_dir / "stranger.key_secret", keys / "server.key")
        with pytest.raises(CommandTimeout):
            send_command(d.commands, "void", {"reason": "not allowed"}, stranger, timeout=1.5)
        console = ClientCurve.from_files(keys / "local-console.key_secret", keys / "server.key")
        reply = send_command(d.commands, "status", {}, console, timeout=5)
        assert reply["ok"] is True and reply["status"]["table"] == TABLE
        reply = send_command(d.commands, "void", {"reason": "test void"}, console, timeout=5)
        assert reply["ok"] in (True, False)  # refused only if between coups at that instant
        cli = run_shoed("command", "status", "--json", "--endpoint", d.commands,
                        "--key", str(keys / "local-console.key_secret"), "--server-key", str(keys / "server.key"))
        assert cli.returncode == 0 and json.loads(cli.stdout)["ok"] is True
        cli = run_shoed("command", "status", "--endpoint", d.commands, "--key", str(keys / "local-console.key_secret"),
                        "--server-key", str(keys / "server.key"))
        lines = cli.stdout.splitlines()
        assert cli.returncode == 0 and 3 <= len(lines) <= 20 and lines[0].startswith(f"table {TABLE} ")
        assert any(x.startswith("waiting for: ") for x in lines)
        cli = run_shoed("command", "status", "--endpoint", d.commands, "--timeout", "1",
                        "--key", str(stranger_dir / "stranger.key_secret"), "--server-key", str(keys / "server.key"))
        assert cli.returncode == 2 and "allow-list" in cli.stderr
        reply = send_command(d.commands, "explode", {}, console, timeout=5)
        assert reply["ok"] is False and "unknown command" in reply["error"]
    finally:
        assert d.stop() == 0
    # Every accepted command that changes the table is journaled with the key that sent it (`status`
    # changes nothing and is not); the stranger's never arrived.
    records = [json.loads(x) for f in sorted((base / "journal").glob("*.jsonl")) for x in f.read_text().splitlines()]
    commands = [r["input"] for r in records if r.get("kind") == "step" and r["input"]["kind"] == "command"]
    assert {c["cmd"] for c in commands} >= {"void"} and "status" not in {c["cmd"] for c in commands}
    assert all(c["client"] == "local-console" and len(c["client_key"]) == 40 for c in commands)
    assert not any(c["args"].get("reason") == "not allowed" for c in commands)


def test_kill_9_mid_coup_and_restart_resumes(base):
    """A shoe that survives the daemon: the virtual shoe in its own process, the daemon
    killed with SIGKILL in the middle of a coup and started again."""
    sim = Simulator(base, seed=9, pace=0.05, shoes=1)
    try:
        source = ["--source", sim.source]
        d = Daemon(base, *source)
        # Kill in the middle of a coup: right after the second card of coup 4.
        watcher = Collector(client(d))
        deadline = time.monotonic() + 60
        while not any(e["kind"] == "card" and (e["coup"] or 0) >= 4 and e.get("index") == 1 for e in watcher.events):
            assert time.monotonic() < deadline, "coup 4 never started"
            watcher.poll(0.01)
        d.stop(signal.SIGKILL)
        watcher.client.close()
        d2 = Daemon(base, *source)
        rebuilt = d2.wait_for(lambda line: line.get("event") == "state rebuilt from the journal", 5, "rebuild")
        assert rebuilt["steps"] > 0 and rebuilt["coup"] >= 4  # killed inside coup 4 or later
        watcher = client(d2)
        snap, events = collect_coups(watcher, finished, timeout=120)
        watcher.close()
        assert d2.stop() == 0
    finally:
        sim.stop()
    numbers = coups_of(snap, events)
    assert numbers == list(range(1, len(numbers) + 1))
    records = [json.loads(x) for f in sorted((base / "journal").glob("*.jsonl")) for x in f.read_text().splitlines()]
    results = [e for r in records if r.get("kind") == "step" for e in r["events"] if e["kind"] == "coup.result"]
    assert not [e for r in records if r.get("kind") == "step" for e in r["events"] if e["kind"] == "misdeal"]
    dealt = [c for e in results for c in draw_order(e)]
    truth_cards = [t["card"] for t in sim.truth()
                   if t.get("kind") == "card" and t.get("recipient") in ("player", "banker")]
    assert dealt == truth_cards[: len(dealt)] and len(dealt) == len(truth_cards)
    assert run_shoed("journal", "verify", str(base / "journal")).returncode == 0
    assert json.loads(run_shoed("replay", str(base / "journal"), "--json").stdout)["identical"] is True


def draw_order(result: dict) -> list[str]:
    return coup_draw_order(result["player_cards"], result["banker_cards"])
