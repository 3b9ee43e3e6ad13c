"""`shoed witness` and `journal verify --witness` on the command line: a mistake is one line and exit 2."""

from __future__ import annotations

import pytest

from shoed.witness.store import WitnessStore
from harness.processes import run_shoed


@pytest.mark.parametrize("args, error", [
    (["--db", "sqlite:///tmp/w.db", "t1"], "write TABLE=EVENTS"),
    (["--db", "sqlite:///tmp/w.db", "t.1=tcp://127.0.0.1:5556"], "table id"),
    (["--db", "sqlite:///tmp/w.db", "t1=ipc:///tmp/x"], "t1=ipc:///tmp/x,snapshot=ENDPOINT"),
    (["--db", "sqlite:///tmp/w.db", "t1=tcp://127.0.0.1:5556,colour=red"], "is not snapshot=ENDPOINT"),
    (["--db", "sqlite:///tmp/w.db", "t1=tcp://127.0.0.1:5556", "t1=tcp://127.0.0.1:6556"], "named twice"),
    (["--db", "sqlite:///tmp/w.db", "--key", "/nonexistent", "t1=tcp://127.0.0.1:5556"], "needs both --key"),
    (["--db", "mysql://db/x", "t1=tcp://127.0.0.1:5556"], "not a witness database URL"),
])
def test_witness_mistakes_are_one_line(args, error):
    proc = run_shoed("witness", *args)
    assert proc.returncode == 2, proc.stderr
    assert error in proc.stderr and len(proc.stderr.strip().splitlines()) == 1


def test_a_witness_whose_table_is_away_waits_and_keeps_nothing(tmp_path):
    url = f"sqlite://{tmp_path}/w.db"
    proc = run_shoed("witness", "--db", url, "--duration", "0.5", "--log-json",
                     f"t1=ipc://{tmp_path}/events,snapshot=ipc://{tmp_path}/snapshot")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    with WitnessStore(url) as store:
        assert store.tables() == []


def test_verify_with_an_unusable_witness_url_is_one_line(tmp_path):
    (tmp_path / "j").mkdir()
    proc = run_shoed("journal", "verify", str(tmp_path / "j"), "--witness", "sqlite:///no/such/dir/w.db")
    assert proc.returncode == 2 and "does not exist" in proc.stderr


def test_verify_against_a_database_that_is_not_the_witness_is_refused_and_left_as_it_was(tmp_path):
    from harness.records import write_journal

    journal = tmp_path / "j"
    write_journal(journal, shoes=1, seed=2, odds=False)
    typo = tmp_path / "witnes.db"
    proc = run_shoed("journal", "verify", str(journal), "--witness", f"sqlite://{typo}")
    assert proc.returncode == 2 and "no witness database there" in proc.stderr, proc.stderr
    assert not typo.exists()  # verify creates nothing
    other = tmp_path / "other.db"
    import sqlite3

    with sqlite3.connect(other) as conn:
        conn.execute("CREATE TABLE cards (x TEXT)")
    proc = run_shoed("journal", "verify", str(journal), "--witness", f"sqlite://{other}")
    assert proc.returncode == 2 and "does not hold the witness's schema" in proc.stderr, proc.stderr
    with sqlite3.connect(other) as conn:
        assert [r[0] for r in conn.execute("SELECT name FROM sqlite_master")] == ["cards"]
    # The witness's own database, empty or of other tables: nothing it holds proves this journal.
    empty = f"sqlite://{tmp_path}/w.db"
    WitnessStore(empty).close()
    for extra in ([], ["--table", "t9"]):
        proc = run_shoed("journal", "verify", str(journal), "--witness", empty, *extra)
        assert proc.returncode == 1, proc.stdout + proc.stderr
        assert "the witness holds nothing of this table" in proc.stdout and "witness agrees" not in proc.stdout
    proc = run_shoed("journal", "verify", str(journal), "--archived-before", "2")
    assert proc.returncode == 2 and "goes with --witness" in proc.stderr
