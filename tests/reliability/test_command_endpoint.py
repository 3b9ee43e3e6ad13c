"""Abuse of the real daemon's command endpoint (table-game-standards items 6, 9 and 15).

A test lab with an allowed key sends what a console never should: malformed
JSON, wrong types, unknown commands, huge messages, frames of the wrong
shape, and commands at the wrong moment. Each gets a clear error reply (or,
above 1 MiB, ZeroMQ cuts the connection), nothing reaches the journal that was
refused before the controller, and the daemon keeps running: `status`
answers after every case.

The shoe is a scripted native shoe on a real pseudo-terminal
(tests/reliability/pty_shoe.py), so the table stands exactly where each case
needs it: no shoe, the burn, a coup with a card due, a pending misdeal.
"""

from __future__ import annotations

import time

import pytest
import zmq

from harness.records import journal_inputs
from tests.reliability.keyed_table import KeyedTable
from tests.reliability.pty_shoe import button, card


class Table(KeyedTable):
    """The daemon, its shoe and an allowed console key (the pit's role: the lab tries every command,
    void and unlock included)."""

    def __init__(self, *extra: str, gate: str = "locked") -> None:
        super().__init__({"lab-console": "pit"}, *extra, gate=gate)
        self.keys = self.curves["lab-console"]

    def raw(self, frames: list[bytes], timeout: float = 3.0) -> dict | None:
        """Send frames as they are on an authenticated DEALER socket; the reply, or None."""
        from shoed.net import wire

        sock = self.context.socket(zmq.DEALER)
        sock.linger = 0
        self.keys.apply(sock)
        sock.connect(self.daemon.commands)
        try:
            sock.send_multipart(frames)
            if not sock.poll(int(timeout * 1000)):
                return None
            return wire.decode(sock.recv())
        finally:
            sock.close(0)

    def alive(self) -> dict:
        reply = self.send("status")
        assert reply["ok"] is True and self.daemon.proc.poll() is None
        return reply["status"]


@pytest.fixture(scope="module")
def table():
    t = Table()
    yield t
    t.close()


# (request frames, words the error must contain)
MALFORMED = [
    ([b"{not json"], "request is not JSON"),
    ([b"\xff\xfe\x00\x01"], "request is not JSON"),
    ([b""], "request is not JSON"),
    ([b"[1, 2, 3]"], "Expected `object`, got `array`"),
    ([b'"status"'], "Expected `object`, got `str`"),
    ([b'{"cmd": 7}'], "Expected `str`, got `int`"),
    ([b'{"cmd": null}'], "Expected `str`, got `null`"),
    ([b'{"cmd": "status", "args": "all"}'], "Expected `object`, got `str`"),
    ([b'{"cmd": "open_shoe", "args": {"decks": "eight"}}'], "bad arguments for open_shoe"),
    ([b'{"cmd": "open_shoe", "args": {"decks": 1e308}}'], "bad arguments for open_shoe"),
    ([b'{"cmd": "enter_card", "args": {"card": 9}}'], "bad arguments for enter_card"),
    ([b'{"cmd": "decide", "args": {"side": "tie", "draw": true}}'], "Invalid enum value 'tie'"),
    ([b'{"cmd": "void", "args": {"reason": "x", "force": true}}'], "unknown field `force`"),
    ([b'{"cmd": "reboot"}'], "unknown command 'reboot'"),
    ([b'{"cmd": "' + b"A" * 100 + b'"}'], "Expected `str` of length <= 64"),
    ([b'{"cmd": "status", "id": {"nested": 1}}'], "at `$.id`"),
    ([b'{"cmd": "status"}', b"a second body frame"], "a request is one JSON frame"),
    ([b'{"cmd": "void", "args": {"reason": "' + b"x" * 100_000 + b'"}}'], "request too large"),
    # `args` twice, the first 60 kB of tiny objects: refused by its size before it is parsed.
    ([b'{"cmd":"status","args":{"x":[' + b",".join([b"{}"] * 20000) + b']},"args":{}}'], "request too large"),
]


@pytest.mark.parametrize(("frames", "words"), MALFORMED, ids=[f"malformed-{i}" for i in range(len(MALFORMED))])
def test_malformed_requests_get_a_clear_error_and_the_daemon_runs_on(table, frames, words):
    reply = table.raw(frames)
    assert reply is not None, "an error reply, not silence"
    assert reply["ok"] is False and words in reply["error"], reply
    table.alive()


def test_a_request_over_one_mebibyte_is_cut_off_and_the_daemon_runs_on(table):
    reply = table.raw([b'{"cmd": "void", "args": {"reason": "' + b"x" * (2 << 20) + b'"}}'], timeout=1.0)
    assert reply is None  # ZeroMQ drops the connection before the message is read
    table.alive()


def test_a_flood_of_garbage_requests_leaves_the_daemon_serving(table):
    from shoed.net import wire

    sock = table.context.socket(zmq.DEALER)
    sock.linger = 0
    table.keys.apply(sock)
    sock.connect(table.daemon.commands)
    try:
        for i in range(300):
            sock.send(b'{"cmd": "status", "args": [' + str(i).encode() + b"]}")
        replies = []
        deadline = time.monotonic() + 15
        while len(replies) < 300 and time.monotonic() < deadline:
            if sock.poll(200):
                replies.append(wire.decode(sock.recv()))
    finally:
        sock.close(0)
    assert len(replies) == 300 and all(r["ok"] is False for r in replies)
    # Every request counts against the key's rate before it is read (20 a second, 40 at once): the
    # flood is refused for the rate as cheaply as it would be if it were good requests.
    assert sum("rate limited" in r["error"] for r in replies) >= 200
    table.alive()


def test_nothing_refused_before_the_controller_reaches_the_journal(table):
    # Nor did `status`, which changes nothing (each one fsync'd cut the card rate tenfold).
    commands = [i for i in journal_inputs(table.daemon.journal) if i["kind"] == "command"]
    assert commands == [], {c["cmd"] for c in commands}


def test_commands_out_of_order_get_clear_refusals(table):
    """The table's own checks, case by case, at the moment each is out of place
    (Macau statutory rules Art. X for the corrections)."""
    # No shoe yet.
    for cmd, args, words in [
        ("confirm", {}, "no shoe is open"),
        ("void", {}, "no shoe is open"),
        ("close_shoe", {}, "no shoe is open"),
        ("enter_card", {"card": "9H"}, "no shoe is open"),  # checked first: a correction needs the shoe
        ("burn_card", {}, "no shoe is open"),
        ("return_card", {"misdeal": 7}, "no shoe is open"),
        ("decide", {"side": "player", "draw": True}, "no coup is open"),
        ("unlock", {}, "the table is not locked"),
        ("open_shoe", {"decks": 16}, "decks must be"),
    ]:
        reply = table.send(cmd, args)
        assert reply["ok"] is False and words in reply["error"], (cmd, reply)
        table.alive()

    # The shoe goes in; the burn starts: no coup is open yet.
    table.report(table_msg("shoe_inserted"))
    table.report(button("burn_start"))
    reply = table.send("void")
    assert reply["ok"] is False and reply["error"] == "no coup to void"
    reply = table.send("enter_card", {"card": "KS"})
    assert reply["ok"] is False and "no open misdeal" in reply["error"]
    table.report(card("AS", burn=True))  # the exposed first card: an ace burns one more
    table.report(card("2C", burn=True))
    table.report(button("burn_end"))
    status = table.alive()
    assert status["coup"]["number"] == 1 and status["coup"]["state"] == "open"

    # Coup 1, one card dealt: confirming now is the dealer closing the coup too early.
    table.report(card("TH"))
    reply = table.send("confirm")
    status = table.alive()
    pending = status["pending_misdeals"]
    assert reply["ok"] is True and [p["kind"] for p in pending] == ["missing_card"]
    reply = table.send("confirm")
    assert reply["ok"] is False and "is not corrected yet" in reply["error"]
    reply = table.send("enter_card", {"card": "9H"})
    assert reply["ok"] is False and "no open misdeal that this corrects" in reply["error"]
    reply = table.send("burn_card", {"misdeal": pending[0]["id"]})
    assert reply["ok"] is False and "no open misdeal that this corrects" in reply["error"]
    # The correction is the missing card itself: it passes the gate and the coup goes on.
    for text in ("3D", "4C", "2S"):
        table.report(card(text))
    status = table.alive()
    coup = status["coup"]
    assert status["pending_misdeals"] == [] and coup["player_cards"] == ["TH", "4C"] and coup["banker_cards"] == ["3D", "2S"]
    assert coup["state"] == "open" and coup["next"] == "player"  # player 4 draws
    table.report(card("6H"))  # player 0; the banker's 5 draws on a third card of 6
    table.report(card("7D"))
    status = table.alive()
    assert status["coup"]["state"] == "complete" and status["coup"]["banker_total"] == 2
    reply = table.send("decide", {"side": "banker", "draw": True})
    assert reply["ok"] is False and reply["error"] == "no coup is open"
    reply = table.send("enter_card", {"card": "8C"})
    assert reply["ok"] is False and "no open misdeal" in reply["error"]
    table.report(button("confirm"))
    assert table.alive()["coup"]["number"] == 2


def table_msg(name: str):
    from firmware_protocol import messages as m

    return {"shoe_inserted": m.ShoeInserted(), "shoe_removed": m.ShoeRemoved(), "cut_card": m.CutCard()}[name]


DECODER_ESCAPES = [
    b'{"cmd": "status", "args": ' + b'{"a": ' * 5000 + b"1" + b"}" * 5001,  # RecursionError
    b'{"\xe3md": "status"}',  # UnicodeDecodeError: bad UTF-8 inside a key
]


@pytest.mark.parametrize("body", DECODER_ESCAPES, ids=["deep-nesting", "bad-utf8-key"])
def test_decoder_escapes_get_an_error_reply(table, body):
    reply = table.raw([body], timeout=1.0)
    assert reply is not None and reply["ok"] is False


@pytest.mark.parametrize("body", DECODER_ESCAPES, ids=["deep-nesting", "bad-utf8-key"])
def test_decoder_escapes_do_not_stop_the_daemon(table, body):
    table.raw([body], timeout=0.5)
    table.alive()


def test_garbage_on_the_snapshot_endpoint_does_not_stop_the_daemon(table):
    """The snapshot endpoint takes no key by default (curve_publish = false): anyone on the
    table network can reach it, so it gets the same treatment."""
    from shoed.net import wire

    sock = table.context.socket(zmq.DEALER)
    sock.linger = 0
    sock.connect(table.daemon.snapshot)
    try:
        for body in [b"{not json", b'{"op": "events", "from": "a"}', b'{"op": "snapshot", "id": ' + b"[" * 5000
                     + b"]" * 5000 + b"}", b'{"op": "events", "from": 1, "to": 1000000000}', b"\x00" * 70_000]:
            sock.send(body)
            if sock.poll(1000):
                reply = wire.decode(sock.recv())
                assert reply["ok"] is False and reply["error"], reply
        sock.send(b'{"op": "snapshot", "id": 1}')
        assert sock.poll(3000)
        reply = wire.decode(sock.recv())
        assert reply["ok"] is True and reply["state"]["table"] == "t1"
    finally:
        sock.close(0)
    table.alive()
