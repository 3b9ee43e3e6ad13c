"""The ZAP handler's answers (shoed.net.zap; ZeroMQ RFC 27), one case per kind of request."""

from __future__ import annotations

import pytest
import zmq
from zmq.utils import z85

from shoed.net.zap import ZapHandler

ALLOWED = bytes(range(32))
STRANGER = bytes(range(1, 33))


@pytest.fixture
def handler():
    ctx = zmq.Context()
    allowed = {z85.encode(ALLOWED)}
    h = ZapHandler(ctx, {"shoed": lambda domain, key: key in allowed})
    yield h
    h.stop()
    ctx.term()


def _request(domain=b"shoed", mechanism=b"CURVE", *credentials, version=b"1.0"):
    return [version, b"7", domain, b"127.0.0.1", b"", mechanism, *credentials]


@pytest.mark.parametrize("request_frames, status, user", [
    (_request(b"shoed", b"CURVE", ALLOWED), b"200", z85.encode(ALLOWED)),  # on the allow-list: its Z85 key
    (_request(b"shoed", b"CURVE", STRANGER), b"400", b""),  # not on it
    (_request(b"other", b"CURVE", ALLOWED), b"400", b""),  # a domain without an allow-list
    (_request(b"shoed", b"CURVE", ALLOWED[:31]), b"400", b""),  # not a key
    (_request(b"shoed", b"CURVE"), b"400", b""),  # no credentials
    (_request(b"", b"NULL"), b"200", b"anonymous"),  # an endpoint without keys on this context
    (_request(b"shoed", b"PLAIN", b"user", b"password"), b"400", b""),
    (_request(b"shoed", b"CURVE", ALLOWED, version=b"2.0"), b"400", b""),
    ([b"1.0", b"7", b"shoed"], b"400", b""),  # too short
])
def test_answers(handler, request_frames, status, user):
    reply = handler.answer(request_frames)
    assert reply[0] == b"1.0" and reply[1] == b"7"
    assert reply[2] == status and reply[4] == user


def test_refusals_are_counted(handler):
    handler.answer(_request(b"shoed", b"CURVE", STRANGER))
    handler.answer(_request(b"shoed", b"CURVE", ALLOWED))
    assert handler.stats == {"allowed": 1, "refused": 1}


def test_one_handler_per_context(handler):
    with pytest.raises(zmq.ZMQError):
        ZapHandler(handler.context, {})
