"""The forward-secure journal, the verified mark, seq continuity and non-regular files: real files, real fsync."""

from __future__ import annotations

import json
import os
import shutil
import threading
from pathlib import Path

import pytest

from shoed.journal import Journal, JournalLocked, verify
from shoed.journal import chain as ch
from shoed.journal.seal import Keys, SealError, SealState, advance, first_key, key_id
from tests.conftest import run_shoed

VERIFY_KEY = bytes(range(32))
OTHER_KEY = bytes(range(1, 33))


def sealed_journal(directory: Path, clock, shoes: int = 3, verify_key: bytes = VERIFY_KEY) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "T1.seal").write_bytes(SealState(key_id(verify_key), 0, first_key(verify_key)).to_bytes())
    with Journal(directory, "T1", clock=clock) as journal:
        assert journal.sealed
        for s in range(1, shoes + 1):
            journal.open_shoe(f"S{s}")
            for c in range(3):
                journal.append({"kind": "reading", "shoe": f"S{s}", "card": "9H", "n": c})
    return directory


def files_of(directory: Path) -> list[Path]:
    return sorted(directory.glob("T1-*.jsonl"))


def test_a_sealed_journal_verifies_only_with_its_verify_key(tmp_path, clock):
    d = sealed_journal(tmp_path / "j", clock)
    report = verify(d, Keys(verify_key=VERIFY_KEY))
    assert report.ok and report.sealed and report.records == 12
    assert any("is found by the witness only" in note and files_of(d)[-1].name in note for note in report.notes)
    headers = [json.loads(f.read_bytes().splitlines()[0]) for f in files_of(d)]
    assert [(h["alg"], h["epoch"], h["key_id"]) for h in headers] == [
        ("fss-hmac-sha256", n, key_id(VERIFY_KEY)) for n in (1, 2, 3)]
    assert "verify key is needed" in verify(d).first_bad.reason
    assert "not with this key" in verify(d, Keys(verify_key=OTHER_KEY)).first_bad.reason
    assert "give its verify key" in verify(d, Keys(secret=b"a static secret")).first_bad.reason


def test_the_box_keeps_only_the_current_key_and_cannot_reseal_older_files(tmp_path, clock):
    d = sealed_journal(tmp_path / "j", clock)
    state = SealState.from_bytes((d / "T1.seal").read_bytes(), "state")
    assert state.epoch == 3 and (d / "T1.seal").stat().st_mode & 0o777 == 0o600
    with pytest.raises(SealError):
        advance(state.key, 3, 2)
    # Whoever holds the box re-seals file 2 with the only key there is: verify names it.
    second = files_of(d)[1]
    second.chmod(0o644)
    lines = second.read_bytes().splitlines()
    records = [json.loads(x) for x in lines]
    prev, out = records[0]["prev"], []
    for rec in records:
        body = {k: v for k, v in rec.items() if k not in ch.RESERVED}
        if body.get("card") == "9H":
            body["card"] = "AH"
        sealed, line = ch.seal(body, rec["jseq"], prev, state.key)
        prev = sealed["hash"]
        out.append(line)
    second.write_bytes(b"".join(out))
    report = verify(d, Keys(verify_key=VERIFY_KEY))
    assert not report.ok and report.first_bad.file == str(second) and report.first_bad.line == 1


def test_a_removed_last_file_or_sealing_state_refuses_and_verify_reports_it(tmp_path, clock):
    d = sealed_journal(tmp_path / "j", clock)
    copy = tmp_path / "copy"
    shutil.copytree(d, copy)
    last = files_of(d)[-1]
    last.chmod(0o644)
    last.unlink()
    with pytest.raises(JournalLocked, match="sealing key is at epoch 3 but the journal ends with file 2"):
        Journal(d, "T1", clock=clock)
    assert "removed from the end" in verify(d, Keys(verify_key=VERIFY_KEY)).first_bad.reason
    (copy / "T1.seal").unlink()  # without its key the box cannot go on: refused, not started unsealed
    with pytest.raises(JournalLocked, match="verify key is needed"):
        Journal(copy, "T1", clock=clock)
    report = verify(copy, Keys(verify_key=VERIFY_KEY))
    assert report.ok and any("no sealing state" in note for note in report.notes)


def test_a_crash_between_the_new_file_and_the_new_key_recovers(tmp_path, clock):
    d = sealed_journal(tmp_path / "j", clock, shoes=2)
    old_state = (d / "T1.seal").read_bytes()
    old_mark = (d / "T1.verified").read_bytes()
    with Journal(d, "T1", clock=clock) as journal:
        journal.open_shoe("S3")
        journal.append({"kind": "reading"})
    # The crash left the file and the mark of epoch 3, but the key still at epoch 2.
    (d / "T1.seal").write_bytes(old_state)
    with Journal(d, "T1", clock=clock) as journal:
        assert journal.file_seq == 3 and journal.jseq == 2
        journal.append({"kind": "reading"})
    assert SealState.from_bytes((d / "T1.seal").read_bytes(), "s").epoch == 3
    # ... or the key and the mark both still at epoch 2.
    (d / "T1.seal").write_bytes(old_state)
    (d / "T1.verified").write_bytes(old_mark)
    with Journal(d, "T1", clock=clock) as journal:
        assert journal.file_seq == 3
    assert verify(d, Keys(verify_key=VERIFY_KEY)).ok


def test_the_verified_mark_is_authenticated(tmp_path, clock, build):
    d = build(shoes=2)
    mark = json.loads((d / "T1.verified").read_bytes())
    assert [f[0] for f in mark["files"]] == [1] and mark["file_seq"] == 2
    mark["offset"] -= 100  # made to cover less, so a cut below the true end would pass
    (d / "T1.verified").write_text(json.dumps(mark))
    with pytest.raises(JournalLocked, match="not authentic"):
        Journal(d, "T1")
    secret = b"a static table secret"
    k = build(shoes=2, secret=secret, directory=tmp_path / "k")
    with pytest.raises(JournalLocked, match="wrong secret"):
        Journal(k, "T1", b"another secret")


def test_a_finished_file_changed_since_it_was_verified_locks(tmp_path, build):
    d = build(shoes=3)
    first = files_of(d)[0]
    first.chmod(0o644)
    first.write_bytes(first.read_bytes() + b"")  # same bytes, new mtime: still the verified file
    with Journal(d, "T1"):
        pass
    data = bytearray(first.read_bytes())
    at = data.index(b'"card":"9H"') + 9
    data[at] = ord("8")
    first.write_bytes(bytes(data))
    with pytest.raises(JournalLocked) as locked:
        Journal(d, "T1")
    assert locked.value.bad.file == first.name and "hash does not match" in locked.value.bad.reason


def test_a_fifo_named_like_a_journal_file_does_not_hang_anything(tmp_path, build):
    d = build(shoes=2)
    fifo = d / "T1-000003-20240501T210000Z-S3.jsonl"
    os.mkfifo(fifo)
    outcome: dict = {}

    def attempt():
        outcome["verify"] = verify(d)
        try:
            Journal(d, "T1")
        except JournalLocked as exc:
            outcome["locked"] = exc

    worker = threading.Thread(target=attempt, daemon=True)
    worker.start()
    worker.join(10)
    if worker.is_alive():
        with open(fifo, "wb"):  # unblock it, then fail
            pass
        pytest.fail("reading a FIFO named like a journal file hung")
    assert "not a regular file" in outcome["verify"].first_bad.reason
    assert "not a regular file" in str(outcome["locked"])


def test_a_journal_file_holed_to_gigabytes_is_refused_without_reading_it(tmp_path, build):
    # A hole (no disk taken) makes the current file 3 GB: start-up, verify and replay refuse it in
    # one line, under a 1 GiB address-space limit, never reading it into memory.
    import resource
    import subprocess
    import sys

    from shoed.journal.store import JOURNAL_FILE_MAX

    d = build(shoes=2)
    current = files_of(d)[-1]
    os.truncate(current, 3 * 1024**3)
    assert JOURNAL_FILE_MAX < 3 * 1024**3

    def limited() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (1024**3, 1024**3))

    code = ("import sys\nfrom shoed.journal import Journal, JournalLocked\n"
            f"try:\n    Journal({str(d)!r}, 'T1')\nexcept JournalLocked as exc:\n    print(exc)\n")
    env = {**os.environ, "PYTHONPATH": os.getcwd()}
    for argv in (["-c", code], ["-m", "shoed", "journal", "verify", str(d)], ["-m", "shoed", "replay", str(d)]):
        proc = subprocess.run([sys.executable, *argv], capture_output=True, text=True, timeout=60, env=env,
                              preexec_fn=limited)
        said = proc.stdout + proc.stderr
        assert "Traceback" not in said and "MemoryError" not in said, said
        assert "no journal file is" in said, said


def test_verify_finds_a_seq_used_twice(tmp_path):
    from harness.records import reseal, write_journal

    d = tmp_path / "j"
    write_journal(d, shoes=1, seed=5, odds=False)
    assert verify(d).ok
    done = []

    def change(name, record):
        if record["kind"] == "step" and record["events"] and len(done) < 1 and record["events"][0]["seq"] > 40:
            record["events"][0]["seq"] -= 5  # the tamperer's re-hashed chain stays intact
            done.append(record["events"][0]["seq"])
        return record

    reseal(d, change)
    report = verify(d)
    assert not report.ok and f"event seq {done[0]} follows {done[0] + 4}: seq reused" == report.first_bad.reason


def test_verify_json_only_grows(tmp_path, build):
    d = build(shoes=2)
    done = run_shoed("journal", "verify", str(d), "--json")
    report = json.loads(done.stdout)
    assert {"ok", "records", "files", "first_bad", "head", "heads", "anchors", "notes"} <= set(report)
    assert report["tails"]["T1"]["file_seq"] == 2 and report["tails"]["T1"]["hash"] == report["head"]
    assert report["sealed"] is False


def test_keys_journal_makes_the_pair_and_never_overwrites(tmp_path, clock):
    j, vk = tmp_path / "j", tmp_path / "surveillance.key"
    done = run_shoed("keys", "journal", "--journal", str(j), "--table", "T1", "--verify-key", str(vk), "--json")
    assert done.returncode == 0, done.stderr
    made = json.loads(done.stdout)
    assert made["seal_file"] == str(j / "T1.seal") and vk.stat().st_mode & 0o777 == 0o600
    assert (j / "T1.seal").stat().st_size == 8192 and (j / "T1.seal").stat().st_mode & 0o777 == 0o600
    assert "warning: the verify key" in done.stderr and "the box's own disk" in done.stderr  # tmp_path: on the box
    with Journal(j, "T1", clock=clock) as journal:
        journal.open_shoe("S1")
        journal.append({"kind": "reading"})
    ok = run_shoed("journal", "verify", str(j), "--verify-key", str(vk))
    assert ok.returncode == 0 and "sealed and checked with the verify key" in ok.stdout
    again = run_shoed("keys", "journal", "--journal", str(j), "--table", "T1", "--verify-key", str(tmp_path / "x"))
    assert again.returncode == 2 and "already" in again.stderr and len(again.stderr.splitlines()) == 1
    bad = run_shoed("journal", "verify", str(j), "--verify-key", str(j / "T1.seal"))
    assert bad.returncode == 2 and "not a journal verification key" in bad.stderr


def test_verify_with_the_key_finds_records_cut_below_the_mark(tmp_path, clock):
    d = sealed_journal(tmp_path / "j", clock)  # closed cleanly: the mark is at the journal's end
    last = files_of(d)[-1]
    last.chmod(0o644)
    lines = last.read_bytes().splitlines(keepends=True)
    last.write_bytes(b"".join(lines[:-2]))  # two whole records gone: the chain itself still holds
    report = verify(d, Keys(verify_key=VERIFY_KEY))
    assert not report.ok and "records were removed" in report.first_bad.reason
    assert verify(d, Keys(verify_key=VERIFY_KEY)).records == 10
    with pytest.raises(JournalLocked, match="acknowledged records were removed"):
        Journal(d, "T1", clock=clock)


def _edit(path: Path, **fields) -> None:
    path.chmod(0o644)
    path.write_text(json.dumps(json.loads(path.read_text()) | fields))


def _edit_slot(path: Path, **fields) -> None:
    """The sealing state's slot in use changed, its checksum made again (anyone can make it)."""
    import hashlib

    from shoed.journal.seal import parse_seal_file

    found = parse_seal_file(path.read_bytes(), "state")
    body = json.loads(path.read_bytes()) | fields
    body.pop("sum")
    body["sum"] = hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":")).encode()).hexdigest()
    text = json.dumps(body, sort_keys=True, separators=(",", ":")).encode()
    with open(path, "r+b") as f:
        f.seek(found.slot * 4096)
        f.write(text + b" " * (4095 - len(text)) + b"\n")


@pytest.mark.parametrize("epoch", [10**12, 3_000_000, -1, "3"])
def test_an_epoch_out_of_reach_is_refused_at_once(tmp_path, clock, epoch):
    # The mark's and the sealing state's epochs are read before anything proves them: a key is
    # never walked past EPOCH_MAX (a walk to 10**12 took hours), and no value is a traceback.
    d = sealed_journal(tmp_path / "j", clock)
    (tmp_path / "verify.key").write_text(VERIFY_KEY.hex() + "\n")
    marked = tmp_path / "marked"
    shutil.copytree(d, marked)
    _edit(marked / "T1.verified", epoch=epoch)
    with pytest.raises(JournalLocked, match="verified mark"):
        Journal(marked, "T1", clock=clock)
    proc = run_shoed("journal", "verify", str(marked), "--verify-key", str(tmp_path / "verify.key"), timeout=20)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr and "verified mark" in proc.stdout, proc
    state = tmp_path / "state"
    shutil.copytree(d, state)
    _edit_slot(state / "T1.seal", epoch=epoch)
    with pytest.raises(Exception, match="sealing state .*not a journal file's number") as raised:
        Journal(state, "T1", clock=clock)
    assert raised.type.__name__ in ("JournalError", "JournalLocked", "SealError")
    proc = run_shoed("journal", "verify", str(state), "--verify-key", str(tmp_path / "verify.key"), timeout=20)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr and "sealing state" in proc.stdout, proc
    assert "not a journal file's number" in proc.stdout


def test_a_file_numbered_out_of_reach_is_refused_at_once(tmp_path, clock):
    # A file named in sequence 10**12 whose header says that epoch: its key is not walked to.
    d = sealed_journal(tmp_path / "j", clock)
    (tmp_path / "verify.key").write_text(VERIFY_KEY.hex() + "\n")
    last = files_of(d)[-1]
    header = json.loads(last.read_bytes().splitlines()[0])
    body = {k: v for k, v in header.items() if k not in ch.RESERVED} | {"file_seq": 10**12, "epoch": 10**12,
                                                                         "prev_file": last.name}
    _, line = ch.seal(body, 1, json.loads(last.read_bytes().splitlines()[-1])["hash"], b"\0" * 32)
    (d / last.name.replace("-000003-", f"-{10**12}-")).write_bytes(line)
    proc = run_shoed("journal", "verify", str(d), "--verify-key", str(tmp_path / "verify.key"), timeout=20)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc
    assert "not a journal file's number" in proc.stdout
    with pytest.raises(JournalLocked):
        Journal(d, "T1", clock=clock)


@pytest.mark.parametrize("change", [{"file_seq": "9"}, {"files": [5]}, {"offset": -4}, {"files": [[1, "x", "y"]]},
                                    {"jseq": True}, {"epoch": "2"}])
def test_a_mark_of_another_form_is_refused_in_one_line(build, change):
    # An unkeyed journal's mark is a digest anyone can make again: its values are checked before use.
    from shoed.journal.store import mark_mac

    d = build(shoes=2)
    body = {k: v for k, v in json.loads((d / "T1.verified").read_bytes()).items() if k != "mac"} | change
    (d / "T1.verified").write_text(json.dumps(body | {"mac": mark_mac(body, None)}))
    with pytest.raises(JournalLocked, match="not of the form written"):
        Journal(d, "T1")
    proc = run_shoed("journal", "verify", str(d))
    assert proc.returncode == 1 and "Traceback" not in proc.stderr and "not of the form written" in proc.stdout, proc
