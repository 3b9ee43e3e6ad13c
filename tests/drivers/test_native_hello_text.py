"""A native shoe's Hello whose identity holds a line break or another control character.

decision (firmware_protocol/SPEC.md §5.2): a hello's vendor, model, serial and firmware are
one line of printable text each; any character that is not printable (`str.isprintable()`:
C0, DEL, C1, line and paragraph separators, format characters such as U+202E RIGHT-TO-LEFT
OVERRIDE) makes the hello invalid: refused and reported as a firmware fault in one line,
never taken (the identity would reach logs, status replies, events and screens).
"""

from __future__ import annotations

import zlib

import pytest

from firmware_protocol import Decoder, Rejected, codec, encode
from firmware_protocol import messages as m
from shoed.drivers import open_driver
from tests.drivers.fake_shoes import PtyCable, poll_until


def hello_frame(serial: bytes) -> bytes:
    """A shoe's Hello built byte by byte (the reference encoder refuses such a serial)."""
    payload = bytes((1, 1)) + (0x1234).to_bytes(4, "little")
    for text in (b"Acme", b"CR-8", serial, b"2.4.1"):
        payload += bytes((len(text),)) + text
    content = bytes((1, 0x01, 0, 0)) + payload  # version 1, type hello, seq 0
    content += zlib.crc32(content).to_bytes(4, "little")
    return codec.cobs_encode(content) + b"\x00"


BAD = [b"SN\n1", b"SN\r1", b"SN\x1b[2J", b"SN\x7f", "SN\u0085".encode(), "SN\u2028".encode(), b"\x00",
       "SN0001\u202e4321".encode(), "SN\u200b1".encode(), "SN\u00a01".encode()]


@pytest.mark.parametrize("serial", BAD, ids=[repr(s) for s in BAD])
def test_a_hello_with_a_control_character_is_refused_in_one_line(serial):
    items = Decoder().feed(hello_frame(serial))
    assert len(items) == 1
    _, item = items[0]
    assert isinstance(item, Rejected) and item.kind == "payload"
    assert ("control character" in item.reason or "unprintable character" in item.reason) and "serial" in item.reason
    assert "\n" not in item.reason and "\r" not in item.reason and "\x1b" not in item.reason


def test_printable_text_is_taken_as_before():
    _, item = Decoder().feed(hello_frame("SN-0001 Ü 漢".encode()))[0]
    assert isinstance(item, m.Hello) and item.serial == "SN-0001 Ü 漢"


def test_the_encoder_will_not_send_one():
    with pytest.raises(codec.EncodeError, match="control character"):
        encode(m.Hello(seq=0, major=1, minor=1, vendor="Acme", model="CR-8\n", serial="1", firmware="1", boot=1))


def test_on_a_real_pty_the_driver_reports_a_firmware_fault_and_takes_no_identity(tmp_path):
    cable = PtyCable(str(tmp_path / "shoe"))
    driver = open_driver("native", cable.link_path, heartbeat=0.1, silence=5, hello_repeat=0.3,
                         backoff_initial=0.05, backoff_max=0.2)
    try:
        cable.write(hello_frame(b"SN1\nshoed: forged log line"))
        got = poll_until(driver, lambda rs: any(r.kind == "alarm" for r in rs))
        alarms = [r for r in got if r.kind == "alarm"]
        assert [r.code for r in alarms] == ["firmware_fault"]
        assert "\n" not in alarms[0].text and "control character" in alarms[0].text
        assert not [r for r in got if r.kind == "hello"]
    finally:
        driver.close()
        cable.close()


def test_a_shoes_alarm_text_is_one_printable_line_and_its_frame_kept(tmp_path):
    """An alarm's text is the shoe's description for the pit (SPEC.md §5.9): not refused (the alarm
    must be heard), but taken as one printable line; the frame as it came stays in `raw`."""
    from tests.drivers.fake_shoes import FakeShoe, ShoeRunner

    cable = PtyCable(str(tmp_path / "shoe"))
    shoe = FakeShoe()
    runner = ShoeRunner(shoe, cable).start()
    driver = open_driver("native", cable.link_path, heartbeat=0.1, silence=5, hello_repeat=0.3, gate_repeat=0.1,
                         backoff_initial=0.05, backoff_max=0.2)
    try:
        poll_until(driver, lambda rs: any(r.kind == "hello" for r in rs))
        shoe.event(m.Alarm(seq=0, code=7, text="jam\x1b[2J\nshoed: forged"))
        got = poll_until(driver, lambda rs: any(r.kind == "alarm" for r in rs))
        alarm = next(r for r in got if r.kind == "alarm")
        assert alarm.text == "jam\\x1b[2J\\nshoed: forged" and alarm.text.isprintable()
        assert b"\x1b[2J" in codec.cobs_decode(alarm.raw[:-1])  # the frame as the shoe sent it
    finally:
        driver.close()
        runner.stop()
        cable.close()


def test_the_encoder_will_not_send_a_format_character():
    # SPEC.md §5.2: not printable (str.isprintable), e.g. U+202E that reorders a line on a bidi-aware screen.
    with pytest.raises(codec.EncodeError, match="U\\+202E"):
        encode(m.Hello(seq=0, major=1, minor=1, vendor="Acme", model="CR-8", serial="SN\u202e1", firmware="1", boot=1))


@pytest.mark.parametrize("size, taken", [(64, True), (65, False), (200, False)])
def test_a_hello_string_over_64_bytes_is_a_payload_error(size, taken):
    # SPEC.md §5.2: each string is at most 64 bytes; longer is an invalid payload (§4 step 7).
    _, item = Decoder().feed(hello_frame(b"S" * size))[0]
    if taken:
        assert isinstance(item, m.Hello) and len(item.serial) == 64
    else:
        assert isinstance(item, Rejected) and item.kind == "payload" and "at most 64" in item.reason
