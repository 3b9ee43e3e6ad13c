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


def test_a_head_is_kept_only_in_the_form_the_journal_writes():
    good = {"file": 2, "jseq": 9, "hash": "c" * 64}
    assert Head.from_wire(good) == Head(2, 9, "c" * 64)
    for bad in ({**good, "hash": "ab\u0000cd" + "c" * 58}, {**good, "hash": "C" * 64}, {**good, "hash": "c" * 63},
                {**good, "hash": "c" * 65}, {**good, "file": 2**63}, {**good, "jseq": 2**64}, {**good, "file": True}):
        assert Head.from_wire(bad) is None, bad


def test_what_the_database_refuses_costs_only_that_row(db_url):
    with WitnessStore(db_url) as store:
        head = Head(1, 1, "a" * 64)
        bad = SeenEvent("t2", 2**63, "card", {"seq": 0}, None, "live", UTC)  # past BIGINT: refused by both
        done = store.record([_event(1), bad, _event(2)], [SeenHead("t1", head, 1, "event", UTC)])
        assert (done.events, done.refused) == (2, 1)
        assert store.count_events("t1") == 2 and store.tables() == ["t1"] and len(store.heads("t1")) == 1
        again = store.record([_event(2), _event(3)], [])
        assert (again.events, again.refused) == (1, 0)  # a repeat is not counted as kept


def test_tables_of_another_form_are_refused_before_anything_is_written(db_url):
    with WitnessStore(db_url) as store:  # the database's connection, to make the older form by hand
        store._run(lambda cur: [cur.execute(s) for s in ("DROP TABLE witness_events", "DROP TABLE witness_schema",
                   "CREATE TABLE witness_events (table_id TEXT, seq BIGINT, kind TEXT, body TEXT)")])
    with pytest.raises(WitnessStoreError, match="does not hold the witness's schema"):
        WitnessStore(db_url)
    with pytest.raises(WitnessStoreError, match="does not hold the witness's schema"):
        WitnessStore(db_url, read_only=True)


def test_a_read_only_store_creates_nothing_and_writes_nothing(db_url, tmp_path):
    if db_url.startswith("sqlite"):
        with pytest.raises(WitnessStoreError, match="no witness database there"):
            WitnessStore(f"sqlite://{tmp_path}/typo.db", read_only=True)
        assert not (tmp_path / "typo.db").exists()
    with pytest.raises(WitnessStoreError, match="does not hold the witness's schema|no witness database there"):
        WitnessStore(db_url, read_only=True)  # an empty database (or none): no schema, and none is made
    with WitnessStore(db_url) as store:
        store.record([_event(1)], [])
    with WitnessStore(db_url, read_only=True) as reader:
        assert reader.count_events("t1") == 1
        with pytest.raises(WitnessStoreError):
            reader.record([_event(2)], [])


def test_verify_needs_no_more_than_a_select_only_account(postgres):
    import psycopg

    url = postgres.create_database()
    with WitnessStore(url) as store:
        store.record([_event(1)], [SeenHead("t1", Head(1, 1, "a" * 64), 1, "event", UTC)])
    database = url.rpartition("/")[2].partition("?")[0]
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CREATE ROLE surveillance_ro LOGIN")
        conn.execute("REVOKE CREATE ON SCHEMA public FROM PUBLIC")
        conn.execute("GRANT SELECT ON ALL TABLES IN SCHEMA public TO surveillance_ro")
    reader_url = url.replace("postgresql://postgres@", "postgresql://surveillance_ro@")
    with WitnessStore(reader_url, read_only=True) as reader:
        assert reader.count_events("t1") == 1 and reader.tables() == ["t1"]
    with pytest.raises(WitnessStoreError, match="permission denied"):
        WitnessStore(reader_url)  # the witness itself needs to write
    assert database


@pytest.mark.parametrize("url", [
    "postgresql://w:S3cret@/db?host={dir}",
    "postgresql://w@/db?host={dir}&password=S3cret",
    "postgresql://w@/db?password=S3cret&host={dir}",
])
def test_a_password_is_never_printed(url, tmp_path):
    pytest.importorskip("psycopg", reason="psycopg is not installed (pip install 'shoed[witness]')")
    with pytest.raises(WitnessStoreError) as caught:
        WitnessStore(url.format(dir=tmp_path))
    assert "S3cret" not in str(caught.value) and "***" in str(caught.value)
    with pytest.raises(WitnessStoreError) as caught:
        WitnessStore("host=127.0.0.1 password=S3cret dbname=x")
    assert "S3cret" not in str(caught.value)


def test_a_database_stalled_by_a_lock_is_an_error_within_the_lock_timeout(postgres, monkeypatch):
    import time

    import psycopg

    from shoed.witness import store as store_module

    monkeypatch.setattr(store_module, "PG_LOCK_TIMEOUT_MS", 300)
    url = postgres.create_database()
    with WitnessStore(url) as store, psycopg.connect(url) as other:
        other.execute("LOCK TABLE witness_events IN ACCESS EXCLUSIVE MODE")  # a session left open in psql
        started = time.monotonic()
        with pytest.raises(WitnessStoreError, match="lock timeout"):
            store.record([_event(1)], [])
        assert time.monotonic() - started < 5
        other.rollback()
        assert store.record([_event(1)], []).events == 1  # the witness goes on once the lock is gone
