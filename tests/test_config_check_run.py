"""What `shoed run` would refuse, `shoed config check` refuses first: one line, exit 2; and `run`
refuses it before anything is made in its working folder (no key pair, no journal).

A reconnect back-off whose first wait is longer than its longest (the driver's own check), two
endpoints that take one tcp port on the same address (`localhost` is 127.0.0.1, `*` and 0.0.0.0
take every address), a journal_dir that is a file or cannot be made, and a configuration file
larger than a configuration ever is (read to a bound, never whole).
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from harness.processes import as_nobody
from shoed.daemon.config import ConfigError, check, config_from_dict, endpoint_key, load_config, same_endpoint

NATIVE = '[[sources]]\ndriver = "native"\nurl = "/dev/null"\n'


def _shoed(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "shoed", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=60)


def _refused_everywhere(cwd: Path, text: str, words: str) -> None:
    """`config check` says `words` in one line and exits 2; `run --config` exits 2 with `words` in its
    last line, and the working folder holds nothing but what was there before."""
    config = cwd / "shoed.toml"
    config.write_text(text)
    before = sorted(p.name for p in cwd.iterdir())
    proc = _shoed(cwd, "config", "check", "shoed.toml")
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert proc.stdout == "" and len(proc.stderr.splitlines()) == 1, proc.stderr
    assert words in proc.stderr, proc.stderr
    proc = _shoed(cwd, "run", "--config", "shoed.toml")
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stdout + proc.stderr, proc.stderr
    assert words in proc.stderr.splitlines()[-1], proc.stderr
    assert sorted(p.name for p in cwd.iterdir()) == before, list(cwd.rglob("*"))


@pytest.mark.parametrize("text, words", [
    (NATIVE + "backoff_initial = 10\nbackoff_max = 1\n",
     "source 1 (native): backoff_initial (10) must be above 0 and at most backoff_max (1)"),
    # the other from the driver's defaults (backoff_max 2.0)
    ('[[sources]]\ndriver = "beetek"\nurl = "/dev/null"\nbackoff_initial = 5\n',
     "source 1 (beetek): backoff_initial (5) must be above 0 and at most backoff_max (2.0)"),
    (NATIVE + '[[sources]]\ndriver = "native"\nurl = "/dev/zero"\nbackoff_max = 0.05\n',
     "source 2 (native): backoff_initial (0.1) must be above 0 and at most backoff_max (0.05)"),
], ids=["both", "initial-over-default-max", "max-under-default-initial"])
def test_a_backoff_the_driver_refuses_is_refused_before_anything_is_made(tmp_path, text, words):
    _refused_everywhere(tmp_path, text, words)


@pytest.mark.parametrize("events, snapshot, words", [
    ("tcp://127.0.0.1:6000", "tcp://localhost:6000", "events and snapshot name the same endpoint"),
    ("tcp://LOCALHOST:6000", "tcp://127.0.0.1:6000", "events and snapshot name the same endpoint"),
    ("tcp://*:6000", "tcp://127.0.0.1:6000", "take one tcp port on the same address"),
    ("tcp://127.0.0.1:6000", "tcp://*:6000", "take one tcp port on the same address"),
    ("tcp://0.0.0.0:6000", "tcp://localhost:6000", "take one tcp port on the same address"),
    ("tcp://*:6000", "tcp://0.0.0.0:6000", "events and snapshot name the same endpoint"),
    ("tcp://[::1]:6000", "tcp://localhost:6000", "take one tcp port on the same address"),
], ids=["loopback-localhost", "upper-case", "star-first", "star-second", "any-localhost", "star-any", "v6-localhost"])
def test_two_endpoints_on_one_port_and_address_are_refused_before_anything_is_made(tmp_path, events, snapshot, words):
    _refused_everywhere(tmp_path, f'[publish]\nevents = "{events}"\nsnapshot = "{snapshot}"\n', words)


@pytest.mark.parametrize("a, b, same", [
    ("tcp://127.0.0.1:6000", "tcp://localhost:6000", True),
    ("tcp://*:6000", "tcp://10.1.2.3:6000", True),
    ("tcp://*:6000", "tcp://eth0:6000", True),
    ("tcp://*:6000", "tcp://127.0.0.1:6001", False),
    ("tcp://127.0.0.1:6000", "tcp://10.1.2.3:6000", False),
    ("tcp://[::1]:6000", "tcp://127.0.0.1:6000", False),
    ("tcp://*:*", "tcp://*:*", False),  # ports the system picks are never the same twice
    ("tcp://127.0.0.1:0", "tcp://127.0.0.1:0", False),
    ("ipc:///run/a", "ipc:///run/../run/a", True),
    ("ipc:///run/a", "tcp://*:6000", False),
    # other spellings of one IPv4 address, as the resolver takes them
    ("tcp://127.1:6000", "tcp://127.0.0.1:6000", True),
    ("tcp://0177.0.0.1:6000", "tcp://localhost:6000", True),
    ("tcp://[::ffff:127.0.0.1]:6000", "tcp://127.0.0.1:6000", True),
    ("tcp://127.1:6000", "tcp://127.0.0.2:6000", False),
])
def test_same_endpoint(a, b, same):
    assert same_endpoint(a, b) is same and same_endpoint(b, a) is same


def test_an_endpoint_key_writes_a_tcp_host_one_way():
    assert endpoint_key("tcp://localhost:6000") == endpoint_key("tcp://127.0.0.1:6000") == "tcp://127.0.0.1:6000"
    assert endpoint_key("tcp://0.0.0.0:6000") == endpoint_key("tcp://*:6000")
    assert endpoint_key("tcp://*:*") is None


def test_endpoints_on_other_ports_or_addresses_pass(tmp_path):
    config = config_from_dict({"journal_dir": str(tmp_path / "j"), "publish": {
        "events": "tcp://*:6000", "snapshot": "tcp://127.0.0.1:6001", "commands": "tcp://127.0.0.2:6001",
        "curve_commands": False}})
    check(config)


def test_a_journal_dir_that_is_a_file_or_cannot_be_made_is_refused_before_anything_is_made(tmp_path):
    (tmp_path / "afile").write_text("not a directory\n")
    _refused_everywhere(tmp_path, 'journal_dir = "/dev/null"\n', "journal_dir /dev/null is not a directory")
    _refused_everywhere(tmp_path, 'journal_dir = "afile"\n', "journal_dir afile is not a directory")
    _refused_everywhere(tmp_path, 'journal_dir = "afile/journal"\n',
                        f"journal_dir afile/journal cannot be made: {tmp_path / 'afile'} is not a directory")


def _check_says(journal_dir: Path):
    """What the configuration check says of `journal_dir` ("passed" if nothing)."""
    def work() -> str:
        try:
            check(config_from_dict({"journal_dir": str(journal_dir), "publish": {"curve_commands": False}}))
        except ConfigError as exc:
            return str(exc)
        return "passed"
    return work


def test_a_journal_dir_this_user_cannot_write_is_refused():
    import shutil
    import tempfile

    base = Path(tempfile.mkdtemp(prefix="shoed-closed-"))  # in /tmp: nobody may pass through to `closed`
    base.chmod(0o755)
    closed = base / "closed"
    closed.mkdir()
    closed.chmod(0o555)
    try:
        assert _check_says(base / "open")() == "passed"  # its modules loaded here: nobody may not read them
        said = as_nobody(_check_says(closed / "journal"))
        assert re.fullmatch(r"journal_dir .*closed/journal cannot be made in .*closed: it is not writable .*", said), said
        said = as_nobody(_check_says(closed))
        assert re.fullmatch(r"journal_dir .*closed: it is not writable .*", said), said
    finally:
        closed.chmod(0o755)
        shutil.rmtree(base)


def test_a_journal_dir_that_can_be_made_passes(tmp_path):
    check(config_from_dict({"journal_dir": str(tmp_path / "a" / "b"), "publish": {"curve_commands": False}}))
    (tmp_path / "j").mkdir()
    check(config_from_dict({"journal_dir": str(tmp_path / "j"), "publish": {"curve_commands": False}}))


def test_a_configuration_file_past_the_bound_is_one_line_and_nothing_is_made(tmp_path):
    text = 'table = "t1"\n' + ("# " + "x" * 1022 + "\n") * 2048  # 2 MiB, valid TOML
    _refused_everywhere(tmp_path, text, "larger than 1,048,576 bytes")


def test_a_configuration_file_at_the_bound_is_read(tmp_path):
    head = 'table = "t9"\n'
    path = tmp_path / "shoed.toml"
    path.write_text(head + "#" * ((1 << 20) - len(head) - 1) + "\n")
    assert path.stat().st_size == 1 << 20
    assert load_config(path).table == "t9"
