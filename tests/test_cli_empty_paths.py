"""An empty path on the command line is refused, never taken for the current directory.

decision (shoed/cli.py `path`): `--journal ""` (or an empty journal PATH) named the current
directory without saying so: `shoed run` journaled into it, `shoed keys journal` sealed it.
Every subcommand that takes a journal path (and the run's other paths) refuses it with one
line on stderr and exit 2, before it touches anything.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

CASES = [
    ("run", "--journal", ""),
    ("run", "--journal", "  "),
    ("run", "--keys", ""),
    ("run", "--config", ""),
    ("keys", "journal", "--journal", "", "--table", "t1", "--verify-key", "vk"),
    ("keys", "journal", "--journal", "j", "--table", "t1", "--verify-key", ""),
    ("journal", "verify", ""),
    ("journal", "recall", ""),
    ("replay", ""),
    ("report", "", "--list"),
]


@pytest.mark.parametrize("args", CASES, ids=[" ".join(repr(a) if not a.strip() else a for a in c) for c in CASES])
def test_an_empty_path_is_one_line_and_exit_2(tmp_path, args):
    env = {**os.environ, "PYTHONPATH": os.getcwd()}
    proc = subprocess.run([sys.executable, "-m", "shoed", *args], capture_output=True, text=True, timeout=30,
                          cwd=tmp_path, env=env)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stderr.count("\n") == 1 and "is empty" in proc.stderr, proc.stderr
    assert list(tmp_path.iterdir()) == []  # nothing journaled, sealed or written in the current directory


NOT_A_JOURNAL = [
    ("replay", "{fifo}"),
    ("replay", "/dev/zero"),
    ("replay", "{fifo}", "--jobs", "2"),
    ("journal", "verify", "{fifo}"),
    ("journal", "verify", "/dev/zero"),
    ("journal", "recall", "{fifo}"),
    ("report", "{fifo}", "--list"),
    ("report", "/dev/zero", "--list"),
]


@pytest.mark.parametrize("args", NOT_A_JOURNAL, ids=[" ".join(c) for c in NOT_A_JOURNAL])
def test_a_journal_path_that_is_a_fifo_or_a_device_is_one_line_and_exit_2(tmp_path, args):
    """`shoed replay FIFO` (or a device) ended in a traceback (FileNotFoundError from the file listing);
    every command that reads a journal says `no journal at PATH` in one line, never opens it, never waits."""
    fifo = tmp_path / "capture.jsonl"
    os.mkfifo(fifo)
    env = {**os.environ, "PYTHONPATH": os.getcwd()}
    proc = subprocess.run([sys.executable, "-m", "shoed", *(a.format(fifo=fifo) for a in args)],
                          capture_output=True, text=True, timeout=30, cwd=tmp_path, env=env)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stderr.count("\n") == 1 and "no journal at" in proc.stderr, proc.stderr
