"""Proving a journal: every hash and every link, file to file.

table-game-standards.md item 18: "Hash chain each record to the one before
it; a chain alone can be rewritten wholesale by whoever can write the file, so
keep the chain head somewhere else too (published in events, or keyed with a
secret kept off the box)." Item 5: corruption is found, never guessed past.
"""

from __future__ import annotations

import json

import itertools
import os
from pathlib import Path

import pytest

from shoed.journal import GENESIS, Journal, JournalCorrupt, JournalLocked, iter_records, verify
from shoed.journal import chain as ch
from shoed.journal.replay import replay_journal

SECRET = bytes.fromhex("00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff")


def files_of(directory: Path) -> list[Path]:
    return sorted(directory.glob("*.jsonl"))


def writable(path: Path) -> Path:
    path.chmod(0o644)  # finished shoes are read-only; the tests play the tamperer
    return path


def test_an_intact_journal_verifies(build):
    directory = build(shoes=3, coups=4)
    report = verify(directory)
    assert report.ok and report.first_bad is None
    assert report.files == 3 and report.records == 3 * (1 + 4 * 3)
    assert report.anchors == {"T1": GENESIS}
    assert report.head == list(iter_records(directory))[-1]["hash"]
    for path in files_of(directory):  # each file also verifies on its own
        assert verify(path).ok


def test_records_come_back_in_order_across_files(build):
    records = list(iter_records(build(shoes=2, coups=2)))
    assert [r["jseq"] for r in records] == [1, 2, 3, 4, 5, 6, 7] * 2
    assert [r["shoe"] for r in records if r["kind"] == "journal_file"] == ["S1", "S2"]
    assert all(b["prev"] == a["hash"] for a, b in itertools.pairwise(records))


def test_a_flipped_byte_anywhere_fails_at_exactly_that_record(build):
    """Every byte of a small journal, flipped in turn: verify names the file and
    line that hold it (a flipped newline joins two lines: the first is named)."""
    directory = build(shoes=2, coups=1)
    originals = {path: path.read_bytes() for path in files_of(directory)}
    for path in originals:
        writable(path)
    checked = 0
    for path, data in originals.items():
        for offset in range(len(data)):
            line = data.count(b"\n", 0, offset) + 1
            altered = bytearray(data)
            altered[offset] ^= 0x01
            path.write_bytes(bytes(altered))
            report = verify(directory)
            assert not report.ok, f"{path.name} byte {offset} flipped, not caught"
            assert (Path(report.first_bad.file).name, report.first_bad.line) == (path.name, line), (
                f"{path.name} byte {offset} (line {line}): {report.first_bad}"
            )
            checked += 1
        path.write_bytes(data)
    assert checked == sum(len(d) for d in originals.values())
    assert verify(directory).ok


@pytest.mark.parametrize("mask", [0x20, 0x80, 0xFF])
def test_every_record_of_a_journal_with_one_byte_changed_fails_there(build, mask):
    directory = build(shoes=2, coups=2)
    for path in files_of(directory):
        data = writable(path).read_bytes()
        start = 0
        for number, line in enumerate(data.splitlines(keepends=True), 1):
            altered = bytearray(data)
            altered[start + len(line) // 2] ^= mask
            path.write_bytes(bytes(altered))
            bad = verify(directory).first_bad
            assert (Path(bad.file).name, bad.line) == (path.name, number)
            start += len(line)
        path.write_bytes(data)


def test_a_keyed_journal_does_not_verify_without_its_secret(build):
    directory = build(secret=SECRET)
    assert verify(directory, SECRET).ok
    first = files_of(directory)[0]
    no_key = verify(directory)
    assert not no_key.ok and (Path(no_key.first_bad.file), no_key.first_bad.line) == (first, 1)
    assert "keyed" in no_key.first_bad.reason
    wrong = verify(directory, b"a guess")
    assert not wrong.ok and wrong.first_bad.line == 1 and "wrong secret" in wrong.first_bad.reason


def test_a_plain_journal_given_a_secret_says_so(build):
    report = verify(build(), SECRET)
    assert not report.ok and "not keyed" in report.first_bad.reason


def _reseal(directory: Path, secret=None, change=lambda rec: rec):
    """Rewrite a journal wholesale, as someone who can write the files would."""
    prev = GENESIS
    for path in files_of(directory):
        out = []
        for rec in iter_records(path, secret):
            body = change({k: v for k, v in rec.items() if k not in ch.RESERVED})
            sealed, line = ch.seal(body, rec["jseq"], prev, None)
            prev = sealed["hash"]
            out.append(line)
        writable(path).write_bytes(b"".join(out))


def test_a_chain_rewritten_wholesale_verifies_but_not_against_the_head_kept_elsewhere(build):
    directory = build()
    published = verify(directory).head  # what the daemon put in its events

    def swap_winner(rec):
        if rec.get("kind") == "event":
            rec["event"]["winner"] = "banker"
        return rec

    marks = {p.name: p.read_bytes() for p in directory.glob("*.verified")}
    _reseal(directory, change=swap_winner)
    # The box's verified mark, left as it was, lists each finished file's size and SHA-256: verify holds the
    # files to it, as start-up does.
    assert any(json.loads(m)["files"] for m in marks.values())
    held = verify(directory)
    assert not held.ok and "its bytes changed since the box verified it" in held.first_bad.reason
    for name in marks:  # whoever can write the files drops the mark (an unkeyed one is made again as easily)
        (directory / name).unlink()
    report = verify(directory)
    assert report.ok  # a plain chain alone cannot tell ...
    assert report.head != published  # ... the head kept elsewhere can


def test_a_keyed_chain_cannot_be_rewritten_without_the_secret(build):
    directory = build(secret=SECRET)
    _reseal(directory, SECRET)  # resealed with plain SHA-256: the tamperer has no secret
    report = verify(directory, SECRET)
    assert not report.ok and report.first_bad.line == 1


HISTORY_DAMAGE = [
    # (what happened to the files, which file (of those left) holds the first bad record, its line, reason)
    ("the middle shoe file deleted", 2, 1, "prev does not link to the last record of the previous file"),
    ("the last record of a finished shoe removed", 2, 1, "prev does not link to the last record of the previous file"),
    ("two shoe files renamed into each other's place", 1, 1, "header says file 2, the file name 1"),
    ("a file renamed to another table", 1, 1, "header says table 'T1'"),
]


@pytest.mark.parametrize("damage, file_index, line, reason", HISTORY_DAMAGE, ids=[d[0] for d in HISTORY_DAMAGE])
def test_damage_to_the_history_of_files_is_caught(build, damage, file_index, line, reason):
    directory = build(shoes=3, coups=1)
    paths = files_of(directory)
    if damage.startswith("the middle shoe file deleted"):
        os.unlink(paths[1])
    elif damage.startswith("the last record"):
        data = writable(paths[0]).read_bytes()
        writable(paths[0]).write_bytes(data[: data.rstrip(b"\n").rfind(b"\n") + 1])
    elif damage.startswith("two shoe files"):
        a, b = paths[0], paths[1]
        tmp = directory / "swap"
        a.rename(tmp)
        b.rename(a)
        tmp.rename(b)
    else:
        paths[0].rename(directory / paths[0].name.replace("T1-", "T0-"))
    report = verify(directory)
    assert not report.ok
    bad_file = Path(report.first_bad.file).name
    expected = sorted(p.name for p in directory.glob("*.jsonl"))[file_index - 1]
    assert (bad_file, report.first_bad.line) == (expected, line)
    assert reason in report.first_bad.reason


@pytest.mark.parametrize("part, new", [("shoe", "S9"), ("time", "20240501T230000Z")])
def test_the_last_file_renamed_is_caught_by_verify_and_at_start(build, part, new):
    # The last file has no successor whose header names it: its own header's shoe and opening time
    # (which the name is made of) must match the name.
    directory = build(shoes=3, coups=1)
    last = files_of(directory)[-1]
    table, seq, utc, shoe = last.name[:-len(".jsonl")].split("-")
    renamed = directory / "-".join([table, seq, new if part == "time" else utc, new if part == "shoe" else shoe])
    last.rename(renamed.with_suffix(".jsonl"))
    report = verify(directory)
    assert not report.ok and report.first_bad.line == 1 and "the file was renamed" in report.first_bad.reason
    with pytest.raises(JournalLocked, match="the file was renamed"):
        Journal(directory, "T1").close()


@pytest.mark.parametrize("secret", [None, b"a table secret"])
def test_verify_says_what_start_up_refuses_records_removed_below_the_mark_and_an_altered_mark(build, secret):
    # The verified mark covers the last file up to where the journal was closed: records cut
    # from below it were acknowledged. Start-up refuses such a journal; verify must not call it intact.
    directory = build(shoes=2, coups=2, secret=secret)
    last = writable(files_of(directory)[-1])
    lines = last.read_bytes().splitlines(keepends=True)
    last.write_bytes(b"".join(lines[:-3]))  # three whole records gone: no torn line left
    report = verify(directory, secret)
    assert not report.ok and "records were removed" in report.first_bad.reason
    replayed = replay_journal(directory, secret)
    assert replayed.corrupt is not None and "records were removed" in replayed.corrupt.reason
    with pytest.raises(JournalLocked, match="acknowledged records were removed"):
        Journal(directory, "T1", secret).close()
    last.write_bytes(b"".join(lines))
    assert verify(directory, secret).ok
    mark = directory / "T1.verified"
    altered = json.loads(mark.read_text())
    altered["jseq"] = int(f"1{altered['jseq']}")  # made to cover more, its MAC as it was
    mark.write_text(json.dumps(altered))
    report = verify(directory, secret)
    assert not report.ok and report.first_bad.reason == "the verified mark is not authentic"
    assert replay_journal(directory, secret).corrupt.reason == "the verified mark is not authentic"


def test_a_file_not_named_like_a_journal_file_fails(build):
    directory = build()
    (directory / "notes.jsonl").write_text("{}\n")
    report = verify(directory)
    assert not report.ok and report.first_bad.file.endswith("notes.jsonl")


def test_evidence_and_other_files_are_not_journal_files(build):
    directory = build()
    (directory / "T1-000001-20240501T200100Z-S1.jsonl.torn-812").write_bytes(b"\x00" * 10)
    (directory / "README").write_text("journal of table 1")
    assert verify(directory).ok


def test_a_missing_path_is_an_error(tmp_path):
    with pytest.raises(FileNotFoundError):
        verify(tmp_path / "nowhere")


def test_an_empty_directory_verifies_as_nothing(tmp_path):
    report = verify(tmp_path)
    assert report.ok and report.files == 0 and report.records == 0 and report.head is None


def test_reading_yields_what_verifies_then_says_where_it_stops(build):
    directory = build(shoes=2, coups=2)
    second = writable(files_of(directory)[1])
    data = second.read_bytes()
    third_line = len(b"".join(data.splitlines(keepends=True)[:2]))
    second.write_bytes(data[:third_line] + b"X" + data[third_line + 1 :])
    got = []
    with pytest.raises(JournalCorrupt) as corrupt:
        got.extend(iter_records(directory))
    assert len(got) == 7 + 2
    assert corrupt.value.bad.line == 3 and Path(corrupt.value.bad.file) == second


def test_a_journal_being_written_verifies_at_every_step(tmp_path, clock):
    with Journal(tmp_path, "T1", clock=clock) as journal:
        journal.open_shoe("S1")
        for i in range(5):
            journal.append({"kind": "reading", "seq": i})
            report = verify(tmp_path)
            assert report.ok and report.head == journal.head
