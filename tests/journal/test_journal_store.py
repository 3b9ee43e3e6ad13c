"""Writing the journal, and recovering it on opening.

table-game-standards.md item 19: "Write, flush and fsync before acknowledging
or publishing; fsync the directory after creating or renaming a file; an fsync
error is fatal, not retried." Item 20: "On start, a torn last record is
truncated and logged; corruption in the middle of a journal locks the table
instead." Item 2: after a crash "a card is never lost or counted twice".
"""

from __future__ import annotations

import errno
import os
import selectors
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from shoed.journal import GENESIS, FileOps, Journal, JournalError, JournalLocked, RecordError, iter_records, verify
from harness.processes import as_nobody


def lines_of(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines(keepends=True)


def only_file(directory: Path) -> Path:
    (path,) = sorted(directory.glob("*.jsonl"))
    return path


# -- writing -----------------------------------------------------------------


def test_append_returns_the_record_as_written_and_it_verifies(tmp_path, clock):
    with Journal(tmp_path, "T1", clock=clock) as journal:
        path = journal.open_shoe("S1")
        written = [journal.append({"kind": "reading", "card": card}) for card in ("9H", "TD", "KS")]
        assert [r["jseq"] for r in written] == [2, 3, 4]  # line 1 is the file's header
        assert journal.head == written[-1]["hash"] and journal.jseq == 4
    assert list(iter_records(path))[1:] == written
    report = verify(tmp_path)
    assert report.ok and report.records == 4 and report.files == 1 and report.head == written[-1]["hash"]


def test_each_record_links_to_the_one_before(tmp_path, clock):
    with Journal(tmp_path, "T1", clock=clock) as journal:
        journal.open_shoe("S1")
        a = journal.append({"kind": "reading"})
        b, c = journal.append_many([{"kind": "reading"}, {"kind": "event", "event": {"kind": "coup_result"}}])
    header = next(iter(iter_records(tmp_path)))
    assert header["prev"] == GENESIS  # the first record of a table's journal
    assert (a["prev"], b["prev"], c["prev"]) == (header["hash"], a["hash"], b["hash"])
    assert len(lines_of(only_file(tmp_path))) == 4


def test_files_are_one_per_shoe_and_chain_across(tmp_path, clock):
    with Journal(tmp_path, "T1", clock=clock) as journal:
        first = journal.open_shoe("S1")
        last_of_first = journal.append({"kind": "reading"})
        second = journal.open_shoe("S2")
        assert journal.file_seq == 2 and journal.shoe == "S2" and journal.path == second
    assert first.name == "T1-000001-20240501T200100Z-S1.jsonl"
    assert second.name == "T1-000002-20240501T200200Z-S2.jsonl"
    header = next(iter(iter_records(second)))
    assert header["kind"] == "journal_file" and header["prev"] == last_of_first["hash"]
    assert header["prev_file"] == first.name and header["shoe"] == "S2" and header["table"] == "T1"
    assert first.stat().st_mode & 0o222 == 0  # a finished shoe is made read-only
    assert verify(tmp_path).ok


def test_a_record_needs_an_open_shoe(tmp_path):
    with Journal(tmp_path, "T1") as journal, pytest.raises(JournalError, match="open_shoe"):
        journal.append({"kind": "reading"})


def test_a_refused_record_writes_nothing(tmp_path, clock):
    with Journal(tmp_path, "T1", clock=clock) as journal:
        journal.open_shoe("S1")
        before = only_file(tmp_path).read_bytes()
        with pytest.raises(RecordError):
            journal.append_many([{"kind": "reading"}, {"kind": "reading", "t": float("nan")}])
        assert only_file(tmp_path).read_bytes() == before
        assert journal.append({"kind": "reading"})["jseq"] == 2  # and the journal goes on


def test_one_writer_per_directory(tmp_path):
    with Journal(tmp_path, "T1"), pytest.raises(JournalError, match="in use"):
        Journal(tmp_path, "T1")


@pytest.mark.parametrize("table", ["", "-T1", "T 1", "T/1", "x" * 65])
def test_table_ids_are_safe_in_file_names(tmp_path, table):
    with pytest.raises(ValueError, match="table id"):
        Journal(tmp_path, table)


def test_reopening_goes_on_where_it_stopped(tmp_path, clock):
    with Journal(tmp_path, "T1", clock=clock) as journal:
        journal.open_shoe("S1")
        last = journal.append({"kind": "reading"})
    with Journal(tmp_path, "T1", clock=clock) as journal:
        assert journal.recovery == []
        assert (journal.head, journal.jseq, journal.shoe) == (last["hash"], 2, "S1")
        assert journal.append({"kind": "reading"})["prev"] == last["hash"]
    assert verify(tmp_path).records == 3


def test_tables_sharing_a_directory_keep_their_own_chains(tmp_path, clock):
    for table in ("T1", "T2"):
        with Journal(tmp_path / "j", table, clock=clock) as journal:
            journal.open_shoe("S1")
            journal.append({"kind": "reading", "table": table})
    report = verify(tmp_path / "j")
    assert report.ok and report.files == 2 and set(report.heads) == {"T1", "T2"}


def test_a_keyed_journal_reopens_only_with_its_secret(tmp_path, clock):
    secret = bytes(range(32))
    with Journal(tmp_path, "T1", secret, clock=clock) as journal:
        journal.open_shoe("S1")
        journal.append({"kind": "reading"})
    with pytest.raises(JournalLocked, match="keyed"):
        Journal(tmp_path, "T1", clock=clock)
    with pytest.raises(JournalLocked, match="wrong secret"):
        Journal(tmp_path, "T1", b"not the secret", clock=clock)
    with Journal(tmp_path, "T1", secret, clock=clock) as journal:
        assert journal.keyed and journal.jseq == 2


# -- recovery: a torn last record is cut off (item 20) -------------------------


def _journal_of(tmp_path, clock, n=4):
    with Journal(tmp_path, "T1", clock=clock) as journal:
        journal.open_shoe("S1")
        for i in range(n):
            journal.append({"kind": "reading", "seq": i})
        return journal.head


TORN = [
    # (what the crash left after the intact records, why it is a torn write)
    (lambda rec: rec[: len(rec) // 2], "half a record, no newline"),
    (lambda rec: rec[:-1], "the whole record but its newline"),
    (lambda rec: b"\x00" * 4096, "a page of zeros: the size reached the disk, the data did not"),
    (lambda rec: rec + rec[:30], "one record of a group intact, the next torn"),
]


@pytest.mark.parametrize("tail, why", TORN, ids=[t[1] for t in TORN])
def test_a_torn_last_record_is_cut_off_kept_and_reported(tmp_path, clock, tail, why):
    head = _journal_of(tmp_path, clock)
    path = only_file(tmp_path)
    intact = path.read_bytes()
    with Journal(tmp_path, "T1", clock=clock) as journal:  # the next record, as the crash left it
        journal.append({"kind": "reading", "seq": "torn"})
        mark = (tmp_path / "T1.verified").read_bytes()  # a crash: no clean close moves the mark on
    (tmp_path / "T1.verified").write_bytes(mark)
    record = lines_of(path)[-1]
    path.write_bytes(intact + tail(record))
    rest = tail(record)
    if rest.startswith(record):  # the group's first record made it whole
        intact, rest = intact + record, rest[len(record) :]
    with Journal(tmp_path, "T1", clock=clock) as journal:
        (note,) = journal.recovery
        assert note.action == "truncated_torn_tail"
        assert note.offset == len(intact) and note.removed_bytes == len(rest)
        assert (tmp_path / note.kept_as).read_bytes() == rest  # cut off, not lost
        assert path.read_bytes() == intact
        if intact.endswith(record):
            assert journal.head != head
        else:
            assert journal.head == head
        journal.append({"kind": "reading", "seq": "after"})
    assert verify(tmp_path).ok
    assert list(iter_records(tmp_path))[-1]["seq"] == "after"


def test_a_tail_torn_twice_at_the_same_offset_keeps_both(tmp_path, clock):
    # A crash mid-write, the restart cuts it; the first record after the restart is torn at the same
    # offset. The first evidence file (read-only) is neither overwritten nor in the way of the start.
    _journal_of(tmp_path, clock)
    path = only_file(tmp_path)
    intact = path.read_bytes()
    kept = []
    for torn in (b'{"kind":"reading","seq":"fir', b'{"kind":"reading","seq":"second, longer'):
        path.chmod(0o644)
        path.write_bytes(intact + torn)
        with Journal(tmp_path, "T1", clock=clock) as journal:
            (note,) = journal.recovery
            kept.append((note.kept_as, torn))
        assert path.read_bytes() == intact
    assert kept[0][0] != kept[1][0]
    for name, torn in kept:
        assert (tmp_path / name).read_bytes() == torn
        assert not (tmp_path / name).stat().st_mode & 0o222  # read-only, as the first one
    assert verify(tmp_path).ok


def test_an_unfinished_shoe_file_is_removed_and_reported(tmp_path, clock):
    _journal_of(tmp_path, clock)
    (tmp_path / ".T1-000002-20240501T210000Z-S2.jsonl.tmp").write_bytes(b'{"alg":"sha')
    with Journal(tmp_path, "T1", clock=clock) as journal:
        assert [n.action for n in journal.recovery] == ["removed_unfinished_file"]
        assert journal.file_seq == 1
    assert not list(tmp_path.glob(".*.tmp"))


# -- recovery: corruption in the middle locks the table (item 20) -------------


def _flip(path: Path, offset: int) -> None:
    data = bytearray(path.read_bytes())
    data[offset] ^= 0x01
    path.write_bytes(bytes(data))


LOCKED = [
    # (how the journal was damaged, the line the lock names, reason)
    ("a byte flipped in record 3 of 5", 3, "hash does not match"),
    ("a digit changed in the complete last record", 5, "hash does not match"),
    ("the complete last record replaced by garbage", 5, "not valid JSON"),
    ("a byte flipped in the header", 1, "hash does not match"),
    ("the last record repeated", 6, "jseq 5 where 6 is due"),
    ("record 3 removed", 3, "jseq 4 where 3 is due"),
    ("records 3 and 4 swapped", 3, "jseq 4 where 3 is due"),
]


@pytest.mark.parametrize("damage, line, reason", LOCKED, ids=[c[0] for c in LOCKED])
def test_corruption_in_the_middle_locks_and_changes_nothing(tmp_path, clock, damage, line, reason):
    _journal_of(tmp_path, clock)
    path = only_file(tmp_path)
    lines = lines_of(path)
    if damage.startswith("a byte flipped in record 3"):
        _flip(path, len(b"".join(lines[:2])) + 20)
    elif damage.startswith("a digit changed in the complete last record"):
        # Not a torn write (the line is whole, with its newline): it is never cut.
        at = lines[-1].index(b'"seq":3') + 6
        path.write_bytes(b"".join(lines[:-1]) + lines[-1][:at] + b"7" + lines[-1][at + 1 :])
    elif damage.startswith("the complete last record replaced"):
        path.write_bytes(b"".join(lines[:-1]) + b"x" * (len(lines[-1]) - 1) + b"\n")
    elif damage.startswith("a byte flipped in the header"):
        _flip(path, 20)
    elif damage.startswith("the last record repeated"):
        path.write_bytes(b"".join(lines + lines[-1:]))
    elif damage.startswith("record 3 removed"):
        path.write_bytes(b"".join(lines[:2] + lines[3:]))
    else:
        path.write_bytes(b"".join(lines[:2] + [lines[3], lines[2]] + lines[4:]))
    before = path.read_bytes()
    with pytest.raises(JournalLocked) as locked:
        Journal(tmp_path, "T1", clock=clock)
    assert (locked.value.bad.file, locked.value.bad.line) == (path.name, line)
    assert reason in locked.value.bad.reason
    assert path.read_bytes() == before and not list(tmp_path.glob("*.torn-*"))
    with pytest.raises(JournalLocked):  # the error state survives a restart (item 3)
        Journal(tmp_path, "T1", clock=clock)


def test_a_bad_record_with_intact_ones_after_it_is_named_with_them(tmp_path, clock):
    _journal_of(tmp_path, clock)
    path = only_file(tmp_path)
    _flip(path, len(b"".join(lines_of(path)[:3])) + 5)
    with pytest.raises(JournalLocked, match="line 5 after it is intact") as locked:
        Journal(tmp_path, "T1", clock=clock)
    assert locked.value.bad.jseq == 4


def test_a_missing_shoe_file_locks(tmp_path, clock):
    with Journal(tmp_path, "T1", clock=clock) as journal:
        for shoe in ("S1", "S2", "S3"):
            journal.open_shoe(shoe)
            journal.append({"kind": "reading"})
    os.unlink(next(tmp_path.glob("T1-000002-*")))
    with pytest.raises(JournalLocked, match="file 3 follows file 1: a file is missing"):
        Journal(tmp_path, "T1", clock=clock)


def test_a_damaged_previous_file_locks(tmp_path, clock):
    with Journal(tmp_path, "T1", clock=clock) as journal:
        for shoe in ("S1", "S2"):
            journal.open_shoe(shoe)
            journal.append({"kind": "reading"})
    first = next(tmp_path.glob("T1-000001-*"))
    first.chmod(0o644)
    _flip(first, len(first.read_bytes()) - 10)  # even its last record: only the latest file can be torn
    with pytest.raises(JournalLocked) as locked:
        Journal(tmp_path, "T1", clock=clock)
    assert locked.value.bad.file == first.name and locked.value.bad.line == 2


def test_older_files_moved_away_leave_the_chain_anchored(tmp_path, clock):
    with Journal(tmp_path, "T1", clock=clock) as journal:
        for shoe in ("S1", "S2", "S3"):
            journal.open_shoe(shoe)
            journal.append({"kind": "reading"})
    for old in ("T1-000001-*", "T1-000002-*"):
        os.unlink(next(tmp_path.glob(old)))
    with Journal(tmp_path, "T1", clock=clock) as journal:
        # The mark listed them: their going is said in the journal (table.started), and only once.
        notes = journal.recovery
        assert [n.action for n in notes] == ["verified_files_gone", "chain_anchored"]
        assert "files 1 to 2" in notes[0].detail and notes[0].file.startswith("T1-000001-")
    with Journal(tmp_path, "T1", clock=clock) as journal:
        assert [n.action for n in journal.recovery] == ["chain_anchored"]
    report = verify(tmp_path)
    assert report.ok and "not from the genesis value" in report.notes[0]


def test_a_verified_mark_taken_away_is_said_at_the_next_start(tmp_path, clock):
    with Journal(tmp_path, "T1", clock=clock) as journal:
        journal.open_shoe("S1")
        journal.append({"kind": "reading"})
    (tmp_path / "T1.verified").unlink()
    report = verify(tmp_path)
    assert report.ok and any("no verified mark" in note for note in report.notes)
    with Journal(tmp_path, "T1", clock=clock) as journal:
        assert [n.action for n in journal.recovery] == ["mark_missing"]
    with Journal(tmp_path, "T1", clock=clock) as journal:
        assert journal.recovery == []  # written again at that start


# -- write and fsync errors are fatal and leave the file consistent (item 19) --


class FailingOps(FileOps):
    """os.write and os.fsync, failing as a full or broken disk does."""

    def __init__(self, write_budget=None, fsync_error=None):
        self.write_budget = write_budget  # bytes accepted before ENOSPC; None: no limit
        self.fsync_error = fsync_error

    def write(self, fd, data):
        if self.write_budget is None:
            return os.write(fd, data)
        if self.write_budget == 0:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        n = os.write(fd, data[: self.write_budget])  # a short write, as the kernel gives on a full disk
        self.write_budget -= n
        return n

    def fsync(self, fd):
        if self.fsync_error is not None:
            raise OSError(self.fsync_error, os.strerror(self.fsync_error))
        os.fsync(fd)


@pytest.mark.parametrize(
    "ops, message",
    [
        (FailingOps(write_budget=0), "No space left"),
        (FailingOps(write_budget=150), "No space left"),  # part of the group reached the file
        (FailingOps(fsync_error=errno.EIO), "Input/output error"),
        (FailingOps(fsync_error=errno.ENOSPC), "No space left"),
    ],
)
def test_a_failed_append_leaves_no_half_record_and_ends_the_journal(tmp_path, clock, ops, message):
    with Journal(tmp_path, "T1", clock=clock) as journal:
        journal.open_shoe("S1")
        journal.append({"kind": "reading"})
        path, head = journal.path, journal.head
        before = path.read_bytes()
        journal._ops = ops
        with pytest.raises(JournalError, match=message):
            journal.append_many([{"kind": "reading", "pad": "x" * 100}] * 3)
        assert path.read_bytes() == before and journal.head == head
        journal._ops = FileOps()
        with pytest.raises(JournalError, match="failed earlier"):  # fatal: not retried
            journal.append({"kind": "reading"})
    with Journal(tmp_path, "T1", clock=clock) as journal:
        assert journal.recovery == [] and journal.head == head
    assert verify(tmp_path).ok


def test_a_failed_shoe_opening_leaves_no_file(tmp_path, clock):
    with (
        Journal(tmp_path, "T1", clock=clock, ops=FailingOps(write_budget=0)) as journal,
        pytest.raises(JournalError, match="No space left"),
    ):
        journal.open_shoe("S1")
    assert os.listdir(tmp_path) == []


@pytest.fixture
def small_disk(tmp_path):
    """A real 64 KiB filesystem (tmpfs), so that the disk really fills up."""
    mnt = tmp_path / "small"
    mnt.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mnt)], capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here ({done.stderr.strip()}); the injected ENOSPC tests cover this")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=False)


@pytest.mark.parametrize("group", [1, 3])
def test_a_full_disk_raises_and_the_file_stays_consistent(small_disk, clock, group):
    written = 0
    with Journal(small_disk / "j", "T1", clock=clock) as journal:
        journal.open_shoe("S1")
        with pytest.raises(JournalError, match="No space left"):
            for i in range(10_000):
                journal.append_many([{"kind": "reading", "seq": i, "pad": "x" * 200}] * group)
                written += group
        path, head = journal.path, journal.head
        with pytest.raises(JournalError):
            journal.append({"kind": "reading"})
    assert written > 0
    assert path.stat().st_size == len(path.read_bytes()) and path.read_bytes().endswith(b"\n")
    report = verify(small_disk / "j")
    assert report.ok and report.records == written + 1 and report.head == head
    (small_disk / "j" / path.name).chmod(0o644)
    with Journal(small_disk / "j", "T1", clock=clock) as journal:  # the restart finds nothing to repair
        assert [n.action for n in journal.recovery if n.action != "mark_not_updated"] == []
        assert journal.head == head


# -- a crash at any moment: nothing acknowledged is lost (item 2) ---------------


def test_every_prefix_of_a_journal_recovers_to_its_complete_records(tmp_path, clock):
    """A power cut can leave the file cut at any byte after the header: opening
    it keeps exactly the whole records before the cut, and never locks."""
    source = tmp_path / "source"
    with Journal(source, "T1", clock=clock) as journal:
        journal.open_shoe("S1")
        journal.append({"kind": "reading", "card": "9H"})
        journal.append_many([{"kind": "reading", "card": "TD"}, {"kind": "event", "event": {"kind": "coup_result"}}])
    path = only_file(source)
    data = path.read_bytes()
    ends = [i + 1 for i, b in enumerate(data) if b == ord("\n")]
    for cut in range(ends[0], len(data) + 1):
        directory = tmp_path / f"cut{cut}"
        directory.mkdir()
        (directory / path.name).write_bytes(data[:cut])
        with Journal(directory, "T1", clock=clock) as journal:
            whole = max(e for e in ends if e <= cut)
            assert journal.jseq == ends.index(whole) + 1
            cuts = [n.removed_bytes for n in journal.recovery if n.action != "mark_missing"]  # (the file alone)
            assert cuts == ([cut - whole] if cut > whole else [])
            journal.append({"kind": "reading", "card": "after"})
        assert verify(directory).ok


CHILD = """
import sys
from shoed.journal import Journal
journal = Journal(sys.argv[1], "T1")
journal.open_shoe("S1")
for i in range(100_000):
    journal.append_many([{"kind": "reading", "seq": i}, {"kind": "event", "event": {"kind": "card", "seq": i}}])
    print(journal.jseq, flush=True)  # acknowledged only now: the records are on disk
"""


def test_a_killed_writer_loses_nothing_it_acknowledged(tmp_path):
    child = subprocess.Popen([sys.executable, "-c", CHILD, str(tmp_path)], stdout=subprocess.PIPE, text=True)
    try:
        acked = 0
        sel = selectors.DefaultSelector()
        sel.register(child.stdout, selectors.EVENT_READ)
        deadline = time.monotonic() + 60
        while acked < 200 and time.monotonic() < deadline:
            if sel.select(timeout=5):
                line = child.stdout.readline()
                if not line:
                    break  # the writer died on its own: the assertion below says so
                acked = int(line)
        os.kill(child.pid, signal.SIGKILL)
    finally:
        child.kill()
        child.wait(timeout=30)
        child.stdout.close()
    assert acked >= 200
    with Journal(tmp_path, "T1") as journal:  # the lock died with the writer
        assert journal.jseq >= acked
    assert verify(tmp_path).ok


def test_a_journal_directory_its_user_cannot_write_is_refused_when_opened():
    """A directory the daemon's user may read but not write (its shoe file there still writable)
    opened, and the table stopped at the next shoe, when that shoe's file could not be made.
    Refused at once instead. Run as an unprivileged user (root writes anywhere): as this one
    where it is not root, else in a child that gives up root before opening."""
    import shutil
    import tempfile

    directory = Path(tempfile.mkdtemp(prefix="shoed-readonly-"))
    try:
        directory.chmod(0o555 if os.geteuid() != 0 else 0o755)  # root's: others may read and enter, not write

        def opened() -> str:
            try:
                Journal(directory, "t1").close()
            except JournalError as exc:
                return str(exc)
            return "opened"

        said = as_nobody(opened)
        assert said.startswith(f"cannot write in the journal directory {directory}: it is not writable by the "
                               "user this runs as (uid "), said
    finally:
        directory.chmod(0o700)
        shutil.rmtree(directory)


@pytest.mark.parametrize("content, why", [
    (b"x\n", "holds 1 bytes"),
    (b"5ec7e7 kept off the box\n", "holds 23 bytes"),
    (b"s" * 32, "holds one byte repeated"),
    (b"\0" * 64, "holds one byte repeated"),
    (b"  " + b"a" * 31 + b"\n", "holds 31 bytes"),  # surrounding whitespace is not the secret
])
def test_a_weak_secret_file_cannot_key_new_records(tmp_path, content, why):
    from shoed.journal import SecretFileError, read_secret_file

    path = tmp_path / "journal.secret"
    path.write_bytes(content)
    with pytest.raises(SecretFileError) as refused:
        read_secret_file(path, strong=True)
    message = str(refused.value)
    assert message.startswith(str(path)) and why in message and "at least 32" in message
    assert "\n" not in message
    # A reader of a journal keyed earlier takes the secret it was keyed with.
    assert read_secret_file(path) == content.strip()


def test_a_secret_of_32_random_bytes_or_64_hex_digits_keys_new_records(tmp_path):
    from shoed.journal import read_secret_file

    path = tmp_path / "journal.secret"
    hex_secret = os.urandom(32).hex().encode()
    path.write_bytes(hex_secret + b"\n")
    assert read_secret_file(path, strong=True) == hex_secret
    path.write_bytes(bytes(range(65, 97)))
    assert read_secret_file(path, strong=True) == bytes(range(65, 97))
