"""`journal verify --witness` on journals altered byte-wise, with a witness that saw every record.

Each alteration keeps the chain linking (verify alone passes); the witness
finds it: a file missing in the middle, records rewritten and sealed again, a
journal put back under another table's name. (The live shoe with a real
daemon, and the deleted tail, truncation and replacement on both databases:
test_witness_live.py.)
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from shoed.journal import Journal
from shoed.witness.compare import compare
from shoed.witness.store import WitnessStore
from harness.processes import run_shoed
from harness.records import reseal, write_journal
from tests.witness.seen import saw_everything

@pytest.fixture(scope="module")
def journal(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("journal") / "j"
    write_journal(path, shoes=2, seed=3, odds=False)  # three files: the table's, then one per shoe
    return path


@pytest.fixture
def witnessed(journal, tmp_path):
    copy = tmp_path / "j"
    shutil.copytree(journal, copy)
    for path in copy.iterdir():
        path.chmod(0o644)
    url = f"sqlite://{tmp_path}/w.db"
    saw_everything(journal, url)
    return copy, url


def _findings(path: Path, url: str) -> dict[str, str]:
    with WitnessStore(url) as store:
        report = compare(path, store)
    return {f.kind: str(f) for f in report.findings}


def test_an_untouched_journal_agrees(witnessed):
    path, url = witnessed
    with WitnessStore(url) as store:
        report = compare(path, store)
    assert report.ok and report.tables == ["t1"] and report.heads > 500 and report.events > 500


def test_a_file_missing_in_the_middle(witnessed):
    path, url = witnessed
    middle = sorted(path.glob("*.jsonl"))[1]
    middle.unlink()
    found = _findings(path, url)
    assert set(found) == {"missing", "events_missing"}
    assert found["missing"].startswith("table t1: file 2 is gone (later files are still there)")


def test_a_card_rewritten_and_the_whole_journal_sealed_again(witnessed):
    path, url = witnessed

    def change(name, record):
        for event in record.get("events", []):
            if event.get("kind") == "card" and event.get("seq") == 40:
                event["card"] = "AH" if event["card"] != "AH" else "KS"
        return record

    reseal(path, change)
    assert run_shoed("journal", "verify", str(path)).returncode == 0  # the chain alone cannot tell
    found = _findings(path, url)
    assert set(found) == {"differs", "events_differ"}
    assert "events differ from what the witness received (first seq 40)" in found["events_differ"]
    proc = run_shoed("journal", "verify", str(path), "--witness", url, "--json")
    assert proc.returncode == 1
    report = json.loads(proc.stdout)
    assert report["ok"] is True and report["witness"]["ok"] is False  # the chain's fields are as they were


def test_a_journal_put_back_under_another_tables_name(tmp_path, witnessed):
    _, url = witnessed
    other = tmp_path / "other"
    with Journal(other, "t9") as j:
        j.open_shoe("table")
        j.append({"kind": "note"})
    found = _findings(other, url)
    assert set(found) == {"no_journal", "events_missing"}


def test_files_gone_from_the_front_are_missing_unless_archived_and_a_note_then(witnessed, tmp_path):
    path, url = witnessed
    oldest = sorted(path.glob("*.jsonl"))[0]
    oldest.unlink()  # the oldest file gone: deleted, or archived by a retention policy
    with WitnessStore(url) as store:
        report = compare(path, store)
    assert not report.ok and {f.kind for f in report.findings} == {"missing", "events_missing"}
    assert "file 1 is gone (later files are still there)" in str(report.findings[0])
    with WitnessStore(url) as store:
        report = compare(path, store, archived_before=2)  # what the operator archived, said
    assert report.ok and report.notes and "files 1..1 are older than the oldest file kept (2)" in report.notes[0]
    with WitnessStore(url) as store:
        report = compare(path, store, archived_before=1)  # archived before 1: nothing
    assert not report.ok and "missing" in {f.kind for f in report.findings}
    # Only the newest file kept, and the witness saw none of it: nothing proves it is the same journal.
    later = tmp_path / "later"
    later.mkdir()
    newest = sorted(path.glob("*.jsonl"))[-1]
    shutil.copy(newest, later / newest.name)
    url2 = f"sqlite://{tmp_path}/w2.db"
    with WitnessStore(url) as store, WitnessStore(url2) as only_old:
        only_old.record(list(store.events("t1", last=100)), [h for h in store.heads("t1") if h.head.file < 3])
        report = compare(later, only_old, archived_before=3)
    assert not report.ok and {f.kind for f in report.findings} >= {"missing"}
