"""The witness's follower in-process, against a stand-in table (tests/net/helpers.py): with CURVE, and
resuming after its own restart through the catch-up protocol, on both databases."""

from __future__ import annotations

import time

import pytest

from shoed.witness.follow import Feed, Witness
from shoed.witness.store import WitnessStore
from tests.net.helpers import FakeTable


class Table(FakeTable):
    """The stand-in table, with a journal head in its snapshot as the daemon has."""

    def state(self) -> dict:
        return {**super().state(), "journal": {"file": 1, "jseq": self.last_seq + 2, "hash": f"{self.last_seq:064x}"}}


def _follow_until(witness: Witness, store: WitnessStore, seq: int, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while (store.resume_seq("t1") or 0) < seq:
        assert time.monotonic() < deadline, f"the witness did not reach seq {seq}"
        witness.step(0.05)


def test_the_witness_resumes_after_its_restart_without_a_gap_or_a_repeat(ctx, db_url):
    with Table(ctx, heartbeat=0.05) as table, WitnessStore(db_url) as store:
        feed = Feed("t1", table.events_endpoint, table.snapshot_endpoint)
        witness = Witness(store, [feed], request_timeout=0.5)
        try:
            for _ in range(5):  # the first events come before the witness's snapshot or after it
                table.post()
            table.wait_posted()
            _follow_until(witness, store, 5)
            joined = min(h.seq for h in store.heads("t1"))  # the snapshot it joined at
        finally:
            witness.close()
        for _ in range(20):  # dealt while the witness is down
            table.post()
        table.wait_posted()
        again = Witness(store, [feed], request_timeout=0.5)
        try:
            assert again.clients["t1"].last_seq == 5  # resumes after what it kept: no initial snapshot
            table.post()
            table.wait_posted()
            _follow_until(again, store, 26)
        finally:
            again.close()
        seen = list(store.events("t1"))
        assert [e.seq for e in seen] == list(range(joined + 1, 27))
        assert [e.event for e in seen] == table.journal[joined:]
        assert again.counts["t1"] == 21 and {e.via for e in seen[-21:]} == {"fetched"}


def test_a_display_endpoint_followed_by_mistake_is_named(ctx, tmp_path):
    # A display's snapshot carries no journal head: what the witness keeps from it cannot prove
    # the journal, and it says so (once), naming the table.
    with FakeTable(ctx, heartbeat=0.05) as display, Table(ctx, heartbeat=0.05) as surveillance, \
            WitnessStore(f"sqlite://{tmp_path}/w.db") as store:
        witness = Witness(store, [Feed("t1", display.events_endpoint, display.snapshot_endpoint),
                                  Feed("t2", surveillance.events_endpoint, surveillance.snapshot_endpoint)],
                          request_timeout=0.5)
        try:
            deadline = time.monotonic() + 10
            while not witness.clients["t2"].last_seq and time.monotonic() < deadline or not witness.headless:
                assert time.monotonic() < deadline, "no snapshot"
                display.post()
                surveillance.post()
                witness.step(0.05)
            assert witness.headless == {"t1"}
        finally:
            witness.close()


@pytest.mark.parametrize(("who", "gets_in"), [("dealer-console", True), ("stranger", False)])
def test_the_witness_follows_a_table_that_publishes_with_curve(ctx, keys, tmp_path, who, gets_in):
    with keys.server(ctx) as curve, Table(ctx, curve=curve, heartbeat=0.05) as table, \
            WitnessStore(f"sqlite://{tmp_path}/w.db") as store:
        witness = Witness(store, [Feed("t1", table.events_endpoint, table.snapshot_endpoint, keys.client(who))],
                          request_timeout=0.3)
        try:
            table.post()
            table.wait_posted()
            if gets_in:
                _follow_until(witness, store, 1)
                table.post()
                table.wait_posted()
                _follow_until(witness, store, 2)
            else:
                for _ in range(10):
                    witness.step(0.1)
                assert store.resume_seq("t1") is None and store.tables() == []
        finally:
            witness.close()
