"""Stopping the embedded default (`shoed run`, its built-in virtual shoe) and starting it again
resumes the coup in progress where the journal left it, as a shoe that stays in does: the
virtual shoe resumes its deal from the journal (shoed/simulate/resume.py) instead of putting
a new shoe in. Before, the new virtual shoe's `shoe_inserted` voided the open coup ("the shoe
was closed during the coup") and closed the shoe unbalanced. The first run's virtual shoe,
gone with it, leaves the snapshot's `devices` (it stayed there as connected).
"""

from __future__ import annotations

import signal
import time

import pytest

from harness.processes import Daemon, run_shoed
from harness.records import journal_events
from tests.test_daemon_flow import open_coup


def status(d, keys) -> dict:
    from shoed.net.commands import send_command

    return send_command(d.commands, "status", {}, keys, timeout=5)["status"]


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["sigterm", "ctrl-c"])
def test_a_restart_of_the_embedded_default_resumes_the_open_coup(base, sig):
    from shoed.net.curve import ClientCurve

    options = ["--sim-pace", "0.15", "--sim-seed", "7", "--sim-shoes", "1"]
    with Daemon(base, *options) as d:
        keys = ClientCurve.from_files(d.keys / "local-console.key_secret", d.keys / "server.key")
        open_coup(d, keys, 3)
        old = "native:" + d.wait_for(lambda x: x.get("event") == "virtual shoe started", 5, "the shoe")["link"]
        assert d.stop(sig) == 0
    stopped = [e for e in journal_events(base / "journal") if e["kind"] in ("card", "coup.opened")]
    coup = stopped[-1]["coup"]
    dealt = [e["card"] for e in stopped if e["kind"] == "card" and e["coup"] == coup]
    with Daemon(base, *options) as d:
        deadline = time.monotonic() + 60
        while len(status(d, keys)["coups"]) < coup + 2:
            assert time.monotonic() < deadline, "the table did not deal on after the restart"
            time.sleep(0.1)
        now = status(d, keys)
        new = "native:" + d.wait_for(lambda x: x.get("event") == "virtual shoe started", 5, "the shoe")["link"]
        assert d.stop() == 0
    # The first run's virtual shoe has gone with it: it leaves `devices` (device.gone at the power on).
    assert set(now["devices"]) == {new} and old != new, now["devices"]
    gone = [e for e in journal_events(base / "journal") if e["kind"] == "device.gone"]
    assert [e["source"] for e in gone] == [old]
    events = journal_events(base / "journal")
    assert not [e for e in events if e["kind"] == "coup.void"], "a restart voided a coup"
    assert [e["kind"] for e in events].count("shoe.opened") == 1  # the same shoe goes on
    result = next(e for e in events if e["kind"] == "coup.result" and e["coup"] == coup)
    from harness.records import draw_order

    assert draw_order(result)[: len(dealt)] == dealt  # the coup went on from the cards dealt before the stop
    numbers = [c["coup"] for c in now["coups"]]
    assert numbers == list(range(1, len(numbers) + 1)) and not any(c["void"] for c in now["coups"])
    assert now["pending_misdeals"] == [] and "stalled" not in now["alarms"]
    assert run_shoed("journal", "verify", str(base / "journal")).returncode == 0


def _children(pid: int) -> list[int]:
    with open(f"/proc/{pid}/task/{pid}/children") as f:
        return [int(p) for p in f.read().split()]


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_the_virtual_shoe_does_not_outlive_a_daemon_killed_outright(base):
    """`kill -9` of the daemon on a bench, outside systemd (which ends the service's whole group):
    its virtual shoe dealt on, for no table, until killed by hand. It is told of its parent's death."""
    with Daemon(base, "--sim-pace", "0.15", "--sim-seed", "7") as d:
        d.wait_for(lambda x: x.get("event") == "virtual shoe started", 10, "the shoe")
        shoes = _children(d.pid)
        assert len(shoes) == 1 and _alive(shoes[0])
        d.proc.kill()
        d.proc.wait(10)
        deadline = time.monotonic() + 10
        while _alive(shoes[0]) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _alive(shoes[0]), "the virtual shoe outlived its daemon"


def test_a_virtual_dealer_without_its_key_says_it_will_not_follow(tmp_path):
    # The embedded default's dealer confirms a void and enters an unreadable card with the local
    # console's key: without it in the key folder it deals as scripted, and the log says so.
    import dataclasses

    from structlog.testing import capture_logs

    from shoed.daemon.config import Config
    from shoed.daemon.virtual import dealer_follows

    cfg = dataclasses.replace(Config(), key_dir=str(tmp_path), curve_commands=True)
    with capture_logs() as logged:
        assert dealer_follows(cfg) == []
    assert any("does not follow the table" in e["event"] and "local-console.key_secret" in e["event"]
               for e in logged), logged
