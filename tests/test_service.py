"""Operations: the systemd unit (verify, security rating), the notify protocol with a
real daemon, the udev rules, and configuration errors."""

from __future__ import annotations

import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from shoed.daemon.config import ConfigError, check, config_from_dict, load_config
from shoed.daemon.notify import Notifier
from harness.processes import Daemon, NotifyListener

ROOT = Path(__file__).resolve().parents[1]
ANALYZE = shutil.which("systemd-analyze")
needs_analyze = pytest.mark.skipif(
    ANALYZE is None, reason="systemd-analyze is not installed (.ci/run installs Debian's systemd)"
)


def unit_copy(tmp_path: Path, name: str = "shoed.service") -> Path:
    """The unit with ExecStart pointing at this environment's shoed, so verify can find it."""
    shoed = Path(sys.executable).parent / "shoed"
    text = (ROOT / "systemd" / name).read_text()
    text = text.replace("/usr/local/bin/shoed", str(shoed))
    path = tmp_path / name
    path.write_text(text)
    return path


@needs_analyze
@pytest.mark.parametrize("name", ["shoed.service", "shoed-witness.service"])
def test_unit_verifies_clean(tmp_path, name):
    proc = subprocess.run([ANALYZE, "verify", str(unit_copy(tmp_path, name))], capture_output=True, text=True,
                          timeout=60)
    complaints = [line for line in (proc.stdout + proc.stderr).splitlines() if name in line]
    assert proc.returncode == 0 and not complaints, proc.stdout + proc.stderr


@needs_analyze
@pytest.mark.parametrize("name, most", [("shoed.service", 2.5), ("shoed-witness.service", 2.5)])
def test_unit_security_rating_at_most_2_5(tmp_path, name, most):
    proc = subprocess.run(
        [ANALYZE, "security", "--offline=true", str(unit_copy(tmp_path, name))], capture_output=True, text=True,
        timeout=60
    )
    match = re.search(rf"Overall exposure level for {re.escape(name)}:\s*([0-9.]+)", proc.stdout + proc.stderr)
    assert match, proc.stdout + proc.stderr
    assert float(match.group(1)) <= most


def _syscalls(name: str, seen: set[str] | None = None) -> set[str]:
    """A system call, or every one a systemd group (`@name`) holds, nested groups included."""
    if not name.startswith("@"):
        return {name}
    seen = set() if seen is None else seen
    if name in seen:
        return set()
    seen.add(name)
    listed = subprocess.run([ANALYZE, "syscall-filter", name], capture_output=True, text=True, timeout=60).stdout
    words = [line.split()[0] for line in listed.splitlines()[1:] if line.strip() and not line.strip().startswith("#")]
    return set().union(*(_syscalls(word, seen) for word in words)) if words else set()


@needs_analyze
def test_the_unit_lets_the_daemon_make_the_system_calls_it_makes():
    """The unit's SystemCallFilter lines applied in order as systemd merges them (an allow-list, less each
    `~` list, plus what is allowed after): setpriority (the public I/O thread's lower priority, an EPERM
    and a warning at every start under the unit before) and prlimit64 (the limit of open files)."""
    allowed: set[str] = set()
    for line in (ROOT / "systemd" / "shoed.service").read_text().splitlines():
        if line.startswith("SystemCallFilter="):
            value = line.partition("=")[2]
            deny = value.startswith("~")
            names = set().union(*(_syscalls(word) for word in value.lstrip("~").split()))
            allowed = allowed - names if deny else allowed | names
    assert {"setpriority", "getpriority", "prlimit64", "fsync", "openat", "ioctl"} <= allowed
    assert not {"reboot", "mount", "sched_setscheduler", "setrlimit"} & allowed  # still filtered


def test_unit_declares_what_the_daemon_relies_on():
    text = (ROOT / "systemd" / "shoed.service").read_text()
    for needle in ["Type=notify", "WatchdogSec=", "Restart=on-failure", "User=shoed", "ProtectSystem=strict",
                   "DevicePolicy=closed", "DeviceAllow=char-ttyACM", "NoNewPrivileges=yes", "ReadWritePaths=/var/lib/shoed",
                   "Nice=-10", "CPUWeight=1000", "IOWeight=1000", "OOMScoreAdjust=-900"]:
        assert needle in text


def test_udev_rules_name_the_native_shoe_and_tag_it():
    rules = (ROOT / "udev" / "70-shoed.rules").read_text()
    active = [line for line in rules.splitlines() if line and not line.startswith("#")]
    joined = "\n".join(active)
    assert 'ATTRS{idVendor}=="1209"' in joined and 'SYMLINK+="shoe-native' in joined
    assert 'TAG+="systemd"' in joined and 'GROUP="dialout"' in joined
    assert "#SUBSYSTEM==\"tty\", ATTRS{idVendor}==\"0403\"" in rules  # the Bee-Tek adapter template


def test_notifier_sends_datagrams(tmp_path):
    path = str(tmp_path / "notify")
    server = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    server.bind(path)
    server.settimeout(2)
    notifier = Notifier(path)
    assert notifier.ready("up") and server.recv(256) == b"READY=1\nSTATUS=up"
    assert notifier.watchdog() and server.recv(256) == b"WATCHDOG=1"
    notifier.close()
    server.close()


def test_daemon_speaks_sd_notify(base):
    """The real daemon under a notify socket: READY after start-up, WATCHDOG, STOPPING on SIGTERM."""
    notify = NotifyListener(base / "notify")
    deadline = time.monotonic() + 30
    daemon = Daemon(base, "--sim-pace", "0.2", env=notify.env(watchdog_usec=400_000))
    try:
        got = notify.until(lambda got: any(m.startswith("WATCHDOG=1") for m in got), deadline - time.monotonic(),
                           "WATCHDOG=1")
        assert got[0].startswith("READY=1"), got
        assert any(m == "WATCHDOG=1" for m in got)
        # No core file of a process whose memory holds the keys, wherever it runs (the unit says so too).
        limits = Path(f"/proc/{daemon.pid}/limits").read_text()
        assert re.search(r"Max core file size\s+0\s+0\s", limits), limits
        # SIGUSR1/2 (a log rotation's habit) stop nothing: a stop without its record is an unclean one.
        daemon.proc.send_signal(signal.SIGUSR1)
        daemon.proc.send_signal(signal.SIGUSR2)
        time.sleep(0.5)
        assert daemon.proc.poll() is None
        daemon.proc.send_signal(signal.SIGTERM)
        got = notify.until(lambda got: "STOPPING=1" in got, deadline - time.monotonic(), "STOPPING=1")
        assert "STOPPING=1" in got
        assert daemon.wait_exit(20) == 0
    finally:
        daemon.kill()
        notify.close()


def test_config_file_and_errors(tmp_path):
    good = tmp_path / "shoed.toml"
    good.write_text('table = "t7"\nruleset = "macau-statutory"\ndecks = 6\n[[sources]]\ndriver = "native"\n'
                    'url = "/dev/shoe-native"\n[publish]\nevents = "tcp://127.0.0.1:6000"\n')
    config = load_config(good)
    assert (config.table, config.decks, config.events) == ("t7", 6, "tcp://127.0.0.1:6000")
    assert config.sources[0].driver == "native" and not config.embedded_default
    with pytest.raises(ConfigError, match="unknown setting"):
        config_from_dict({"tabel": "x"})
    with pytest.raises(ConfigError, match="needs a driver"):
        config_from_dict({"sources": [{"url": "/dev/x"}]})
    with pytest.raises(ConfigError, match="no configuration file"):
        load_config(tmp_path / "missing.toml")
    assert load_config(_file(tmp_path, "camera.toml", "[[sources]]\ndriver = 'camera'\nurl = '0'\n"
                                                      "roi = [10, 20, 320, 240]\n")).sources[0].options["roi"]


def _file(directory: Path, name: str, text: str) -> Path:
    path = directory / name
    path.write_text(text)
    return path


def test_a_configuration_file_the_daemon_cannot_read_is_one_line_and_exit_2(tmp_path):
    """/etc/shoed made 0750 root:root leaves the daemon's user unable to read shoed.toml: one line
    saying so, exit 2 (the unit does not restart it), not a traceback and exit 1."""
    import os

    from shoed.cli import build_parser, main

    closed = tmp_path / "etc"
    closed.mkdir()
    path = _file(closed, "shoed.toml", "table = 't1'\n")
    build_parser()  # every command module imported before the child gives up its rights
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: the daemon's own user, who may not enter the directory
        code = 99
        try:
            sys.stderr = os.fdopen(write, "w")
            if os.geteuid() == 0:
                os.setgid(65534)
                os.setuid(65534)
            else:
                closed.chmod(0)
            code = main(["config", "check", str(path)])
        finally:
            sys.stderr.flush()
            os._exit(code)
    os.close(write)
    with os.fdopen(read) as f:
        said = f.read()
    _, status = os.waitpid(pid, 0)
    closed.chmod(0o755)
    assert os.waitstatus_to_exitcode(status) == 2, said
    assert said.startswith(f"shoed: cannot read the configuration file {path}: permission denied") and \
        len(said.strip().splitlines()) == 1, said


@pytest.mark.parametrize("data, says", [
    ({"journal_secret_file": ""}, "journal_secret_file must be a non-empty path"),  # else: no secret at all
    ({"journal_secret_file": False}, "journal_secret_file must be a non-empty path"),
    ({"journal_dir": ""}, "journal_dir must be a non-empty path"),  # else: the journal in the working directory
    ({"table": True}, "table must be a non-empty string"),  # converted: table "True"
    ({"publish": {"events": 5556}}, "events must be a non-empty string"),
    ({"stall_after_s": float("nan")}, "stall_after_s must be a number of seconds from 0 to 86400"),  # else: int(nan) in the loop
    ({"stall_after_s": float("inf")}, "stall_after_s must be a number of seconds from 0 to 86400"),
    ({"decks": 8.7}, "decks must be a whole number from 1"),  # converted: 8
    ({"decks": True}, "decks must be a whole number from 1"),  # converted: 1
    ({"decks": 0}, "decks must be a whole number from 1"),  # else: the ruleset's default
    ({"simulator": {"pace": float("nan")}}, "pace must be a number of seconds"),
    ({"simulator": {"shoes": -1}}, "shoes must be a whole number from 0"),
    ({"publish": {"surveillance_events": 5}}, "surveillance_events must be a non-empty string"),
    ({"sources": [{"driver": "native", "url": "/dev/x", "heartbeat": float("nan")}]}, "heartbeat must be a number"),
    ({"sources": [{"driver": "native", "url": "/dev/x", "silence": 0}]}, "silence must be a number of seconds above 0"),
    ({"sources": [{"driver": "native", "url": "/dev/x", "confidence_floor": "0.9"}]}, "confidence_floor must be"),
    ({"sources": [{"driver": "native", "url": "/dev/x", "confidence_floor": True}]}, "confidence_floor must be"),
    ({"sources": [{"driver": "beetek", "url": "/dev/x", "baudrate": 9600.5}]}, "baudrate must be a whole number"),
    ({"sources": [{"driver": "beetek", "url": "/dev/x", "backoff_max": -1}]}, "backoff_max must be a number"),
    ({"sources": [{"driver": "beetek", "url": 5}]}, "url must be a string"),
    # checked here, not only when the camera is opened (where it would be retried as a shoe that is not there)
    ({"sources": [{"driver": "camera", "url": "0", "roi": "abc"}]}, r"roi must be \[x, y, width, height\]: whole numbers"),
    ({"sources": [{"driver": "camera", "url": "0", "roi": [0, 0, 64.5, 64]}]}, r"roi must be \[x, y, width, height\]: whole numbers"),
    ({"sources": [{"driver": "camera", "url": "0", "roi": [0, 0, 0, 64]}]}, r"roi must be \[x, y, width, height\]: whole numbers"),
    ({"sources": [{"driver": "camera", "url": "0", "colour_camera": "yes"}]}, "colour_camera must be true or false"),
    ({"sources": [{"driver": "camera", "url": "0", "colour_camera": 1}]}, "colour_camera must be true or false"),
])
def test_a_value_of_the_wrong_kind_is_refused_never_converted(data, says):
    with pytest.raises(ConfigError, match=says) as refused:
        check(config_from_dict(data, "shoed.toml"))
    assert "\n" not in str(refused.value) and str(refused.value).startswith("shoed.toml")


def test_the_edges_that_are_valid_stay_valid():
    config = config_from_dict({"decks": 8, "ruleset": "macau-statutory", "stall_after_s": 0,
                               "simulator": {"pace": 0, "seed": -3, "shoes": 0},
                               "sources": [{"driver": "native", "url": "/dev/x", "heartbeat": 1,
                                            "confidence_floor": 0, "baudrate": 115200}]})
    check(config)
    assert (config.decks, config.stall_after_s, config.sim_seed) == (8, 0.0, -3)


def test_bad_run_options_are_one_line_errors(tmp_path):
    from tests.conftest import run_shoed

    proc = run_shoed("run", "--config", str(tmp_path / "nope.toml"))
    assert proc.returncode == 2 and "no configuration file" in proc.stderr
    proc = run_shoed("run", "--ruleset", "no-such-game", "--journal", str(tmp_path / "j"), "--keys", str(tmp_path / "k"))
    assert proc.returncode == 2 and "unknown ruleset" in proc.stderr


def test_the_unit_bounds_the_daemons_memory_and_restarts_it_after_a_kill_for_memory():
    """libzmq holds a multipart message whole before the daemon sees it (docs/network.md, Memory):
    the unit's MemoryMax= stops shoed before it starves the box, with room over what it uses (about
    60 MB, 70 MB under attack), and Restart=on-failure starts it again (a SIGKILL is a failure;
    RestartPreventExitStatus= names exit codes only)."""
    text = (ROOT / "systemd" / "shoed.service").read_text()
    values = dict(line.split("=", 1) for line in text.splitlines() if "=" in line and not line.startswith("#"))
    assert values["MemoryMax"].endswith("M") and values["LimitCORE"] == "0"
    assert 8 * 70 <= int(values["MemoryMax"][:-1]) <= 16 * 70
    assert values["Restart"] == "on-failure"
    assert all(code.isdigit() for code in values["RestartPreventExitStatus"].split())
    assert values.get("OOMPolicy", "stop") != "continue"


def test_the_witness_unit_is_restarted_after_any_exit_and_never_left_failed():
    """The witness resumes where its database ends: a database away (exit 2) is retried every few
    seconds for as long as it takes, never left failed after systemd's default five starts in 10 s."""
    text = (ROOT / "systemd" / "shoed-witness.service").read_text()
    values = dict(line.split("=", 1) for line in text.splitlines() if "=" in line and not line.startswith("#"))
    assert values["Restart"] == "always" and values["StartLimitIntervalSec"] == "0"
    assert "RestartPreventExitStatus" not in values and float(values["RestartSec"].rstrip("s")) >= 1
    assert "shoed witness" in values["ExecStart"] and values["Environment"].startswith("PGPASSFILE=")
    assert values["LimitCORE"] == "0"
