"""The authenticated command endpoint (shoed.net.commands).

table-game-standards item 15 (CURVE with a running ZAP authenticator and an
allow-list) and item 6 (manual overrides are recorded: every command reaches
the daemon with the key that sent it). The command names are the dealer's
corrections of the Macau statutory rules, Article X (item 9).
"""

from __future__ import annotations

import pytest
import zmq

from shoed.net import commands as cm
from shoed.net.commands import (Command, CommandRejected, CommandServer, CommandTimeout, CurveMismatch, parse_request,
                                 send_command)

from .helpers import ANY_PORT, Serving


class Daemon:
    """The daemon's side: records every command, refuses some on meaning."""

    def __init__(self) -> None:
        self.seen: list[Command] = []

    def __call__(self, command: Command):
        self.seen.append(command)
        if command.name == "burn_card" and command.args.get("misdeal") == 99:
            raise CommandRejected("no open misdeal 99")
        if command.name == "return_card" and command.args.get("misdeal") == 98:
            return {"ok": False, "error": "misdeal 98 is not a card out of sequence"}
        if command.name == "void" and command.args.get("reason") == "boom":
            raise RuntimeError("bug in the daemon")
        if command.name == "status":
            return {"status": {"coup": 12, "shoe": "open"}}
        return None


@pytest.fixture
def endpoint(ctx, keys):
    daemon = Daemon()
    with keys.server(ctx) as curve:
        server = CommandServer(ctx, ANY_PORT, daemon, curve)
        with Serving(server):
            yield server, daemon
        server.close()


def send(server, keys, cmd, args=None, client="dealer-console", timeout=2.0, **kw):
    return send_command(server.endpoint, cmd, args, keys.client(client), timeout=timeout, **kw)


def test_allowed_client_gets_a_reply_and_the_daemon_gets_its_key(endpoint, keys):
    server, daemon = endpoint
    reply = send(server, keys, "status", request_id="s1")
    assert reply == {"ok": True, "id": "s1", "cmd": "status", "status": {"coup": 12, "shoe": "open"}}
    reply = send(server, keys, "void", {"reason": "card exposed"}, client="pit-boss")
    assert reply == {"ok": True, "cmd": "void"}
    status, void = daemon.seen
    assert status.client_key == keys.client_keys["dealer-console"]
    assert status.client_name == "dealer-console"
    assert void.client_key == keys.client_keys["pit-boss"] and void.client_name == "pit-boss"
    assert void.args == {"reason": "card exposed"}
    assert void.peer_address == "127.0.0.1"
    assert void.to_json() == {
        "cmd": "void", "args": {"reason": "card exposed"},
        "client_key": keys.client_keys["pit-boss"], "client_name": "pit-boss", "peer_address": "127.0.0.1",
        "client_role": "dealer",  # its key file names no role
    }


def test_client_not_on_the_allow_list_gets_no_reply(endpoint, keys):
    server, daemon = endpoint
    with pytest.raises(CommandTimeout):
        send(server, keys, "void", {"reason": "let me in"}, client="stranger", timeout=0.5)
    assert daemon.seen == []
    assert server.stats["requests"] == 0  # refused at the handshake, never read
    assert send(server, keys, "status")["ok"]


def test_plain_client_without_curve_gets_no_reply(ctx, endpoint):
    server, daemon = endpoint
    sock = ctx.socket(zmq.DEALER)
    sock.linger = 0
    sock.connect(server.endpoint)
    sock.send(b'{"cmd": "status"}')
    assert not sock.poll(500)
    sock.close(0)
    assert daemon.seen == []


def test_command_endpoint_needs_curve_unless_told_it_is_a_lab(ctx, keys):
    with pytest.raises(TypeError, match="ServerCurve"):
        CommandServer(ctx, ANY_PORT, lambda c: None)
    with pytest.raises(TypeError, match="ServerCurve"):
        CommandServer(ctx, ANY_PORT, lambda c: None, keys.client("pit-boss"))
    seen = []
    with CommandServer(ctx, ANY_PORT, seen.append, insecure=True) as server, Serving(server):
        sock = ctx.socket(zmq.DEALER)
        sock.linger = 0
        sock.connect(server.endpoint)
        sock.send(b'{"cmd": "status"}')
        assert sock.poll(2000)
        assert cm.wire.decode(sock.recv()) == {"ok": True, "cmd": "status"}
        sock.close(0)
    assert seen[0].client_key is None and seen[0].to_json() == {"cmd": "status", "args": {}, "peer_address": "127.0.0.1"}


def test_a_client_without_keys_is_served_by_a_lab_bench_endpoint_when_it_says_so(ctx, keys):
    seen = []
    with CommandServer(ctx, ANY_PORT, seen.append, insecure=True) as server, Serving(server):
        with pytest.raises(TypeError, match="insecure=True"):
            send_command(server.endpoint, "status")  # no keys: only by choice
        with pytest.raises(TypeError, match="no keys"):
            send_command(server.endpoint, "status", client_keys=keys.client("pit-boss"), insecure=True)
        reply = send_command(server.endpoint, "void", {"reason": "card exposed"}, request_id=7, insecure=True,
                             context=ctx)
    assert reply == {"ok": True, "id": 7, "cmd": "void"}
    assert seen[0].client_key is None and seen[0].args == {"reason": "card exposed"}


def test_a_client_with_keys_at_a_lab_bench_endpoint_is_told_at_once(ctx, keys):
    import time

    seen = []
    with CommandServer(ctx, ANY_PORT, seen.append, insecure=True) as server, Serving(server):
        started = time.monotonic()
        with pytest.raises(CurveMismatch, match="without CURVE"):
            send_command(server.endpoint, "status", None, keys.client("pit-boss"), timeout=10)
        assert time.monotonic() - started < 5  # not the timeout
    assert seen == []


def test_a_client_without_keys_at_an_endpoint_with_curve_is_told_at_once(endpoint, keys):
    import time

    server, daemon = endpoint
    started = time.monotonic()
    with pytest.raises(CurveMismatch, match="CURVE keys only") as refused:
        send_command(server.endpoint, "void", {"reason": "let me in"}, timeout=10, insecure=True)
    assert isinstance(refused.value, CommandTimeout)  # a caller that handles "no reply" handles this
    assert time.monotonic() - started < 5
    assert daemon.seen == [] and server.stats["requests"] == 0
    assert send(server, keys, "status")["ok"]


def test_a_client_without_keys_and_no_daemon_times_out(ctx):
    with pytest.raises(CommandTimeout, match="daemon down") as waited:
        send_command("tcp://127.0.0.1:9", "status", timeout=0.3, insecure=True, context=ctx)
    assert not isinstance(waited.value, CurveMismatch)


# Every command the daemon handles, with arguments of the right shape.
GOOD = [
    ("open_shoe", {}),
    ("open_shoe", {"decks": 8}),
    ("close_shoe", {}),
    ("confirm", {}),
    ("void", {}),
    ("void", {"reason": "dealt from the wrong side"}),
    ("burn_card", {}),
    ("burn_card", {"misdeal": 3}),
    ("return_card", {"misdeal": 0}),
    ("decide", {"side": "player", "draw": True}),
    ("decide", {"side": "banker", "draw": False}),
    ("enter_card", {"card": "9H"}),
    ("enter_card", {"card": "10H", "misdeal": 4}),
    ("status", {}),
    ("unlock", {}),
]


@pytest.mark.parametrize(("cmd", "args"), GOOD)
def test_parse_request_accepts_each_command(cmd, args):
    body = cm.wire.encode({"cmd": cmd, "args": args, "id": 5})
    assert parse_request(body) == (cmd, args, 5)


# (request body, words the error must contain)
BAD = [
    (b"{not json", "not JSON"),
    (b"\xff\xfe", "not JSON"),
    (b'"status"', "Expected `object`"),
    (b'{"args": {}}', "missing required field `cmd`"),
    (b'{"cmd": 7}', "Expected `str`, got `int`"),
    (b'{"cmd": "status", "args": []}', "Expected `object`, got `array`"),
    (b'{"cmd": "status", "extra": 1}', "unknown field `extra`"),
    (b'{"cmd": "status", "id": [1]}', "at `$.id`"),
    (b'{"cmd": "shuffle"}', "unknown command 'shuffle'"),
    (b'{"cmd": "enter_card", "args": {}}', "bad arguments for enter_card: Object missing required field `card`"),
    (b'{"cmd": "void", "args": {"reason": ""}}', "length >= 1"),
    # a void's reason is one printable line: the shift report prints it to a terminal as it is
    (b'{"cmd": "void", "args": {"reason": "jam\\nOK: coup confirmed"}}', "matching regex"),
    (b'{"cmd": "void", "args": {"reason": "jam\\u001b[2J"}}', "matching regex"),
    (b'{"cmd": "void", "args": {"reason": "jam\\u2028x"}}', "matching regex"),
    (b'{"cmd": "open_shoe", "args": {"decks": 0}}', ">= 1 - at `$.decks`"),
    (b'{"cmd": "open_shoe", "args": {"decks": "8"}}', "Expected `int | null`, got `str`"),
    (b'{"cmd": "decide", "args": {"side": "tie", "draw": true}}', "Invalid enum value 'tie'"),
    (b'{"cmd": "decide", "args": {"side": "player", "draw": 1}}', "Expected `bool`, got `int`"),
    (b'{"cmd": "decide", "args": {"side": "player"}}', "missing required field `draw`"),
    (b'{"cmd": "enter_card", "args": {"card": 9}}', "Expected `str`, got `int` - at `$.card`"),
    (b'{"cmd": "enter_card", "args": {"card": "nine of hearts"}}', "length <= 3"),
    (b'{"cmd": "burn_card", "args": {"misdeal": -1}}', ">= 0"),
    (b'{"cmd": "burn_card", "args": {"misdeal": 1.5}}', "got `float` - at `$.misdeal`"),
    (b'{"cmd": "close_shoe", "args": {"coup": 12}}', "unknown field `coup`"),
    (b'{"cmd": "status", "args": {"verbose": true}}', "unknown field `verbose`"),
    # a key given twice: which one counts would be the parser's choice (msgspec keeps the last)
    (b'{"cmd": "status", "cmd": "unlock"}', "the key 'cmd' is given twice"),
    (b'{"cmd": "void", "args": {"reason": "a", "reason": "b"}}', "the key 'reason' is given twice"),
    (b'{"cmd": "confirm", "args": {"coup": 3}, "args": {"coup": 4}}', "the key 'args' is given twice"),
]


@pytest.mark.parametrize(("body", "words"), BAD)
def test_parse_request_refuses_with_a_clear_message(body, words):
    with pytest.raises(CommandRejected) as err:
        parse_request(body)
    assert words in str(err.value)


def raw_reply(ctx, server, keys, body: bytes) -> dict:
    """The endpoint's reply to `body` sent as it is by the dealer's console (a CURVE client)."""
    sock = ctx.socket(zmq.DEALER)
    sock.linger = 0
    keys.client("dealer-console").apply(sock)
    sock.connect(server.endpoint)
    try:
        sock.send(body)
        assert sock.poll(2000)
        return cm.wire.decode(sock.recv())
    finally:
        sock.close(0)


@pytest.mark.parametrize(("body", "words"), BAD[::3])
def test_bad_requests_get_error_replies_and_the_endpoint_keeps_serving(ctx, endpoint, keys, body, words):
    server, daemon = endpoint
    reply = raw_reply(ctx, server, keys, body)
    assert reply["ok"] is False and words in reply["error"]
    assert daemon.seen == []
    assert send(server, keys, "status")["ok"]


@pytest.mark.parametrize("body", [b'{"cmd": "status", "x\\nOK confirmed": 1}',
                                  b'{"cmd": "status", "args": {"a\\u2028b\\u0000": 1}}'])
def test_an_error_reply_is_one_line_whatever_the_request_quotes(ctx, endpoint, keys, body):
    server, _ = endpoint
    error = raw_reply(ctx, server, keys, body)["error"]
    assert "unknown field" in error and error.isprintable(), error
    assert "\\n" in error or "\\u2028" in error


def test_unknown_command_error_names_the_known_ones(endpoint, keys):
    server, _ = endpoint
    reply = send(server, keys, "reboot", request_id=3)
    assert reply["id"] == 3 and not reply["ok"]
    assert "unknown command 'reboot'" in reply["error"] and "enter_card" in reply["error"]


def test_large_request_gets_an_error_reply(endpoint, keys):
    server, daemon = endpoint
    args = {"reason": "x" * 100_000}
    size = len(cm.wire.encode({"cmd": "void", "args": args, "id": "big"}))
    reply = send(server, keys, "void", args, request_id="big")
    assert reply == {"ok": False, "error": f"request too large: {size} bytes, at most {cm.MAX_REQUEST_BYTES}"}
    assert daemon.seen == []


def test_huge_request_is_cut_off_by_zeromq_and_the_endpoint_keeps_serving(endpoint, keys):
    server, daemon = endpoint
    with pytest.raises(CommandTimeout):
        send(server, keys, "void", {"reason": "x" * (2 * 1024 * 1024)}, timeout=0.5)
    assert daemon.seen == []
    assert send(server, keys, "status")["ok"]


def test_daemon_refusal_and_daemon_bug_are_error_replies(endpoint, keys):
    server, _daemon = endpoint
    reply = send(server, keys, "burn_card", {"misdeal": 99}, request_id=1)
    assert reply == {"ok": False, "id": 1, "error": "no open misdeal 99"}
    reply = send(server, keys, "return_card", {"misdeal": 98}, request_id=2)
    assert reply == {"ok": False, "id": 2, "cmd": "return_card", "error": "misdeal 98 is not a card out of sequence"}
    reply = send(server, keys, "void", {"reason": "boom"})
    assert reply == {"ok": False, "error": "internal error handling void: RuntimeError"}
    assert send(server, keys, "status")["ok"]
    assert server.stats["handler_errors"] == 1 and server.stats["rejected"] == 2


def test_result_that_is_not_json_is_an_error_reply(ctx, keys):
    with keys.server(ctx) as curve:
        server = CommandServer(ctx, ANY_PORT, lambda c: {"when": object()}, curve)
        with Serving(server):
            reply = send(server, keys, "status", request_id=2)
        server.close()
    assert reply == {"ok": False, "id": 2, "error": "internal error: result not JSON"}


def test_many_clients_each_get_their_own_reply(endpoint, keys):
    server, daemon = endpoint
    for i in range(20):
        who = ("dealer-console", "pit-boss")[i % 2]
        reply = send(server, keys, "burn_card", {"misdeal": i}, client=who, request_id=i)
        assert reply == {"ok": True, "id": i, "cmd": "burn_card"}
    assert [(c.args["misdeal"], c.client_name) for c in daemon.seen] == [
        (i, ("dealer-console", "pit-boss")[i % 2]) for i in range(20)
    ]


# A void's reason is printed as it is by `journal recall`, the shift report and the boards: an invisible
# format character would change what surveillance reads there. U+202E (right-to-left override) shows
# "void: card 9\u202eKH" as "void: card 9HK"; a zero-width space or joiner hides inside a word.
INVISIBLE = ["\u202e", "\u202a", "\u2066", "\u2069", "\u200b", "\u200d", "\u200e", "\u2060", "\ufeff", "\u00ad",
             "\u061c"]


@pytest.mark.parametrize("char", INVISIBLE, ids=[f"U+{ord(c):04X}" for c in INVISIBLE])
def test_a_reason_with_an_invisible_format_character_is_refused(ctx, endpoint, keys, char):
    server, daemon = endpoint
    body = cm.wire.encode({"cmd": "void", "args": {"reason": f"jam at card 9{char}KH"}, "id": 9})
    reply = raw_reply(ctx, server, keys, body)
    assert reply["ok"] is False and reply["id"] == 9 and "matching regex" in reply["error"], reply
    assert reply["error"].isprintable()
    assert daemon.seen == []


def test_a_reason_in_any_script_is_taken(ctx, endpoint, keys):
    server, daemon = endpoint
    reason = "jam – carte abîmée, カード 9♥ (שולחן 3)"
    reply = raw_reply(ctx, server, keys, cm.wire.encode({"cmd": "void", "args": {"reason": reason}}))
    assert reply["ok"] is True and [c.args for c in daemon.seen] == [{"reason": reason}]


def test_a_refused_client_is_told_in_time_when_its_handshake_fails_before_it_sends(endpoint, keys, monkeypatch):
    """A key not on the allow-list is refused at the CURVE handshake. Where that happens before the
    request is sent, the client's socket has no peer to queue the request for: the send itself is
    bounded by the timeout, and the client gets CommandTimeout, not a wait without end."""
    import threading
    import time

    server, daemon = endpoint
    encode = cm.wire.encode

    def late(request):
        time.sleep(0.5)  # the handshake is refused meanwhile
        return encode(request)

    monkeypatch.setattr(cm.wire, "encode", late)
    outcome: list[BaseException | dict] = []

    def client() -> None:
        try:
            outcome.append(send(server, keys, "void", {"reason": "let me in"}, client="stranger", timeout=1.0))
        except BaseException as exc:  # noqa: BLE001 - the outcome is asserted below
            outcome.append(exc)

    started = time.monotonic()
    thread = threading.Thread(target=client, daemon=True)
    thread.start()
    thread.join(10)
    assert not thread.is_alive(), "the refused client still waits"
    assert isinstance(outcome[0], CommandTimeout), outcome
    assert time.monotonic() - started < 5
    assert daemon.seen == []


def test_the_replies_kept_for_repeated_ids_are_bounded_per_key_and_in_keys():
    from shoed.net.commands import REPEAT_IDS_PER_KEY, REPEAT_KEYS, RepeatCache

    cache = RepeatCache()
    for i in range(REPEAT_IDS_PER_KEY + 10):
        cache.put("k0", i, b"d", {"ok": True, "id": i})
    assert len(cache) == REPEAT_IDS_PER_KEY
    assert cache.get("k0", 0, b"d") is None  # the oldest ids went first
    assert cache.get("k0", REPEAT_IDS_PER_KEY + 9, b"d") == {"ok": True, "id": REPEAT_IDS_PER_KEY + 9, "repeat": True}
    assert cache.get("k0", str(REPEAT_IDS_PER_KEY + 9), b"d") is None  # "7" is not 7
    for k in range(1, REPEAT_KEYS + 5):
        cache.put(f"k{k}", "a", b"d", {"ok": True})
    assert len(cache._replies) == REPEAT_KEYS and cache.get("k1", "a", b"d") is None
    with pytest.raises(CommandRejected, match="was sent before with another request"):
        cache.get(f"k{REPEAT_KEYS}", "a", b"other")


def test_a_repeated_id_gets_the_first_reply_and_the_handler_runs_once(endpoint, keys):
    server, daemon = endpoint
    first = send(server, keys, "return_card", {"misdeal": 98}, request_id="r1")
    again = send(server, keys, "return_card", {"misdeal": 98}, request_id="r1")
    assert again == {**first, "repeat": True} and first["ok"] is False
    assert [c.name for c in daemon.seen] == ["return_card"]
    # status changes nothing: it is answered afresh, never from the kept replies.
    send(server, keys, "status", request_id="r2")
    send(server, keys, "status", request_id="r2")
    assert [c.name for c in daemon.seen] == ["return_card", "status", "status"]
