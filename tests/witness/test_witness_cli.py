"""`shoed witness` and `journal verify --witness` on the command line: a mistake is one line and exit 2."""

from __future__ import annotations

import pytest

from shoed.witness.store import WitnessStore
from harness.processes import run_shoed


@pytest.mark.parametrize("args, error", [
    (["--db", "sqlite:///tmp/w.db", "t1"], "write TABLE=EVENTS"),
    (["--db", "sqlite:///tmp/w.db", "t.1=tcp://127.0.0.1:5556"], "table id"),
    (["--db", "sqlite:///tmp/w.db", "t1=ipc:///tmp/x"], "give the snapshot endpoint"),
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
