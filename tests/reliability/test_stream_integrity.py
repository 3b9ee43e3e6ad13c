"""The shoe's stream tried as a test lab would, on the real daemon (docs/stream-integrity.md).

The shoe is the scripted native shoe on a real pseudo-terminal
(tests/reliability/pty_shoe.py); a forger writes frames made by the reference
encoder (firmware_protocol) on the same line. Each case stands the table where
it matters (a coup with a card due) and checks what the table did and what it
journaled. Roles: a dealer's console key and a pit key on the allow-list.
"""

from __future__ import annotations

import signal
import time

import pytest

from firmware_protocol import messages as m
from harness.processes import Daemon
from harness.records import journal_events, journal_inputs
from tests.reliability.keyed_table import KeyedTable
from tests.reliability.pty_shoe import button, card


class Table(KeyedTable):
    """The daemon, its shoe, a dealer's key (a key file without a role) and a pit key."""

    def __init__(self, env: dict | None = None, notify: bool = False, gate: str = "locked") -> None:
        super().__init__({"dealer-console": None, "pit-boss": "pit"}, gate=gate, env=env, notify=notify)

    def status(self) -> dict:
        reply = self.send("status", key="pit-boss")  # the whole table: alarm texts are the pit's
        assert reply["ok"] is True
        return reply["status"]

    def until(self, predicate, what: str, timeout: float = 5.0) -> dict:
        deadline = time.monotonic() + timeout
        while True:
            status = self.status()
            if predicate(status):
                return status
            if time.monotonic() > deadline:
                raise AssertionError(f"the table never showed {what}: {status}")
            time.sleep(0.02)

    def coup_open(self) -> None:
        """Shoe in, the burn, coup 1 open with its first card due."""
        self.report(m.ShoeInserted())
        self.report(button("burn_start"))
        self.report(card("AS", burn=True))  # the exposed first card: an ace burns one more
        self.report(card("2C", burn=True))
        self.report(button("burn_end"))
        status = self.status()
        assert status["coup"]["number"] == 1 and status["coup"]["next"] == "player", status["coup"]

    def events(self) -> list[dict]:
        return journal_events(self.daemon.journal)


@pytest.fixture
def table():
    t = Table()
    yield t
    t.close()


def alarms(events: list[dict], name: str) -> list[dict]:
    return [e for e in events if e["kind"] == "alarm" and e["alarm"] == name]


def test_a_forged_card_under_the_next_seq_is_caught_when_the_shoe_sends_its_own(table):
    """Someone on the line sends AH under the shoe's next seq. It arrives first and is taken;
    the shoe's own frame under that seq then differs from it: forged_frame, and the table is
    held (gate locked, nothing more dealt) until the pit decides. The old daemon dealt AH and
    dropped the genuine card as a repeat, with no alarm."""
    table.coup_open()
    table.report(card("TH"))
    seq = table.shoe.next_seq
    forged = card("AH")
    table.shoe.forge(m.CardRead(seq=seq, rank=forged.rank, suit=forged.suit, confidence=255, mode=m.MODE_GAME))
    table.until(lambda s: s["coup"]["player_cards"] == ["TH"] and s["coup"]["banker_cards"] == ["AH"],
                "the forged card taken")
    genuine = table.shoe.offer(card("9D"))
    assert genuine == seq, "the shoe's own card carries the seq the forger used"
    status = table.until(lambda s: s["locked"], "the hold")
    assert "forged_frame" in status["alarms"] and f"shoe seq {seq}" in status["locked"]
    alarm = alarms(table.events(), "forged_frame")[0]
    assert alarm["active"] is True and alarm["source"].startswith("native:")
    forged_inputs = [i for i in journal_inputs(table.daemon.journal) if i["kind"] == "forged_frame"]
    assert len(forged_inputs) == 1 and forged_inputs[0]["detail"]["seq"] == seq
    assert forged_inputs[0]["raw"] != forged_inputs[0]["detail"]["taken"], "both frames are journaled"
    # Held: the gate is locked and a card that comes anyway is not dealt.
    table.thread.wait(lambda: not table.shoe.gate_open, 5, "the gate locked")
    table.shoe.offer(card("5C"))
    table.thread.wait(lambda: table.shoe.unacked == 0, 5, "the ack of a card while held")
    status = table.status()
    assert status["coup"]["player_cards"] == ["TH"] and status["coup"]["banker_cards"] == ["AH"]
    assert [p["kind"] for p in status["pending_misdeals"]] == ["card_out_of_sequence"]
    # The pit decides: the dealer's key may not, the pit's may void the coup and unlock.
    for cmd in ("void", "unlock"):
        reply = table.send(cmd, {"reason": "forged frame"} if cmd == "void" else {})
        assert reply["ok"] is False and "needs the pit or surveillance role" in reply["error"], reply
    assert table.send("void", {"reason": "forged frame on the line"}, key="pit-boss")["ok"] is True
    assert table.send("unlock", key="pit-boss")["ok"] is True
    status = table.status()
    assert status["locked"] is None and "forged_frame" not in status["alarms"]
    assert status["coups"][-1]["void"] is True


def test_an_identical_repeat_is_still_a_plain_duplicate(table):
    """The shoe repeating its own frame (an ack lost) is no alarm: the bytes are the same."""
    table.coup_open()
    seq = table.shoe.next_seq
    table.report(card("TH"))
    table.shoe.forge(m.CardRead(seq=seq, rank=10, suit=2, confidence=255, mode=m.MODE_GAME))  # TH again, same bytes
    table.report(card("3D"))
    status = table.status()
    assert status["locked"] is None and not alarms(table.events(), "forged_frame")
    assert status["coup"]["player_cards"] == ["TH"] and status["coup"]["banker_cards"] == ["3D"]


@pytest.mark.parametrize("how", ["card in burn mode", "burn button"])
def test_a_burn_while_a_coup_card_is_due_is_a_misdeal(table, how):
    """Macau statutory rules Art. X: the coup may not silently take the next card instead.
    The old daemon burned the card (or entered burn mode) and dealt on."""
    table.coup_open()
    table.report(card("TH"))
    table.report(card("5D", burn=True) if how == "card in burn mode" else button("burn_start"))
    status = table.status()
    pending = status["pending_misdeals"]
    assert [p["kind"] for p in pending] == ["burn_during_coup"], status
    assert status["shoe"]["burned"] == 2, "nothing more was burned"
    assert not [e for e in table.events() if e.get("coup") and (
        e["kind"] == "shoe.burn" or e["kind"] == "shoe.burn_mode" and e["active"])]
    # Corrected by the pit's decision (the burn stands); the coup then takes its card.
    assert table.send("burn_card", {"misdeal": pending[0]["id"]})["ok"] is True
    table.report(card("3D"))
    assert table.status()["coup"]["banker_cards"] == ["3D"]


def test_a_card_below_the_confidence_floor_is_unreadable_not_dealt(table):
    """CardRead(confidence=0) was dealt as a normal card; now it is entered by hand."""
    table.coup_open()
    table.report(m.CardRead(rank=13, suit=0, confidence=0, mode=m.MODE_GAME))
    status = table.status()
    assert status["coup"]["player_cards"] == []
    assert [p["kind"] for p in status["pending_misdeals"]] == ["unreadable_card"]
    unread = [i for i in journal_inputs(table.daemon.journal) if i["kind"] == "unreadable"]
    assert unread[-1]["code"] == "low_confidence" and unread[-1]["confidence"] == 0
    assert table.send("enter_card", {"card": "KC"})["ok"] is True
    assert table.status()["coup"]["player_cards"] == ["KC"]


def test_another_shoe_saying_hello_mid_coup_holds_the_coup(table):
    """A Hello with a new boot and another vendor in the middle of a coup: the old daemon
    published device.hello and dealt on. Now: alarm device_changed, the table held."""
    table.coup_open()
    table.report(card("TH"))
    table.shoe.forge(m.Hello(vendor="Other Shoes", model="X", serial="OS-1", firmware="9", boot=0x0DDBA11))
    status = table.until(lambda s: s["locked"], "the hold")
    assert "device_changed" in status["alarms"] and "vendor" in status["alarms"]["device_changed"]
    assert "during coup 1" in status["locked"]
    assert alarms(table.events(), "device_changed")[0]["active"] is True


def test_a_refused_command_changes_nothing():
    """burn_card with no shoe open removed the pending misdeal from the snapshot, with no event.
    A shoe without a gate lets a card out while no shoe is open: a misdeal to correct."""
    t = Table(gate="none")
    try:
        t.report(card("9H"))
        before = t.status()
        assert [p["kind"] for p in before["pending_misdeals"]] == ["card_out_of_sequence"]
        events = len(t.events())
        reply = t.send("burn_card", {})
        assert reply["ok"] is False and reply["error"] == "no shoe is open"
        assert t.status() == before and len(t.events()) == events
    finally:
        t.close()


def test_a_frozen_daemon_journals_its_stall():
    """SIGSTOP longer than half the watchdog interval: the daemon, running again, records it."""
    t = Table(env={"watchdog_usec": 4_000_000}, notify=True)  # pings every 2 s: a stall is > 2 s
    try:
        t.daemon.proc.send_signal(signal.SIGSTOP)
        time.sleep(3.0)
        t.daemon.proc.send_signal(signal.SIGCONT)
        deadline = time.monotonic() + 10
        while not [e for e in t.events() if e["kind"] == "table.stall"]:
            assert time.monotonic() < deadline, "no table.stall journaled"
            time.sleep(0.05)
        stall = [e for e in t.events() if e["kind"] == "table.stall"][0]
        assert stall["stalled_ns"] >= 2_900_000_000 and stall["limit_ns"] == 2_000_000_000
    finally:
        t.close()


def test_after_a_restart_a_repeat_is_compared_with_the_journaled_frame(table):
    """The daemon restarts; the last frame it journaled comes back with other bytes under its
    seq: caught too (the journal keeps the frame's bytes with the shoe's seq)."""
    table.coup_open()
    seq = table.shoe.next_seq
    table.report(card("TH"))
    assert table.daemon.stop() == 0
    hellos = len([i for i in journal_inputs(table.daemon.journal) if i["kind"] == "hello"])
    table.daemon = Daemon(table.base, "--source", f"native:{table.base / 'shoe'}")
    # The shoe's Hello on the new link: before it the host takes nothing from the line.
    table.thread.wait(lambda: len([i for i in journal_inputs(table.daemon.journal) if i["kind"] == "hello"]) > hellos,
                      10, "the shoe's Hello to the restarted daemon")
    table.shoe.forge(m.CardRead(seq=seq, rank=1, suit=2, confidence=255, mode=m.MODE_GAME))  # AH, not TH
    status = table.until(lambda s: s["locked"], "the hold")
    assert "forged_frame" in status["alarms"] and status["coup"]["player_cards"] == ["TH"]
