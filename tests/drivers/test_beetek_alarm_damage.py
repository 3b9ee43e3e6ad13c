"""Every single-byte damage inside a Bee-Tek alarm token, tried exhaustively.

decision (shoed/drivers/beetek.py): an alarm token that arrives damaged is still an `alarm`
reading (code `garbled` where its shape broke), never noise: the shoe stopped the coup for
the dealer and the table must say so. It is never an `unreadable` card either (the shoe
reports the unread card itself as `<Game>`), so one byte of damage leaves exactly one
reading for the token, an alarm, and the next card is read intact.
"""

from __future__ import annotations

import pytest

from shoed.drivers import open_driver
from shoed.drivers.beetek import token_reading, tokens
from tests.drivers.fake_shoes import PtyCable, poll_until
from tests.drivers.test_beetek_single_damage import NEXT, damaged

ALARMS = [b"[GameAlarm]<Alarm:E3 Card Not Read>", b"[Manual Burn Cards]<Alarm:E1 Shoe Empty>"]


def readings(data: bytes) -> list[tuple]:
    out = []
    for token in tokens(data):
        if token.kind == "garbled" and not (token.looks_like_card or token.looks_like_alarm):
            continue  # noise: the driver reports it together with the rest of the stretch
        r = token_reading(token, "beetek:test", token.start, 0, 0)
        out.append((r.kind, r.code, r.card))
    return out


@pytest.mark.parametrize("token", ALARMS, ids=[t.decode() for t in ALARMS])
def test_one_damaged_byte_in_an_alarm_leaves_one_alarm(token):
    failures = []
    for how, pos, data in damaged(token):
        got = readings(b" " + data + NEXT)
        if not got or got[-1] != ("card", None, "9D"):
            failures.append((how, pos, data, got, "the next card"))
        elif len(got) != 2 or got[0][0] != "alarm":
            failures.append((how, pos, data, got, "one alarm"))
    assert not failures, f"{len(failures)} cases, e.g. {failures[:5]}"


def test_a_damaged_alarm_says_so():
    (token,) = [t for t in tokens(b" [GameAlarm]<Alarn:E3 Card Not Read> ")]
    r = token_reading(token, "beetek:test", 0, 0, 0)
    assert (r.kind, r.code) == ("alarm", "garbled")
    assert "\n" not in r.text and "alarm" in r.text
    assert r.raw == b"[GameAlarm]<Alarn:E3 Card Not Read>"


def test_a_damaged_alarm_on_a_real_pty_is_an_alarm_reading_not_noise(tmp_path):
    """The driver on a real pseudo-terminal: the damaged alarm is an alarm reading of its own,
    ahead of the card behind it, never folded into the line's noise."""
    cable = PtyCable(str(tmp_path / "ttyUSB0"))
    driver = open_driver("beetek", cable.link_path, backoff_initial=0.05, backoff_max=0.2)
    try:
        cable.write(b" [GameAlarm]<Alarm:E3 Ca\x00rd Not Read> [Game]<Card:9D> ")
        got = poll_until(driver, lambda rs: any(r.kind == "card" for r in rs))
        assert [(r.kind, r.code) for r in got if r.kind != "link"] == [("alarm", "garbled"), ("card", None)]
    finally:
        driver.close()
        cable.close()
