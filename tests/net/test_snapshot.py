"""The snapshot endpoint: its requests (shoed.net.snapshot) as the daemon serves them (shoed.net.catchup).

table-game-standards item 17: a late joiner fetches a snapshot that ends with
its sequence number, and gaps are filled from the durable journal. Bad
requests get a clear error reply and the endpoint keeps serving.
"""

from __future__ import annotations

import time

import pytest
import zmq

from shoed.net import wire
from shoed.net.catchup import Limits
from shoed.net.snapshot import MAX_REQUEST_BYTES

from .helpers import ANY_PORT, HandingOver, catchup_server

JOURNAL = [{"table": "t1", "seq": s, "kind": "card.dealt", "card": "9H"} for s in range(1, 26)]


def _events(first, last):
    if first < 3:
        raise LookupError("events before 3 were rotated out")
    return (e for e in JOURNAL if first <= e["seq"] <= last)


@pytest.fixture
def server(ctx):
    srv = catchup_server(ctx, ANY_PORT, "t1", _events, limits=Limits(chunk_events=10, max_range=100))
    with HandingOver(srv, lambda: {"seq": 25, "coup": 7}):
        yield srv


def connect(ctx, server, kind=zmq.DEALER):
    sock = ctx.socket(kind)
    sock.linger = 0
    sock.connect(server.endpoints[0])
    return sock


@pytest.fixture
def dealer(ctx, server):
    sock = connect(ctx, server)
    yield sock
    sock.close(0)


def ask(sock, body: bytes | list[bytes], replies: int = 1) -> list[dict]:
    sock.send_multipart(body if isinstance(body, list) else [body])
    out = []
    for _ in range(replies):
        assert sock.poll(2000), f"no reply after {out}"
        out.append(wire.decode(sock.recv()))
    return out


def test_snapshot_ends_with_its_seq(dealer):
    [reply] = ask(dealer, b'{"op": "snapshot", "id": "a1"}')
    assert reply == {"ok": True, "op": "snapshot", "id": "a1", "table": "t1", "seq": 25, "state": {"seq": 25, "coup": 7}}


def test_events_come_in_chunks_then_done(dealer):
    replies = ask(dealer, b'{"op": "events", "from": 4, "to": 25, "id": 9}', replies=4)
    assert [len(r.get("events", [])) for r in replies] == [10, 10, 2, 0]
    assert [e["seq"] for r in replies for e in r.get("events", [])] == list(range(4, 26))
    assert replies[-1] == {"ok": True, "op": "events", "id": 9, "done": True, "count": 22}
    assert not dealer.poll(100)


def test_empty_range_is_just_done(dealer):
    assert ask(dealer, b'{"op": "events", "from": 40, "to": 50}') == [{"ok": True, "op": "events", "done": True, "count": 0}]


def test_req_socket_works_too(ctx, server):
    req = connect(ctx, server, zmq.REQ)
    req.send(b'{"op": "snapshot"}')
    assert req.poll(2000)
    assert wire.decode(req.recv())["seq"] == 25
    req.close(0)


# (request, words the error must contain)
BAD_REQUESTS = [
    (b"{nope", "not JSON"),
    (b"[]", "Expected `object`"),
    (b'{"op": "dump"}', "Invalid value 'dump'"),
    (b'{"op": "snapshot", "extra": 1}', "unknown field `extra`"),
    (b'{"op": "events", "from": "1", "to": 5}', "Expected `int`, got `str` - at `$.from`"),
    (b'{"op": "events", "from": 1}', "missing required field `to`"),
    (b'{"op": "events", "from": 9, "to": 5}', "bad range 9..5"),
    (b'{"op": "events", "from": -1, "to": 5}', "bad range"),
    (b'{"op": "events", "from": 3, "to": 500}', "at most 100 events"),
    (b'{"op": "events", "from": 1, "to": 5}', "rotated out"),
    ([b"two", b"frames"], "one JSON frame"),
]


@pytest.mark.parametrize(("request_body", "words"), BAD_REQUESTS)
def test_bad_requests_get_clear_errors_and_the_endpoint_keeps_serving(dealer, server, request_body, words):
    [reply] = ask(dealer, request_body)
    assert reply["ok"] is False and words in reply["error"], reply
    [good] = ask(dealer, b'{"op": "snapshot"}')
    assert good["ok"] and good["seq"] == 25


def test_error_reply_carries_the_id_when_it_can(dealer):
    [reply] = ask(dealer, b'{"op": "events", "from": "x", "to": 1, "id": "q7"}')
    assert reply["id"] == "q7" and not reply["ok"]


def test_oversized_request_is_dropped_and_the_endpoint_keeps_serving(ctx, server):
    big = connect(ctx, server)
    big.send(b'{"op": "snapshot", "id": "' + b"x" * MAX_REQUEST_BYTES + b'"}')
    assert not big.poll(300)  # ZeroMQ cut the connection: no reply
    big.close(0)
    fresh = connect(ctx, server)
    assert ask(fresh, b'{"op": "snapshot"}')[0]["seq"] == 25
    fresh.close(0)


@pytest.mark.parametrize(("snapshot", "words"), [
    (lambda: {"coup": 3}, "carries no seq"),
    (lambda: {"seq": "7"}, "carries no seq"),
    (lambda: None, "did not hand one over in time"),  # the table's loop never has a turn to spare
])
def test_a_snapshot_without_its_seq_or_none_at_all_is_an_error_reply(ctx, snapshot, words):
    srv = catchup_server(ctx, ANY_PORT, "t1", _events, limits=Limits(snapshot_wait=0.3))
    with HandingOver(srv, snapshot):
        sock = connect(ctx, srv)
        [reply] = ask(sock, b'{"op": "snapshot"}')
        assert not reply["ok"] and words in reply["error"]
        [events] = ask(sock, b'{"op": "events", "from": 30, "to": 31}')  # the endpoint serves on
        assert events == {"ok": True, "op": "events", "done": True, "count": 0}
        sock.close(0)


def test_journal_out_of_order_is_an_error_not_a_hole(ctx):
    def shuffled(first, last):
        return [{"seq": 5}, {"seq": 7}, {"seq": 6}]

    srv = catchup_server(ctx, ANY_PORT, "t1", shuffled)
    with HandingOver(srv, lambda: {"seq": 9}):
        sock = connect(ctx, srv)
        [reply] = ask(sock, b'{"op": "events", "from": 5, "to": 7}')
        assert not reply["ok"] and "out of order" in reply["error"]
        sock.close(0)


def test_clients_asking_at_once_share_the_snapshots_the_table_makes(ctx):
    """The table's loop makes a snapshot only when asked, and one answers every request waiting
    (at most one per Limits.snapshot_interval, however many clients ask)."""
    srv = catchup_server(ctx, ANY_PORT, "t1", _events, limits=Limits(snapshot_interval=0.2))
    with HandingOver(srv, lambda: {"seq": 1}) as table:
        time.sleep(0.1)
        assert table.made == 0  # nobody asked
        socks = [connect(ctx, srv) for _ in range(5)]
        for sock in socks:
            sock.send(b'{"op": "snapshot"}')
        for sock in socks:
            assert sock.poll(2000) and wire.decode(sock.recv())["seq"] == 1
            sock.close(0)
        assert 1 <= table.made < 5
