"""A file the command line or the configuration names that is a FIFO or a device, by mistake or by a
hostile hand: a key, a secret, an order key, a verify key, a labels file, a resume file.

Opening a FIFO waits for a writer for ever and /dev/zero never ends, so every such file is opened
without blocking, refused unless it is a regular file and read to a limit (`shoed.files.read_regular`):
one line on stderr and exit 2, at once, in bounded memory.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from harness.records import write_journal

MEMORY = 1 << 30  # bytes of address space each command may take: reading /dev/zero whole would pass it


@pytest.fixture(scope="module")
def journal(tmp_path_factory) -> Path:
    directory = tmp_path_factory.mktemp("hostile-files") / "journal"
    write_journal(directory, 1, seed=3)
    return directory


CASES = [
    ("journal", "verify", "{journal}", "--secret-file", "{bad}"),
    ("journal", "verify", "{journal}", "--verify-key", "{bad}"),
    ("replay", "{journal}", "--secret-file", "{bad}"),
    ("replay", "{journal}", "--order-key-file", "{bad}"),
    ("report", "{journal}", "--list", "--verify-key", "{bad}"),
    ("command", "status", "--key", "{bad}", "--server-key", "{bad}", "--timeout", "1"),
    ("keys", "allow", "{bad}", "--dir", "{tmp}/clients"),
    ("keys", "list", "--dir", "{tmp}/allow"),
    ("simulate", "--resume", "{bad}", "--listen", "socket://127.0.0.1:0"),
    ("vision", "score", "{tmp}", "--labels", "{bad}"),
    ("config", "check", "{tmp}/secret.toml"),
    ("config", "check", "{tmp}/order.toml"),
]
BAD = ("fifo", "/dev/zero")


def limited() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))


@pytest.mark.parametrize("bad", BAD)
@pytest.mark.parametrize("args", CASES, ids=[" ".join(c) for c in CASES])
def test_a_fifo_or_a_device_named_as_a_file_is_one_line_and_exit_2(tmp_path, journal, args, bad):
    path = str(tmp_path / "given.key")
    if bad == "fifo":
        os.mkfifo(path)
    else:
        os.symlink(bad, path)
    allow = tmp_path / "allow"
    allow.mkdir()
    (allow / "evil.key").symlink_to(path)  # an allow-list entry that is no file
    (tmp_path / "secret.toml").write_text(f'table = "t1"\njournal_dir = "{tmp_path}/j"\n'
                                          f'journal_secret_file = "{path}"\n')
    (tmp_path / "order.toml").write_text(f'table = "t1"\njournal_dir = "{tmp_path}/j"\n[[sources]]\n'
                                         f'driver = "shuffler"\nurl = "/dev/null"\norder_key_file = "{path}"\n')
    env = {**os.environ, "PYTHONPATH": os.getcwd()}
    argv = [a.format(journal=journal, bad=path, tmp=tmp_path) for a in args]
    proc = subprocess.run([sys.executable, "-m", "shoed", *argv], capture_output=True, text=True, timeout=60,
                          cwd=tmp_path, env=env, preexec_fn=limited)
    assert proc.returncode in (1, 2), proc.stdout + proc.stderr
    said = proc.stderr + proc.stdout
    assert "Traceback" not in said and "MemoryError" not in said, said
    assert "not a regular file" in said or "larger than" in said, said
    if proc.returncode == 2:
        assert proc.stderr.count("\n") == 1, proc.stderr


@pytest.mark.parametrize("cmd", [("journal", "verify"), ("replay",), ("journal", "verify", "--json")])
def test_a_link_to_no_file_named_as_the_next_journal_file_is_a_record_not_intact(tmp_path, journal, cmd):
    """Named like the journal's next file, a symbolic link that leads nowhere: the journal is not intact there,
    said in one line (exit 1), never `no journal` (exit 2) nor a traceback."""
    import shutil

    copy = tmp_path / "journal"
    shutil.copytree(journal, copy)
    last = sorted(copy.glob("t1-*.jsonl"))[-1].name.split("-")
    link = copy / f"t1-{int(last[1]) + 1:06d}-20991231T000000Z-20991231T000000-9.jsonl"
    os.symlink(tmp_path / "nowhere", link)
    args = [*cmd[:-1], str(copy), cmd[-1]] if cmd[-1] == "--json" else [*cmd, str(copy)]
    proc = subprocess.run([sys.executable, "-m", "shoed", *args], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr[-2000:]
    assert "a symbolic link to" in proc.stdout + proc.stderr and "which leads to no file" in proc.stdout + proc.stderr
