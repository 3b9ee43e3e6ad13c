"""A table the witness never hears from (a wrong server key, a wrong address) is a warning the operator
sees, naming the table and what to check; never only info lines while nothing is kept.

With CURVE a handshake refused for a wrong server key looks to the client like no table at all: the
witness cannot tell which, so it says what to check. In-process against stand-in tables (both branches:
never answered, and gone silent after answering), then a real `shoed witness` against a real daemon's
surveillance endpoints, with another table's server key, into a real PostgreSQL server.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time

from shoed.net.curve import ClientCurve, create_key_pair
from shoed.witness.follow import Feed, Witness
from shoed.witness.store import WitnessStore
from harness.processes import Daemon, remove_dir, short_dir
from tests.net.helpers import FakeTable
from tests.witness.test_witness_live import SURVEILLANCE_EVENTS, SURVEILLANCE_SNAPSHOT, surveillance_keys


def _step_until(witness: Witness, predicate, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        witness.step(0.05)


def test_a_table_that_never_answers_and_one_that_goes_silent_are_each_warned_of(ctx, keys, tmp_path):
    other_table_public, _, _ = create_key_pair(tmp_path / "other", "server")  # another table's key pair
    wrong = ClientCurve.from_files(keys.clients_dir / "pit-boss.key_secret", other_table_public)
    with keys.server(ctx) as curve, FakeTable(ctx, "t1", curve=curve, heartbeat=0.05) as t1, \
            FakeTable(ctx, "t2", curve=curve, heartbeat=0.05) as t2, \
            WitnessStore(f"sqlite://{tmp_path}/w.db") as store:
        witness = Witness(store, [Feed("t1", t1.events_endpoint, t1.snapshot_endpoint, keys.client("pit-boss")),
                                  Feed("t2", t2.events_endpoint, t2.snapshot_endpoint, wrong)],
                          request_timeout=0.3, silence_warning=1.5)
        try:
            _step_until(witness, lambda: "t2" in witness.silent, 10, "t2 to be warned of")
            assert witness.answered == {"t1"} and witness.silent == {"t2"}  # t1, heard, is not
            assert store.resume_seq("t2") is None
            t1.stop()  # answered, then gone: warned of too
            _step_until(witness, lambda: "t1" in witness.silent, 10, "t1 to be warned of once silent")
        finally:
            witness.close()


def test_a_real_witness_with_another_tables_server_key_logs_a_warning(postgres):
    base = short_dir()
    try:
        surveillance = surveillance_keys(base)
        other_table_public, _, _ = create_key_pair(base / "other-table", "server")
        url = postgres.create_database()
        with Daemon(base, *surveillance):
            proc = subprocess.run(
                [sys.executable, "-m", "shoed", "witness", "--db", url, "--log-json", "--duration", "13",
                 "--key", str(base / "witness-keys" / "witness.key_secret"), "--server-key", str(other_table_public),
                 f"t1={SURVEILLANCE_EVENTS.format(base=base)},snapshot={SURVEILLANCE_SNAPSHOT.format(base=base)}"],
                capture_output=True, text=True, timeout=60)
        assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
        lines = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
        warned = [line for line in lines if "has not answered" in line.get("event", "")]
        assert len(warned) == 1, lines[-10:]  # once, not every poll
        assert warned[0]["level"] == "warning" and warned[0]["table"] == "t1"
        for what in ("server-key=", "--server-key", "its own", "--role surveillance", "surveillance_events"):
            assert what in warned[0]["event"]
        with WitnessStore(url) as store:
            assert store.tables() == []  # nothing kept: what the warning is for
    finally:
        remove_dir(base)
