"""A lab bench: the command endpoint without CURVE (`curve_commands = false`), which knows no keys.

The virtual dealer (`shoed simulate --follow` without `--key`, as the daemon's built-in virtual
shoe runs it on such a bench) sends its corrections without CURVE, and every misdeal its deal
causes is put right; `shoed command --no-curve` reaches the table; a client and an endpoint
that disagree on CURVE are told so at once, in one line, with a non-zero exit.
"""

from __future__ import annotations

import dataclasses
import threading
import time
import types

import zmq

from harness.processes import Daemon, Simulator, run_shoed
from harness.records import journal_events
from shoed.daemon.config import Config
from shoed.daemon.virtual import dealer_follows
from shoed.net.commands import CommandServer
from shoed.simulate.follow import TableFollower
from tests.test_misdeal_endings import ended


def bench_config(base):
    config = base / "bench.toml"
    config.write_text("[publish]\ncurve_commands = false\n")
    return str(config)


def client_keys(base) -> list[str]:
    """A key pair of a client's own, and a server key, for a client that sends with CURVE."""
    from shoed.net.curve import create_key_pair

    public, secret, _ = create_key_pair(base / "client", "console")
    server_public, _, _ = create_key_pair(base / "client-server", "server")
    return ["--key", str(secret), "--server-key", str(server_public)]


def command(*args: str) -> tuple[int, list[str], float]:
    started = time.monotonic()
    proc = run_shoed("command", *args, timeout=60)
    return proc.returncode, (proc.stdout + proc.stderr).strip().splitlines(), time.monotonic() - started


def test_the_virtual_dealer_corrects_every_misdeal_at_an_endpoint_without_curve(base):
    # The dealer as the daemon's built-in virtual shoe runs it on a bench: without keys.
    bench = dataclasses.replace(Config(), key_dir=str(base / "keys"), curve_commands=False)
    follow = dealer_follows(bench, {name: f"ipc://{base}/{name}" for name in ("events", "snapshot", "commands")})
    assert "--key" not in follow
    faults = ["--extra-card", "0.3", "--unreadable", "0.03", "--missing-card", "0.2", "--gate", "none"]
    with (Simulator(base, *faults, *follow, seed=12, pace=0.02) as sim,
          Daemon(base, "--config", bench_config(base), "--source", sim.source, "--stall-after", "5") as daemon):
        try:
            assert sim.wait_done(150) == 0, f"the table stopped: {sim.summary}"
        except AssertionError as exc:
            tail = [(e["kind"], e.get("misdeal") or e.get("alarm")) for e in journal_events(base / "journal")[-8:]]
            raise AssertionError(f"{exc}; the journal ends {tail}; {sim.err_path.read_text()[-800:]}") from None
        code, lines, _ = command("status", "--no-curve", "--endpoint", daemon.commands)
        assert code == 0, lines
        assert lines[0].startswith("table t1 ·") and any(line.startswith("coups:") for line in lines), lines
        assert daemon.stop() == 0
    assert "Traceback" not in sim.err_path.read_text()
    events = journal_events(base / "journal")
    misdeals = [e["misdeal"] for e in events if e["kind"] == "misdeal"]
    kinds = {m["kind"] for m in misdeals}
    assert {"extra_card", "unreadable_card"} <= kinds, kinds
    assert sorted(ended(events)) == sorted(m["id"] for m in misdeals)
    assert [e for e in events if e["kind"] == "misdeal.corrected"]
    assert not [e for e in events if e["kind"] == "alarm" and e["alarm"] == "stalled"]
    closed = [e["reconciliation"] for e in events if e["kind"] == "shoe.closed"]
    assert len(closed) == 1 and closed[0]["unaccounted"] == 0, closed


def test_shoed_command_and_an_endpoint_that_disagree_on_curve_say_so_at_once(base):
    keyed = base / "keyed"
    keyed.mkdir()
    with Daemon(base, "--config", bench_config(base), "--source", f"native:{base}/noshoe") as bench:
        code, lines, took = command("status", "--endpoint", bench.commands, "--timeout", "120", *client_keys(base))
        assert code == 2 and len(lines) == 1 and "--no-curve" in lines[0] and "without CURVE" in lines[0], lines
        assert took < 60  # told at once, never the 120 s timeout: bounded loosely, the machine may be loaded
        code, lines, _ = command("status", "--no-curve", "--endpoint", bench.commands)
        assert code == 0 and lines[0].startswith("table t1 ·"), lines
    with Daemon(keyed, "--source", f"native:{keyed}/noshoe") as curve:
        code, lines, took = command("status", "--no-curve", "--endpoint", curve.commands, "--timeout", "120")
        assert code == 2 and len(lines) == 1 and "CURVE keys only" in lines[0], lines
        assert took < 60


def test_a_command_that_fails_costs_the_dealer_one_line_and_it_goes_on(base, caplog):
    # Without keys the dealer's commands go without CURVE; one that fails is logged, not raised.
    ctx = zmq.Context()
    seen = []
    shoe = types.SimpleNamespace(listeners=[], holding=threading.Event(), answer_due=threading.Event(),
                                 plain=False, take_confirm=lambda: False)
    server = CommandServer(ctx, "tcp://127.0.0.1:*", seen.append, insecure=True)
    try:
        follower = TableFollower(shoe, "t1", "tcp://127.0.0.1:9", "tcp://127.0.0.1:9", server.endpoint)
        done = []
        thread = threading.Thread(target=lambda: done.append(follower.command("burn_card", misdeal=1)))
        thread.start()
        deadline = time.monotonic() + 10
        while not server.handle() and time.monotonic() < deadline:
            time.sleep(0.01)
        thread.join(10)
        assert done == [True] and seen[0].name == "burn_card" and seen[0].client_key is None
    finally:
        server.close()
        ctx.destroy(linger=0)
    follower = TableFollower(shoe, "t1", "tcp://127.0.0.1:9", "tcp://127.0.0.1:9", "tcp://127.0.0.1:0")
    with caplog.at_level("WARNING", logger="shoed.simulate.follow"):
        follower._misdeal({"id": 4, "kind": "unreadable_card", "correction": "burn", "correctable": True}, 3)
    assert not shoe.holding.is_set()  # the deal goes on
    assert follower.actions[-1] == ("burn_card", {"misdeal": 4}, False)
    (record,) = [r for r in caplog.records if r.name == "shoed.simulate.follow"]
    assert "burn_card failed" in record.getMessage() and "\n" not in record.getMessage()
