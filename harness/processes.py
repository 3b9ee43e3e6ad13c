"""The real daemon and the virtual shoe in their own processes, for the tests and the benchmarks.

- `short_dir()`: a private directory with a short path, where a daemon's ipc
  sockets, journal and keys go (the `base` fixture of tests/conftest.py);
- `run_shoed(...)`: one `shoed` command line, run to the end;
- `Daemon`: `shoed run` as a child process with ipc endpoints in that
  directory, ready once it logs "ready", its JSON log lines gathered by a thread;
- `Simulator`: `shoed simulate --link DIR/shoe` in its own process (so it
  outlives the daemon's restarts), with its ground truth in a file;
- `NotifyListener`: a systemd notify socket (NOTIFY_SOCKET) that keeps what
  the daemon tells systemd (READY, STATUS, WATCHDOG, STOPPING).

Every wait has a deadline; `stop()` methods are safe to call twice and are
meant for `finally` blocks; each class is also a context manager that stops
(closes) it on the way out. harness/records.py re-exports these
names for the benchmarks.
"""

from __future__ import annotations

import json
import os
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

from shoed.daemon.virtual import end_process


def short_dir(prefix: str = "shoed-test-") -> Path:
    """A private directory with a short path (ipc socket paths are limited to ~100 bytes)."""
    return Path(tempfile.mkdtemp(prefix=prefix, dir="/tmp"))


def remove_dir(path: Path) -> None:
    shutil.rmtree(path, ignore_errors=True)


def run_shoed(*args: str, timeout: float = 60, check: bool = False,
              input: str | None = None) -> subprocess.CompletedProcess:
    proc = subprocess.run([sys.executable, "-m", "shoed", *args], capture_output=True, text=True, timeout=timeout,
                          input=input)
    if check and proc.returncode != 0:
        raise AssertionError(f"shoed {' '.join(args)} exited {proc.returncode}: {proc.stderr}")
    return proc


def rss_kb(pid: int) -> tuple[int, int]:
    """(VmRSS, VmHWM) of a process in kB, from /proc."""
    fields = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            key, _, value = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                fields[key] = int(value.split()[0])
    return fields["VmRSS"], fields["VmHWM"]


class _StopsOnExit:
    """`with X(...) as x:` stops x on the way out, whatever happened."""

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


class Daemon(_StopsOnExit):
    """`shoed run` in a child process. `extra` are more options (e.g. --source native:PATH, --config FILE)."""

    def __init__(self, base: Path, *extra: str, journal: Path | None = None, env: dict | None = None,
                 wait_ready: bool = True, ready_timeout: float = 30, preexec_fn=None) -> None:
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
        self.lines: list[dict] = []  # every log line, parsed (a line that is not JSON: {"event": line})
        self.started = time.monotonic()
        self.proc = subprocess.Popen(self.args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                     env=env, preexec_fn=preexec_fn)  # e.g. a low limit of open files
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
        """The first log line for which `predicate` holds; AssertionError after `timeout` or at the exit."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for line in list(self.lines):
                if predicate(line):
                    return line
            if self.proc.poll() is not None and not self._reader.is_alive():
                break
            time.sleep(0.01)
        raise AssertionError(f"daemon never logged {what}; exit {self.proc.poll()}; log tail: {self.lines[-15:]}")

    def wait_exit(self, timeout: float) -> int:
        try:
            return self.proc.wait(timeout)
        finally:
            self._reader.join(5)

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 20) -> int:
        """Send `sig` (if still running) and wait for the exit status; SIGKILL after `timeout`."""
        try:
            return end_process(self.proc, timeout, sig)
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
        return rss_kb(self.proc.pid)


class Simulator(_StopsOnExit):
    """`shoed simulate` on a pty behind `base/shoe`, in its own process; ground truth in `base/shoe-truth.jsonl`."""

    def __init__(self, base: Path, *options: str, seed: int = 1, pace: float = 0.0, shoes: int = 1,
                 name: str = "shoe") -> None:
        self.link = base / name
        self.truth_path = base / f"{name}-truth.jsonl"
        self.truth_path.unlink(missing_ok=True)  # a shoe run again here: its own earlier truth (never overwritten)
        self.args = [sys.executable, "-m", "shoed", "simulate", "--link", str(self.link), "--pace", str(pace),
                     "--seed", str(seed), "--shoes", str(shoes), "--truth", str(self.truth_path), *options]
        self.err_path = base / f"{name}-stderr.txt"
        self._err = open(self.err_path, "w")  # noqa: SIM115 - closed in stop()
        self.proc = subprocess.Popen(self.args, stdout=subprocess.PIPE, stderr=self._err, text=True)
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
        end_process(self.proc, 10)
        if self.proc.stdout is not None:
            self.proc.stdout.close()
        self._err.close()

    def truth(self) -> list[dict]:
        """What the simulator has written down of its deal, as far as it has: read while it runs, the
        last line may be half written (no newline yet), and is left for a later call."""
        text = self.truth_path.read_text()
        return [json.loads(line) for line in text[: text.rfind("\n") + 1].splitlines() if line.strip()]

    @property
    def summary(self) -> str:
        return self.err_path.read_text().strip().splitlines()[-1] if self.err_path.exists() else ""


class NotifyListener:
    """A systemd notify socket (NOTIFY_SOCKET) that keeps every datagram the daemon sends."""

    def __init__(self, path: Path) -> None:
        self.path = str(path)
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(self.path)
        self.sock.settimeout(0.05)
        self.messages: list[str] = []

    def __enter__(self) -> NotifyListener:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def env(self, watchdog_usec: int | None = None) -> dict:
        """This environment with NOTIFY_SOCKET here; a watchdog only if `watchdog_usec` is given."""
        env = dict(os.environ, NOTIFY_SOCKET=self.path)
        env.pop("WATCHDOG_USEC", None)
        env.pop("WATCHDOG_PID", None)
        if watchdog_usec is not None:
            env["WATCHDOG_USEC"] = str(watchdog_usec)
        return env

    def drain(self) -> list[str]:
        """Every message so far (waits until none has come for 50 ms)."""
        while True:
            try:
                self.messages.append(self.sock.recv(4096).decode())
            except (TimeoutError, BlockingIOError):
                return self.messages

    def until(self, predicate, timeout: float, what: str) -> list[str]:
        """Every message so far, once `predicate(messages)` holds; AssertionError after `timeout`."""
        deadline = time.monotonic() + timeout
        while not predicate(self.drain()):
            if time.monotonic() >= deadline:
                raise AssertionError(f"no {what} on the notify socket within {timeout:g} s: {self.messages}")
        return self.messages

    def close(self) -> None:
        self.sock.close()


def as_nobody(work: Callable[[], str]) -> str:
    """What `work()` says, run as the unprivileged user nobody where this runs as root (who may write
    anywhere), else as this user: in a forked child, told back through a pipe."""
    if os.geteuid() != 0:
        return work()
    read, write = os.pipe()
    child = os.fork()
    if child == 0:  # pragma: no cover - the child reports through the pipe
        try:
            os.setgid(65534)
            os.setuid(65534)
            try:
                said = work()
            except BaseException as exc:  # noqa: BLE001 - told back, for the test to show
                said = f"raised {exc!r}"
            os.write(write, said.encode())
        finally:
            os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as pipe:
        said = pipe.read().decode()
    os.waitpid(child, 0)
    return said
