"""A flood of malformed commands costs the card loop no more than a flood of good ones.

decision (shoed/net/commands.py): the command endpoint is served on the card loop's thread.
Every request counts against its sender's rate before it is read, so malformed requests
(which were read whole and refused without counting) are refused as cheaply as good ones
beyond the rate; and the request's checks run cheapest first, so a 64 KiB body that is no
command is refused before the slow duplicate-key pass (about 4 ms of pure Python each).
Real ZeroMQ sockets (an endpoint without keys: its rate is per address).
"""

from __future__ import annotations

import zmq

from shoed.net import commands as cm
from shoed.net.commands import CommandRejected, CommandServer, parse_request
from shoed.net.limits import RateLimiter

from .helpers import ANY_PORT, Serving

SMALL_OBJECTS = b",".join([b'{"a":1}'] * 7500)  # 60 kB of them: under the 64 KiB a request may be
BIG_UNKNOWN = b'{"cmd":"nope","args":{"x":[' + SMALL_OBJECTS + b"]}}"
BIG_BAD_ARGS = b'{"cmd":"status","args":{"x":[' + SMALL_OBJECTS + b"]}}"


def test_malformed_requests_count_against_the_rate(ctx):
    seen = []
    limiter = RateLimiter(rate=1, burst=5)
    with CommandServer(ctx, ANY_PORT, seen.append, insecure=True, rate_limit=limiter) as server, Serving(server):
        sock = ctx.socket(zmq.DEALER)
        sock.linger = 0
        sock.connect(server.endpoint)
        for i in range(30):
            sock.send(b'{"cmd": "no_such_command", "id": %d}' % i)
        replies = []
        while len(replies) < 30 and sock.poll(2000):
            replies.append(cm.wire.decode(sock.recv()))
        sock.close(0)
    assert len(replies) == 30
    limited = [r for r in replies if "rate limited" in r["error"]]
    assert len(limited) >= 24, [r["error"][:40] for r in replies]
    assert sorted(r["id"] for r in replies) == list(range(30))  # the id still comes back, to match the reply
    assert seen == []


def test_a_big_body_that_is_no_command_is_refused_before_the_slow_pass(monkeypatch):
    """The order of the checks, not their time (timings are benchmarks' to measure): a body that is
    no command, or whose arguments are wrong, is refused without the duplicate-key pass; a good
    request goes through it."""
    passes = []
    slow_pass = cm.wire.duplicate_key

    def counted(body):
        passes.append(len(body))
        return slow_pass(body)

    monkeypatch.setattr(cm.wire, "duplicate_key", counted)
    for body, words in ((BIG_UNKNOWN, "unknown command"), (BIG_BAD_ARGS, "bad arguments")):
        try:
            parse_request(body)
        except CommandRejected as exc:
            assert words in str(exc)
        else:
            raise AssertionError(f"{words}: not refused")
    assert passes == []
    good = b'{"cmd":"status","args":{}}'
    assert parse_request(good)[0] == "status"
    assert passes == [len(good)]
    with_twice = b'{"cmd":"status","args":{},"id":1,"id":2}'
    try:
        parse_request(with_twice)
    except CommandRejected as exc:
        assert "given twice" in str(exc)
    else:
        raise AssertionError("a key given twice: not refused")
    assert passes == [len(good), len(with_twice)]
