"""The built-in virtual shoe of the embedded default: `shoed simulate` in a process of its own,
on a pseudo-terminal that the daemon reads through the native serial driver, with the virtual
dealer following the table (shoed/simulate/follow.py) where the daemon's keys let it."""

from __future__ import annotations

import functools
import json
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

from shoed.daemon.config import Config

# The driver the daemon reads the virtual shoe with (its capabilities are that driver's).
DRIVER = "native"
START_TIMEOUT = 15.0  # seconds the shoe has to say its pseudo-terminal's path
PR_SET_PDEATHSIG = 1  # prctl(2): the signal a process gets when its parent dies


class VirtualShoeError(Exception):
    """The virtual shoe did not start."""


class VirtualShoeProcess:
    """The built-in virtual shoe, run as its own process on a pseudo-terminal."""

    def __init__(self, ruleset: str, pace: float, seed: int | None, shoes: int, decks: int | None,
                 follow: list[str] | None = None, resume: dict | None = None) -> None:
        self.dir = tempfile.mkdtemp(prefix="shoed-virtual-")
        self.link = os.path.join(self.dir, "shoe")
        cmd = [sys.executable, "-m", "shoed", "simulate", "--protocol", DRIVER, "--ruleset", ruleset,
               "--pace", str(pace), "--link", self.link]
        if resume is not None:  # the shoe the journal has open goes on (shoed/simulate/resume.py)
            path = os.path.join(self.dir, "resume.json")
            with open(path, "w", encoding="utf-8") as f:
                json.dump(resume, f)
            cmd += ["--resume", path]
        if seed is not None:
            cmd += ["--seed", str(seed)]
        cmd += ["--shoes", str(shoes or 0)]  # 0: shoe after shoe, without end
        if decks:
            cmd += ["--decks", str(decks)]
        cmd += follow or []
        # The shoe ignores the terminal's Ctrl-C: the daemon stops it, after its own stop is journaled.
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                                     preexec_fn=functools.partial(_child_setup, os.getpid()))
        out = self.proc.stdout
        assert out is not None  # stdout=PIPE
        ready, _, _ = select.select([out], [], [], START_TIMEOUT)
        first = out.readline().strip() if ready else ""
        if not first:
            self.stop()
            raise VirtualShoeError(f"the virtual shoe did not start (no pseudo-terminal path within "
                                   f"{START_TIMEOUT:g} s)")
        self.path = first

    @classmethod
    def for_config(cls, cfg: Config, resume: dict | None = None,
                   bound: dict[str, str] | None = None) -> VirtualShoeProcess:
        """The virtual shoe the configuration asks for, its dealer following the table; `resume`
        (shoed/simulate/resume.py) is the shoe the journal has open, dealt on from where it is;
        `bound`: the endpoints as bound (a port 0 in the configuration is one the system chose)."""
        return cls(cfg.ruleset, cfg.sim_pace, cfg.sim_seed, cfg.sim_shoes, cfg.decks, dealer_follows(cfg, bound),
                   resume)

    def stop(self) -> None:
        end_process(self.proc, 5)
        shutil.rmtree(self.dir, ignore_errors=True)


def end_process(proc: subprocess.Popen, timeout: float, sig: int = signal.SIGTERM) -> int:
    """Send `sig` to a child still running and wait for its exit status; SIGKILL after `timeout`."""
    if proc.poll() is None:
        proc.send_signal(sig)
    try:
        return proc.wait(timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        return proc.wait(timeout)


def _child_setup(parent: int) -> None:
    """In the virtual shoe's process before it runs: the terminal's Ctrl-C is ignored (the daemon
    stops the shoe, after its own stop is journaled), and the shoe is killed (SIGKILL: nothing of it
    must outlive its table, and a stop it could not finish would leave it dealing, its dealer still
    knocking at the table's ports) when the daemon dies however it dies (`kill -9` on a bench,
    outside systemd), so no shoe deals on for no table."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if sys.platform.startswith("linux"):
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        if os.getppid() != parent:  # the daemon died before the request took hold
            os._exit(1)


def dealer_follows(cfg: Config, bound: dict[str, str] | None = None) -> list[str]:
    """The virtual dealer watches the table and corrects what it caused, as a careful dealer
    does (shoed/simulate/follow.py): with the local console's key where commands need one, without
    keys where the command endpoint takes none (`curve_commands = false`, a lab bench).
    `bound` gives the endpoints as bound (`events`, `snapshot`, `commands`), else the configuration's."""
    at = {"events": cfg.events, "snapshot": cfg.snapshot, "commands": cfg.commands, **(bound or {})}
    args = ["--follow", f"{at['events']},{at['snapshot']},{at['commands']}", "--follow-table", cfg.table]
    if cfg.curve_commands:
        secret = Path(cfg.key_dir) / "local-console.key_secret"
        if not secret.exists() or cfg.curve_publish:
            from shoed.daemon import logs

            why = f"no {secret.name} in {cfg.key_dir}" if not secret.exists() else "the event streams need CURVE"
            logs.get("shoed.daemon").warning(
                f"the virtual dealer deals as scripted and does not follow the table ({why}): a void waits for "
                "a confirm by hand, an unreadable card for enter_card")
            return []  # no key of its own: it deals as scripted
        args += ["--key", str(secret), "--server-key", str(Path(cfg.key_dir) / "server.key")]
    return args
