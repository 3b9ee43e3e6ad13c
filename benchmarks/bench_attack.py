"""Each attack of a hostile network against the real daemon, next to a calm phase of the same run.

The daemon runs as in benchmarks/bench_latency.py (`shoed run --source
native:<pty>`, journal with fsync, events on ipc), fed by a scripted shoe that
deals whole shoes flat out (each card waits for the gate and for the previous
card's ack, as a real shoe's would). Card latency is the time from a card's
frame written on the pty to its event at a display's SUB socket.

For each attack, phases alternate: calm, attacked, calm, attacked, ... (the
same number of cards each), and the figures of the calm and the attacked
phases are printed side by side: card rate, p50 and p99 latency, the daemon's
RSS at the end of the phase (its peak over the run too). After the run the
journal's card readings are checked against the cards the shoe sent (no card
lost or doubled) and the daemon against having stopped.

Targets (docs/network.md): card p99 under attack within 2x the calm p99 of the
same run, RSS < 100 MB, no card lost or doubled, the table never stops.

Every attack runs on loopback (ipc, or TCP on 127.0.0.1), bounded in count
and in time: it stops with its phase.

    .venv/bin/python benchmarks/bench_attack.py [--cards 300] [--rounds 2] [--only NAME ...]
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import socket
import subprocess
import sys
import tempfile
import multiprocessing
import threading
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_latency import EndToEnd, pct  # noqa: E402

from harness.records import BIG_SUBSCRIPTIONS, dealer  # noqa: E402

PHASE_LIMIT = 120  # seconds: no attack outlives its phase by more


def catch_up_in_flight(run, stop) -> None:
    """One DEALER keeping two whole-range catch-up requests (from seq 0: the journal files) in flight."""
    import zmq

    ctx = zmq.Context()
    sock = dealer(ctx, run.snapshot)
    request = json.dumps({"op": "events", "from": 0, "to": 9999}).encode()
    try:
        sock.send(request)
        sock.send(request)
        while not stop.is_set():
            if sock.poll(50) and json.loads(sock.recv()).get("done") is not None:
                sock.send(request)
    finally:
        sock.close(0)
        ctx.term()


def catch_up_from_memory(run, stop) -> None:
    """46 requests a second for the last 4,000 events (the daemon's memory)."""
    import zmq

    ctx = zmq.Context()
    sock = dealer(ctx, run.snapshot)
    try:
        while not stop.is_set():
            last = run.last_seq.value
            sock.send(json.dumps({"op": "events", "from": max(0, last - 4000), "to": last}).encode())
            stop.wait(1 / 46)
            while sock.poll(0):
                sock.recv()
    finally:
        sock.close(0)
        ctx.term()


def never_read(run, stop, credit: int | None = None) -> None:
    """Eight clients that ask for 9,999 events again and again and never read a reply."""
    import zmq

    request = {"op": "events", "from": 0, "to": 9998} | ({"credit": credit} if credit else {})
    ctx = zmq.Context()
    socks = [dealer(ctx, run.snapshot) for _ in range(8)]
    try:
        for _ in range(50):
            if stop.is_set():
                break
            for sock in socks:
                try:
                    sock.send(json.dumps(request).encode(), zmq.NOBLOCK)
                except zmq.Again:
                    pass
            stop.wait(0.1)
        stop.wait(PHASE_LIMIT)
    finally:
        for sock in socks:
            sock.close(0)
        ctx.term()


def never_grant(run, stop) -> None:
    """The same eight clients asking with a credit of one reply, and never granting more."""
    never_read(run, stop, credit=1)


def subscriptions(run, stop) -> None:
    """Twelve 1 MB subscriptions (in a process of their own: libzmq may crash on the attacker's side),
    then 20 MB of small distinct ones on one socket."""
    import zmq

    subprocess.run([sys.executable, "-c", BIG_SUBSCRIPTIONS, run.events], timeout=30, check=False,
                   capture_output=True)
    ctx = zmq.Context()
    sub = ctx.socket(zmq.SUB)
    sub.linger = 0
    sub.connect(run.events)
    try:
        for i in range(400_000):  # 50 bytes each: 20 MB
            if stop.is_set():
                break
            sub.setsockopt(zmq.SUBSCRIBE, b"%08d" % i + bytes(42))
            if i % 1000 == 999:
                stop.wait(0.01)
        stop.wait(PHASE_LIMIT)
    finally:
        sub.close(0)
        ctx.term()


def idle_connections(run, stop) -> None:
    """1,100 idle TCP connections to the catch-up port."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 4096), hard))
    held = []
    try:
        for _ in range(1100):
            if stop.is_set():
                break
            s = socket.socket()
            s.setblocking(False)
            s.connect_ex(("127.0.0.1", run.snapshot_port))
            held.append(s)
        stop.wait(PHASE_LIMIT)
    finally:
        for s in held:
            s.close()


def refused_handshakes(run, stop) -> None:
    """About 1,000 CURVE handshakes a second with a key that is not allowed, on the command port."""
    import zmq

    from shoed.net.curve import ClientCurve

    keys = ClientCurve.from_files(run.base / "stranger" / "stranger.key_secret", run.base / "keys" / "server.key")
    ctx = zmq.Context()
    try:
        while not stop.is_set():
            socks = [dealer(ctx, run.commands, keys) for _ in range(50)]
            for sock in socks:
                sock.send(b'{"cmd": "status"}', zmq.NOBLOCK)
            stop.wait(0.05)
            for sock in socks:
                sock.close(0)
    finally:
        ctx.term()


def status_flood(run, stop) -> None:
    """600 `status` commands a second with an allowed key."""
    import zmq

    from shoed.net.curve import ClientCurve

    keys = ClientCurve.from_files(run.base / "console" / "lab-console.key_secret", run.base / "keys" / "server.key")
    ctx = zmq.Context()
    sock = dealer(ctx, run.commands, keys)
    try:
        while not stop.is_set():
            for _ in range(6):
                sock.send(b'{"cmd": "status"}', zmq.NOBLOCK)
            stop.wait(0.01)
            while sock.poll(0):
                sock.recv()
    finally:
        sock.close(0)
        ctx.term()


def serial_noise(run, stop) -> None:
    """10 kB of `01 00` on the serial line every second (written by the shoe: in the measuring process)."""
    while not stop.is_set():
        with run.shoe.lock:
            run.shoe.link.send(b"\x01\x00" * 5000)
        stop.wait(1.0)


IN_PROCESS = {"serial_noise"}  # the others run in a process of their own, so that their work does not
# share the measuring process's interpreter


@dataclass
class Target:
    """What an attack in its own process needs to know of the run."""

    events: str
    snapshot: str
    commands: str
    base: Path
    snapshot_port: int
    last_seq: object  # a multiprocessing.Value


def _attack_process(name: str, target: Target, stop, ready) -> None:
    import zmq  # noqa: F401 - imported before the attack is said to be under way

    import shoed.net.curve  # noqa: F401
    ready.set()
    ATTACKS[name](target, stop)


ATTACKS = {f.__name__: f for f in (catch_up_in_flight, catch_up_from_memory, never_read, never_grant, subscriptions,
                                   idle_connections, refused_handshakes, status_flood, serial_noise)}


def prepare(base: Path) -> None:
    """Keys before the daemon starts: an allowed console, and a stranger's pair that is not allowed."""
    from shoed.net.curve import create_key_pair

    clients = base / "keys" / "clients"
    clients.mkdir(parents=True)
    public, _, _ = create_key_pair(base / "console", "lab-console")
    shutil.copy(public, clients / "lab-console.key")
    create_key_pair(base / "stranger", "stranger")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Run(EndToEnd):
    """EndToEnd with the catch-up endpoint on a TCP port (the idle-connections attack needs one)."""

    def __init__(self, journal_root: str) -> None:
        self.snapshot_port = free_port()
        super().__init__(journal_root, seed=5, extra=("--snapshot", f"tcp://127.0.0.1:{self.snapshot_port}"),
                         prepare=prepare)
        self.base = self.daemon.base
        self.mp = multiprocessing.get_context("spawn")
        self.last_seq = self.mp.Value("q", 0, lock=False)
        self.target = Target(self.daemon.events, f"tcp://127.0.0.1:{self.snapshot_port}", self.daemon.commands,
                             self.base, self.snapshot_port, self.last_seq)
        self.script_events: list = []  # every event the scripted deal gave out (the last one not sent yet)
        # A heartbeat at the display's SUB socket: its subscription is in place before the first card.
        self.shoe.wait(lambda: self.events_seen > 0, 10, "the first heartbeat", pump=self.pump)

    def deal(self, cards: int, samples: list, warm_up: int = 0, places=None) -> None:
        if self.script is None:
            from shoed.rules.ruleset import load_ruleset
            from shoed.simulate.dealer import DealSetup, deal

            self.script = self._recorded(deal(DealSetup(load_ruleset("punto-banco"), seed=self.seed, shoes=0)))
            self.upcoming = next(self.script)
        super().deal(cards, samples, warm_up, places)

    def _recorded(self, events):
        for event in events:
            self.script_events.append(event)
            yield event

    def sent_cards(self) -> list[str]:
        return [e.card for e in self.script_events[:-1] if e.kind == "card"]

    def pump(self, timeout: float) -> None:
        super().pump(timeout)
        if self.arrived is not None:
            self.last_seq.value = self.arrived[1]["seq"]


def phase(run: Run, cards: int, attack: str | None = None) -> dict:
    samples: list = []
    thread = None
    if attack in IN_PROCESS:
        stop = threading.Event()
        thread = threading.Thread(target=ATTACKS[attack], args=(run, stop), daemon=True)
    elif attack is not None:
        stop, ready = run.mp.Event(), run.mp.Event()
        thread = run.mp.Process(target=_attack_process, args=(attack, run.target, stop, ready), daemon=True)
    if thread is not None:
        thread.start()
        if attack not in IN_PROCESS and not ready.wait(30):  # a spawned process takes a while to start
            raise RuntimeError(f"the {attack} attack did not start")
        time.sleep(1.0)  # under way before the first timed card
    start = time.monotonic()
    try:
        run.deal(cards, samples)
    finally:
        took = time.monotonic() - start
        rss, hwm = run.daemon.rss_kb()
        if thread is not None:
            stop.set()
            thread.join(30)
            if isinstance(thread, multiprocessing.process.BaseProcess) and thread.is_alive():
                thread.kill()
    return {"lat": [(r - w) / 1000 for w, _, r in samples], "rate": cards / took, "rss": rss, "hwm": hwm}


def row(label: str, phases: list[dict]) -> str:
    lat = [x for p in phases for x in p["lat"]]
    rate = sum(p["rate"] for p in phases) / len(phases)
    return (f"  {label:9} {rate:7.0f} cards/s   p50 {sorted(lat)[len(lat) // 2] / 1000:7.2f} ms   "
            f"p99 {pct(lat, 99) / 1000:8.2f} ms   RSS {max(p['rss'] for p in phases) / 1024:6.1f} MB")


def journal_cards(journal: Path) -> list[str]:
    out = []
    for path in sorted(journal.glob("*.jsonl")):
        for line in path.read_text().splitlines():
            record = json.loads(line)
            if record.get("kind") == "step" and record["input"].get("kind") == "card":
                out.append(record["input"]["card"])
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cards", type=int, default=300, help="timed cards per phase")
    ap.add_argument("--rounds", type=int, default=2, help="calm/attacked pairs per attack")
    ap.add_argument("--only", nargs="*", choices=sorted(ATTACKS), help="these attacks only")
    ap.add_argument("--journal-dir", default="/var/tmp", help="where the journal goes (a real disk: fsync)")
    args = ap.parse_args()
    names = args.only or list(ATTACKS)
    run = Run(args.journal_dir)
    verdicts = []
    try:
        run.deal(50, [], warm_up=0)
        for name in names:
            calm, attacked = [], []
            for _ in range(args.rounds):
                calm.append(phase(run, args.cards))
                attacked.append(phase(run, args.cards, name))
            c99 = pct([x for p in calm for x in p["lat"]], 99)
            a99 = pct([x for p in attacked for x in p["lat"]], 99)
            alive = run.daemon.proc.poll() is None
            ratio = a99 / c99
            rss = max(p["rss"] for p in attacked) / 1024
            print(f"{name}: attacked p99 / calm p99 = {ratio:.2f}; daemon {'up' if alive else 'STOPPED'}")
            print(row("calm", calm))
            print(row("attacked", attacked))
            verdicts.append((name, ratio <= 2.0, rss < 100, alive))
            sys.stdout.flush()
            if not alive:
                break
        hwm = run.daemon.rss_kb()[1] / 1024
        print(f"daemon peak RSS over the run (VmHWM): {hwm:.1f} MB")
    finally:
        journal = run.journal / "j"
        keep = Path(tempfile.mkdtemp(prefix="shoed-bench-attack-"))
        shutil.copytree(journal, keep / "j", dirs_exist_ok=True)
        run.close()
    taken, sent = journal_cards(keep / "j"), run.sent_cards()
    print(f"cards sent {len(sent)}, journaled {len(taken)}: "
          f"{'each once, in order' if taken == sent else 'LOST OR DOUBLED'}")
    for name, p99_ok, rss_ok, alive in verdicts:
        print(f"  {name:22} p99 within 2x: {'yes' if p99_ok else 'NO'}   RSS < 100 MB: {'yes' if rss_ok else 'NO'}"
              f"   table up: {'yes' if alive else 'NO'}")
    shutil.rmtree(keep, ignore_errors=True)


if __name__ == "__main__":
    main()
