"""The witness database, the same on SQLite and on a real PostgreSQL server.

The key is (table, seq) for events and (table, file, jseq, hash) for heads:
recording the same thing twice keeps it once, and the first version of an
event seen stays, while a second hash at the same place of a journal is kept
beside the first (the journal changed in between).
"""

from __future__ import annotations

import pytest

from shoed.witness.follow import observed
from shoed.witness.store import Head, SeenEvent, SeenHead, WitnessStore, WitnessStoreError

UTC = "2026-01-01T00:00:00.000Z"


def _event(seq: int, card: str = "AH", head: Head | None = None, table: str = "t1") -> SeenEvent:
    body = {"table": table, "seq": seq, "kind": "card", "card": card, "recipient": "player", "mono_ns": seq,
            "utc": UTC, "probability": 0.1 + seq / 3}
    return SeenEvent(table, seq, "card", body, head, "live", UTC)


def test_events_and_heads_are_kept_once(db_url):
    with WitnessStore(db_url) as store:
        assert store.last_seq("t1") is None
        head = Head(1, 7, "ab" * 32)
        store.record([_event(1, head=head), _event(2, head=head)], [SeenHead("t1", head, 2, "event", UTC)])
        # A restarted witness fetches again what it had: nothing is counted twice.
        store.record([_event(2, head=head), _event(3)], [SeenHead("t1", head, 2, "heartbeat", UTC)])
        assert store.count_events("t1") == 3
        assert store.last_seq("t1") == 3
        assert [(h.head, h.source) for h in store.heads("t1")] == [(head, "event")]
        seen = list(store.events("t1", batch=2))  # read in batches, in seq order
        assert [e.seq for e in seen] == [1, 2, 3]
        assert seen[0].event == _event(1).event  # floats and all, as received
        assert seen[0].head == head and seen[2].head is None


def test_the_first_version_of_an_event_stays_and_both_hashes_of_a_place_are_kept(db_url):
    with WitnessStore(db_url) as store:
        store.record([_event(5, "AH")], [SeenHead("t1", Head(2, 3, "a" * 64), 5, "event", UTC)])
        store.record([_event(5, "KS")], [SeenHead("t1", Head(2, 3, "b" * 64), 5, "event", UTC)])
        assert [e.event["card"] for e in store.events("t1")] == ["AH"]
        assert sorted(h.head.hash for h in store.heads("t1")) == ["a" * 64, "b" * 64]


def test_tables_are_kept_apart_and_the_schema_survives_reopening(db_url):
    with WitnessStore(db_url) as store:
        store.record([_event(1, table="t1"), _event(1, table="t2"), _event(2, table="t2")], [])
    with WitnessStore(db_url) as again:  # CREATE ... IF NOT EXISTS: reopening keeps everything
        assert again.tables() == ["t1", "t2"]
        assert (again.last_seq("t1"), again.last_seq("t2")) == (1, 2)


@pytest.mark.parametrize("url, error", [
    ("mysql://x/y", "not a witness database URL"),
    ("/var/lib/witness.db", "not a witness database URL"),
    ("sqlite://", "give a path"),
    ("sqlite:///no/such/dir/witness.db", "does not exist"),
])
def test_a_bad_url_is_one_clear_error(url, error):
    with pytest.raises(WitnessStoreError, match=error):
        WitnessStore(url)


def test_an_unreachable_postgresql_server_is_one_clear_error(tmp_path):
    pytest.importorskip("psycopg", reason="psycopg is not installed (pip install 'shoed[witness]')")
    with pytest.raises(WitnessStoreError, match="cannot connect to postgresql://w:\\*\\*\\*@") as caught:
        WitnessStore(f"postgresql://w:secret@/db?host={tmp_path}")
    assert "secret" not in str(caught.value)


def test_observed_splits_events_from_heads_and_takes_heads_from_every_message():
    head = {"file": 2, "jseq": 9, "hash": "c" * 64}
    items = [
        {"table": "t1", "kind": "snapshot", "seq": 4, "state": {"journal": {"file": 2, "jseq": 8, "hash": "d" * 64}},
         "reason": "initial"},
        {"table": "t1", "kind": "card", "seq": 5, "card": "9D", "journal": head},
        {"table": "t1", "kind": "coup.result", "seq": 6},  # fetched from the journal: no head
        {"table": "t1", "kind": "heartbeat", "seq": 6, "journal": {"file": 2, "jseq": 10, "hash": "e" * 64}},
        {"table": "t1", "kind": "heartbeat", "seq": 6, "journal": {"file": -1, "jseq": 10, "hash": "e"}},  # malformed
    ]
    events, heads = observed("t1", items, UTC)
    assert [(e.seq, e.via, "journal" in e.event) for e in events] == [(5, "live", False), (6, "fetched", False)]
    assert events[0].head == Head(2, 9, "c" * 64)
    assert [(h.head.jseq, h.source, h.seq) for h in heads] == [(8, "snapshot:initial", 4), (9, "event", 5),
                                                                 (10, "heartbeat", 6)]
