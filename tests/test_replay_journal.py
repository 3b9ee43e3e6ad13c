"""A whole journal replayed file by file (shoed.journal.replay): in one process or
several it proves exactly what one pass of iter_records through Replay proves,
and finds the same faults at the same places."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from shoed.journal import JournalCorrupt, iter_records
from shoed.table.replay import Replay
from shoed.journal.replay import replay_journal
from tests.conftest import run_shoed
from harness.records import reseal, write_journal

SHOES = 5


@pytest.fixture(scope="module")
def journal(tmp_path_factory) -> tuple[Path, dict]:
    directory = tmp_path_factory.mktemp("replay-journal") / "j"
    counts = write_journal(directory, SHOES, seed=7)
    return directory, counts


def copy(journal: tuple[Path, dict], tmp_path: Path) -> tuple[Path, list[Path]]:
    directory = tmp_path / "j"
    directory.mkdir()
    for f in sorted(journal[0].glob("*.jsonl")):
        (directory / f.name).write_bytes(f.read_bytes())
    return directory, sorted(directory.glob("*.jsonl"))


def one_pass(directory: Path) -> tuple[Replay, str | None]:
    """The reference: every record of iter_records through one Replay."""
    state = Replay()
    try:
        for record in iter_records(directory):
            state.feed(record)
    except JournalCorrupt as exc:
        return state, str(exc.bad)
    return state, None


def both(directory: Path):
    one, two = replay_journal(directory, jobs=1), replay_journal(directory, jobs=2)
    assert (one.files, one.steps, one.events, one.cards) == (two.files, two.steps, two.events, two.cards)
    assert [d.to_json() for d in one.differences] == [d.to_json() for d in two.differences]
    assert one.corrupt == two.corrupt
    return one


def test_files_replayed_apart_prove_what_one_pass_proves(journal):
    directory, counts = journal
    result = both(directory)
    reference, corrupt = one_pass(directory)
    assert corrupt is None and not reference.differences
    assert result.identical
    assert result.files == SHOES + 1  # the table's first file, before its first shoe opened
    assert (result.steps, result.events, result.cards) == (reference.steps, reference.events, counts["cards"])
    assert result.steps == counts["inputs"] and result.events == counts["events"]


def test_an_event_the_rules_do_not_give_is_found_in_whichever_file_it_is(journal, tmp_path):
    directory, files = copy(journal, tmp_path)
    target = files[3].name
    done = []

    def change(name, record):
        if name == target and not done and record["kind"] == "step" and record["events"] \
                and record["events"][0]["kind"] == "card":
            record["events"][0]["card"] = "KS" if record["events"][0]["card"] != "KS" else "QS"
            done.append(True)
        return record

    reseal(directory, change)
    assert run_shoed("journal", "verify", str(directory)).returncode == 0
    result = both(directory)
    reference, _ = one_pass(directory)
    assert len(result.differences) == 1 == len(reference.differences)
    found = result.differences[0]
    assert found.file == target and found.reason == "replayed events differ from the recorded ones"
    assert found.jseq == reference.differences[0].jseq


def test_a_file_that_does_not_start_where_the_one_before_ended(journal, tmp_path):
    directory, files = copy(journal, tmp_path)
    target = files[2].name

    def change(name, record):
        if name == target and record["kind"] == "checkpoint":
            record["state"]["misdeal_ids"] += 1  # changes no event of the file: only the seam tells
        return record

    reseal(directory, change)
    result = both(directory)
    reference, _ = one_pass(directory)
    # Where the altered file starts, and where the next one starts (it follows the unaltered state).
    assert [(d.file, d.jseq, d.reason) for d in result.differences] == [
        (target, 2, "checkpoint differs from the replayed state"),
        (files[3].name, 2, "checkpoint differs from the replayed state"),
    ]
    assert [(d.jseq, d.seq, d.recorded, d.replayed) for d in result.differences] == \
        [(d.jseq, d.seq, d.recorded, d.replayed) for d in reference.differences]


def test_a_missing_file_stops_the_replay_at_the_seam(journal, tmp_path):
    directory, files = copy(journal, tmp_path)
    files[3].unlink()
    result = both(directory)
    reference, corrupt = one_pass(directory)
    assert result.corrupt is not None and result.corrupt.file.endswith(files[4].name) and result.corrupt.line == 1
    assert str(result.corrupt) == corrupt
    assert result.steps == reference.steps  # everything before the seam, nothing after it
    assert not result.differences


def test_a_corrupt_record_stops_the_replay_there(journal, tmp_path):
    directory, files = copy(journal, tmp_path)
    data = bytearray(files[4].read_bytes())
    line_starts = [0] + [i + 1 for i, b in enumerate(data) if b == ord("\n")][:-1]
    at = line_starts[40] + 20
    data[at] ^= 0x01
    files[4].chmod(0o644)
    files[4].write_bytes(bytes(data))
    result = both(directory)
    reference, corrupt = one_pass(directory)
    assert result.corrupt is not None and result.corrupt.line == 41 and str(result.corrupt) == corrupt
    assert result.steps == reference.steps and result.events == reference.events


def test_the_command_reports_the_same_whatever_the_jobs(journal):
    directory, counts = journal
    reports = []
    for jobs in ("1", "2", "3"):
        proc = run_shoed("replay", str(directory), "--json", "--jobs", jobs)
        assert proc.returncode == 0, proc.stderr
        reports.append(json.loads(proc.stdout))
    assert reports[0] == reports[1] == reports[2]
    assert reports[0]["identical"] is True and reports[0]["cards"] == counts["cards"]
    assert reports[0]["files"] == SHOES + 1


def test_publishing_needs_one_process(journal, tmp_path):
    proc = run_shoed("replay", str(journal[0]), "--jobs", "2", "--publish", f"ipc://{tmp_path}/p")
    assert proc.returncode != 0 and "--jobs 1" in proc.stderr


def test_a_keyed_journal_is_replayed_apart_with_its_secret_only(journal, tmp_path):
    directory, files = copy(journal, tmp_path)
    reseal(directory, lambda name, record: record, secret=b"table secret")
    keyed = replay_journal(directory, b"table secret", jobs=2)
    assert keyed.identical and keyed.cards == journal[1]["cards"]
    for secret in (None, b"another secret"):
        one, two = replay_journal(directory, secret, jobs=1), replay_journal(directory, secret, jobs=2)
        assert one.corrupt == two.corrupt and one.corrupt is not None and one.steps == two.steps == 0
        assert one.corrupt.file.endswith(files[0].name) and one.corrupt.line == 1
    secret_file = tmp_path / "secret"
    secret_file.write_bytes(b"table secret\n")
    proc = run_shoed("replay", str(directory), "--json", "--jobs", "2", "--secret-file", str(secret_file))
    assert proc.returncode == 0 and json.loads(proc.stdout)["identical"] is True


def test_a_process_with_other_threads_replays_in_workers_started_afresh(journal, monkeypatch):
    """A fork copies only the forking thread (a lock another thread holds stays held in the child):
    with another thread alive the workers are started by a fork server, and prove the same."""
    import multiprocessing
    import threading

    methods = []
    real = multiprocessing.get_context

    def recording(method=None):
        methods.append(method)
        return real(method)

    monkeypatch.setattr(multiprocessing, "get_context", recording)
    done = threading.Event()
    other = threading.Thread(target=done.wait, daemon=True)
    other.start()
    try:
        result = both(journal[0])
    finally:
        done.set()
        other.join()
    assert methods == ["forkserver"]
    assert result.identical and result.files == len(list(journal[0].glob("*.jsonl")))
    alone = threading.active_count() == 1  # other tests of this run may have left threads of their own
    assert replay_journal(journal[0], jobs=2).steps == result.steps
    assert methods[-1] == ("fork" if alone else "forkserver")


def forked(monkeypatch) -> None:
    """Workers forked from this process (so they run what a test put in place of a file's replay),
    whatever threads other tests of this run left behind."""
    import threading

    monkeypatch.setattr(threading, "active_count", lambda: 1)


@pytest.fixture(scope="module")
def long_journal(tmp_path_factory) -> tuple[Path, dict]:
    """More shoe files than a pool of two processes holds at work and queued."""
    directory = tmp_path_factory.mktemp("replay-long-journal") / "j"
    return directory, write_journal(directory, 14, seed=8)


def test_a_replay_that_stops_early_lets_the_files_at_work_finish(long_journal, tmp_path, monkeypatch):
    """The first file corrupt: the files not yet begun are not replayed, and those at work are let
    finish instead of their processes being killed (one killed while it sends its result back would
    hold the results' lock for ever, and the replay would never end)."""
    import time

    import shoed.journal.replay as replay_module

    directory, files = copy(long_journal, tmp_path)
    real = replay_module.replay_file
    begun, finished = tmp_path / "begun", tmp_path / "finished"

    def slow_after_the_first(path, *args, **kwargs):
        if Path(path).name != files[0].name:
            (begun / Path(path).name).touch()
            time.sleep(0.3)
            (finished / Path(path).name).touch()
        return real(path, *args, **kwargs)

    monkeypatch.setattr(replay_module, "replay_file", slow_after_the_first)
    forked(monkeypatch)
    data = bytearray(files[0].read_bytes())
    data[len(data) // 2] ^= 0x01
    files[0].chmod(0o644)
    files[0].write_bytes(bytes(data))
    for _ in range(3):
        for folder in (begun, finished):
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir()
        result = replay_journal(directory, jobs=2)
        assert result.corrupt is not None and result.corrupt.file.endswith(files[0].name)
        started = sorted(p.name for p in begun.iterdir())
        assert sorted(p.name for p in finished.iterdir()) == started  # every file begun was let finish
        assert len(started) < len(files) - 1, started  # the files not yet begun were not replayed


def test_a_replay_process_that_dies_is_one_clear_error(journal, tmp_path, monkeypatch, capsys):
    import os

    import shoed.journal.replay as replay_module
    from shoed.cli import main

    directory, files = copy(journal, tmp_path)
    real = replay_module.replay_file

    def killed_on_the_third(path, *args, **kwargs):
        if Path(path).name == files[2].name:
            os._exit(137)  # as the kernel's out-of-memory killer ends a process
        return real(path, *args, **kwargs)

    monkeypatch.setattr(replay_module, "replay_file", killed_on_the_third)
    forked(monkeypatch)
    with pytest.raises(replay_module.ProcessLost, match="--jobs 1"):
        replay_journal(directory, jobs=2)
    assert main(["replay", str(directory), "--json", "--jobs", "2"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and "a replay process ended" in err


def test_a_forged_record_after_which_every_event_differs_keeps_the_report_bounded(journal, tmp_path):
    """A checkpoint sealed again naming a shoe of 300 KB: every later event differs, each carrying that id. The
    report keeps the first DIFFERENCES_KEPT differences, without the events of those over DIFFERENCE_BYTES, and
    counts the rest."""
    import tracemalloc

    from shoed.table.replay import DIFFERENCE_BYTES, DIFFERENCES_KEPT

    directory, files = copy(journal, tmp_path)
    second = files[2].name

    def change(name: str, record: dict) -> dict:
        if name == second and record.get("kind") == "checkpoint":
            record["state"]["shoe"]["id"] = "A" * 300_000
        return record

    reseal(directory, change)
    tracemalloc.start()
    result = both(directory)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert not result.identical and len(result.differences) == DIFFERENCES_KEPT and result.more_differences > 0
    over = [d for d in result.differences if d.left_out]
    assert over and all(d.left_out > DIFFERENCE_BYTES and d.recorded == d.replayed == [] for d in over)
    assert peak < 200_000_000
    proc = run_shoed("replay", str(directory))
    assert proc.returncode == 1 and f"and {result.more_differences:,} more differences" in proc.stdout
    assert len(proc.stdout) < 200_000


def test_a_checkpoint_within_a_file_is_a_difference(journal, tmp_path):
    """shoed writes a checkpoint only as a shoe file's first record: one sealed in the middle of a file (claiming
    coup 0, no alarms, the table unlocked) is no record of shoed's, and the replay says so."""
    from shoed.journal import chain as ch

    directory, files = copy(journal, tmp_path)
    for mark in directory.glob("*.verified"):
        mark.unlink()
    prev = ch.GENESIS
    for path in files:
        records = [json.loads(line) for line in path.read_bytes().splitlines()]
        if path == files[2]:
            forged = dict(records[1])  # the file's own checkpoint, again, forty records on
            records.insert(40, forged)
        lines = []
        for jseq, record in enumerate(records, start=1):
            sealed, line = ch.seal({k: v for k, v in record.items() if k not in ch.RESERVED}, jseq, prev, None)
            prev = sealed["hash"]
            lines.append(line)
        path.chmod(0o644)
        path.write_bytes(b"".join(lines))
    result = both(directory)
    assert not result.identical
    difference = next(d for d in result.differences if d.file == files[2].name)
    assert difference.jseq == 41 and difference.reason.startswith("a checkpoint within a file")
