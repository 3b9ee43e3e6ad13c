"""A flood of malformed commands costs the card loop no more than a flood of good ones.

decision (shoed/net/commands.py): the command endpoint is served on the card loop's thread.
Every request counts against its sender's rate before it is read, so malformed requests
(which were read whole and refused without counting) are refused as cheaply as good ones
beyond the rate; a request over MAX_REQUEST_BYTES (4 KiB) is refused before it is parsed at all;
and the checks of a smaller one run cheapest first, so a body that is no command is refused
before the slower duplicate-key pass.
Real ZeroMQ sockets (an endpoint without keys: its rate is per address).
"""

from __future__ import annotations

import json

import zmq

from shoed.net import commands as cm
from shoed.net.commands import CommandRejected, CommandServer, parse_request
from shoed.net.limits import RateLimiter

from .helpers import ANY_PORT, Serving

SMALL_OBJECTS = b",".join([b'{"a":1}'] * 500)  # 4 kB of them: under the 4 KiB a request may be
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


def _counting(monkeypatch):
    """Count every parse of a request body: msgspec's decoder, the id's salvage, the duplicate-key pass."""
    parses = []

    class Decoder:
        def __init__(self, real):
            self.real = real

        def decode(self, body):
            parses.append(("decode", len(body)))
            return self.real.decode(body)

    slow_pass, salvage = cm.wire.duplicate_key, cm.wire.salvage_id
    monkeypatch.setattr(cm, "_request_decoder", Decoder(cm._request_decoder))
    monkeypatch.setattr(cm.wire, "duplicate_key", lambda body: parses.append(("duplicate", len(body))) or slow_pass(body))
    monkeypatch.setattr(cm.wire, "salvage_id", lambda body: parses.append(("salvage", len(body))) or salvage(body))
    return parses


# `args` given twice: msgspec keeps the last ({}), so the first one's 60 kB of tiny objects went
# through the cheap checks and then cost the pure-Python duplicate-key pass (3 to 4 ms each).
ARGS_TWICE = b'{"cmd":"status","args":{"x":[' + b",".join([b"{}"] * 20000) + b']},"args":{}}'
# The longest valid request: a 200-character reason and a 128-character id, every character outside
# the BMP and written as a \\u escape pair (json.dumps's default).
LONGEST = json.dumps({"cmd": "void", "args": {"reason": "\U0001F600" * 200}, "id": "\U0001F600" * 128}).encode()


def test_a_request_over_the_cap_is_refused_before_any_parsing(monkeypatch, ctx):
    parses = _counting(monkeypatch)
    for body in (ARGS_TWICE, BIG_UNKNOWN.replace(b"}}", b"}, " + b" " * cm.MAX_REQUEST_BYTES + b"}")):
        try:
            parse_request(body)
        except CommandRejected as exc:
            assert str(exc) == f"request too large: {len(body)} bytes, at most {cm.MAX_REQUEST_BYTES}"
        else:
            raise AssertionError("not refused")
    assert parses == []
    # The same at a real endpoint: one line back, no id salvaged from the body, the handler never called.
    seen: list = []
    with CommandServer(ctx, ANY_PORT, seen.append, insecure=True) as server, Serving(server):
        sock = ctx.socket(zmq.DEALER)
        sock.linger = 0
        sock.connect(server.endpoint)
        sock.send(ARGS_TWICE)
        assert sock.poll(3000)
        reply = cm.wire.decode(sock.recv())
        sock.close(0)
    assert reply == {"ok": False, "error": f"request too large: {len(ARGS_TWICE)} bytes, at most {cm.MAX_REQUEST_BYTES}"}
    assert parses == [] and seen == []


def test_the_longest_valid_request_fits_under_the_cap():
    assert len(LONGEST) <= cm.MAX_REQUEST_BYTES
    assert len(json.dumps(json.loads(LONGEST), indent=4).encode()) <= cm.MAX_REQUEST_BYTES  # pretty-printed too
    name, args, request_id = parse_request(LONGEST)
    assert name == "void" and len(args["reason"]) == 200 and len(request_id) == 128
