"""`shoed simulate` at the command line: the first line is the path, it runs
until the shoe is done or it is told to stop, and bad input is a one-line error."""

from __future__ import annotations

import json
import select
import signal
import subprocess
import sys
import time

import pytest

from tests.simulate.simhost import TOKEN, NativeHost, read_beetek


def start(*args: str) -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "shoed", "simulate", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    ready, _, _ = select.select([proc.stdout], [], [], 20)
    if not ready:
        proc.kill()
        raise AssertionError("shoed simulate printed nothing within 20 s")
    return proc, proc.stdout.readline().strip()


def finish(proc: subprocess.Popen, timeout: float = 20) -> tuple[int, str]:
    try:
        _, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        raise
    return proc.returncode, err


def test_beetek_run_to_the_end_with_truth(tmp_path):
    truth_path = tmp_path / "truth.jsonl"
    proc, path = start("--protocol", "beetek", "--pace", "0", "--cut", "290", "--seed", "7", "--truth", str(truth_path))
    assert path.startswith("/dev/pts/")
    data = read_beetek(path, lambda: proc.poll() is not None, timeout=20, quiet=0)
    code, err = finish(proc)
    assert code == 0, err
    assert "done after" in err
    truth = [json.loads(line) for line in truth_path.read_text().splitlines()]
    cards = [t for t in truth if t["kind"] in ("card", "unreadable")]
    assert len(TOKEN.findall(data)) == len(cards) > 20
    assert truth[0]["kind"] == "shoe_inserted" and truth[-1]["kind"] == "shoe_removed"


def test_a_truth_file_that_cannot_be_written_stops_the_shoe_with_one_line():
    """--truth onto a full disk (/dev/full): the shoe stops at its first event and says why in one
    line, exit 2, no traceback (closing the file, with a line still to write, used to raise again)."""
    proc, path = start("--protocol", "beetek", "--pace", "0", "--cut", "290", "--seed", "7", "--truth", "/dev/full")
    read_beetek(path, lambda: proc.poll() is not None, timeout=20, quiet=0)
    code, err = finish(proc)
    assert code == 2
    assert err.splitlines()[-1] == "shoed: the virtual shoe stopped: cannot write the truth to /dev/full: " \
                                   "No space left on device"
    assert "Traceback" not in err


def test_native_run_with_a_host(tmp_path):
    link = str(tmp_path / "shoe")
    proc, path = start("--pace", "0", "--cut", "280", "--seed", "3", "--link", link, "--lose", "0.02")
    assert path == link
    host = NativeHost(path)
    assert host.run_until(lambda: proc.poll() is not None, 30)
    code, err = finish(proc)
    assert code == 0, err
    assert host.taken[0].NAME == "shoe_inserted" and host.taken[-1].NAME == "shoe_removed"
    assert [m.seq for m in host.taken] == list(range(1, len(host.taken) + 1))


def test_sigterm_stops_promptly():
    proc, _ = start("--pace", "1.5")
    time.sleep(0.3)
    t = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    code, err = finish(proc, timeout=10)
    assert code == 0 and "stopped after" in err
    assert time.monotonic() - t < 3


@pytest.mark.parametrize(
    "args, message",
    [
        (["--ruleset", "no-such-game"], "unknown ruleset 'no-such-game'"),
        (["--decks", "8"], "punto-banco is played with 6 to 6 decks, not 8"),
        (["--link", "/tmp/x", "--listen", "socket://127.0.0.1:0"], "does not go with --listen"),
        (["--listen", "tcp://127.0.0.1:7000"], "socket://HOST:PORT"),
        (["--cut", "400"], "the cut card lies 0 to 311 cards from the end"),
        (["--link", "/nonexistent-dir/shoe"], "cannot point /nonexistent-dir/shoe"),
        (["--link", "/dev/null"], "/dev/null exists and is not a symlink; refusing to replace it"),
        (["--ber", "2"], "a rate lies between 0 and 1"),
        (["--disconnect-at", "a,b"], "is not a card number"),
    ],
)
def test_bad_input_is_a_one_line_error(shoed_cli, args, message):
    proc = shoed_cli("simulate", *args, timeout=20)
    assert proc.returncode == 2
    assert message in proc.stderr
    assert proc.stdout == ""
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert lines[-1].startswith(("shoed: ", "shoed simulate: error:"))
