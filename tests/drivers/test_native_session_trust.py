"""The host checks the shoe's numbering against its own (firmware_protocol/SPEC.md §6.3, §11).

A heartbeat or status is not taken at its word: `unacked` above 32767 is an invalid payload; the shoe's
oldest unacknowledged seq (`seq - unacked + 1`) after `last + 1`, or its `seq` before what the host holds
durable in the same boot, is a `firmware_fault` alarm; a "duplicate" whose seq the host never took nor
acknowledged in this boot is one too, never dropped in silence. After such an alarm nothing more of that
boot is taken or acknowledged, so no card is acknowledged away unread.
"""

from __future__ import annotations

import struct
import zlib

from firmware_protocol import Decoder, encode
from firmware_protocol import messages as m
from firmware_protocol.codec import cobs_encode
from shoed.drivers.native import host_hello
from shoed.drivers.native_session import NS, STUCK_AFTER, NativeSession

UTC = 1_717_243_200_123 * 1_000_000


def card(seq, text):
    return m.CardRead(seq=seq, rank="A23456789TJQK".index(text[0]) + 1, suit="CDHS".index(text[1]), confidence=255)


def hello(boot, seq=0):
    return m.Hello(seq=seq, minor=0, vendor="Acme", model="CR-8", serial="SN1", firmware="1", boot=boot)


def raw_heartbeat(seq, unacked):
    """A heartbeat the reference encoder refuses to build (unacked above 32767), with a correct CRC."""
    content = struct.pack("<BBHIH", 1, 0x40, seq, 0, unacked)
    return cobs_encode(content + struct.pack("<I", zlib.crc32(content))) + b"\x00"


def run(session, frames, step=NS // 20):
    """Feed frames (messages or raw bytes) one by one; acknowledge each reliable reading, as the daemon
    does once it is journaled. (readings, acks the host sent)."""
    now = 10 * NS
    out, acks = [], []
    dec = Decoder()
    for frame in frames:
        now += step
        readings, _ = session.receive(frame if isinstance(frame, bytes) else encode(frame), now, UTC)
        out += readings
        for r in readings:
            if r.shoe_seq is not None:
                session.acknowledge(r, now)
        acks += [x.ack for _, x in dec.feed(session.outgoing()) if isinstance(x, m.Ack)]
    return [r for r in out if r.kind != "hello"], acks


def fresh(journal=None):
    s = NativeSession("native:t", host_hello("t1", boot=1))
    s.link_up(0, 0, 0)
    if journal is not None:
        s.restore(*journal)
    return s


def kinds(readings):
    return [(r.kind, r.card or r.code, r.shoe_seq) for r in readings]


def test_a_wraps_around_65535():
    # Case A, the control: last journaled 65533, the shoe repeats 65534.. and goes on past 0.
    s = fresh((65533, 0xB007))
    got, acks = run(s, [hello(0xB007, 65535), m.Heartbeat(seq=1, unacked=4), card(65534, "AS"), card(65535, "2S"),
                        card(0, "3S"), card(1, "4S")])
    assert kinds(got) == [("card", "AS", 65534), ("card", "2S", 65535), ("card", "3S", 0), ("card", "4S", 1)]
    assert acks[-1] == 1


def test_b_a_boot_number_reused_after_a_daemon_restart_is_an_alarm_not_silence():
    # Case B: the journal says boot B, seq 100; the shoe drew B again at power-on and numbers from 1.
    s = fresh((100, 0xB007))
    frames = [hello(0xB007, 0), m.Heartbeat(seq=3, unacked=3)] + [card(i, c) for _ in range(5)
                                                                  for i, c in ((1, "KD"), (2, "7H"), (3, "4C"))]
    got, acks = run(s, frames)
    assert kinds(got) == [("alarm", "firmware_fault", None)], "said once, never a silent duplicate"
    assert "before seq 100" in got[0].text
    assert all(a == 100 for a in acks), "nothing of the new numbering is acknowledged"
    assert s.stats.taken == 0


def test_c_unacked_above_32767_is_an_invalid_payload():
    # Case C: SPEC §6.1 allows at most 32767 unacknowledged; 40000 is a firmware fault, and the host
    # learns nothing from it (it takes nothing until a valid heartbeat).
    s = fresh()
    frames = [hello(0xC0DE), raw_heartbeat(3, 40000)] + [card(i, c) for _ in range(5)
                                                       for i, c in ((1, "KD"), (2, "7H"), (3, "4C"))]
    got, acks = run(s, frames)
    assert kinds(got) == [("alarm", "firmware_fault", None)]
    assert "unacked 40000" in got[0].text and got[0].detail["reject"] == "payload"
    assert s.last is None and acks == [] and s.stats.taken == 0
    # A valid heartbeat then starts the session as usual.
    got, acks = run(s, [m.Heartbeat(seq=3, unacked=3), card(1, "KD"), card(2, "7H"), card(3, "4C")])
    assert kinds(got) == [("card", "KD", 1), ("card", "7H", 2), ("card", "4C", 3)] and acks == [1, 2, 3]


def test_d_a_seq_never_taken_is_an_alarm_and_nothing_behind_it_is_acknowledged():
    # Case D: a firmware that puts the next seq in its unreliable frames (off by one, SPEC §6.1): the
    # heartbeat says seq 3 unacked 2 for a queue of 1, 2. Card 1 looks like a duplicate of last = 1, but
    # the host never took nor acknowledged seq 1: an alarm, and card 2 is not taken, or its ack would
    # release KD at the shoe unread.
    s = fresh()
    got, acks = run(s, [hello(0xD00D), m.Heartbeat(seq=3, unacked=2), card(1, "KD"), card(2, "7H"),
                        card(1, "KD"), card(2, "7H")])
    assert kinds(got) == [("alarm", "firmware_fault", None)]
    assert "never took nor acknowledged" in got[0].text
    assert acks == [], "no ack at all: an ack of 1 or 2 would release KD unread"
    # A new session of the shoe (new boot) is trusted afresh.
    got, acks = run(s, [hello(0xD00E), m.Heartbeat(seq=2, unacked=2), card(1, "KD"), card(2, "7H")])
    assert kinds(got) == [("card", "KD", 1), ("card", "7H", 2)] and acks == [1, 2]


def test_a_status_whose_oldest_unacked_is_past_the_next_due_is_an_alarm():
    # The shoe says messages up to 9 are acknowledged while the host has taken up to 5 only.
    s = fresh((5, 0xAB))
    got, acks = run(s, [hello(0xAB, 12), m.Status(seq=12, unacked=3), card(6, "AS"), card(10, "2S")])
    assert kinds(got) == [("alarm", "firmware_fault", None)]
    assert "oldest unacknowledged message is seq 10" in got[0].text
    assert s.stats.taken == 0 and all(a == 5 for a in acks)


def test_consistent_heartbeats_raise_nothing():
    s = fresh((5, 0xAB))
    got, acks = run(s, [hello(0xAB, 7), m.Heartbeat(seq=7, unacked=2), card(6, "AS"), m.Heartbeat(seq=7, unacked=2),
                        card(7, "2S"), m.Status(seq=7, unacked=0), card(6, "AS"), card(7, "2S")])
    assert kinds(got) == [("card", "AS", 6), ("card", "2S", 7)]
    assert s.distrusted is None


def test_a_repeat_of_a_seq_acknowledged_before_a_daemon_restart_is_still_a_plain_duplicate():
    # The journal holds seq 5: the shoe may still repeat 3..5 (the last ack was lost as the daemon stopped).
    s = fresh((5, 0xAB))
    got, acks = run(s, [hello(0xAB, 6), m.Heartbeat(seq=6, unacked=4), card(3, "AS"), card(4, "2S"), card(5, "3S"),
                        card(6, "4S")])
    assert kinds(got) == [("card", "4S", 6)] and s.stats.duplicates == 3 and acks[-1] == 6


def test_a_frame_never_taken_that_holds_up_the_stream_is_a_stuck_stream_alarm_once():
    # SPEC §6.3: a reliable frame the host never takes (here a 1.1 draw in a session agreed at 1.0) is
    # repeated forever and everything behind it waits: after STUCK_AFTER, one alarm.
    s = fresh((5, 0xAB))
    draw = m.Draw(seq=6, mode=m.MODE_GAME, trigger=1)
    frames = [hello(0xAB, 7), m.Heartbeat(seq=7, unacked=2)]
    repeats = int(STUCK_AFTER / 0.2) * 3
    frames += [x for _ in range(repeats) for x in (draw, card(7, "AS"))]
    got, acks = run(s, frames, step=NS // 10)
    alarms = [r for r in got if r.kind == "alarm"]
    assert [(r.code, r.detail["expected"]) for r in alarms] == [("firmware_fault", 6)]
    assert "card stream stuck" in alarms[0].text
    assert s.stats.taken == 0
