"""Real processes for the reliability tests and benchmarks: the daemon, the virtual shoe, a display.

- `Daemon`, `Simulator`, `NotifyListener`, `short_dir`: the real daemon and
  the virtual shoe in their own processes (harness/processes.py, shared by
  the whole test suite; re-exported here for the benchmarks, which import
  them from this module);
- `Display`: a `TableClient` that gathers the snapshot and every later event
  with catch-up, as a table display would;
- readers for the journal and the ground truth; `write_journal`, a journal as
  the daemon writes it, made in-process.

Every wait has a deadline; `stop()` methods are safe to call twice and are
meant for `finally` blocks.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from harness.processes import (  # noqa: F401 - re-exported for the benchmarks
    Daemon,
    NotifyListener,
    Simulator,
    remove_dir,
    run_shoed,
    short_dir,
)

TABLE = "t1"

def dealer(context, endpoint: str, curve=None):
    """A DEALER socket connected to `endpoint` (with CURVE keys if given): a client of the
    catch-up or command endpoint, as the attacks of the tests and of bench_attack.py use it."""
    import zmq

    sock = context.socket(zmq.DEALER)
    sock.linger = 0
    if curve is not None:
        curve.apply(sock)
    sock.connect(endpoint)
    return sock


# A subscriber that sends twelve 1 MB subscriptions (`python -c BIG_SUBSCRIPTIONS ENDPOINT`), in a process
# of its own: libzmq 4.3.5 on the attacker's side may crash when the daemon cuts it off.
BIG_SUBSCRIPTIONS = """
import os, sys, time, zmq
ctx = zmq.Context()
for _ in range(12):
    sub = ctx.socket(zmq.SUB)
    sub.linger = 0
    sub.connect(sys.argv[1])
    sub.setsockopt(zmq.SUBSCRIBE, os.urandom(1 << 20))
    time.sleep(0.05)
    sub.close(0)
"""
LONG = os.environ.get("SHOED_SOAK") == "1" or os.environ.get("SHOED_LONG") == "1"


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


def as_journaled(event: dict) -> dict:
    """A published event as the journal holds it: without the wire-only `journal` head (docs/witness.md)."""
    return {k: v for k, v in event.items() if k != "journal"}


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
    proc = run_shoed("journal", "verify", str(directory), "--json", timeout=120)
    report = json.loads(proc.stdout) if proc.stdout.strip() else {}
    report["exit"] = proc.returncode
    return report


def replay_journal(directory: Path) -> dict:
    proc = run_shoed("replay", str(directory), "--json", timeout=120)
    report = json.loads(proc.stdout) if proc.stdout.strip() else {}
    report["exit"] = proc.returncode
    return report


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


def write_journal(directory: Path, shoes: int, seed: int = 1, odds: bool = True, fsync: bool = False,
                  stop_before_file: int | None = None) -> dict:
    """A journal as the daemon writes it, made in-process: the virtual dealer's shoes through the
    table controller, one step record per input, a new file with a checkpoint at each shoe, the live
    odds fed back after each coup. Without fsync by default (the bytes are the same; it is faster).
    `stop_before_file=K`: the daemon stopped (a crash, a full disk) once the step that opened the
    K-th shoe was journaled, before that shoe's file was."""
    from shoed.journal import FileOps, Journal
    from shoed.table.replay import checkpoint_record, step_record
    from shoed.rules.odds import live_odds
    from shoed.rules.ruleset import load_ruleset
    from shoed.simulate.dealer import DealSetup, deal
    from shoed.table import StartShoeFile, TableController, WorkOutOdds

    class NoSync(FileOps):
        def fsync(self, fd: int) -> None:
            pass

    ruleset = load_ruleset("punto-banco")
    table = TableController(TABLE, ruleset, ruleset.decks)
    journal = Journal(directory, TABLE, ops=None if fsync else NoSync())
    journal.open_shoe("table", first=[checkpoint_record(table)])
    counts = {"inputs": 0, "cards": 0, "events": 0, "shoes": 0}

    class Stopped(Exception):
        pass

    def handle(item: dict) -> None:
        step = table.feed(item)
        journal.append(step_record(item, step.events))
        counts["inputs"] += 1
        counts["events"] += len(step.events)
        counts["cards"] += item["kind"] == "card"
        for effect in step.effects:  # as the daemon carries them out
            if isinstance(effect, StartShoeFile):
                counts["shoes"] += 1
                if counts["shoes"] == stop_before_file:
                    raise Stopped
                journal.open_shoe(effect.shoe_id, first=[checkpoint_record(table)])
            elif isinstance(effect, WorkOutOdds) and odds:
                computed = live_odds(effect.ruleset, effect.composition)
                if computed is not None:
                    handle({"kind": "odds", "odds": computed, "mono_ns": item["mono_ns"], "utc_ns": item["utc_ns"]})

    try:
        for item in controller_inputs(deal(DealSetup(ruleset, seed=seed, shoes=shoes))):
            handle(item)
    except Stopped:
        pass
    finally:
        journal.close()
    return counts


def reseal(directory: Path, change, secret: bytes | None = None) -> None:
    """Change records (change(file name, record) -> record) and seal the whole journal again (keyed
    with `secret` if given): the chain stays intact, so only a replay can tell. In place."""
    from shoed.journal import chain as ch

    for mark in directory.glob("*.verified"):  # whoever reseals on the box drops the mark too
        mark.unlink()
    prev = ch.GENESIS
    for path in sorted(directory.glob("*.jsonl")):
        lines = []
        for raw in path.read_bytes().splitlines():
            record = json.loads(raw)
            body = change(path.name, {k: v for k, v in record.items() if k not in ch.RESERVED})
            if body["kind"] == ch.HEADER_KIND:
                body["alg"] = ch.ALG_HMAC if secret is not None else ch.ALG_SHA256
            sealed, line = ch.seal(body, record["jseq"], prev, secret)
            prev = sealed["hash"]
            lines.append(line)
        path.chmod(0o644)
        path.write_bytes(b"".join(lines))


def iter_journal_events(directory: Path):
    """The journal's events file by file, without holding the whole journal in memory (long soaks)."""
    for path in sorted(directory.glob("*.jsonl")):
        with open(path, "rb") as f:
            for line in f:
                record = json.loads(line)
                if record.get("kind") == "step":
                    yield from record["events"]
