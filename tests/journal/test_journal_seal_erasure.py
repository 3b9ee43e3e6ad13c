"""A sealed journal's old keys are overwritten in place, never left in a replaced file's blocks:
the sealing state is one file (same inode) of two slots, and a crash between the two writes of a
key moving on leaves a journal that starts and verifies. Real files, real fsync; one test on a
loop-mounted ext4 image reads the raw disk for old keys, as the audit did."""

from __future__ import annotations

import json
import os
import shutil
import subprocess

import pytest

from shoed.journal import Journal, JournalError, verify
from shoed.journal.seal import (BLANK_SLOT, SEAL_FILE_BYTES, SLOT_BYTES, Keys, SealState, advance, first_key,
                                key_id, parse_seal_file)
from shoed.journal.store import FileOps
from tests.conftest import run_shoed

VERIFY_KEY = bytes(range(100, 132))


def epoch_key(epoch: int) -> bytes:
    return advance(first_key(VERIFY_KEY), 0, epoch)


def new_sealed(directory):
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "T1.seal").write_bytes(SealState(key_id(VERIFY_KEY), 0, first_key(VERIFY_KEY)).to_bytes())
    return directory / "T1.seal"


def deal(journal: Journal, shoe: str) -> None:
    journal.open_shoe(shoe)
    for n in range(3):
        journal.append({"kind": "reading", "shoe": shoe, "card": "9H", "n": n})


def assert_only_key_of(data: bytes, epoch: int) -> None:
    """The state file holds the key of `epoch` and of no epoch before it, in hex or raw."""
    for earlier in range(epoch):
        key = epoch_key(earlier)
        assert key.hex().encode() not in data and key not in data, f"the key of epoch {earlier} is still there"
    assert data.count(epoch_key(epoch).hex().encode()) == 1


def test_after_every_shoe_file_the_state_is_the_same_file_with_no_earlier_key(tmp_path, clock):
    seal = new_sealed(tmp_path / "j")
    inode = seal.stat().st_ino
    with Journal(tmp_path / "j", "T1", clock=clock) as journal:
        for n in range(1, 6):
            deal(journal, f"S{n}")
            st = seal.stat()
            assert (st.st_ino, st.st_nlink, st.st_size) == (inode, 1, SEAL_FILE_BYTES)
            assert_only_key_of(seal.read_bytes(), n)
    with Journal(tmp_path / "j", "T1", clock=clock) as journal:  # a restart opens it in place too
        deal(journal, "S6")
    assert seal.stat().st_ino == inode and seal.stat().st_mode & 0o777 == 0o600
    data = seal.read_bytes()
    assert_only_key_of(data, 6)
    assert json.loads(data)["epoch"] == 6  # one slot in use: the file is one JSON document
    assert not [p.name for p in (tmp_path / "j").iterdir() if "seal" in p.name and p.name != "T1.seal"]
    assert verify(tmp_path / "j", Keys(verify_key=VERIFY_KEY)).ok


class CrashOps(FileOps):
    """Stops the sealing state's second write (the old key overwritten): `how` = "raise" (an I/O
    error), "exit" (the process ends there: a crash) or "torn" (the first write stops half way)."""

    def __init__(self, how: str):
        self.how, self.armed = how, False

    def pwrite(self, fd: int, data, offset: int) -> int:
        if self.armed:
            if self.how == "torn" and bytes(data) != BLANK_SLOT:
                os.pwrite(fd, bytes(data)[:40], offset)  # the JSON cut short (its padding was spaces already)
                os.fdatasync(fd)
                raise OSError(5, "torn in the middle of the new key's slot")
            if self.how != "torn" and bytes(data) == BLANK_SLOT:
                if self.how == "exit":
                    os._exit(0)
                raise OSError(5, "the old key's slot could not be overwritten")
        return super().pwrite(fd, data, offset)


@pytest.mark.parametrize("how", ["raise", "exit", "torn"])
def test_a_crash_between_the_two_writes_leaves_a_journal_that_starts_and_verifies(tmp_path, clock, how):
    d = tmp_path / "j"
    seal = new_sealed(d)
    ops = CrashOps(how)

    def crash_in_shoe_3() -> None:
        journal = Journal(d, "T1", clock=clock, ops=ops)
        deal(journal, "S1")
        deal(journal, "S2")
        ops.armed = True
        with pytest.raises(JournalError):
            journal.open_shoe("S3")
        journal.close()

    if how == "exit":  # a real process that ends between the two writes, as a crash would end it
        pid = os.fork()
        if pid == 0:
            try:
                crash_in_shoe_3()
            finally:
                os._exit(3)  # never reached when the crash came where it should
        assert os.waitpid(pid, 0)[1] == 0
    else:
        crash_in_shoe_3()
    left = parse_seal_file(seal.read_bytes(), "state")
    assert left.stale and left.state.epoch == (2 if how == "torn" else 3)
    with Journal(d, "T1", clock=clock) as journal:
        assert journal.file_seq == 3 and journal.sealed
        journal.append({"kind": "reading", "card": "AH"})
        deal(journal, "S4")
    data = seal.read_bytes()
    assert_only_key_of(data, 4)
    assert not parse_seal_file(data, "state").stale
    report = verify(d, Keys(verify_key=VERIFY_KEY))
    assert report.ok and report.sealed, report.first_bad


def test_a_state_file_of_one_line_is_rewritten_in_place(tmp_path, clock):
    # The form written before the two slots: one JSON line, read and rewritten in the same file.
    d = tmp_path / "j"
    d.mkdir()
    body = {"kind": "shoed-journal-seal", "format": 1, "key_id": key_id(VERIFY_KEY), "epoch": 0,
            "key": first_key(VERIFY_KEY).hex()}
    seal = d / "T1.seal"
    seal.write_text(json.dumps(body, sort_keys=True) + "\n")
    seal.chmod(0o600)
    inode = seal.stat().st_ino
    with Journal(d, "T1", clock=clock) as journal:
        assert seal.stat().st_size == SEAL_FILE_BYTES and seal.stat().st_ino == inode
        assert parse_seal_file(seal.read_bytes(), "state").slot is not None
        deal(journal, "S1")
    assert seal.stat().st_ino == inode
    assert_only_key_of(seal.read_bytes(), 1)
    assert verify(d, Keys(verify_key=VERIFY_KEY)).ok


def test_a_slot_of_two_key_pairs_or_no_intact_slot_is_refused(tmp_path, clock):
    d = tmp_path / "j"
    seal = new_sealed(d)
    other = SealState(key_id(bytes(32)), 1, advance(first_key(bytes(32)), 0, 1))
    seal.write_bytes(seal.read_bytes()[:SLOT_BYTES] + other.slot())
    with pytest.raises(JournalError, match="two key pairs"):
        Journal(d, "T1", clock=clock)
    seal.write_bytes(b"\0" * SEAL_FILE_BYTES)
    with pytest.raises(JournalError, match="no intact slot"):
        Journal(d, "T1", clock=clock)


def _ext4_image_or_skip(tmp_path):
    """A loop-mounted ext4 file system of 32 MiB, or a skip saying why there cannot be one here."""
    if os.geteuid() != 0:
        pytest.skip("not root: cannot mount a loop device (CI runs this as root)")
    for tool in ("mkfs.ext4", "mount", "umount"):
        if shutil.which(tool) is None:
            pytest.skip(f"{tool} is not installed (Debian: e2fsprogs, mount)")
    image, mnt = tmp_path / "disk.img", tmp_path / "mnt"
    with open(image, "wb") as f:
        f.truncate(32 * 1024 * 1024)
    made = subprocess.run(["mkfs.ext4", "-q", "-F", str(image)], capture_output=True, text=True)
    if made.returncode != 0:
        pytest.skip(f"mkfs.ext4 failed: {made.stderr.strip()}")
    mnt.mkdir()
    mounted = subprocess.run(["mount", "-o", "loop", str(image), str(mnt)], capture_output=True, text=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot loop-mount an image here (a container without loop devices?): {mounted.stderr.strip()}")
    return image, mnt


def test_no_earlier_key_is_on_the_raw_disk_of_an_ext4_file_system(tmp_path, clock):
    image, mnt = _ext4_image_or_skip(tmp_path)
    try:
        j = mnt / "journal"
        made = run_shoed("keys", "journal", "--journal", str(j), "--table", "T1", "--verify-key", "-")
        assert made.returncode == 0, made.stderr
        verify_key = bytes.fromhex(made.stdout.strip())  # the key only on stdout, never on the disk
        shoes = 5
        with Journal(j, "T1", clock=clock) as journal:
            for n in range(1, shoes + 1):
                deal(journal, f"S{n}")
        vk = tmp_path / "verify.key"  # off the image
        vk.write_text(verify_key.hex() + "\n")
        checked = run_shoed("journal", "verify", str(j), "--verify-key", str(vk))
        assert checked.returncode == 0, checked.stdout + checked.stderr
    finally:
        subprocess.run(["umount", str(mnt)], check=True)
    raw = image.read_bytes()
    keys = [advance(first_key(verify_key), 0, n) for n in range(shoes + 1)]
    assert keys[shoes].hex().encode() in raw  # the search finds what is there
    on_disk = [n for n in range(shoes) if keys[n].hex().encode() in raw or keys[n] in raw]
    assert on_disk == [], f"the keys of epochs {on_disk} are on the disk"
    assert not (verify_key.hex().encode() in raw or verify_key in raw), "the verify key is on the disk"
