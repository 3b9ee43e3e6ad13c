"""Starts refused for endpoints, secret files and keys: one line, exit 2, nothing made.

`shoed config check` and `shoed run` refuse two settings that name one endpoint, a secret
file (order key, journal secret) others may read, an allow-list others may write, and a key
directory that cannot be made; a start refused for its keys leaves no journal behind; an ipc
endpoint that a live daemon answers on is not taken over (libzmq would unlink it and bind anew).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness.processes import Daemon, run_shoed


def _config(base: Path, text: str = "", commands: str | None = None, events: str | None = None) -> Path:
    path = base / "shoed.toml"
    path.write_text(
        f'journal_dir = "{base / "journal"}"\nkey_dir = "{base / "keys"}"\n{text}'
        f'[publish]\nevents = "{events or f"ipc://{base}/events"}"\nsnapshot = "ipc://{base}/snapshot"\n'
        f'commands = "{commands or f"ipc://{base}/commands"}"\n'
        f'[[sources]]\ndriver = "native"\nurl = "{base / "no-shoe"}"\n')
    return path


def _refused(base: Path, config: Path, words: str) -> None:
    """`config check` and `run` both: exit 2, one line that says `words`, no journal made."""
    for args in (("config", "check", str(config)), ("run", "--config", str(config))):
        proc = run_shoed(*args)
        assert proc.returncode == 2, (args, proc.stdout, proc.stderr)
        assert "Traceback" not in proc.stderr + proc.stdout, proc.stderr
        lines = proc.stderr.splitlines()
        assert lines and words in lines[-1], (args, proc.stderr)
        if args[0] == "config":
            assert len(lines) == 1, proc.stderr
        assert not (base / "journal").exists(), args


def test_two_settings_that_name_one_endpoint_are_refused(base):
    _refused(base, _config(base, commands=f"ipc://{base}/events"),
             f"events and commands name the same endpoint 'ipc://{base}/events': give each its own")
    (base / "shoed.toml").unlink()
    _refused(base, _config(base, events="tcp://127.0.0.1:5598", commands="tcp://127.0.0.1:5598"),
             "events and commands name the same endpoint")


@pytest.mark.parametrize("setting", ["journal_secret_file", "order_key_file"])
def test_a_secret_file_others_may_read_is_refused(base, setting):
    secret = base / "secret.key"
    secret.write_text(os.urandom(32).hex() + "\n")
    os.chmod(secret, 0o644)
    if setting == "journal_secret_file":
        text = f'journal_secret_file = "{secret}"\n'
        config = _config(base, text)
    else:
        config = base / "shoed.toml"
        config.write_text(f'journal_dir = "{base / "journal"}"\nkey_dir = "{base / "keys"}"\n'
                          f'[[sources]]\ndriver = "shuffler"\nurl = "/dev/x"\norder_key_file = "{secret}"\n')
    proc = run_shoed("config", "check", str(config))
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
    assert f"{secret} is readable or writable by others (mode 644); chmod 600 it" in proc.stderr
    os.chmod(secret, 0o600)
    proc = run_shoed("config", "check", str(config))
    assert proc.returncode == 0, proc.stderr


def test_an_allow_list_others_may_write_is_refused_before_anything_is_made(base):
    from shoed.net.curve import create_key_pair

    create_key_pair(base / "keys", "server")
    (base / "keys" / "clients").mkdir()
    os.chmod(base / "keys" / "clients", 0o777)
    _refused(base, _config(base), f"{base / 'keys' / 'clients'} is writable by others (mode 777)")


def test_a_server_key_others_may_read_is_refused_before_the_journal(base):
    from shoed.net.curve import create_key_pair

    create_key_pair(base / "keys", "server")
    os.chmod(base / "keys" / "server.key_secret", 0o644)
    _refused(base, _config(base), "server.key_secret is readable or writable by others (mode 644)")


def test_a_key_dir_that_cannot_be_made_is_one_line(base):
    (base / "afile").write_text("not a directory\n")
    config = _config(base).read_text().replace(f'key_dir = "{base / "keys"}"', f'key_dir = "{base / "afile" / "keys"}"')
    (base / "shoed.toml").write_text(config)
    _refused(base, base / "shoed.toml", f"key_dir {base / 'afile' / 'keys'} cannot be made: {base / 'afile'} is not a directory")


def test_keys_that_cannot_be_made_at_start_leave_no_journal(base):
    """What `config check` cannot know before making keys (a server's public key without its secret
    one: a pair is never overwritten) is refused at start, in one line, before the journal is made."""
    (base / "keys").mkdir()
    (base / "keys" / "server.key").write_text("public-key = nothing\n")
    proc = run_shoed("run", "--config", str(_config(base)))
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr + proc.stdout
    assert "server.key already exists; not overwriting a key" in proc.stderr.splitlines()[-1], proc.stderr
    assert not (base / "journal").exists()


def test_an_ipc_endpoint_a_live_daemon_answers_on_is_not_taken_over(base):
    from shoed.net.commands import send_command
    from shoed.net.curve import ClientCurve, create_key_pair, with_role

    (base / "a").mkdir()
    clients = base / "a" / "keys" / "clients"
    clients.mkdir(parents=True)
    public, secret, _ = create_key_pair(base / "console", "pit")
    (clients / "pit.key").write_text(with_role(public.read_text(), "pit"))
    with Daemon(base / "a", "--sim-pace", "5") as first:
        keys = ClientCurve.from_files(secret, first.keys / "server.key")
        assert send_command(first.commands, "status", {}, keys, timeout=5)["ok"]
        proc = subprocess.run(
            [sys.executable, "-m", "shoed", "run", "--journal", str(base / "b-journal"), "--keys", str(base / "b-keys"),
             "--pub", f"ipc://{base}/b-events", "--snapshot", f"ipc://{base}/b-snapshot", "--commands",
             first.commands], capture_output=True, text=True, timeout=60)
        assert proc.returncode == 2, proc.stderr
        assert f"another process answers on {first.commands}" in proc.stderr.splitlines()[-1], proc.stderr
        assert "Traceback" not in proc.stderr
        assert send_command(first.commands, "status", {}, keys, timeout=5)["ok"]  # still the first table's
        assert first.proc.poll() is None
