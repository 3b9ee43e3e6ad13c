"""A path behind a folder this user may not enter (docs/installing.md makes /var/lib/shoed mode 0750,
owner shoed: a surveillance officer or an operator outside group shoed cannot enter it). Every command
that is given such a path says so in one line naming the path and the reason, and exits 2: exit 1
means a bad record to the scripts that run `journal verify` (docs/journal.md, surveillance.md), and a
traceback is no answer at all.

Run as this user where it is not root; as root (for whom a mode takes nothing away) each command runs
as the unprivileged user `nobody`, through setpriv."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from harness.records import write_journal

ROOT = Path(__file__).resolve().parent.parent
NOBODY = 65534


def _run_unprivileged(*argv: str) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "shoed", *argv]
    if os.geteuid() == 0:
        setpriv = shutil.which("setpriv")
        if setpriv is None:
            pytest.skip("run as root, who may enter any folder, and no setpriv here to run the command as "
                        "the unprivileged user nobody")
        command = [setpriv, f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", *command]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, cwd="/",
                          env=dict(os.environ, PYTHONPATH=str(ROOT)))


def _one_line(proc: subprocess.CompletedProcess, *says: str) -> None:
    assert proc.returncode == 2, (proc.returncode, proc.stdout[-500:], proc.stderr[-2000:])
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr, proc.stderr
    for text in says:
        assert text in proc.stderr, proc.stderr


@pytest.fixture(scope="module")
def state(tmp_path_factory):
    """A state folder laid out as installing.md makes it, that this user may not enter: a journal, an
    allow-list of client keys and a ruleset file in it."""
    base = Path(tempfile.mkdtemp(prefix="shoed-closed-", dir="/tmp"))
    closed = base / "varlib"
    try:
        base.chmod(0o755)
        closed.mkdir()
        write_journal(closed / "journal", 1, seed=3)
        (closed / "keys" / "clients").mkdir(parents=True)
        shutil.copy(ROOT / "shoed" / "rules" / "rulesets" / "punto-banco.toml", closed / "house.toml")
        for path in closed.rglob("*"):
            path.chmod(0o755 if path.is_dir() else 0o644)
        closed.chmod(0)  # root's (as root) or this user's, and no one may enter it
        yield closed
    finally:
        closed.chmod(0o755)
        shutil.rmtree(base, ignore_errors=True)


@pytest.mark.parametrize("argv, says", [
    (("journal", "verify", "{d}/journal"), "cannot read the journal at {d}/journal"),
    (("journal", "verify", "{d}/journal/t1-000001.jsonl"), "cannot read the journal at {d}/journal"),
    (("journal", "recall", "--last", "5", "{d}/journal"), "cannot read the journal at {d}/journal"),
    (("replay", "--jobs", "1", "{d}/journal"), "cannot read the journal at {d}/journal"),
    (("report", "--list", "{d}/journal"), "cannot read the journal at {d}/journal"),
    (("keys", "list", "--dir", "{d}/keys/clients"), "allow-list directory {d}/keys/clients: cannot read it"),
    (("keys", "journal", "--journal", "{d}/journal2", "--table", "t1", "--verify-key", "-"),
     "cannot look at {d}/journal2"),
    (("odds", "--ruleset", "{d}/house.toml"), "ruleset {d}/house.toml: cannot read it"),
    (("rules", "check", "--ruleset", "{d}/house.toml", "9H"), "ruleset {d}/house.toml: cannot read it"),
])
def test_a_path_behind_a_folder_this_user_cannot_enter_is_one_line_and_exit_2(state, argv, says):
    proc = _run_unprivileged(*(a.replace("{d}", str(state)) for a in argv))
    _one_line(proc, says.replace("{d}", str(state)), "Permission denied")
    assert proc.stdout == ""


def test_an_allow_list_this_user_may_enter_but_not_list_is_refused_not_taken_as_empty(tmp_path):
    """Keys there that cannot be listed are not `no keys`: the command says it could not read them."""
    from shoed.net.curve import create_key_pair

    base = Path(tempfile.mkdtemp(prefix="shoed-unlisted-", dir="/tmp"))
    clients = base / "clients"
    try:
        base.chmod(0o755)
        create_key_pair(clients, "board")
        (clients / "board.key_secret").unlink()
        clients.chmod(0o311)  # entered, never listed; written only by its owner
        proc = _run_unprivileged("keys", "list", "--dir", str(clients))
        _one_line(proc, f"allow-list directory {clients}: cannot read it (Permission denied)")
    finally:
        clients.chmod(0o755)
        shutil.rmtree(base, ignore_errors=True)


def test_the_daemons_key_folder_it_cannot_enter_is_a_curve_error(tmp_path, monkeypatch):
    """The daemon's own check of its server key, and `keys new`'s look for a key it would overwrite:
    a folder they may not look into is a CurveError naming the file, never a PermissionError."""
    import errno

    from shoed.net import curve

    real_stat = os.stat

    def stat(path, *args, **kwargs):
        if str(path).startswith(f"{tmp_path / 'keys'}/"):  # the folder is there; what is in it, unknown
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(path))
        return real_stat(path, *args, **kwargs)

    (tmp_path / "keys").mkdir()
    monkeypatch.setattr(os, "stat", stat)
    with pytest.raises(curve.CurveError, match=r"cannot read the server key .*server\.key_secret: Permission denied"):
        curve.ServerCurve.from_key_dir(tmp_path / "keys")
    with pytest.raises(curve.CurveError, match=r"cannot look for .*board\.key: Permission denied"):
        curve.create_key_pair(tmp_path / "keys", "board")
