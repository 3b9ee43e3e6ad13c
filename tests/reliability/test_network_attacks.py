"""A hostile network cannot stop or slow the table (docs/network.md: Limits).

Each attack runs against the real daemon on ipc sockets while the virtual shoe
deals flat out, bounded in count and in time. Every case checks that the
shoe was dealt to the end (no card lost or doubled: the journal's cards are
the shoe's), that the daemon is still up, and what the attack was meant to
cost it. Timings are not asserted beyond "the shoe finished within a deadline
that the daemon before these limits missed by far" (benchmarks/bench_attack.py
measures them).
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import socket
import subprocess
import sys
import threading
import time

import pytest
import zmq

from harness.processes import Daemon, Simulator
from harness.records import BIG_SUBSCRIPTIONS, dealer, journal_inputs, truth_cards

SHOE_DEADLINE = 60  # seconds for one shoe dealt flat out while attacked (about 3 s without attack)


class Attack(threading.Thread):
    """Runs `body(stop)` in a thread until stopped; the attack's own loop bounds its count."""

    def __init__(self, body) -> None:
        super().__init__(daemon=True)
        self.body, self.stop_event, self.error = body, threading.Event(), None

    def run(self) -> None:
        try:
            self.body(self.stop_event)
        except Exception as exc:  # noqa: BLE001 - reported by stop()
            self.error = exc

    def stop(self) -> None:
        self.stop_event.set()
        self.join(20)
        assert self.error is None, self.error


def dealt_while(base, attack, *daemon_args, preexec_fn=None, shoes: int = 1, before=None):
    """Deal `shoes` flat out while `attack(daemon, stop)` runs; the daemon (stopped) and the simulator."""
    with Daemon(base, *daemon_args, "--source", f"native:{base / 'shoe'}", preexec_fn=preexec_fn) as daemon:
        if before is not None:
            before(daemon)
        thread = Attack(lambda stop: attack(daemon, stop))
        thread.start()
        time.sleep(0.3)  # the attack is under way before the first card
        with Simulator(base, seed=3, pace=0.0, shoes=shoes) as sim:
            try:
                assert sim.wait_done(SHOE_DEADLINE) == 0, f"the table stopped or crawled: {sim.summary}"
            finally:
                thread.stop()
            assert daemon.proc.poll() is None, f"the daemon is still up: {daemon.lines[-6:]}"
            rss, _ = daemon.rss_kb()
        assert daemon.stop() == 0
    taken = [i["card"] for i in journal_inputs(base / "journal") if i["kind"] == "card"]
    assert taken == truth_cards(sim.truth()), "each card journaled once, in order"
    return daemon, rss


def test_catch_up_requests_in_flight_do_not_hold_up_the_cards(base):
    # Two whole-range requests always in flight, served from the journal files (0 is older than
    # the daemon's memory): before, the card loop read them itself, one card in 9 s.
    served = []

    def attack(daemon, stop):
        ctx = zmq.Context()
        sock = dealer(ctx, daemon.snapshot)
        try:
            for _ in range(2):
                sock.send(json.dumps({"op": "events", "from": 0, "to": 9999}).encode())
            deadline = time.monotonic() + SHOE_DEADLINE
            while not stop.is_set() and time.monotonic() < deadline:
                if sock.poll(100) and json.loads(sock.recv()).get("done"):
                    served.append(1)
                    sock.send(json.dumps({"op": "events", "from": 0, "to": 9999}).encode())
        finally:
            sock.close(0)
            ctx.term()

    dealt_while(base, attack)
    assert served, "the catch-up requests were served too"


@pytest.mark.parametrize("credit", [None, 1], ids=["pipe", "credit"])
def test_clients_that_never_read_their_replies_cost_little_memory(base, credit):
    # Held by the pipe's high-water mark, or by a credit of one reply never granted more.
    request = {"op": "events", "from": 0, "to": 9999} | ({"credit": credit} if credit else {})

    def attack(daemon, stop):
        ctx = zmq.Context()
        socks = [dealer(ctx, daemon.snapshot) for _ in range(8)]
        try:
            for _ in range(20):  # the second request of each is served; the rest are refused as in flight
                for sock in socks:
                    sock.send(json.dumps(request).encode())
            stop.wait(SHOE_DEADLINE)
        finally:
            for sock in socks:
                sock.close(0)
            ctx.term()

    _, rss = dealt_while(base, attack)
    assert rss < 150_000, f"daemon RSS {rss} kB with eight clients not reading (before: 600 MB)"


def test_huge_and_countless_subscriptions_are_refused_and_displays_still_served(base):
    def attack(daemon, stop):
        # 1 MB subscriptions: ZeroMQ cuts the peer before reading them in. In a process of its own:
        # libzmq 4.3.5 on the attacker's side may crash when it is cut off.
        subprocess.run([sys.executable, "-c", BIG_SUBSCRIPTIONS, daemon.events], timeout=30, check=False,
                       capture_output=True)
        ctx = zmq.Context()
        try:
            sub = ctx.socket(zmq.SUB)
            sub.linger = 0
            sub.sndhwm = 0
            sub.connect(daemon.events)
            for i in range(20_000):  # many distinct prefixes, none the table's: each refused
                if stop.is_set():
                    break
                sub.setsockopt(zmq.SUBSCRIBE, b"%06d" % i + bytes(50))
            stop.wait(SHOE_DEADLINE)
            sub.close(0)
        finally:
            ctx.term()

    display = {}

    def watch(daemon):  # an honest display, subscribed to everything, before the flood
        ctx = zmq.Context()
        sub = ctx.socket(zmq.SUB)
        sub.setsockopt(zmq.SUBSCRIBE, b"")
        sub.connect(daemon.events)
        display.update(ctx=ctx, sub=sub)

    daemon, rss = dealt_while(base, attack, before=watch)
    try:
        got = 0
        while display["sub"].poll(100):
            display["sub"].recv_multipart()
            got += 1
        assert got > 400, f"the display received {got} messages"
    finally:
        display["sub"].close(0)
        display["ctx"].term()
    assert rss < 150_000, f"daemon RSS {rss} kB (before: +548 MB)"
    refused = [line for line in daemon.lines if "subscriptions refused" in str(line.get("event"))]
    assert 1 <= len(refused) <= 10, refused


@pytest.fixture
def console(base):
    from shoed.net.curve import create_key_pair

    clients = base / "keys" / "clients"
    clients.mkdir(parents=True)
    public, secret, _ = create_key_pair(base / "console", "lab-console")
    shutil.copy(public, clients / "lab-console.key")
    return secret


def test_status_commands_are_not_journaled_and_are_rate_limited_per_key(base, console):
    from shoed.net.curve import ClientCurve

    answers = {"ok": 0, "limited": 0}

    def attack(daemon, stop):
        ctx = zmq.Context()
        sock = dealer(ctx, daemon.commands, ClientCurve.from_files(console, base / "keys" / "server.key"))
        try:
            for _ in range(600):
                if stop.is_set():
                    break
                sock.send(b'{"cmd": "status"}')
                if sock.poll(2000):
                    reply = json.loads(sock.recv())
                    answers["ok" if reply["ok"] else "limited"] += 1
                    assert reply["ok"] or "rate limited" in reply["error"], reply
        finally:
            sock.close(0)
            ctx.term()

    dealt_while(base, attack)
    commands = [i for i in journal_inputs(base / "journal") if i["kind"] == "command"]
    assert commands == [], "status is not a journal record"
    assert answers["ok"] >= 40 and answers["limited"] > 0, answers


def test_refused_handshakes_are_logged_as_a_summary(base, console):
    from shoed.net.curve import ClientCurve, create_key_pair

    _, stranger, _ = create_key_pair(base / "stranger", "stranger")

    def attack(daemon, stop):
        keys = ClientCurve.from_files(stranger, base / "keys" / "server.key")  # the daemon made it at start
        ctx = zmq.Context()
        try:
            for _ in range(300):
                if stop.is_set():
                    break
                sock = dealer(ctx, daemon.commands, keys)
                sock.send(b'{"cmd": "status"}')
                time.sleep(0.005)
                sock.close(0)
        finally:
            ctx.term()

    threads = {}

    def layout(daemon):
        threads.update(_threads(daemon.proc.pid))

    daemon, _ = dealt_while(base, attack, before=layout)
    refused = [line for line in daemon.lines if "CURVE client" in str(line.get("event"))
               and "refused" in str(line.get("event"))]
    assert 1 <= len(refused) <= 10, f"{len(refused)} lines (before: one per handshake)"
    # The handshakes' crypto runs on the public context's I/O thread, at a lower priority than the card
    # loop; the display stream has an I/O thread of its own (before: one I/O thread did both).
    public = [nice for name, nice in threads.values() if name.startswith("7/ZMQbg/IO/")]
    streams = [nice for name, nice in threads.values() if name.startswith("ZMQbg/IO/")]
    loop = threads[daemon.proc.pid][1]
    assert public == [min(loop + 10, 19)] and streams == [loop], threads  # 19: the lowest there is


def _threads(pid: int) -> dict[int, tuple[str, int]]:
    """A process's threads: id -> (name, nice)."""
    out = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{tid}/comm") as f:
            name = f.read().strip()
        with open(f"/proc/{pid}/task/{tid}/stat") as f:
            nice = int(f.read().rsplit(")", 1)[1].split()[16])
        out[int(tid)] = (name, nice)
    return out


def _few_files():
    resource.setrlimit(resource.RLIMIT_NOFILE, (160, 160))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_connection_flood_cannot_take_the_next_shoes_journal_file(base):
    # The daemon may hold 160 files. Once the first shoe is being dealt (its pty open), idle TCP
    # connections to the catch-up port take every free descriptor; then the second shoe opens and
    # needs its journal file. Before, `journal write failed: Too many open files` and exit 3.
    # (Over TCP: libzmq 4.3.5 aborts when an ipc accept meets EMFILE.)
    port = free_port()
    held: list[socket.socket] = []
    with (Daemon(base, "--snapshot", f"tcp://127.0.0.1:{port}", "--source", f"native:{base / 'shoe'}",
                 preexec_fn=_few_files) as daemon,
          Simulator(base, seed=3, pace=0.004, shoes=2) as sim):
        try:
            daemon.wait_for(lambda line: line.get("event") == "ready", 10, "ready")
            deadline = time.monotonic() + 20
            while not any(i["kind"] == "card" for i in journal_inputs(base / "journal")):
                assert time.monotonic() < deadline, "no card of the first shoe"
                time.sleep(0.05)
            for _ in range(400):
                s = socket.socket()
                s.setblocking(False)
                s.connect_ex(("127.0.0.1", port))
                held.append(s)
            time.sleep(0.5)
            assert daemon.proc.poll() is None, f"the daemon stopped: {daemon.lines[-4:]}"
            assert len(os.listdir(f"/proc/{daemon.pid}/fd")) >= 155, "the flood took the free descriptors"
            # Both shoes dealt well within libzmq's 30 s handshake timeout, which would free them.
            assert sim.wait_done(25) == 0, f"the table stopped: {sim.summary}"
            assert daemon.proc.poll() is None, f"the daemon stopped: {daemon.lines[-4:]}"
        finally:
            for s in held:
                s.close()
        assert daemon.stop() == 0
    assert len(list((base / "journal").glob("*.jsonl"))) == 3, "the table's file and one per shoe"
    taken = [i["card"] for i in journal_inputs(base / "journal") if i["kind"] == "card"]
    assert taken == truth_cards(sim.truth())
