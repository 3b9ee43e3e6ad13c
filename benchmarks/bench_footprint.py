"""Footprint of `shoed run` with one serial shoe: time from start to READY, and resident memory.

Each run: a virtual shoe in its own process (`shoed simulate --link`, dealing at
--pace seconds a card), then the daemon `shoed run --source native:<link>`
under a systemd notify socket. Measured:

- start -> READY=1: from just before the daemon's process is spawned to the
  READY=1 datagram (what systemd's Type=notify waits for), and the daemon's own
  figure (its "ready" log line: from its start-up code to READY, without the
  interpreter and the imports);
- VmRSS and VmHWM of the daemon process alone (/proc/PID/status) once it has
  dealt --coups coups (the live odds, which load numpy, run after each coup).

Then the imports: the daemon is run once more under `python -X importtime`
and the heaviest top-level imports are listed (cumulative, ms).

Byte code: an installed box has its .pyc files (pip compiles them). Here the
daemon writes them to a private PYTHONPYCACHEPREFIX and one unmeasured run
warms them; --cold measures with PYTHONDONTWRITEBYTECODE=1 instead (every
module compiled at every start, as in a checkout that may not write .pyc).

    .venv/bin/python benchmarks/bench_footprint.py [--runs 5] [--coups 5]

Targets: 60 MB resident, 1 s to READY.
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def one_run(coups: int, pace: float, extra_env: dict | None = None) -> dict:
    from harness.processes import rss_kb
    from harness.records import Display, Simulator, remove_dir, short_dir

    base = short_dir("shoed-fp-")
    notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    notify.bind(str(base / "notify"))
    notify.settimeout(30)
    sim = Simulator(base, seed=3, pace=pace, shoes=1)
    env = dict(os.environ, NOTIFY_SOCKET=str(base / "notify"), **(extra_env or {}))
    env.pop("WATCHDOG_USEC", None)
    args = [sys.executable, "-m", "shoed", "run", "--log-json", "--journal", str(base / "journal"),
            "--keys", str(base / "keys"), "--pub", f"ipc://{base}/events", "--snapshot", f"ipc://{base}/snapshot",
            "--commands", f"ipc://{base}/commands", "--source", sim.source]
    started = time.monotonic()
    proc = subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    display = None
    try:
        while True:
            message = notify.recv(4096)
            if message.startswith(b"READY=1"):
                ready = time.monotonic() - started
                break
        own = None
        for raw in proc.stdout:
            if '"event": "ready"' in raw:
                import json

                own = json.loads(raw)["seconds"]
                break
        display = Display(events=f"ipc://{base}/events", snapshot=f"ipc://{base}/snapshot")
        display.until(lambda events: sum(1 for e in events if e["kind"] == "coup.result") >= coups,
                      60 + coups * 10 * pace * 6, f"{coups} coups")
        rss, hwm = rss_kb(proc.pid)
        return {"ready_s": ready, "own_s": own, "rss_kb": rss, "hwm_kb": hwm}
    finally:
        if display is not None:
            display.close()
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(5)
        proc.stdout.close()
        sim.stop()
        notify.close()
        remove_dir(base)


def import_times(env: dict, top: int = 12) -> list[tuple[str, float]]:
    """Cumulative import time (ms) of the daemon's top-level imports, heaviest first."""
    from harness.records import Simulator, remove_dir, short_dir

    base = short_dir("shoed-fp-")
    sim = Simulator(base, seed=3, pace=0.05, shoes=1)
    args = [sys.executable, "-X", "importtime", "-m", "shoed", "run", "--journal", str(base / "journal"),
            "--keys", str(base / "keys"), "--pub", f"ipc://{base}/events", "--snapshot", f"ipc://{base}/snapshot",
            "--commands", f"ipc://{base}/commands", "--source", sim.source]
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
    try:
        time.sleep(4.0)  # start-up and the first coups (numpy comes with the first live odds)
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=30)
        sim.stop()
        remove_dir(base)
    out = []
    for line in err.splitlines():
        if not line.startswith("import time:") or "|" not in line:
            continue
        _, cumulative, name = line[len("import time:"):].split("|")
        if not name.startswith(" ") or name.startswith("  "):
            continue  # only top-level imports (one space of indent)
        try:
            out.append((name.strip(), int(cumulative) / 1000))
        except ValueError:
            continue
    return sorted(out, key=lambda x: -x[1])[:top]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--coups", type=int, default=5, help="coups dealt before memory is read")
    parser.add_argument("--pace", type=float, default=0.02, help="the virtual shoe's seconds per card")
    parser.add_argument("--cold", action="store_true", help="no byte code cache: compile every module at start")
    args = parser.parse_args()
    import tempfile

    if args.cold:
        env = {"PYTHONDONTWRITEBYTECODE": "1"}
    else:
        os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
        env = {"PYTHONPYCACHEPREFIX": tempfile.mkdtemp(prefix="shoed-pyc-")}
        one_run(1, args.pace, env)  # warms the byte code cache
    runs = [one_run(args.coups, args.pace, env) for _ in range(args.runs)]
    ready = [r["ready_s"] for r in runs]
    own = [r["own_s"] for r in runs if r["own_s"] is not None]
    rss = [r["rss_kb"] / 1024 for r in runs]
    hwm = [r["hwm_kb"] / 1024 for r in runs]
    print(f"shoed run --source native:<pty>, {args.runs} runs, {os.cpu_count()} cores, python {sys.version.split()[0]}, "
          f"{'no byte code cache (cold)' if args.cold else 'byte code cached (as installed)'}")
    print(f"start -> READY=1 (process spawn to the notify datagram)  median {statistics.median(ready):.3f} s   "
          f"min {min(ready):.3f}   max {max(ready):.3f}")
    if own:
        print(f"  of which the daemon's start-up code (its 'ready' log)  median {statistics.median(own):.3f} s")
    print(f"VmRSS after {args.coups} coups                              median {statistics.median(rss):.1f} MB   "
          f"max {max(rss):.1f}")
    print(f"VmHWM (peak)                                       median {statistics.median(hwm):.1f} MB   "
          f"max {max(hwm):.1f}")
    print(f"targets: 60 MB resident -> {'met' if statistics.median(rss) <= 60 else 'MISSED'}; "
          f"1 s to READY -> {'met' if statistics.median(ready) <= 1 else 'MISSED'}")
    print("heaviest top-level imports of the daemon (cumulative ms, python -X importtime):")
    for name, ms in import_times(dict(os.environ, **env)):
        print(f"  {ms:8.1f}  {name}")


if __name__ == "__main__":
    main()
