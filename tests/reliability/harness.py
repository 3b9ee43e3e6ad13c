"""Real processes for the reliability tests and benchmarks: the daemon, the virtual shoe, a display.

- `Daemon`: `shoed run` as a child process with ipc endpoints in a short
  private directory, its JSON log lines gathered by a thread;
- `Simulator`: `shoed simulate --link DIR/shoe` in its own process (so it
  outlives the daemon's restarts), with its ground truth in a file;
- `Display`: a `TableClient` that gathers the snapshot and every later event
  with catch-up, as a table display would;
- readers for the journal and the ground truth.

Every wait has a deadline; `stop()` methods are safe to call twice and are
meant for `finally` blocks.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

TABLE = "t1"
LONG = os.environ.get("SHOED_SOAK") == "1" or os.environ.get("SHOED_LONG") == "1"


def short_dir(prefix: str = "shoed-rel-") -> Path:
    """A private directory with a short path (ipc socket paths are limited to ~100 bytes)."""
    return Path(tempfile.mkdtemp(prefix=prefix, dir="/tmp"))


def remove_dir(path: Path) -> None:
    shutil.rmtree(path, ignore_errors=True)


def run_shoed(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "shoed", *args], capture_output=True, text=True, timeout=timeout)


class Daemon:
    """`shoed run` in a child process. `extra` are more options (e.g. --source native:PATH)."""

    def __init__(self, base: Path, *extra: str, journal: Path | None = None, env: dict | None = None,
                 wait_ready: bool = True, ready_timeout: float = 30) -> None:
        self.base = base
        self.journal = journal or base / "journal"
        self.keys = base / "keys"
        self.events = f"ipc://{base}/events"
        self.snapshot = f"ipc://{base}/snapshot"
        self.commands = f"ipc://{base}/commands"
        self.args = [
            sys.executable, "-m", "shoed", "run", "--log-json", "--journal", str(self.journal),
            "--keys", str(self.keys), "--pub", self.events, "--snapshot", self.snapshot,
            "--commands", self.commands, *extra,
        ]
        self.lines: list[dict] = []
        self.started = time.monotonic()
        self.proc = subprocess.Popen(self.args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                     env=env)
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        if wait_ready:
            try:
                self.wait_for(lambda line: line.get("event") == "ready", ready_timeout, "ready")
            except BaseException:
                self.stop(signal.SIGKILL)
                raise

    @property
    def pid(self) -> int:
        return self.proc.pid

    def _read(self) -> None:
        for raw in self.proc.stdout:
            try:
                line = json.loads(raw)
            except ValueError:
                line = {"event": raw.rstrip()}
            if not isinstance(line, dict):
                line = {"event": str(line)}
            self.lines.append(line)

    def wait_for(self, predicate, timeout: float, what: str) -> dict:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for line in list(self.lines):
                if predicate(line):
                    return line
            if self.proc.poll() is not None and not self._reader.is_alive():
                break
            time.sleep(0.01)
        raise AssertionError(f"daemon never logged {what}; exit {self.proc.poll()}; log tail: {self.lines[-12:]}")

    def wait_exit(self, timeout: float) -> int:
        try:
            return self.proc.wait(timeout)
        finally:
            self._reader.join(5)

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 20) -> int:
        """Send `sig` (if still running) and wait for the exit status; SIGKILL after `timeout`."""
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return self.proc.wait(10)
        finally:
            self._reader.join(5)
            if self.proc.stdout is not None:
                self.proc.stdout.close()

    def kill(self) -> None:
        """kill -9: no clean-up of any kind in the daemon."""
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait(10)
        self._reader.join(5)
        if self.proc.stdout is not None:
            self.proc.stdout.close()

    def rss_kb(self) -> tuple[int, int]:
        """(VmRSS, VmHWM) of the daemon process in kB, from /proc."""
        fields = {}
        with open(f"/proc/{self.proc.pid}/status") as f:
            for line in f:
                key, _, value = line.partition(":")
                if key in ("VmRSS", "VmHWM"):
                    fields[key] = int(value.split()[0])
        return fields["VmRSS"], fields["VmHWM"]


class Simulator:
    """`shoed simulate` on a pty behind `base/shoe`, in its own process; ground truth in `base/truth.jsonl`."""

    def __init__(self, base: Path, *options: str, seed: int = 1, pace: float = 0.0, shoes: int = 1,
                 name: str = "shoe") -> None:
        self.link = base / name
        self.truth_path = base / f"{name}-truth.jsonl"
        self.args = [sys.executable, "-m", "shoed", "simulate", "--link", str(self.link), "--pace", str(pace),
                     "--seed", str(seed), "--shoes", str(shoes), "--truth", str(self.truth_path), *options]
        self.err_path = base / f"{name}-stderr.txt"
        self._err = open(self.err_path, "w")  # noqa: SIM115 - closed in stop()
        self.proc = subprocess.Popen(self.args, stdout=subprocess.PIPE, stderr=self._err, text=True)
        import select

        ready, _, _ = select.select([self.proc.stdout], [], [], 20)
        first = self.proc.stdout.readline().strip() if ready else ""
        if not first:
            self.stop()
            raise AssertionError(f"the simulator did not start: {self.err_path.read_text()[-500:]}")
        self.address = first

    @property
    def source(self) -> str:
        return f"native:{self.link}"

    def wait_done(self, timeout: float) -> int:
        """The simulator exits once every shoe is dealt and every message acknowledged."""
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"the simulator did not finish within {timeout:g} s; "
                                 f"stderr: {self.err_path.read_text()[-500:]}") from None

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        if self.proc.stdout is not None:
            self.proc.stdout.close()
        self._err.close()

    def truth(self) -> list[dict]:
        return [json.loads(line) for line in self.truth_path.read_text().splitlines() if line.strip()]

    @property
    def summary(self) -> str:
        return self.err_path.read_text().strip().splitlines()[-1] if self.err_path.exists() else ""


class Display:
    """A table display: `TableClient` with catch-up, gathering every event after its snapshot."""

    def __init__(self, daemon: Daemon | None = None, events: str | None = None, snapshot: str | None = None,
                 heartbeat_timeout: float = 3.0, request_timeout: float = 2.0) -> None:
        from shoed.net.client import TableClient

        self.client = TableClient(events or daemon.events, snapshot or daemon.snapshot, TABLE,
                                  heartbeat_timeout=heartbeat_timeout, request_timeout=request_timeout)
        self.snapshots: list[dict] = []
        self.events: list[dict] = []

    def poll(self, timeout: float = 0.05) -> list[dict]:
        got = []
        for item in self.client.poll(timeout):
            if item["kind"] == "snapshot":
                self.snapshots.append(item)
            else:
                self.events.append(item)
                got.append(item)
        return got

    def until(self, predicate, timeout: float, what: str) -> None:
        deadline = time.monotonic() + timeout
        while not predicate(self.events):
            if time.monotonic() >= deadline:
                raise AssertionError(f"display: no {what} within {timeout:g} s ({len(self.events)} events)")
            self.poll(0.05)

    def close(self) -> None:
        self.client.close()


# ----- journal and ground truth ---------------------------------------------------


def journal_records(directory: Path) -> list[dict]:
    """Every record of every journal file, in chain order (read raw; `shoed journal verify` proves them)."""
    out = []
    for path in sorted(directory.glob("*.jsonl")):
        out += [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return out


def journal_events(directory: Path) -> list[dict]:
    return [e for r in journal_records(directory) if r.get("kind") == "step" for e in r["events"]]


def journal_inputs(directory: Path) -> list[dict]:
    return [r["input"] for r in journal_records(directory) if r.get("kind") == "step"]


def draw_order(result: dict) -> list[str]:
    """The cards of a coup.result in the order they were dealt (P, B, P, B, then thirds)."""
    from shoed.rules.coup import draw_order as coup_draw_order

    return coup_draw_order(result["player_cards"], result["banker_cards"])


def truth_cards(truth: list[dict], recipients=("player", "banker", "burn", "extra")) -> list[str]:
    """The cards the shoe really sent, in order."""
    return [t["card"] for t in truth if t.get("kind") in ("card", "unreadable") and t.get("recipient") in recipients]


def coup_outcomes(events: list[dict]) -> list[tuple]:
    """What a coup result says, without times, sequence numbers or shoe ids."""
    keep = ("coup", "player_cards", "banker_cards", "player_total", "banker_total", "winner", "natural",
            "player_pair", "banker_pair", "settlement", "void")
    return [tuple(json.dumps(e.get(k), sort_keys=True) for k in keep) for e in events if e["kind"] == "coup.result"]


def card_identities(events: list[dict]) -> list[tuple]:
    """Every card and burn event: (coup, card, recipient, index)."""
    out = []
    for e in events:
        if e["kind"] == "card":
            out.append((e.get("coup"), e.get("card"), e.get("recipient"), e.get("index")))
        elif e["kind"] == "shoe.burn":
            out.append((None, e.get("card"), "burn", None))
    return out


def verify_journal(directory: Path) -> dict:
    proc = run_shoed("journal", "verify", str(directory), "--json")
    report = json.loads(proc.stdout) if proc.stdout.strip() else {}
    report["exit"] = proc.returncode
    return report


def replay_journal(directory: Path) -> dict:
    proc = run_shoed("replay", str(directory), "--json")
    report = json.loads(proc.stdout) if proc.stdout.strip() else {}
    report["exit"] = proc.returncode
    return report


class NotifyListener:
    """A systemd notify socket (NOTIFY_SOCKET) that keeps every datagram the daemon sends."""

    def __init__(self, path: Path) -> None:
        import socket

        self.path = str(path)
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(self.path)
        self.sock.settimeout(0.05)
        self.messages: list[str] = []

    def env(self) -> dict:
        env = dict(os.environ, NOTIFY_SOCKET=self.path)
        env.pop("WATCHDOG_USEC", None)
        return env

    def drain(self) -> list[str]:
        while True:
            try:
                self.messages.append(self.sock.recv(4096).decode())
            except (TimeoutError, BlockingIOError):
                return self.messages

    def close(self) -> None:
        self.sock.close()


def controller_inputs(shoe_events, source: str = "native:/dev/shoe-native", start_ns: int = 1_700_000_000_000_000_000,
                      step_ns: int = 1_500_000_000) -> list[dict]:
    """The virtual dealer's shoe events as the daemon feeds them to the table controller
    (what the native driver's readings become), with times 1.5 s apart."""
    out = []
    for i, e in enumerate(shoe_events):
        item: dict = {"kind": e.kind, "source": source, "mono_ns": 1_000_000_000 + i * step_ns,
                      "utc_ns": start_ns + i * step_ns, "shoe_seq": i + 1}
        if e.kind == "card":
            item |= {"card": e.card, "mode": e.mode, "confidence": 1.0}
        elif e.kind == "unreadable":
            item |= {"mode": e.mode, "code": "no_index"}
        elif e.kind == "button":
            item["button"] = e.button
        elif e.kind == "alarm":
            item |= {"code": str(e.code), "text": e.text}
        out.append(item)
    return out


def write_journal(directory: Path, shoes: int, seed: int = 1, odds: bool = True, fsync: bool = False) -> dict:
    """A journal as the daemon writes it, made in-process: the virtual dealer's shoes through the
    table controller, one step record per input, a new file with a checkpoint at each shoe, the live
    odds fed back after each coup. Without fsync by default (the bytes are the same; it is faster)."""
    from shoed.journal import FileOps, Journal
    from shoed.replay import checkpoint_record, step_record
    from shoed.rules.odds import live_odds
    from shoed.rules.ruleset import load_ruleset
    from shoed.simulate.dealer import DealSetup, deal
    from shoed.table import TableController

    class NoSync(FileOps):
        def fsync(self, fd: int) -> None:
            pass

    ruleset = load_ruleset("punto-banco")
    table = TableController(TABLE, ruleset, ruleset.decks)
    journal = Journal(directory, TABLE, ops=None if fsync else NoSync())
    journal.open_shoe("table")
    journal.append(checkpoint_record(table))
    counts = {"inputs": 0, "cards": 0, "events": 0}

    def handle(item: dict) -> None:
        step = table.feed(item)
        journal.append(step_record(item, step.events))
        counts["inputs"] += 1
        counts["events"] += len(step.events)
        counts["cards"] += item["kind"] == "card"
        if any(e["kind"] == "shoe.opened" for e in step.events):
            journal.open_shoe(table.shoe.shoe_id)
            journal.append(checkpoint_record(table))
        if odds and table.shoe is not None and any(e["kind"] in ("coup.result", "shoe.burn_complete")
                                                   for e in step.events):
            computed = live_odds(table.ruleset, table.shoe.remaining_by_rank())
            if computed is not None:
                handle({"kind": "odds", "odds": computed, "mono_ns": item["mono_ns"], "utc_ns": item["utc_ns"]})

    try:
        for item in controller_inputs(deal(DealSetup(ruleset, seed=seed, shoes=shoes))):
            handle(item)
    finally:
        journal.close()
    return counts


def iter_journal_events(directory: Path):
    """The journal's events file by file, without holding the whole journal in memory (long soaks)."""
    for path in sorted(directory.glob("*.jsonl")):
        with open(path, "rb") as f:
            for line in f:
                record = json.loads(line)
                if record.get("kind") == "step":
                    yield from record["events"]
