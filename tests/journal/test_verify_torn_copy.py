"""A journal copied after a power cut, before the daemon restarted: its last line is a torn write.

`journal verify` and `journal recall` tell it by the rule start-up cuts by (chain.torn_tail): a
last line without its newline, past the verified mark, is a write never acknowledged (a note, exit
0, `torn` in the JSON); a complete line that fails, bytes the mark covers, or a cut line with an
intact one after it stay corruption (exit 1)."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from harness.processes import run_shoed
from harness.records import write_journal
from shoed.journal import Journal, JournalLocked


def shoe_files(directory: Path, table: str = "t1") -> list[Path]:
    return sorted(directory.glob(f"{table}-*.jsonl"))


@pytest.fixture(scope="module")
def crashed(tmp_path_factory) -> Path:
    """A table that started, dealt on for six records and lost its power: the verified mark is where
    the start left it, the records after it are whole (each was fsync'd before it was acknowledged)."""
    src = tmp_path_factory.mktemp("crashed") / "journal"
    write_journal(src, shoes=1, seed=5)
    last = shoe_files(src)[-1]
    lines = last.read_bytes().splitlines(keepends=True)
    last.chmod(0o644)
    last.write_bytes(b"".join(lines[:-6]))
    (src / "t1.verified").unlink()
    Journal(src, "t1").close()  # a start: the mark covers the file up to here
    with open(last, "ab") as f:
        f.write(b"".join(lines[-6:]))
    assert run_shoed("journal", "verify", str(src)).returncode == 0
    return src


def copy_of(src: Path, tmp_path: Path) -> tuple[Path, Path, list[bytes]]:
    dst = tmp_path / "copy"
    shutil.copytree(src, dst)
    last = shoe_files(dst)[-1]
    last.chmod(0o644)
    return dst, last, last.read_bytes().splitlines(keepends=True)


def verify_json(path: Path) -> tuple[int, dict]:
    done = run_shoed("journal", "verify", str(path), "--json")
    return done.returncode, json.loads(done.stdout)


def test_a_copy_whose_last_line_was_cut_by_a_power_cut_verifies_with_a_note(crashed, tmp_path):
    copy, last, lines = copy_of(crashed, tmp_path)
    whole = b"".join(lines[:-1])
    cut = lines[-1][: len(lines[-1]) // 2]  # the write cut mid-line: no newline
    last.write_bytes(whole + cut)

    done = run_shoed("journal", "verify", str(copy))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "NOT INTACT" not in done.stdout and done.stdout.startswith("intact:")
    note = next(line for line in done.stderr.splitlines() if last.name in line)
    assert note.startswith("note: table t1: the last line of") and "cut by a stop" in note
    assert "never acknowledged" in note and "next start" in note and f"{last.name}.torn-{len(whole)}" in note

    rc, report = verify_json(copy)
    assert rc == 0 and report["ok"] is True and report["first_bad"] is None
    torn = report["torn"]["t1"]
    assert Path(torn["file"]).name == last.name
    assert (torn["offset"], torn["bytes"], torn["line"]) == (len(whole), len(cut), len(lines))
    assert torn["sha256"] == hashlib.sha256(cut).hexdigest()
    assert report["tails"]["t1"]["jseq"] == len(lines) - 1  # the torn line is not counted

    # What the daemon's start then does, by the same rule: it cuts exactly those bytes and keeps them.
    with Journal(copy, "t1") as journal:
        (note,) = [n for n in journal.recovery if n.action == "truncated_torn_tail"]
    assert (note.offset, note.removed_bytes, note.removed_sha256) == (torn["offset"], torn["bytes"], torn["sha256"])
    assert (copy / note.kept_as).read_bytes() == cut
    rc, after = verify_json(copy)
    assert rc == 0 and after["torn"] == {} and after["head"] == report["head"]


def test_recall_reads_a_torn_copy_to_its_last_intact_record(crashed, tmp_path):
    copy, last, lines = copy_of(crashed, tmp_path)
    last.write_bytes(b"".join(lines[:-1]) + lines[-1][:40])

    done = run_shoed("journal", "recall", str(copy), "--last", "2")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "STOPPED" not in done.stdout and "coup" in done.stdout
    assert "cut by a stop" in done.stderr
    shown = json.loads(run_shoed("journal", "recall", str(copy), "--last", "2", "--json").stdout)
    assert shown["stopped_at"] is None and len(shown["coups"]) == 2
    assert shown["torn"]["offset"] == len(b"".join(lines[:-1])) and shown["torn"]["bytes"] == 40


def test_a_digit_changed_in_a_complete_last_line_is_corruption(crashed, tmp_path):
    copy, last, lines = copy_of(crashed, tmp_path)
    line = bytearray(lines[-1])
    at = line.index(b'"jseq":') - 2  # the digit before it (the end of the events' last number)
    while not chr(line[at]).isdigit():
        at -= 1
    line[at] = ord("1") if line[at] != ord("1") else ord("2")
    last.write_bytes(b"".join(lines[:-1]) + bytes(line))

    rc, report = verify_json(copy)
    assert rc == 1 and report["ok"] is False and report["torn"] == {}
    assert report["first_bad"]["line"] == len(lines)
    done = run_shoed("journal", "verify", str(copy))
    assert done.returncode == 1 and "NOT INTACT" in done.stdout and "cut by a stop" not in done.stderr


def test_a_cut_line_with_an_intact_line_after_it_is_corruption(crashed, tmp_path):
    copy, last, lines = copy_of(crashed, tmp_path)
    last.write_bytes(b"".join(lines[:-2]) + lines[-2][:50] + lines[-1])

    rc, report = verify_json(copy)
    assert rc == 1 and report["ok"] is False and report["torn"] == {}
    assert report["first_bad"]["line"] == len(lines) - 1
    assert run_shoed("journal", "recall", str(copy)).returncode == 1


def test_a_cut_in_bytes_the_verified_mark_covers_is_corruption(tmp_path):
    journal = tmp_path / "journal"
    write_journal(journal, shoes=1, seed=5)  # a clean stop: the mark covers every byte
    last = shoe_files(journal)[-1]
    lines = last.read_bytes().splitlines(keepends=True)
    last.chmod(0o644)
    last.write_bytes(b"".join(lines[:-1]) + lines[-1][:60])

    rc, report = verify_json(journal)
    assert rc == 1 and report["ok"] is False and report["torn"] == {}
    assert report["first_bad"]["line"] == len(lines)
    assert run_shoed("journal", "recall", str(journal)).returncode == 1
    with pytest.raises(JournalLocked):  # start-up holds it the same: nothing is cut
        Journal(journal, "t1")


def test_the_tables_after_a_torn_one_are_still_proved(crashed, tmp_path):
    copy, last, lines = copy_of(crashed, tmp_path)
    last.write_bytes(b"".join(lines[:-1]) + lines[-1][:30])
    with Journal(copy, "t2") as other:  # a second table's journal beside it
        other.open_shoe("S1")
        other.append({"kind": "reading", "value": 1234})
        other.append({"kind": "reading", "value": 5678})
    rc, report = verify_json(copy)
    assert rc == 0 and set(report["torn"]) == {"t1"} and set(report["heads"]) == {"t1", "t2"}

    t2 = shoe_files(copy, "t2")[-1]
    t2.chmod(0o644)
    t2.write_bytes(t2.read_bytes().replace(b"1234", b"1235"))
    rc, report = verify_json(copy)
    assert rc == 1 and Path(report["first_bad"]["file"]).name == t2.name


def test_replay_of_a_torn_copy_is_identical_with_the_same_note(crashed, tmp_path):
    copy, last, lines = copy_of(crashed, tmp_path)
    whole = b"".join(lines[:-1])
    last.write_bytes(whole + lines[-1][:40])
    for jobs in ("1", "2"):
        done = run_shoed("replay", str(copy), "--json", "--jobs", jobs)
        assert done.returncode == 0, done.stdout[-600:] + done.stderr[-600:]
        report = json.loads(done.stdout)
        assert report["identical"] is True and report["corrupt"] is None
        assert report["torn"]["t1"]["offset"] == len(whole) and report["torn"]["t1"]["bytes"] == 40
        assert "cut by a stop" in done.stderr
    # a complete last line changed stays corruption for replay too
    last.write_bytes(whole + lines[-1].replace(b'"jseq":', b'"jseq": ', 1))
    assert run_shoed("replay", str(copy), "--json").returncode == 1
