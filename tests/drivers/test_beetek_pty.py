"""The Bee-Tek driver end to end over a real pseudo-terminal, with unplug and replug.

ref: beetek-shoe.md: 9600 baud 8N1 ASCII tokens, nothing sent to the shoe, no
acknowledgement. So the driver's promises are narrower than the native
driver's: every token that arrives whole is delivered once, a token cut by an
unplug is reported unreadable (never guessed), and reading resumes on the same
path after a replug. Cards the shoe sends while unplugged are lost: the link
cannot know (the rules engine and the dealer are the safety net).
"""

from __future__ import annotations

import os
import time

import pytest

from shoed.drivers import open_driver
from tests.drivers.fake_shoes import PtyCable, poll_until

FAST = {"backoff_initial": 0.05, "backoff_max": 0.2}


@pytest.fixture
def cable(tmp_path):
    c = PtyCable(str(tmp_path / "ttyUSB0"))
    yield c
    c.close()


@pytest.fixture
def driver(cable):
    d = open_driver("beetek", cable.link_path, **FAST)
    yield d
    d.close()


def test_tokens_become_readings(cable, driver):
    cable.write(b" [Game]<Card:4S>  [Game]<Card:H3>  [Manual Burn Cards]<Card:10d>  [Game]<Game> ")
    cable.write(b" [GameAlarm]<Alarm:E3 Card Not Read>  <W0x01> ")
    got = poll_until(driver, lambda rs: len([r for r in rs if r.kind != "link"]) >= 6)
    assert [r.link for r in got if r.kind == "link"] == ["connected"]
    rs = [r for r in got if r.kind != "link"]
    assert [(r.kind, r.card, r.mode, r.code) for r in rs] == [
        ("card", "4S", "game", None),
        ("card", "3H", "game", None),
        ("card", "TD", "burn", None),
        ("unreadable", None, "game", "not_read"),
        ("alarm", None, "game", "E3"),
        ("warning", None, "game", "W0x01"),
    ]
    assert rs[0].raw == b"[Game]<Card:4S>" and rs[0].offset == 1 and rs[0].shoe_seq is None
    assert rs[0].source == f"beetek:{cable.link_path}"
    assert rs[4].text == "Card Not Read"


def test_the_port_is_set_to_9600_8n1(cable, driver):
    import termios

    fd = os.open(cable.slave_name, os.O_RDWR | os.O_NOCTTY | os.O_NONBLOCK)
    try:
        _, _, cflag, _, ispeed, ospeed, _ = termios.tcgetattr(fd)
    finally:
        os.close(fd)
    assert ispeed == ospeed == termios.B9600
    assert cflag & termios.CSIZE == termios.CS8 and not cflag & termios.PARENB and not cflag & termios.CSTOPB


def test_a_token_split_across_reads_is_whole(cable, driver):
    got = []
    for piece in (b" [Ga", b"me]<Ca", b"rd:K", b"C> "):
        cable.write(piece)
        got += driver.poll(0.05)
    got += poll_until(driver, lambda rs: any(r.kind == "card" for r in got + rs))
    assert [r.card for r in got if r.kind == "card"] == ["KC"]


def test_a_stale_tail_is_reported_not_kept_forever(cable, driver):
    # The rest of a token never came (lost on the line): reported unreadable, never guessed.
    cable.write(b" [Game]<Card:Q")
    got = poll_until(driver, lambda rs: any(r.kind == "unreadable" for r in rs), timeout=3)
    bad = next(r for r in got if r.kind == "unreadable")
    assert bad.code == "garbled" and bad.card is None and bad.raw == b"[Game]<Card:Q"


def test_unplug_and_replug_mid_token(cable, driver):
    dealt = ["2H", "3H", "4H", "5H", "6H", "7H", "8H", "9H"]
    got = poll_until(driver, lambda rs: any(r.link == "connected" for r in rs))
    for text in dealt[:3]:
        cable.write(f" [Game]<Card:{text}> ".encode())
    # The cable comes out in the middle of the next token. It goes in one write with the last whole
    # card, so the driver has read it once that card is delivered, and the pty's queue is drained
    # before the cable comes out (closing a pty drops what its reader has not taken yet).
    cable.write(f" [Game]<Card:{dealt[3]}>  [Game]<Card:T".encode())
    got += poll_until(driver, lambda rs: len([r for r in rs if r.kind == "card"]) >= 4)
    cable.wait_drained()
    cable.unplug()
    got += poll_until(driver, lambda rs: any(r.link == "lost" for r in rs), timeout=5)
    # The cut card is reported at once, before the loss: not when (if ever) the shoe comes back.
    kinds = [(r.kind, r.link) for r in got]
    assert kinds.index(("unreadable", None)) == kinds.index(("link", "lost")) - 1, kinds
    time.sleep(0.2)
    cable.replug()
    got += poll_until(driver, lambda rs: any(r.link == "restored" for r in rs), timeout=5)
    for text in dealt[4:]:
        cable.write(f" [Game]<Card:{text}> ".encode())
    got += poll_until(driver, lambda rs: len([r for r in rs if r.kind == "card"]) >= 4)
    got += driver.poll(0.3)
    assert [r.card for r in got if r.kind == "card"] == dealt, "each whole token once, in order"
    cut = [r for r in got if r.kind == "unreadable"]
    assert len(cut) == 1 and cut[0].code == "garbled" and cut[0].raw == b"[Game]<Card:T"
    assert [r.link for r in got if r.kind == "link"] == ["connected", "lost", "restored"]
    # Offsets keep counting across the reconnect: the first token after it sits past the cut one.
    first_after = next(r for r in got if r.card == "6H")
    assert first_after.offset > cut[0].offset


def test_nothing_is_ever_written_to_the_shoe(cable, driver):
    cable.write(b" [Game]<Card:4S> ")
    got = poll_until(driver, lambda rs: any(r.kind == "card" for r in rs))
    driver.acknowledge(next(r for r in got if r.kind == "card"))  # no acknowledgement on this link
    driver.set_gate(True)  # no gate on this shoe: logged once, ignored
    driver.poll(0.2)
    assert cable.read(0.2) == b""


def test_every_poll_returns_within_its_timeout(cable, driver):
    worst = 0.0
    for phase in ("plugged", "unplugged"):
        if phase == "unplugged":
            cable.unplug()
        for _ in range(8):
            t0 = time.monotonic()
            driver.poll(0.1)
            worst = max(worst, time.monotonic() - t0 - 0.1)
    # A blocking read would overrun by seconds; the margin is for a loaded two-core machine.
    assert worst < 0.3


def test_bytes_no_shoe_sends_are_noise_and_a_card_lost_in_them_raises_an_alarm(cable, driver):
    # A line read at the wrong parity: three card tokens with every byte's high bit set, then a good card.
    # No card is taken from them, and they are not dropped in silence: one alarm `line_garbled` before the
    # good card. A stray byte or two (a plug's glitch) is only a warning.
    damaged = bytes(b | 0x80 for b in b" [Game]<Card:4S>  [Game]<Card:5H>  [Game]<Card:6D> ")
    cable.write(b"\xff [Game]<Card:3C> " + damaged + b" [Game]<Card:KD> ")
    got = poll_until(driver, lambda rs: any(r.card == "KD" for r in rs))
    rs = [(r.kind, r.code, r.card) for r in got if r.kind != "link"]
    assert rs == [("warning", "garbled", None), ("card", None, "3C"), ("alarm", "line_garbled", None),
                  ("card", None, "KD")]
    alarm = next(r for r in got if r.code == "line_garbled")
    assert alarm.detail["length"] == len(damaged.strip()) and alarm.raw == damaged.strip()
    assert "9600 8N1" in alarm.text


def test_a_flood_of_unreadable_cards_is_one_alarm_and_noise_not_a_misdeal_each(cable, driver):
    # A stuck sensor repeating a damaged token at line speed: the first FLOOD_UNREAD are unreadable cards
    # (the dealer enters them), the rest one alarm and noise, until a card is read.
    from shoed.drivers.beetek import FLOOD_UNREAD

    cable.write(b" [Game]<Card:> " * 500 + b" [Game]<Card:QS>  [Game]<Card:> ")
    got = poll_until(driver, lambda rs: any(r.card == "QS" for r in rs) and rs[-1].kind == "unreadable")
    rs = [r for r in got if r.kind != "link"]
    kinds = [(r.kind, r.code) for r in rs]
    assert kinds[:FLOOD_UNREAD] == [("unreadable", "garbled")] * FLOOD_UNREAD
    assert kinds[FLOOD_UNREAD] == ("alarm", "shoe_flood")
    assert kinds[-3:] == [("warning", "garbled"), ("card", None), ("unreadable", "garbled")]
    noise = rs[-3]
    assert noise.detail["kinds"] == {"flood": 500 - FLOOD_UNREAD}
    assert len(rs) == FLOOD_UNREAD + 4  # nothing else: the flood cost four readings
