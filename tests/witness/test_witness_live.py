"""The witness on a live table, on SQLite and on a real PostgreSQL server.

A real daemon deals a shoe from the virtual shoe on a pty; `shoed witness`
follows it into the database, is killed (kill -9) in the middle of the shoe
and started again while the table deals on. The database must then hold every
event from where the witness joined to the end, each once, exactly as the
journal holds it, and the journal heads the table published.

Then the journal is altered as someone on the box could do without breaking
its chain (issue: "deleting the last shoe file, truncating at a record
boundary, replacing the journal with another run's ... pass verify"), and
`shoed journal verify --witness` must report each, one line per finding,
exit 1, with `witness` in its JSON.
"""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from shoed.witness.store import WitnessStore
from harness.processes import Daemon, Simulator, remove_dir, run_shoed, short_dir
from harness.records import journal_events, write_journal


SURVEILLANCE_EVENTS = "ipc://{base}/surveillance-events"
SURVEILLANCE_SNAPSHOT = "ipc://{base}/surveillance-snapshot"


def surveillance_keys(base: Path) -> list[str]:
    """The daemon's key pair made ahead (the witness starts first), and the witness's key on the
    allow-list with the surveillance role; the daemon's options for its surveillance endpoints."""
    from shoed.net.curve import create_key_pair, with_role

    (base / "keys" / "clients").mkdir(parents=True, exist_ok=True)
    create_key_pair(base / "keys", "server")
    public, _, _ = create_key_pair(base / "witness-keys", "witness")
    (base / "keys" / "clients" / "witness.key").write_text(with_role(public.read_text(), "surveillance"))
    return ["--surveillance-pub", SURVEILLANCE_EVENTS.format(base=base),
            "--surveillance-snapshot", SURVEILLANCE_SNAPSHOT.format(base=base)]


class WitnessProcess:
    def __init__(self, base: Path, url: str, name: str) -> None:
        self.log = base / f"{name}.log"
        self._out = open(self.log, "w")  # noqa: SIM115 - closed in stop()
        # The witness is a surveillance client: the daemon's surveillance endpoints carry every
        # event as journaled (the displays' endpoints withhold cards not yet faced).
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "shoed", "witness", "--db", url, "--log-json",
             "--key", str(base / "witness-keys" / "witness.key_secret"),
             "--server-key", str(base / "keys" / "server.key"),
             f"t1={SURVEILLANCE_EVENTS.format(base=base)},snapshot={SURVEILLANCE_SNAPSHOT.format(base=base)}"],
            stdout=self._out, stderr=subprocess.STDOUT)

    def lines(self) -> list[dict]:
        return [json.loads(line) for line in self.log.read_text().splitlines() if line.startswith("{")]

    def stop(self, sig=signal.SIGTERM) -> int:
        """Send `sig` if it still runs; its exit status (safe to call twice)."""
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        code = self.proc.wait(20)
        self._out.close()
        return code


def _wait(predicate, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def _last_seq(url: str) -> int:
    with WitnessStore(url) as store:
        return store.last_seq("t1") or 0


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def witnessed(request):
    """(journal directory, witness URL, what the witness logged) after a shoe dealt under a witness
    that was killed and restarted mid-shoe."""
    base = short_dir()
    if request.param == "sqlite":
        url = f"sqlite://{base}/witness.db"
    else:
        url = request.getfixturevalue("postgres").create_database()
    witnesses: list[WitnessProcess] = []
    try:
        # The witness first: it asks for the table's snapshot until the daemon answers.
        surveillance = surveillance_keys(base)
        witnesses.append(WitnessProcess(base, url, "first"))
        with Simulator(base, pace=0.02, seed=7) as sim, Daemon(base, "--source", sim.source, *surveillance) as daemon:
            _wait(lambda: _last_seq(url) > 0, 30, "the witness to join")
            with WitnessStore(url) as store:
                joined = next(store.events("t1")).seq
            _wait(lambda: _last_seq(url) >= joined + 80, 60, "the witness to keep 80 events")
            witnesses[0].stop(signal.SIGKILL)
            killed_at = _last_seq(url)
            time.sleep(1.5)  # the table deals on while the witness is down (~60 cards)
            witnesses.append(WitnessProcess(base, url, "second"))
            sim.wait_done(120)
            daemon.stop()  # its last event, table.stopped, goes out too
            final = journal_events(daemon.journal)[-1]["seq"]
            _wait(lambda: _last_seq(url) >= final, 20, f"the witness to reach seq {final}")
            assert witnesses[1].stop() == 0
        yield {"journal": base / "journal", "url": url, "killed_at": killed_at, "final": final,
               "second": witnesses[1].lines(), "base": base}
    finally:
        for witness in witnesses:
            witness.stop(signal.SIGKILL)
        remove_dir(base)


def test_the_witness_keeps_every_event_once_across_its_own_restart(witnessed):
    events = journal_events(witnessed["journal"])
    with WitnessStore(witnessed["url"]) as store:
        seen = list(store.events("t1"))
        heads = store.heads("t1")
    seqs = [e.seq for e in seen]
    # From the seq it joined at to the table's last event: no gap and nothing twice.
    assert seqs == list(range(seqs[0], witnessed["final"] + 1))
    assert seqs[0] + 80 <= witnessed["killed_at"] < witnessed["final"] - 20
    by_seq = {e["seq"]: e for e in events}
    assert all(e.event == by_seq[e.seq] for e in seen)  # as the journal holds them
    # The restarted witness resumed after what it had kept, fetching what it missed.
    following = next(line for line in witnessed["second"] if line["event"] == "following")
    assert following["resume_after"] == witnessed["killed_at"]
    # With the table's own server key and the table up, no warning that it does not answer.
    assert not [line for line in witnessed["second"] if "has not answered" in line["event"]]
    vias = {e.seq: e.via for e in seen}
    assert vias[witnessed["killed_at"] + 1] == "fetched"
    assert vias[witnessed["final"]] == "live"
    # Each live event carried the head of the journal record that holds it.
    records = {}
    for path in sorted(witnessed["journal"].glob("t1-*.jsonl")):
        for line in path.read_text().splitlines():
            record = json.loads(line)
            records[(int(path.name.split("-")[1]), record["jseq"])] = record
    live = [e for e in seen if e.head is not None]
    assert len(live) > 200
    for e in live:
        record = records[(e.head.file, e.head.jseq)]
        assert record["hash"] == e.head.hash and e.event in record["events"]
    assert len(heads) > 100 and {h.source for h in heads} >= {"event", "snapshot:initial"}


def test_verify_with_the_witness_agrees_with_an_untouched_journal(witnessed):
    proc = run_shoed("journal", "verify", str(witnessed["journal"]), "--witness", witnessed["url"])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "witness agrees" in proc.stdout and "WITNESS" not in proc.stdout


def _copy(witnessed, name: str) -> Path:
    target = witnessed["base"] / name
    shutil.copytree(witnessed["journal"], target)
    for path in target.iterdir():
        path.chmod(0o644)  # finished shoes are read-only
    return target


def _files(journal: Path) -> list[Path]:
    return sorted(p for p in journal.iterdir() if p.name.endswith(".jsonl"))


def _verify(journal: Path, url: str) -> tuple[subprocess.CompletedProcess, dict]:
    text = run_shoed("journal", "verify", str(journal), "--witness", url)
    data = run_shoed("journal", "verify", str(journal), "--witness", url, "--json")
    assert text.returncode == 1 and data.returncode == 1, text.stdout + text.stderr
    return text, json.loads(data.stdout)


def _kinds(report: dict) -> set[str]:
    assert report["witness"]["ok"] is False
    return {f["kind"] for f in report["witness"]["findings"]}


def test_a_deleted_last_file_is_reported(witnessed):
    journal = _copy(witnessed, "deleted")
    last = _files(journal)[-1]
    last.unlink()
    text, report = _verify(journal, witnessed["url"])
    assert _kinds(report) == {"deleted", "events_missing"}
    number = int(last.name.split("-")[1])
    assert f"WITNESS: table t1: file {number} is gone (the journal ends with file {number - 1})" in text.stdout
    assert sum(line.startswith("WITNESS:") for line in text.stdout.splitlines()) == 2


def test_a_truncation_at_a_record_boundary_is_reported(witnessed):
    journal = _copy(witnessed, "truncated")
    last = _files(journal)[-1]
    lines = last.read_bytes().splitlines(keepends=True)
    last.write_bytes(b"".join(lines[:-25]))  # whole records cut off: the chain still links
    text, report = _verify(journal, witnessed["url"])
    assert _kinds(report) == {"truncated", "events_missing"}
    assert f"ends at jseq {len(lines) - 25}; the witness saw jseq {len(lines)}" in text.stdout


def test_a_journal_replaced_by_another_runs_is_reported(witnessed):
    journal = witnessed["base"] / "replaced"
    write_journal(journal, shoes=1, seed=7, odds=True)  # the same table, the same shoe: another run
    text, report = _verify(journal, witnessed["url"])
    assert "replaced" in _kinds(report)
    assert "WITNESS: table t1: the journal was replaced: none of the" in text.stdout


def test_a_journal_deleted_whole_is_reported(witnessed):
    empty = witnessed["base"] / "empty"
    empty.mkdir()
    text, report = _verify(empty, witnessed["url"])
    assert _kinds(report) == {"no_journal", "events_missing"}
