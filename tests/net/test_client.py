"""The Clone pattern end to end (shoed.net.client against a stand-in daemon).

ZeroMQ guide, Clone pattern; table-game-standards items 16 and 17: subscribe
first, then fetch a snapshot ending with its seq; apply only later updates;
fill gaps from the journal; a gap is a signal to re-sync, never silent. The
display's view (last snapshot plus the events after it) must equal the
journal, with every event delivered once, in order.
"""

from __future__ import annotations

import threading
import time

import pytest
import zmq

from shoed.net.client import TableClient

from .helpers import FakeTable, collect, replay


def _client(table, **kw) -> TableClient:
    kw.setdefault("request_timeout", 1.0)
    return TableClient(table.events_endpoint, table.snapshot_endpoint, table.table, context=table.context, **kw)


def _upto(seq):
    return lambda got: bool(got) and got[-1]["seq"] >= seq


def _assert_exactly_once_in_order(items, journal):
    """After each snapshot, events run seq+1, seq+2, ... with nothing missing or repeated."""
    assert items[0]["kind"] == "snapshot"
    expected = None
    for item in items:
        if item["kind"] == "snapshot":
            expected = item["seq"] + 1
        else:
            assert item["seq"] == expected, f"expected seq {expected}, got {item['seq']}"
            expected += 1
    assert replay(items) == [e["n"] for e in journal]


def test_joining_while_the_table_publishes(ctx):
    with FakeTable(ctx) as table:
        stop = threading.Event()

        def deal():
            while not stop.is_set():
                table.post()
                time.sleep(0.001)

        dealer = threading.Thread(target=deal)
        dealer.start()
        time.sleep(0.1)
        with _client(table) as client:
            got = collect(client, lambda g: len(g) > 50)
            stop.set()
            dealer.join()
            table.wait_posted()
            collect(client, _upto(table.last_seq), got=got)
        assert got[0]["reason"] == "initial" and got[0]["seq"] > 0  # joined late
        assert sum(1 for g in got if g["kind"] == "snapshot") == 1
        _assert_exactly_once_in_order(got, table.journal)


def test_events_from_before_the_snapshot_are_not_delivered_again(ctx):
    with FakeTable(ctx) as table:
        for _ in range(5):
            table.post()
        table.wait_posted()
        with _client(table) as client:
            got = collect(client, lambda g: len(g) >= 1)
            for _ in range(3):
                table.post()
            got += collect(client, _upto(8))
        assert [(g["kind"], g["seq"]) for g in got] == [("snapshot", 5), ("card.dealt", 6), ("card.dealt", 7), ("card.dealt", 8)]


def test_lost_events_are_filled_from_the_journal(ctx):
    with FakeTable(ctx, lose={4, 5, 6}) as table, _client(table) as client:
        got = collect(client, lambda g: len(g) >= 1)
        for _ in range(10):
            table.post()
        got += collect(client, _upto(10))
        assert [g["seq"] for g in got] == list(range(11))
        assert client.stats["gaps"] == 1 and client.stats["filled"] == 3
        _assert_exactly_once_in_order(got, table.journal)


def test_lost_tail_is_found_by_the_heartbeat(ctx):
    """The last events lost and nothing after them: only the heartbeat's seq tells."""
    with FakeTable(ctx, lose={3, 4}) as table, _client(table) as client:
        got = collect(client, lambda g: len(g) >= 1)
        for _ in range(4):
            table.post()
        got += collect(client, _upto(4))
        assert [g["seq"] for g in got] == [0, 1, 2, 3, 4]
        assert client.stats["filled"] == 2


def test_events_lost_at_the_high_water_mark_are_filled(ctx):
    """A display that stops reading during a burst loses events for real at its
    HWM; when it reads again it fills them and misses none."""
    small = {zmq.RCVBUF: 4096}  # so the loss does not depend on the kernel's buffer sizes
    with FakeTable(ctx) as table, _client(table, rcvhwm=10, sub_options=small) as client:
        got = collect(client, lambda g: len(g) >= 1)
        pad = "x" * 500
        for _ in range(20_000):
            table.post(pad=pad)
        table.wait_posted(30)
        got += collect(client, _upto(20_000), timeout=30)
        assert client.stats["gaps"] >= 1 and client.stats["filled"] > 0
        _assert_exactly_once_in_order(got, table.journal)


def test_gap_that_cannot_be_filled_gives_a_fresh_snapshot(ctx):
    """Journal no longer has the lost events: resync, never carry on silently."""
    with FakeTable(ctx, lose={3}, keep_from=5) as table, _client(table) as client:
        got = collect(client, lambda g: len(g) >= 1)
        for _ in range(6):
            table.post()
        got += collect(client, _upto(6))
        kinds = [(g["kind"], g["seq"], g.get("reason")) for g in got]
        assert ("snapshot", 4, "gap") in kinds or ("snapshot", 6, "gap") in kinds, kinds
        _assert_exactly_once_in_order(got, table.journal)


def test_topic_filter_delivers_only_the_chosen_groups_without_false_gaps(ctx):
    with FakeTable(ctx) as table, _client(table, topics=("coup",)) as client:
        got = collect(client, lambda g: len(g) >= 1)
        for kind in ["card.dealt", "card.dealt", "coup.result", "card.dealt", "shoe.closed", "coup.opened"]:
            table.post(kind)
        got += collect(client, _upto(6))
        assert [(g["kind"], g["seq"]) for g in got] == [("snapshot", 0), ("coup.result", 3), ("coup.opened", 6)]
        assert client.stats["gaps"] == 0 and client.stats["events"] == 6


def test_daemon_restart_is_caught_up_without_loss_or_repeat(ctx, base):
    """The daemon dies and comes back with the same journal; seq continues.
    Events published before the client's subscription reaches the new daemon
    are filled; the silence triggers a reconnect."""
    journal: list[dict] = []
    endpoints = {"events_endpoint": f"ipc://{base}/ev", "snapshot_endpoint": f"ipc://{base}/snap"}
    first = FakeTable(ctx, journal=journal, **endpoints).start()
    with _client(first, heartbeat_timeout=0.5) as client:
        got = collect(client, lambda g: len(g) >= 1)
        for _ in range(5):
            first.post()
        got += collect(client, _upto(5))
        first.stop()
        got += client.poll(0.8)  # silence: the client notices and tries to reconnect
        assert client.stats["reconnects"] >= 1
        second = FakeTable(ctx, journal=journal, **endpoints).start()
        for _ in range(5):
            second.post()
        got += collect(client, _upto(10))
        for _ in range(5):
            second.post()
        got += collect(client, _upto(15))
        second.stop()
    assert [g["seq"] for g in got] == list(range(16))
    _assert_exactly_once_in_order(got, journal)


def test_sequence_going_back_is_a_reset(ctx, base):
    """A new journal (seq restarts) is not a run of duplicates: the client re-syncs."""
    endpoints = {"events_endpoint": f"ipc://{base}/ev", "snapshot_endpoint": f"ipc://{base}/snap"}
    old = FakeTable(ctx, **endpoints).start()
    with _client(old, heartbeat_timeout=0.5) as client:
        collect(client, lambda g: len(g) >= 1)
        for _ in range(10):
            old.post()
        collect(client, _upto(10))
        old.stop()
        new = FakeTable(ctx, **endpoints).start()
        for _ in range(3):
            new.post()
        new.wait_posted()
        got = collect(client, lambda g: any(x.get("reason") == "reset" for x in g), timeout=5)
        reset = [g for g in got if g.get("reason") == "reset"][-1]
        assert reset["seq"] == 3 and reset["state"]["ns"] == [1, 2, 3]
        new.post()
        got = collect(client, _upto(4))
        assert got[-1]["seq"] == 4
        new.stop()


def test_poll_returns_nothing_while_the_daemon_is_away(ctx):
    table = FakeTable(ctx).start()
    endpoints = (table.events_endpoint, table.snapshot_endpoint)
    table.stop()
    with TableClient(*endpoints, "t1", context=ctx, request_timeout=0.2) as client:
        start = time.monotonic()
        assert client.poll(0.3) == []
        assert time.monotonic() - start < 0.3 + 0.2 + 0.5
        assert client.last_seq is None


@pytest.mark.parametrize(("who", "gets_in"), [("dealer-console", True), ("stranger", False)])
def test_curve_on_events_and_snapshots(ctx, keys, who, gets_in):
    with keys.server(ctx) as curve, FakeTable(ctx, curve=curve) as table:
        table.post()
        table.wait_posted()
        with _client(table, curve=keys.client(who), request_timeout=0.3) as client:
            got = client.poll(1.0)
            if gets_in:
                table.post()
                got += collect(client, _upto(2))
                assert [g["seq"] for g in got] == [1, 2]
            else:
                assert got == [] and client.last_seq is None


def test_a_long_catch_up_runs_on_credit(ctx):
    """The client allows CREDIT replies ahead and grants one more for each it takes: a range of many
    replies arrives whole, and the endpoint was held to the credit (it counted the grants)."""
    from shoed.net.client import CREDIT, SnapshotClient

    journal = [{"table": "t1", "seq": n, "kind": "card.dealt", "n": n} for n in range(1, 2001)]
    with FakeTable(ctx, journal=journal) as table:
        client = SnapshotClient(ctx, table.snapshot_endpoint, timeout=2.0)
        try:
            got = client.events(1, 2000)
        finally:
            client.close()
        assert [e["seq"] for e in got] == list(range(1, 2001))
        replies = 2000 // table.snapshot_server.limits.chunk_events + 1  # the chunks, and "done"
        assert replies > CREDIT, "the range needs more replies than the first credit allows"
        # Every reply past the first credit waited for a grant (later grants may still be on the way).
        assert table.snapshot_server.stats["credit_grants"] >= replies - CREDIT
