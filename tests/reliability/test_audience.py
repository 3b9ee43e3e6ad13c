"""Nobody learns a card before the players do (shoed.table.audience, docs/network.md: Audiences).

A whole shoe's start is dealt through the real daemon on a scripted native
shoe: the exposed first burn card, face-down burn cards, a coup, an extra card
drawn by mistake and returned to the shoe, then that same card dealt as the
next coup's first card. Four independent collectors gather everything they
can: a plain SUB socket on the display stream, a catch-up client of the display
snapshot endpoint (every event and a snapshot while the misdeal is pending),
and the same two on the surveillance endpoints with an allowed CURVE key.

The display's collectors must never hold a card identity before that card is
faced on the layout; surveillance must hold everything (so the split is real,
not an empty stream).
"""

from __future__ import annotations

import json
import re
import time

import pytest
import zmq

from harness.records import as_journaled
from tests.reliability.pty_shoe import button, card
from tests.reliability.test_command_endpoint import Table, table_msg

CARD_TEXT = re.compile(r'"((?:[2-9TJQKA]|10)[SHDC])"')
FACE_DOWN_BURNS = ("KC", "QD", "8S")  # after the exposed 3H: three more, face down
EXTRA = "7D"  # drawn after coup 1 was complete, returned to the shoe, dealt first in coup 2


class Collector:
    """A SUB socket that keeps every event it receives (heartbeats apart)."""

    def __init__(self, table: Table, endpoint: str, curve: bool) -> None:
        self.sock = table.context.socket(zmq.SUB)
        self.sock.linger = 0
        if curve:
            table.keys.apply(self.sock)
        self.sock.setsockopt(zmq.SUBSCRIBE, b"")
        self.sock.connect(endpoint)
        self.events: list[dict] = []
        self.heard = False

    def drain(self, timeout: float = 0.2) -> None:
        while self.sock.poll(int(timeout * 1000)):
            _topic, payload = self.sock.recv_multipart()
            item = json.loads(payload)
            if item["kind"] == "heartbeat":
                self.heard = True
            else:
                self.events.append(item)
            timeout = 0.05


def request(table: Table, endpoint: str, body: dict, curve: bool) -> list[dict]:
    """One catch-up request on a DEALER socket: every reply up to the last."""
    sock = table.context.socket(zmq.DEALER)
    sock.linger = 0
    if curve:
        table.keys.apply(sock)
    sock.connect(endpoint)
    try:
        sock.send(json.dumps(body).encode())
        replies = []
        while True:
            assert sock.poll(5000), f"no reply to {body}"
            reply = json.loads(sock.recv())
            assert reply["ok"], reply
            replies.append(reply)
            if reply["op"] == "snapshot" or reply.get("done"):
                return replies
    finally:
        sock.close(0)


def faced(truth: list[dict]) -> list[tuple[int, str]]:
    """(seq, card) of each moment a card is faced on the layout, from surveillance's full record."""
    out = []
    for e in truth:
        if e["kind"] == "card" and e.get("recipient") in ("player", "banker") and e.get("card"):
            out.append((e["seq"], e["card"]))
        elif e["kind"] == "shoe.burn" and e.get("exposed") and e.get("card"):
            out.append((e["seq"], e["card"]))
    return out


def early_identities(seen: list[dict], truth: list[dict], at_seq=None) -> list[tuple]:
    """Card identities in `seen` before any card of that identity was faced.
    `at_seq`: the seq a whole item describes (a snapshot), else each event's own seq."""
    shown_at = faced(truth)
    leaks = []
    for item in seen:
        seq = at_seq if at_seq is not None else item["seq"]
        allowed = {c for s, c in shown_at if s <= seq}
        leaks += [(seq, c, item.get("kind")) for c in set(CARD_TEXT.findall(json.dumps(item))) - allowed]
    return leaks


@pytest.fixture(scope="module")
def table():
    from harness.processes import short_dir

    base = short_dir()
    # A shoe without a card gate: nothing stops the dealer drawing one card too many.
    t = Table("--surveillance-pub", f"ipc://{base}/se", "--surveillance-snapshot", f"ipc://{base}/ss", gate="none")
    t.surv_events, t.surv_snapshot = f"ipc://{base}/se", f"ipc://{base}/ss"
    yield t
    t.close()


def test_display_stream_and_catch_up_never_hold_a_card_before_it_is_faced(table):
    from shoed.table.events import validate

    display = Collector(table, table.daemon.events, curve=False)
    surveillance = Collector(table, table.surv_events, curve=True)
    deadline = time.monotonic() + 10
    while not (display.heard and surveillance.heard):  # both subscriptions are in place
        assert time.monotonic() < deadline, "no heartbeat on the display or surveillance stream"
        display.drain()
        surveillance.drain()

    table.report(table_msg("shoe_inserted"))
    table.report(button("burn_start"))
    table.report(card("3H", burn=True))  # exposed: three more burn, face down
    for text in FACE_DOWN_BURNS:
        table.report(card(text, burn=True))
    table.report(button("burn_end"))
    for text in ("4H", "KD", "5S", "QS"):  # player 9, banker 0: a natural, the coup is complete
        table.report(card(text))
    table.report(card(EXTRA))  # one card too many
    deadline = time.monotonic() + 5
    while not (pending := table.alive()["pending_misdeals"]) and time.monotonic() < deadline:
        time.sleep(0.05)  # report() can return before the daemon has read the card
    assert [p["kind"] for p in pending] == ["extra_card"] and pending[0]["card"] == EXTRA
    display_snap = request(table, table.daemon.snapshot, {"op": "snapshot"}, curve=False)[0]
    surveillance_snap = request(table, table.surv_snapshot, {"op": "snapshot"}, curve=True)[0]
    reply = table.send("return_card", {"misdeal": pending[0]["id"]})
    assert reply["ok"], reply
    table.report(button("confirm"))
    for text in (EXTRA, "3C", "2H", "5D"):  # the returned card comes out again, now faced
        table.report(card(text))
    table.report(button("confirm"))
    table.alive()
    display.drain(0.5)
    surveillance.drain(0.5)

    last = surveillance.events[-1]["seq"]
    display_catch_up = [e for r in request(table, table.daemon.snapshot, {"op": "events", "from": 1, "to": last},
                                           curve=False) for e in r.get("events", [])]
    surveillance_catch_up = [e for r in request(table, table.surv_snapshot, {"op": "events", "from": 1, "to": last},
                                                curve=True) for e in r.get("events", [])]

    # Surveillance sees everything, the burns' and the extra card's identities included.
    truth = surveillance_catch_up  # the whole record from seq 1; the SUB sockets joined after the start-up
    live = [as_journaled(e) for e in surveillance.events]  # the wire adds the journal's head
    assert live == truth[-len(live):] and live[0]["seq"] < 10
    burns = [e for e in truth if e["kind"] == "shoe.burn"]
    assert [b["card"] for b in burns] == ["3H", *FACE_DOWN_BURNS]
    extra_seqs = [e["seq"] for e in truth if EXTRA in json.dumps(e)]
    returned_faced = next(e["seq"] for e in truth if e["kind"] == "card" and e["card"] == EXTRA
                          and e["recipient"] == "player")
    assert extra_seqs[0] < returned_faced  # surveillance knew it before it was faced
    assert surveillance_snap["state"]["pending_misdeals"][0]["card"] == EXTRA

    # The display audience: the same seqs, every event valid against the schema, no card early.
    for collected in (display.events, display_catch_up):
        assert [e["seq"] for e in collected] == [e["seq"] for e in truth][-len(collected):]
        for e in collected:
            validate(e)
        assert early_identities(collected, truth) == []
        assert [e["card"] for e in collected if e["kind"] == "shoe.burn"] == ["3H", None, None, None]
        assert min(e["seq"] for e in collected if EXTRA in json.dumps(e)) == returned_faced
    assert [as_journaled(e) for e in display.events] == display_catch_up[-len(display.events):]
    # The chain head (a record's hash: a guess at a face-down card checked against it) is surveillance's.
    assert not [e for e in display.events if "journal" in e] and all("journal" in e for e in surveillance.events)
    state = display_snap["state"]
    assert "journal_head" not in state and "journal" not in state
    assert "journal_head" in surveillance_snap["state"]
    assert early_identities([state], truth, at_seq=display_snap["seq"]) == []
    assert [p["kind"] for p in state["pending_misdeals"]] == ["extra_card"]
    assert "remaining_by_rank" not in state["shoe"] and state["odds"] is None
