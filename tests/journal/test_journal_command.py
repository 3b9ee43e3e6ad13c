"""`shoed journal verify` and `shoed journal recall` at the command line.

Exit codes are a contract for surveillance scripts: verify 0 intact, 1 not
intact (the first bad record printed), 2 no journal at the path; recall 0, or
1 when it stopped at a record that is not intact (what came before is shown).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from shoed.cli import main

SECRET = b"5ec7e7 kept off the box"


def damage(directory: Path, file_index: int, line: int) -> Path:
    path = sorted(directory.glob("*.jsonl"))[file_index]
    path.chmod(0o644)
    lines = path.read_bytes().splitlines(keepends=True)
    lines[line - 1] = lines[line - 1].replace(b'"kind":"', b'"kind":"x', 1)
    path.write_bytes(b"".join(lines))
    return path


def test_verify_an_intact_journal(build, capsys):
    directory = build()
    assert main(["journal", "verify", str(directory)]) == 0
    said = capsys.readouterr()
    assert said.out.startswith("intact: 2 files, 20 records; table T1 head ")
    # What "intact" proves of an unkeyed journal, said where it is read.
    assert "note: table T1: an unkeyed journal (sha256) is proved against accidents only" in said.err
    directory = build(secret=SECRET, directory=directory.parent / "keyed")
    (directory.parent / "s").write_bytes(SECRET)
    assert main(["journal", "verify", "--secret-file", str(directory.parent / "s"), str(directory)]) == 0
    assert "unkeyed" not in capsys.readouterr().err


def test_verify_names_the_first_bad_record(build, capsys):
    directory = build(shoes=2, coups=3)
    path = damage(directory, 1, 6)
    assert main(["journal", "verify", str(directory)]) == 1
    out = capsys.readouterr().out
    assert f"NOT INTACT at {path} line 6 (jseq 6): hash does not match the record" in out
    assert "15 records before it are intact" in out


def test_verify_one_file_as_json(build, capsys):
    path = min(build().glob("*.jsonl"))
    assert main(["journal", "verify", "--json", str(path)]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["ok"] and report["records"] == 10 and report["first_bad"] is None and len(report["head"]) == 64


def test_verify_a_keyed_journal_with_its_secret_file(build, tmp_path, capsys):
    directory = build(secret=SECRET)
    secret_file = tmp_path / "table.secret"
    secret_file.write_bytes(SECRET + b"\n")  # read as the daemon reads journal_secret_file
    assert main(["journal", "verify", "--secret-file", str(secret_file), str(directory)]) == 0
    assert main(["journal", "verify", str(directory)]) == 1
    said = capsys.readouterr().out
    assert "its secret is needed" in said and "NOT VERIFIED (a key is needed, nothing found wrong)" in said
    assert "NOT INTACT" not in said
    assert main(["journal", "recall", "--secret-file", str(secret_file), str(directory)]) == 0


@pytest.mark.parametrize("action", ["verify", "recall"])
def test_a_missing_path_is_exit_2(tmp_path, capsys, action):
    assert main(["journal", action, str(tmp_path / "nowhere")]) == 2
    assert "no journal at" in capsys.readouterr().err


@pytest.mark.parametrize("args", [["journal", "verify"], ["journal", "verify", "--json"], ["replay"],
                                  ["report", "--list"]], ids=["verify", "verify-json", "replay", "report-list"])
def test_a_directory_without_a_journal_is_exit_2_not_a_pass(tmp_path, capsys, args):
    """A wrong path must not read as "intact" or "identical" to a surveillance script."""
    (tmp_path / "README").write_text("not a journal")
    assert main([*args, str(tmp_path)]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and len(captured.err.strip().splitlines()) == 1
    assert "no journal files at" in captured.err or "no shoe was opened" in captured.err


def test_an_empty_secret_file_is_exit_2(build, tmp_path, capsys):
    secret_file = tmp_path / "table.secret"
    secret_file.write_text("\n")
    assert main(["journal", "verify", "--secret-file", str(secret_file), str(build())]) == 2
    assert "is empty" in capsys.readouterr().err


def test_recall_prints_the_last_ten_coups_in_order(build, capsys):
    directory = build(shoes=2, coups=7)
    assert main(["journal", "recall", str(directory)]) == 0
    lines = capsys.readouterr().out.splitlines()
    expected = [f"shoe S1 coup {c}:" for c in range(5, 8)] + [f"shoe S2 coup {c}:" for c in range(1, 8)]
    assert [line.split("  ")[0] for line in lines] == expected
    assert lines[-1] == "shoe S2 coup 7:  Player 9H KS (9)  Banker TD 3C 4H (7)  player wins, natural"


def test_recall_as_json(build, capsys):
    directory = build(shoes=1, coups=5)
    assert main(["journal", "recall", "--last", "2", "--json", str(directory)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [c["coup"] for c in out["coups"]] == [4, 5] and out["stopped_at"] is None
    assert out["coups"][0]["draw_order"] == ["9H", "TD", "KS", "3C", "4H"]


def test_recall_on_a_corrupted_journal_shows_what_verifies(build, capsys):
    directory = build(shoes=1, coups=5)
    path = damage(directory, 0, 8)  # coup 3's reading
    assert main(["journal", "recall", str(directory)]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert [line.split(":")[0] for line in lines[:-1]] == ["shoe S1 coup 1", "shoe S1 coup 2"]
    assert lines[-1].startswith(f"STOPPED: the journal is not intact at {path} line 8")


def test_recall_notes_an_older_file_written_since_it_was_verified(build, capsys):
    # Recall reads the newest files only: an older one changed since the verified mark is named
    # (its inode, size, mtime and ctime, as start-up compares them), and verify proves it.
    import shutil

    directory = build(shoes=4, coups=3)
    assert main(["journal", "recall", "--last", "1", "--json", str(directory)]) == 0
    assert json.loads(capsys.readouterr().out)["notes"] == []
    copy = directory.parent / "copy"
    shutil.copytree(directory, copy)  # a faithful copy: other inodes and times, the same bytes
    assert main(["journal", "recall", "--last", "1", "--json", str(copy)]) == 0
    assert json.loads(capsys.readouterr().out)["notes"] == []
    path = damage(directory, 1, 4)
    assert main(["journal", "recall", "--last", "1", "--json", str(directory)]) == 0
    notes = json.loads(capsys.readouterr().out)["notes"]
    assert len(notes) == 1 and f"the first {path.name}" in notes[0] and "shoed journal verify" in notes[0]
    assert main(["journal", "verify", str(directory)]) == 1


def test_recall_stops_where_the_events_seq_breaks_as_verify_does(tmp_path, capsys):
    # Two coups' records swapped and the chain sealed again: every hash and link intact, the events'
    # seq out of order. Verify names it; recall stops there too (what comes before is shown).
    from harness.records import reseal, write_journal

    directory = tmp_path / "journal"
    write_journal(directory, shoes=1, seed=3, odds=False)
    last = sorted(directory.glob("*.jsonl"))[-1].name
    steps = [json.loads(x) for x in (directory / last).read_bytes().splitlines()]
    a, b = [i for i, r in enumerate(steps) if r["kind"] == "step"
            and any(e["kind"] == "coup.result" for e in r["events"])][:2]
    seen = []

    def swap(name, record):
        if name != last:
            return record
        seen.append(record)
        n = len(seen) - 1
        other = b if n == a else a if n == b else None
        return record if other is None else {k: v for k, v in steps[other].items() if k not in ("hash", "prev", "jseq")}

    reseal(directory, swap)
    assert main(["journal", "verify", str(directory)]) == 1
    assert "seq" in capsys.readouterr().out
    assert main(["journal", "recall", str(directory)]) == 1
    assert "STOPPED" in capsys.readouterr().out


def test_recall_needs_a_table_when_several_share_a_directory(build, tmp_path, capsys):
    directory = build(table="T1")
    build(table="T2", directory=directory)
    assert main(["journal", "recall", str(directory)]) == 2
    assert "several tables here (T1, T2)" in capsys.readouterr().err
    assert main(["journal", "recall", "--table", "T2", "--last", "1", str(directory)]) == 0


@pytest.mark.parametrize("last", ["0", "-3", "ten"])
def test_recall_wants_a_positive_count(build, last, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["journal", "recall", "--last", last, str(build())])
    assert exit_.value.code == 2


def test_the_installed_command(build):
    directory = build(shoes=1, coups=1)
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2]))
    done = subprocess.run(
        [sys.executable, "-m", "shoed", "journal", "verify", str(directory)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env=env,
    )
    assert done.returncode == 0 and done.stdout.startswith("intact: 1 file, 4 records")


def test_report_reads_a_sealed_journal_with_its_verify_key(tmp_path):
    """docs/journal.md: a sealed journal verifies only with its verify key; `shoed report` takes it
    as `journal verify` and `replay` do (it refused the journal as "not intact")."""
    from harness.processes import run_shoed
    from tests.test_replay import write_journal
    from tests.test_table import dealer_inputs

    j, vk = tmp_path / "j", tmp_path / "verify.key"
    run_shoed("keys", "journal", "--journal", str(j), "--table", "t1", "--verify-key", str(vk), check=True)
    write_journal(j, dealer_inputs(coups=3))
    without = run_shoed("report", str(j), "--list")
    assert without.returncode == 2 and "its verify key is needed" in without.stderr
    listed = run_shoed("report", str(j), "--list", "--verify-key", str(vk))
    assert listed.returncode == 0 and listed.stdout.endswith("\t3 coups\n"), listed.stderr
    page = tmp_path / "shoe.html"
    drawn = run_shoed("report", str(j), "--html", str(page), "--verify-key", str(vk))
    assert drawn.returncode == 0 and 'data-stat="results">3<' in page.read_text(), drawn.stderr
    both = run_shoed("report", str(j), "--list", "--verify-key", str(vk), "--secret-file", str(vk))
    assert both.returncode == 2 and "not both" in both.stderr
