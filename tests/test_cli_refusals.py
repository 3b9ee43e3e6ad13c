"""What the command line refuses before it does any harm: a report written over the journal, an
endpoint that is no endpoint, a port that is taken, a journal or ruleset this user cannot read, an
option that goes with another given alone, output that cannot be written. Each is one line on
stderr and exit 2 (unless said otherwise), and nothing that was there is lost."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from harness.processes import run_shoed
from harness.records import write_journal

ROOT = Path(__file__).resolve().parent.parent
NOBODY = 65534


@pytest.fixture(scope="module")
def journal(tmp_path_factory) -> Path:
    directory = tmp_path_factory.mktemp("refusals") / "journal"
    write_journal(directory, 1, seed=5)
    return directory


def one_line(proc: subprocess.CompletedProcess, says: str, code: int = 2) -> None:
    assert proc.returncode == code, (proc.returncode, proc.stdout[-500:], proc.stderr[-2000:])
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert says in proc.stderr, proc.stderr


def argparse_refusal(proc: subprocess.CompletedProcess, says: str) -> None:
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    assert says in proc.stderr.strip().splitlines()[-1], proc.stderr


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# -- report: never over the journal, never half the files ------------------------------------------------

def test_report_html_over_a_journal_file_is_refused_and_the_file_kept(journal, tmp_path):
    copy = tmp_path / "journal"
    shutil.copytree(journal, copy)
    target = sorted(copy.glob("*.jsonl"))[-1]
    before = target.read_bytes()
    for where in (target, copy / "t1.verified", copy / "shoe.html"):
        proc = run_shoed("report", str(copy), "--html", str(where))
        one_line(proc, "--html")
    assert target.read_bytes() == before
    assert not (copy / "shoe.html").exists()
    assert run_shoed("journal", "verify", str(copy)).returncode == 0


def test_report_html_must_name_an_html_file(journal, tmp_path):
    proc = run_shoed("report", str(journal), "--html", str(tmp_path / "shoe.txt"))
    one_line(proc, "name it FILE.html")
    assert list(tmp_path.iterdir()) == []
    page = run_shoed("report", str(journal), "--html", str(tmp_path / "shoe.HTM"))
    assert page.returncode == 0 and (tmp_path / "shoe.HTM").read_bytes().startswith(b"<!DOCTYPE html>"), page.stderr


def test_report_out_and_html_naming_one_file_are_refused(journal, tmp_path):
    (tmp_path / "same.png").write_bytes(b"the old board")
    (tmp_path / "link.html").symlink_to(tmp_path / "page.png")
    for out, html in ((tmp_path / "same.png", tmp_path / "same.png"),
                      (tmp_path / "page.png", tmp_path / "link.html")):
        proc = run_shoed("report", str(journal), "--out", str(out), "--html", str(html))
        assert proc.returncode == 2 and "Traceback" not in proc.stderr and proc.stderr.count("\n") == 1, proc.stderr
    assert (tmp_path / "same.png").read_bytes() == b"the old board"
    assert not (tmp_path / "page.png").exists()


def test_report_writes_neither_file_when_one_cannot_be_written(journal, tmp_path):
    (tmp_path / "shoe.png").write_bytes(b"the old board")
    proc = run_shoed("report", str(journal), "--out", str(tmp_path / "shoe.png"),
                     "--html", str(tmp_path / "no" / "such" / "shoe.html"))
    one_line(proc, "cannot write")
    assert (tmp_path / "shoe.png").read_bytes() == b"the old board"


def test_report_list_with_a_file_to_write_is_refused(journal, tmp_path):
    proc = run_shoed("report", str(journal), "--list", "--out", str(tmp_path / "x.png"))
    one_line(proc, "--list")
    assert list(tmp_path.iterdir()) == []


def test_report_never_writes_through_a_link_planted_at_its_temporary_name(journal, tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("victim content\n")
    page = tmp_path / "r.html"
    # the temporary name was `.NAME.tmp-PID`: the shell's pid is the command's after `exec`
    script = (f'ln -s {victim} {tmp_path}/.r.html.tmp-$$ && '
              f'exec {sys.executable} -m shoed report {journal} --html {page}')
    proc = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    assert victim.read_text() == "victim content\n"
    assert not page.is_symlink() and page.read_bytes().startswith(b"<!DOCTYPE html>")


def test_write_whole_makes_a_new_temporary_file_under_a_random_name(tmp_path):
    from shoed.files import replace_whole

    victim = tmp_path / "victim"
    victim.write_text("kept")
    made = []
    real_open = os.open

    def spy(path, flags, mode=0o777, **kw):
        made.append((Path(path).name, flags))
        return real_open(path, flags, mode, **kw)

    os.open = spy
    try:
        replace_whole(tmp_path / "a.key", b"data", mode=0o644)
        replace_whole(tmp_path / "a.key", b"data2", mode=0o644)
    finally:
        os.open = real_open
    names = [name for name, _ in made if name.startswith(".a.key")]
    assert len(names) == 2 and names[0] != names[1]
    assert all(flags & os.O_EXCL and flags & os.O_NOFOLLOW for name, flags in made if name.startswith(".a.key"))
    assert (tmp_path / "a.key").read_bytes() == b"data2" and oct((tmp_path / "a.key").stat().st_mode & 0o777) == "0o644"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.key", "victim"]


# -- endpoints ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("argv, says", [
    (("command", "status", "--endpoint", "garbage", "--timeout", "1"), "TRANSPORT://ADDRESS"),
    (("command", "status", "--endpoint", "tcp://127.0.0.1", "--timeout", "1"), "a host and a port"),
    (("command", "status", "--endpoint", "tcp://127.0.0.1:70000", "--timeout", "1"), "1 to 65535"),
    (("watch", "--once", "--timeout", "1", "tcp://127.0.0.1", "--snapshot", "tcp://127.0.0.1:26557"),
     "a host and a port"),
    (("watch", "--once", "--timeout", "1", "tcp://127.0.0.1:29990", "--snapshot", "garbage"), "TRANSPORT://ADDRESS"),
    (("watch", "--once", "--timeout", "1", "tcp://127.0.0.1:-5"), "1 to 65535"),
    (("watch", "--once", "--timeout", "1", "tcp://127.0.0.1:65535"), "--snapshot"),
    (("simulate", "--pace", "0", "--follow", "garbage,garbage,garbage"), "TRANSPORT://ADDRESS"),
    (("simulate", "--pace", "0", "--follow", "tcp://127.0.0.1:1,tcp://127.0.0.1:2,tcp://127.0.0.1"),
     "a host and a port"),
    (("replay", "unused", "--publish", "tcp://127.0.0.1:99999"), "1 to 65535"),
])
def test_an_endpoint_that_is_none_is_one_line_before_a_socket_is_made(tmp_path, argv, says):
    proc = subprocess.run([sys.executable, "-m", "shoed", *argv], cwd=tmp_path, capture_output=True, text=True,
                          timeout=30)
    one_line(proc, says)
    assert list(tmp_path.iterdir()) == []


def test_the_configuration_checks_the_port_of_an_endpoint(tmp_path):
    for endpoint in ("tcp://127.0.0.1:70000", "tcp://127.0.0.1:-5", "tcp://127.0.0.1:0x10"):
        config = tmp_path / "ep.toml"
        config.write_text(f'table = "t1"\n[publish]\nevents = "{endpoint}"\n')
        one_line(run_shoed("config", "check", str(config)), "a tcp port is a number from 1 to 65535")


def test_one_endpoint_check_serves_them_all():
    from shoed.daemon.config import endpoint_problem

    for good in ("tcp://127.0.0.1:5556", "tcp://[::1]:1", "tcp://*:65535", "ipc:///run/shoed/events", "inproc://x"):
        assert endpoint_problem(good, bind=False) is None, good
    assert endpoint_problem("tcp://127.0.0.1:*") is None  # to bind: the system picks the port
    for bad in ("garbage", "tcp://127.0.0.1", "tcp://:5556", "tcp://h:0", "tcp://h:65536", "tcp://h:*", "foo://x"):
        assert endpoint_problem(bad, bind=False) is not None, bad


def test_a_client_whose_connect_fails_leaves_no_socket_to_hold_the_context():
    script = """
import zmq
from shoed.net.client import SnapshotClient
ctx = zmq.Context()
client = SnapshotClient(ctx, "garbage")
kept = []
try:
    client._connect()
except zmq.ZMQError as exc:
    kept.append(exc)  # its traceback holds the frames, as a caller that reports it does
client.close()
ctx.term()
print("terminated")
"""
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=30, cwd=ROOT)
    assert proc.stdout == "terminated\n", proc.stderr


@pytest.mark.timeout(120)
def test_replay_publish_with_its_snapshot_port_taken_is_one_line(journal):
    port = free_port()
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", port + 1))
        taken.listen()
        proc = run_shoed("replay", str(journal), "--max", "--publish", f"tcp://127.0.0.1:{port}", timeout=30)
    one_line(proc, f"cannot bind tcp://127.0.0.1:{port + 1}")


def test_replay_publish_and_snapshot_on_one_endpoint_are_refused(journal):
    port = free_port()
    endpoint = f"tcp://127.0.0.1:{port}"
    one_line(run_shoed("replay", str(journal), "--max", "--publish", endpoint, "--snapshot", endpoint, timeout=30),
             "name the same endpoint")


# -- journals and rulesets this user cannot read --------------------------------------------------------

@pytest.fixture
def unreadable(journal):
    """A copy of the journal with one shoe file unreadable, and one whose folder cannot be listed: for
    this user, or (as root, for whom a mode takes nothing away) for the unprivileged user `nobody`."""
    base = Path(tempfile.mkdtemp(prefix="shoed-unreadable-", dir="/tmp"))
    try:
        base.chmod(0o755)
        one_file, folder = base / "file", base / "folder"
        shutil.copytree(journal, one_file)
        shutil.copytree(journal, folder)
        for path in [*one_file.iterdir(), *folder.iterdir()]:
            path.chmod(0o644)
        sorted(one_file.glob("*.jsonl"))[-1].chmod(0)
        folder.chmod(0)
        yield one_file, folder
    finally:
        folder.chmod(0o755)
        shutil.rmtree(base, ignore_errors=True)


def _run_unprivileged(*argv: str) -> subprocess.CompletedProcess:
    """`shoed ARGV` as this user, or as root as `nobody` (a mode takes nothing away from root)."""
    command = [sys.executable, "-m", "shoed", *argv]
    if os.geteuid() == 0:
        setpriv = shutil.which("setpriv")
        if setpriv is None:
            pytest.skip("run as root, and no setpriv to run the command as an unprivileged user")
        command = [setpriv, f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", *command]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, cwd="/",
                          env=dict(os.environ, PYTHONPATH=str(ROOT)))


@pytest.mark.parametrize("argv", [
    ("journal", "verify", "{path}"),
    ("journal", "recall", "--last", "200", "{path}"),
    ("replay", "--jobs", "1", "{path}"),
    ("replay", "{path}"),
    ("report", "--list", "{path}"),
])
def test_a_journal_that_cannot_be_read_is_one_line_and_exit_2(unreadable, argv):
    for path in unreadable:
        proc = _run_unprivileged(*(a.replace("{path}", str(path)) for a in argv))
        one_line(proc, "cannot read the journal at")
        assert "Permission denied" in proc.stderr


def test_a_ruleset_that_is_not_utf8_is_one_line_naming_it(tmp_path):
    ruleset = tmp_path / "garbage.toml"
    ruleset.write_bytes(b"\xa1\xff\x00 not a ruleset")
    for argv in (("rules", "check", "--ruleset", str(ruleset), "9H"), ("odds", "--ruleset", str(ruleset)),
                 ("simulate", "--ruleset", str(ruleset))):
        proc = run_shoed(*argv, timeout=30)
        one_line(proc, f"ruleset {ruleset}: not a TOML ruleset file")


def test_a_ruleset_that_cannot_be_read_is_one_line_naming_it(tmp_path):
    base = Path(tempfile.mkdtemp(prefix="shoed-ruleset-", dir="/tmp"))
    try:
        base.chmod(0o755)
        ruleset = base / "pb.toml"
        shutil.copy(ROOT / "shoed" / "rules" / "rulesets" / "punto-banco.toml", ruleset)
        ruleset.chmod(0)
        for argv in (("rules", "check", "--ruleset", str(ruleset), "9H"), ("odds", "--ruleset", str(ruleset))):
            one_line(_run_unprivileged(*argv), f"ruleset {ruleset}: cannot read it (Permission denied)")
    finally:
        shutil.rmtree(base, ignore_errors=True)


# -- log levels, output, pipes ----------------------------------------------------------------------

def test_an_unknown_log_level_is_refused(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "shoed", "run", "--log-level", "BOGUS"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=30)
    argparse_refusal(proc, "a log level is one of DEBUG, INFO, WARNING, ERROR, CRITICAL")
    assert list(tmp_path.iterdir()) == []
    proc = subprocess.run([sys.executable, "-m", "shoed", "witness", "--db", f"sqlite:///{tmp_path}/w.db",
                           "--log-level", "verbose", "t1=tcp://127.0.0.1:1"], cwd=tmp_path, capture_output=True,
                          text=True, timeout=30)
    argparse_refusal(proc, "a log level is one of DEBUG, INFO, WARNING, ERROR, CRITICAL")
    assert list(tmp_path.iterdir()) == []


def test_a_log_level_is_taken_in_any_case():
    from shoed import cli

    assert cli.log_level("warning") == "WARNING"


@pytest.mark.parametrize("argv", [("schema",), ("roads", "BBP"), ("rules", "list")])
def test_output_that_cannot_be_written_is_one_line(argv):
    with open("/dev/full", "w") as full:
        proc = subprocess.run([sys.executable, "-m", "shoed", *argv], stdout=full, stderr=subprocess.PIPE,
                              text=True, timeout=30, cwd=ROOT)
    assert proc.returncode == 2 and proc.stderr == "shoed: cannot write the output: No space left on device\n", \
        proc.stderr


def _reader_gone(*argv: str) -> tuple[int, str]:
    proc = subprocess.Popen([sys.executable, "-m", "shoed", *argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            cwd=ROOT)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # the reader goes away before the first line
    err = proc.stderr.read().decode()
    proc.stderr.close()
    return proc.wait(timeout=60), err


def test_a_failed_check_is_never_a_success_when_its_reader_goes_away(tmp_path):
    bad = tmp_path / "t1.jsonl"
    bad.write_text('{"not": "a journal record"}\n')
    assert run_shoed("journal", "verify", str(bad)).returncode == 1
    code, err = _reader_gone("journal", "verify", str(bad))
    assert code != 0 and "Traceback" not in err, err
    code, err = _reader_gone("schema")
    assert code == 141 and "Traceback" not in err, err


# -- options that go with another ------------------------------------------------------------------

@pytest.mark.parametrize("argv, says", [
    (("replay", "{journal}", "--audience", "surveillance"), "--audience"),
    (("replay", "{journal}", "--reveal", "result"), "--reveal"),
    (("simulate", "--shuffler-faults", "jam", "--pace", "0"), "--shuffler-faults"),
    (("simulate", "--gate", "locked", "--protocol", "beetek", "--pace", "0"), "--gate"),
    (("watch", "--once", "--timeout", "1", "tcp://127.0.0.1:29990", "--server-key", "server.key"), "--server-key"),
])
def test_an_option_that_goes_with_another_alone_is_refused(journal, tmp_path, argv, says):
    argv = tuple(a.replace("{journal}", str(journal)) for a in argv)
    proc = subprocess.run([sys.executable, "-m", "shoed", *argv], cwd=tmp_path, capture_output=True, text=True,
                          timeout=30)
    one_line(proc, says)


@pytest.mark.parametrize("width", ["0", "-5", "19", "1001", "10000000"])
def test_a_watch_width_out_of_bounds_is_refused(width):
    proc = run_shoed("watch", "--once", "--timeout", "1", "tcp://127.0.0.1:29990", "--width", width, timeout=30)
    argparse_refusal(proc, "a width is 20 to 1000 columns")


def test_simulate_never_truncates_an_existing_truth_file(tmp_path):
    truth = tmp_path / "truth.jsonl"
    truth.write_text("an earlier run's truth\n")
    proc = run_shoed("simulate", "--pace", "0", "--truth", str(truth), timeout=30)
    one_line(proc, "already exists")
    assert truth.read_text() == "an earlier run's truth\n"
