"""Snapshots and catch-up on a thread of their own (shoed.net.catchup): limits per client, a fair share."""

from __future__ import annotations

import collections
import json
import time

import pytest
import zmq

from shoed.net.catchup import CatchupServer, Endpoint, Limits

TABLE = "t1"


def event(seq: int) -> dict:
    return {"table": TABLE, "seq": seq, "kind": "card", "card": "9H", "recipient": "player", "pad": "x" * 200}


@pytest.fixture
def server(tmp_path):
    ctx = zmq.Context()
    recent = collections.deque((event(s) for s in range(1, 5001)), maxlen=5000)
    endpoint = f"ipc://{tmp_path}/snap"
    srv = CatchupServer(ctx, [Endpoint(endpoint, lambda e: e, lambda s: s)], TABLE, recent,
                        lambda a, b: iter(()), Limits(chunk_events=10, stall_timeout=60))
    srv.start()
    # The daemon's side of the snapshot hand-over, as its loop does it.
    feeding = {"on": True}

    def feed():
        while feeding["on"]:
            now = time.monotonic()
            if srv.box.wanted(now):
                srv.box.put({"seq": 5000, "table": TABLE}, now)
            time.sleep(0.005)

    import threading

    feeder = threading.Thread(target=feed, daemon=True)
    feeder.start()
    yield ctx, endpoint, srv
    feeding["on"] = False
    feeder.join(2)
    srv.close()
    ctx.destroy(linger=0)


def client(ctx, endpoint):
    sock = ctx.socket(zmq.DEALER)
    sock.linger = 0
    sock.connect(endpoint)
    return sock


def replies(sock, until, timeout=5.0):
    out = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if sock.poll(100):
            out.append(json.loads(sock.recv()))
            if until(out):
                return out
    raise AssertionError(f"no end of replies: {out[-3:]}")


def test_a_third_request_in_flight_is_refused_at_once(server):
    ctx, endpoint, _ = server
    sock = client(ctx, endpoint)
    for i in range(3):
        sock.send(json.dumps({"op": "events", "from": 1, "to": 5000, "id": i}).encode())
    got = replies(sock, lambda out: sum(bool(r.get("done")) for r in out) == 2)
    refused = [r for r in got if not r["ok"]]
    assert [r["id"] for r in refused] == [2] and "2 requests in flight" in refused[0]["error"]
    done = [r for r in got if r.get("done")]
    assert [r["count"] for r in done] == [5000, 5000]


def test_a_client_that_keeps_two_requests_in_flight_is_never_refused(server):
    # A display that pipelines: a new request as soon as one is answered, never more than two outstanding.
    # A request is out of flight once its last reply is sent, not when the server next looks at it.
    ctx, endpoint, _ = server
    sock = client(ctx, endpoint)
    ops = [{"op": "snapshot"}, {"op": "events", "from": 4990, "to": 5000}]
    sent = 0

    def send():
        nonlocal sent
        sock.send(json.dumps({**ops[sent % 2], "id": sent}).encode())
        sent += 1

    send(), send()
    answered, refused = 0, []
    deadline = time.monotonic() + 20
    while answered < 200 and time.monotonic() < deadline:
        if not sock.poll(1000):
            continue
        reply = json.loads(sock.recv())
        if not reply["ok"]:
            refused.append(reply)
        if not reply["ok"] or reply.get("done") or reply.get("op") == "snapshot":
            answered += 1
            send()
    assert answered == 200 and refused == []


def test_a_client_that_never_reads_holds_little_and_others_are_served(server):
    ctx, endpoint, srv = server
    hog = client(ctx, endpoint)
    hog.rcvhwm = 1
    hog.rcvbuf = 4096
    for _ in range(2):
        hog.send(json.dumps({"op": "events", "from": 1, "to": 5000}).encode())
    time.sleep(0.5)  # the hog's pipe fills; its requests are parked
    other = client(ctx, endpoint)
    other.send(b'{"op": "snapshot", "id": "s"}')
    got = replies(other, lambda out: bool(out))
    assert got[0]["ok"] and got[0]["seq"] == 5000 and got[0]["id"] == "s"
    assert srv.stats["replies"] < 2 * 5000 / 10, "the hog did not get its whole range queued"


def test_bad_requests_get_an_error_and_the_thread_serves_on(server):
    ctx, endpoint, _ = server
    sock = client(ctx, endpoint)
    for body in (b"{not json", b'{"op": "events", "from": 9, "to": 2}', b'{"op": "events", "from": 0, "to": 99999}'):
        sock.send(body)
        reply = replies(sock, lambda out: bool(out))[0]
        assert reply["ok"] is False and reply["error"]
    sock.send(b'{"op": "snapshot"}')
    assert replies(sock, lambda out: bool(out))[0]["ok"]


def test_an_idle_connection_is_dropped_after_the_handshake_timeout():
    """A TCP connection that never speaks ZeroMQ holds a descriptor for `handshake_timeout`, not 30 s."""
    import socket

    ctx = zmq.Context()
    srv = CatchupServer(ctx, [Endpoint("tcp://127.0.0.1:*", lambda e: e, lambda s: s)], TABLE,
                        collections.deque(), lambda a, b: iter(()), Limits(handshake_timeout=0.3))
    srv.start()
    port = int(srv.endpoints[0].rsplit(":", 1)[1])
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=5) as idle:
            started = time.monotonic()
            while idle.recv(4096):  # the server's greeting, then the end of the connection
                pass
            assert time.monotonic() - started < 3
    finally:
        srv.close()
        ctx.destroy(linger=0)


def _drain(sock, wait=0.4):
    """Every reply that arrives within `wait` seconds of the last one."""
    out = []
    while sock.poll(round(wait * 1000)):
        out.append(json.loads(sock.recv()))
    return out


def test_the_server_never_sends_more_replies_than_the_clients_credit(server):
    """Credit-based flow control (the ZeroMQ guide's file transfer): N replies, then nothing until more is granted."""
    ctx, endpoint, srv = server
    sock = client(ctx, endpoint)
    sock.send(json.dumps({"op": "events", "from": 1, "to": 1000, "id": "c", "credit": 3}).encode())
    first = _drain(sock)
    assert len(first) == 3 and all(r["ok"] and len(r["events"]) == 10 for r in first)
    sock.send(b'{"op": "credit", "n": 5}')
    second = _drain(sock)
    assert len(second) == 5
    got = first + second + _drain(sock, 0.2)
    assert len(got) == 8, "nothing more without credit"
    while not got[-1].get("done"):
        sock.send(b'{"op": "credit", "n": 64}')
        got += replies(sock, lambda out: bool(out) and (len(out) >= 64 or out[-1].get("done")))
    events = [e["seq"] for r in got for e in r.get("events", [])]
    assert events == list(range(1, 1001)) and got[-1]["count"] == 1000


def test_a_client_that_never_grants_credit_holds_nothing_and_is_dropped(tmp_path):
    ctx = zmq.Context()
    recent = collections.deque((event(s) for s in range(1, 5001)), maxlen=5000)
    srv = CatchupServer(ctx, [Endpoint(f"ipc://{tmp_path}/snap", lambda e: e, lambda s: s)], TABLE, recent,
                        lambda a, b: iter(()), Limits(chunk_events=10, stall_timeout=0.5))
    srv.start()
    try:
        stingy = [client(ctx, srv.endpoints[0]) for _ in range(8)]
        for sock in stingy:
            for _ in range(2):
                sock.send(json.dumps({"op": "events", "from": 1, "to": 5000, "credit": 1}).encode())
        time.sleep(0.3)
        assert srv.stats["replies"] == 16, "one reply per request's credit, no more"
        assert all(c.pending is None for c in list(srv._clients.values())), "no reply made ahead of credit"
        deadline = time.monotonic() + 5
        while srv.stats["dropped_stalled"] < 8 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert srv.stats["dropped_stalled"] == 8 and not srv._clients
    finally:
        srv.close()
        ctx.destroy(linger=0)


@pytest.mark.parametrize("body", [b'{"op": "credit", "n": 0}', b'{"op": "credit", "n": 65}',
                                  b'{"op": "events", "from": 1, "to": 5, "credit": 0}'])
def test_bad_credit_is_an_error(server, body):
    ctx, endpoint, _ = server
    sock = client(ctx, endpoint)
    sock.send(body)
    reply = replies(sock, lambda out: bool(out))[0]
    assert reply["ok"] is False and "Expected `int`" in reply["error"]


@pytest.mark.parametrize("body", [b'{"op": "events", "from": 1, "to": 2, "x\\ny\\u001b[2J": 1}',
                                  b'{"op": "snap\\u2028shot"}', b'{"op": "snapshot", "id\\u0000": 1}'])
def test_an_error_reply_is_one_line_whatever_the_request_quotes(server, body):
    """As the command endpoint's: the parser's message quotes the request's own text, which must not
    break a line or drive a terminal where a client prints the error."""
    ctx, endpoint, _ = server
    sock = client(ctx, endpoint)
    sock.send(body)
    reply = replies(sock, lambda out: bool(out))[0]
    assert reply["ok"] is False and reply["error"].isprintable(), reply


def test_a_key_removed_and_reloaded_is_refused_on_the_connection_it_already_has(tmp_path, keys):
    """The surveillance catch-up endpoint (CURVE): ZAP checks a key at the handshake only, so a client
    connected before its key was removed (and the allow-list reloaded) was served on: a request in
    flight went on, new ones were answered. Its request in flight is dropped, new ones are refused,
    an allowed client is served."""
    import shutil

    allow = tmp_path / "allow"
    shutil.copytree(keys.allow_dir, allow)
    ctx = zmq.Context()
    curve = keys.server(ctx, allow)
    recent = collections.deque((event(s) for s in range(1, 5001)), maxlen=5000)
    srv = CatchupServer(ctx, [Endpoint(f"ipc://{tmp_path}/snap", lambda e: e, lambda s: s, curve)], TABLE, recent,
                        lambda a, b: iter(()), Limits(chunk_events=10, stall_timeout=60))
    srv.start()
    socks = []
    try:
        def connect(name):
            sock = ctx.socket(zmq.DEALER)
            sock.linger = 0
            keys.client(name).apply(sock)
            sock.connect(srv.endpoints[0])
            socks.append(sock)
            return sock

        pit, dealer = connect("pit-boss"), connect("dealer-console")
        pit.send(json.dumps({"op": "events", "from": 1, "to": 5000, "id": "long", "credit": 2}).encode())
        assert len(replies(pit, lambda out: len(out) >= 2)) == 2  # served, then parked for its credit
        (allow / "pit-boss.key").unlink()
        curve.reload()
        pit.send(b'{"op": "credit", "n": 64}')
        pit.send(json.dumps({"op": "events", "from": 1, "to": 3, "id": "again"}).encode())
        got = _drain(pit, 0.5)
        assert got == [{"ok": False, "id": "again", "error": "this key is not on the allow-list (removed)"}], got
        assert srv.stats["dropped_revoked"] == 1 and not srv._clients
        dealer.send(json.dumps({"op": "events", "from": 1, "to": 3, "id": "d"}).encode())
        done = replies(dealer, lambda out: bool(out) and out[-1].get("done"))
        assert [e["seq"] for r in done for e in r.get("events", [])] == [1, 2, 3]
    finally:
        for sock in socks:
            sock.close(0)
        srv.close()
        curve.close()
        ctx.destroy(linger=0)


@pytest.mark.parametrize("body", [b'{"op": "events", "from": 1, "to": 5, "to": 2}',
                                  b'{"op": "snapshot", "id": "a", "id": "b"}',
                                  b'{"op": "credit", "n": 1, "n": 64}'])
def test_a_key_given_twice_is_an_error_as_on_the_command_endpoint(server, body):
    """Which of two values counts is the parser's choice: the request is ambiguous and refused, and the
    thread serves on."""
    ctx, endpoint, _ = server
    sock = client(ctx, endpoint)
    sock.send(body)
    reply = replies(sock, lambda out: bool(out))[0]
    assert reply["ok"] is False and "given twice" in reply["error"], reply
    sock.send(b'{"op": "snapshot"}')
    assert replies(sock, lambda out: bool(out))[0]["ok"]
