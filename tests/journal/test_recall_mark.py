"""`journal recall` holds the verified mark as `journal verify` and start-up do.

decision (shoed/journal/reader.py `read_recent`): recall reads only the newest files, and
read them record by record, but a journal cut back at a record boundary, or with its last
shoe file removed, is a whole chain: only the verified mark tells that acknowledged records
are gone. Verify and start-up refuse such a journal; recall must not show its coups as the
last ones and exit 0. It stops where verify does (exit 1, `STOPPED`, the reason), and a
mark that is not authentic stops it too.
"""

from __future__ import annotations

import json

from shoed.journal import verify
from shoed.journal.reader import read_recent
from tests.conftest import run_shoed

SECRET = b"s" * 32


def last_file(directory):
    return sorted(directory.glob("T1-*.jsonl"))[-1]


def cut_last_coup(directory):
    last = last_file(directory)
    last.chmod(0o644)
    lines = last.read_bytes().splitlines(keepends=True)
    last.write_bytes(b"".join(lines[:-2]))  # whole records gone: the chain itself still holds


def recall_cli(directory, *extra):
    proc = run_shoed("journal", "recall", str(directory), "--json", *extra)
    return proc.returncode, json.loads(proc.stdout)


def test_an_intact_journal_recalls_as_before(build):
    d = build(shoes=2, coups=3)
    rc, out = recall_cli(d)
    assert rc == 0 and out["stopped_at"] is None and len(out["coups"]) == 6


def test_records_cut_below_the_mark_stop_recall_as_they_stop_verify(build):
    d = build(shoes=2, coups=3)
    cut_last_coup(d)
    report = verify(d)
    assert not report.ok and "records were removed" in report.first_bad.reason
    rc, out = recall_cli(d)
    assert rc == 1
    assert "records were removed" in out["stopped_at"]["reason"]
    assert len(out["coups"]) == 5  # what the journal still holds is shown, with where it stopped


def test_a_removed_last_shoe_file_stops_recall(build):
    d = build(shoes=3, coups=2)
    last_file(d).unlink()
    assert not verify(d).ok
    rc, out = recall_cli(d)
    assert rc == 1 and "records were removed" in out["stopped_at"]["reason"]


def test_a_mark_that_is_not_authentic_stops_recall(build):
    d = build(shoes=2, coups=3)
    mark = d / "T1.verified"
    body = json.loads(mark.read_bytes())
    body["jseq"] = 1  # covers less: the MAC no longer matches
    mark.write_text(json.dumps(body))
    assert "not authentic" in verify(d).first_bad.reason
    rc, out = recall_cli(d)
    assert rc == 1 and "not authentic" in out["stopped_at"]["reason"]


def test_a_keyed_journal_without_its_secret_still_finds_records_removed(build, tmp_path):
    d = build(shoes=2, coups=3, secret=SECRET)
    cut_last_coup(d)
    reading = read_recent(d, 10)
    assert reading.stopped_at is not None and "records were removed" in reading.stopped_at.reason
    secret_file = tmp_path / "secret"
    secret_file.write_bytes(SECRET)
    rc, out = recall_cli(d, "--secret-file", str(secret_file))
    assert rc == 1 and "records were removed" in out["stopped_at"]["reason"]
