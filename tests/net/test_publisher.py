"""The PUB socket (shoed.net.publisher).

table-game-standards item 16: PUB drops at the high-water mark, so every event
carries the table's strictly increasing seq; publishing must never wait for a
slow display.
"""

from __future__ import annotations

import threading
import time

import pytest
import zmq

from shoed.net import wire
from shoed.net.publisher import Publisher

from .helpers import ANY_PORT


def _sub(ctx, endpoint, *prefixes, rcvhwm=1000):
    sub = ctx.socket(zmq.SUB)
    sub.linger = 0
    sub.rcvhwm = rcvhwm
    for prefix in prefixes:
        sub.setsockopt(zmq.SUBSCRIBE, prefix.encode())
    sub.connect(endpoint)
    return sub


def _settle(pub, sub, table="t1"):
    """Wait until a subscription has reached the publisher (heartbeats until one arrives)."""
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        pub.heartbeat()
        if sub.poll(20):
            while sub.poll(20):
                sub.recv_multipart()
            return
    raise AssertionError("subscription never reached the publisher")


def _leave(pub, sub):
    """Close a subscriber and wait until the publisher has seen it go (its unsubscription)."""
    sub.close(0)
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        if pub.socket.poll(20) and pub.socket.recv()[:1] == b"\x00":
            return
    raise AssertionError("the publisher never saw the subscriber leave")


def _recv_event(sock, timeout_ms=2000):
    """The next non-heartbeat message: (topic, event), or None on timeout."""
    while sock.poll(timeout_ms):
        topic, payload = sock.recv_multipart()
        if topic != b"t1.heartbeat" and not topic.endswith(b".heartbeat"):
            return topic, wire.decode(payload)
    return None


def _event(seq, kind="card.dealt", table="t1", **extra):
    return {"table": table, "seq": seq, "kind": kind, **extra}


def test_subscribers_filter_by_topic_prefix(ctx):
    with Publisher(ctx, ANY_PORT, "t1") as pub:
        everything = _sub(ctx, pub.endpoint, "t1.")
        cards = _sub(ctx, pub.endpoint, "t1.card", "t1.heartbeat")
        coups = _sub(ctx, pub.endpoint, "t1.coup", "t1.heartbeat")
        for s in (everything, cards, coups):
            _settle(pub, s)
        kinds = ["shoe.opened", "card.dealt", "card.dealt", "coup.result", "misdeal", "alarm.tamper"]
        for seq, kind in enumerate(kinds, 1):
            assert pub.publish(_event(seq, kind))

        def received(sock, n):
            out = []
            for _ in range(n):
                got = _recv_event(sock)
                assert got, f"only {out}"
                topic, event = got
                assert topic == wire.topic_for("t1", event["kind"]).encode()
                out.append((topic.decode(), event["seq"]))
            return out

        assert received(everything, 6) == [
            ("t1.shoe", 1), ("t1.card", 2), ("t1.card", 3), ("t1.coup", 4), ("t1.misdeal", 5), ("t1.alarm", 6),
        ]
        assert received(cards, 2) == [("t1.card", 2), ("t1.card", 3)]
        assert received(coups, 1) == [("t1.coup", 4)]
        assert _recv_event(cards, 100) is None and _recv_event(coups, 0) is None
        assert pub.stats["sent"] == 6


def test_table_prefix_with_dot_does_not_match_other_tables(ctx):
    with Publisher(ctx, ANY_PORT, "t10") as t10:
        with_dot = _sub(ctx, t10.endpoint, "t1.", "t10.heartbeat")
        without_dot = _sub(ctx, t10.endpoint, "t1", "t10.heartbeat")
        _settle(t10, with_dot)
        _settle(t10, without_dot)
        t10.publish(_event(1, table="t10"))
        # "t1" is a prefix of "t10" for ZeroMQ, but not this table's topic: refused, as is "t1."
        assert _recv_event(without_dot, 200) is None
        assert _recv_event(with_dot, 200) is None
        assert t10.refusals.total == 2


# (event, error) the publisher refuses: bugs in the caller, not network trouble
REFUSED = [
    (_event(5, table="t2"), "table"),
    (_event(3), "must increase"),
    (_event(4), "must increase"),
    (_event(6, kind="heartbeat"), "reserved"),
    (_event(6, kind="snapshot"), "reserved"),
    ({"table": "t1", "seq": 6}, "kind"),
]


@pytest.mark.parametrize(("event", "error"), REFUSED)
def test_publish_refuses_bad_events(ctx, event, error):
    with Publisher(ctx, ANY_PORT, "t1", last_seq=4) as pub:
        with pytest.raises(wire.WireError, match=error):
            pub.publish(event)
        assert pub.last_seq == 4
        assert pub.publish(_event(5))


def test_heartbeat_only_when_idle_and_repeats_last_seq(ctx):
    now = [100.0]
    with Publisher(ctx, ANY_PORT, "t1", clock=lambda: now[0], heartbeat_interval=1.0) as pub:
        sub = _sub(ctx, pub.endpoint, "t1.heartbeat")
        _settle(pub, sub)
        now[0] += 0.5
        assert not pub.maybe_heartbeat()
        now[0] += 0.6
        assert pub.maybe_heartbeat()
        beat = wire.decode(sub.recv_multipart()[1])
        assert beat == {"table": "t1", "kind": "heartbeat", "interval": 1.0}  # nothing published yet: no seq
        pub.publish(_event(41))
        now[0] += 0.9
        assert not pub.maybe_heartbeat()  # the event just sent counts as a sign of life
        assert pub.maybe_heartbeat(now[0] + 0.2)  # the daemon passes its own time
        assert wire.decode(sub.recv_multipart()[1])["seq"] == 41
        assert not pub.maybe_heartbeat(now[0] + 0.3)


def test_restarted_publisher_heartbeats_the_journal_head(ctx):
    with Publisher(ctx, ANY_PORT, "t1", last_seq=1234) as pub:
        sub = _sub(ctx, pub.endpoint, "t1.heartbeat")
        _settle(pub, sub)
        pub.heartbeat()
        assert wire.decode(sub.recv_multipart()[1])["seq"] == 1234
        with pytest.raises(wire.WireError):
            pub.publish(_event(1234))


def test_stalled_subscriber_never_blocks_publish(ctx):
    """A display that stops reading loses messages alone: publish returns every
    time, and a display that reads still gets what is published after the burst."""
    with Publisher(ctx, ANY_PORT, "t1") as pub:
        stalled = _sub(ctx, pub.endpoint, "t1.", rcvhwm=10)
        stalled.setsockopt(zmq.RCVBUF, 4096)
        live = _sub(ctx, pub.endpoint, "t1.")
        _settle(pub, live)
        _settle(pub, stalled)
        total = 20_000
        padding = "x" * 500  # 10 MB in all: far beyond what the stalled pipe can hold
        results = []
        burst = threading.Thread(target=lambda: results.extend(
            pub.publish(_event(s, pad=padding)) for s in range(1, total + 1)))
        burst.start()
        burst.join(60)
        assert not burst.is_alive(), "publish blocked behind a stalled subscriber"
        assert len(results) == total and all(results)
        while _recv_event(live, 200) is not None:
            pass
        pub.publish(_event(total + 1))
        assert _recv_event(live)[1]["seq"] == total + 1
        held = 0
        while stalled.poll(0):
            stalled.recv_multipart()
            held += 1
        assert held < total
        # The displays leave before the publisher closes: a subscriber whose pipe is full when its
        # publisher's connection drops under it is where libzmq 4.3's engine asserts (see Publisher).
        _leave(pub, stalled)
        _leave(pub, live)


def test_a_flood_of_subscriptions_is_never_taken_in_front_of_an_event(ctx):
    """Subscriptions waiting are taken on the loop's turns and before heartbeats, not by publish():
    before, every event first read up to 64 of them, so a subscription flood delayed every card."""
    with Publisher(ctx, ANY_PORT, "t1") as pub:
        flood = _sub(ctx, pub.endpoint, *(f"flood-{i:04d}" for i in range(100)))
        deadline = time.monotonic() + 5
        while not pub.socket.poll(0) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert pub.socket.poll(0), "the subscriptions reached the publisher"
        pub.publish(_event(1))
        assert pub.refusals.total == 0
        pub.maybe_heartbeat()
        assert pub.refusals.total == 64  # one turn's share, each refused: not the table's topic
        flood.close(0)


def test_a_renewed_publisher_binds_its_tcp_port_again_and_its_subscribers_come_back(ctx):
    with Publisher(ctx, ANY_PORT, "t1") as pub:
        endpoint = pub.endpoint
        sub = _sub(ctx, endpoint, "t1.")
        _settle(pub, sub)
        assert pub.publish(_event(1)) and _recv_event(sub)[1]["seq"] == 1
        assert pub.renew() is True and pub.endpoint == endpoint and pub.unbound_since is None
        _settle(pub, sub)  # the subscriber connected again by itself and sent its subscription
        assert pub.publish(_event(2)) and _recv_event(sub)[1]["seq"] == 2
        sub.close(0)


def test_a_renewed_publisher_whose_port_was_taken_meanwhile_binds_it_again_once_free(ctx):
    """Renewing closes the socket first: if another socket takes the port in that moment, the publisher
    stays up unbound (what it publishes reaches no one, nothing raises) and binds again each second."""
    now = [100.0]
    with Publisher(ctx, ANY_PORT, "t1", clock=lambda: now[0]) as pub:
        endpoint = pub.endpoint
        pub.socket.close(0)
        thief = ctx.socket(zmq.PUB)
        thief.linger = 0
        deadline = time.monotonic() + 5
        while True:  # the port is freed by ZeroMQ's I/O thread, a moment after the close
            try:
                thief.bind(endpoint)
                break
            except zmq.ZMQError:
                assert time.monotonic() < deadline
                time.sleep(0.01)
        pub.socket = ctx.socket(zmq.XPUB)  # renew() closes the socket it holds
        assert pub.renew() is False and pub.unbound_since == 100.0
        pub.publish(_event(1))  # to no one, without an error
        now[0] += 0.5
        pub.maybe_heartbeat()
        assert pub.unbound_since is not None  # not tried again within the second
        thief.close(0)
        deadline = time.monotonic() + 5
        while pub.unbound_since is not None:  # each second of the publisher's clock, one more try
            assert time.monotonic() < deadline, "never bound again"
            time.sleep(0.05)
            now[0] += 1.0
            pub.maybe_heartbeat()
        assert pub.endpoint == endpoint
        sub = _sub(ctx, endpoint, "t1.")
        _settle(pub, sub)
        assert pub.publish(_event(2)) and _recv_event(sub)[1]["seq"] == 2
        sub.close(0)
