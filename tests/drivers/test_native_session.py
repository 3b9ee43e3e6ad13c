"""The host's protocol rules (NativeSession), without a link: bytes in, readings and frames out.

Each case cites firmware_protocol/SPEC.md. The session reads no clock: every
call gets the time, so these cases are exact.
"""

from __future__ import annotations

import struct
import zlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from firmware_protocol import Decoder, encode
from firmware_protocol import messages as m
from firmware_protocol.codec import cobs_encode
from shoed.drivers.native import host_hello
from shoed.drivers.native_session import NS, NativeSession, Timing

BOOT = 0x5EED1234
T0 = 1_000 * NS  # an arbitrary monotonic start
UTC = 1_717_243_200_123 * 1_000_000


def shoe_hello(boot=BOOT, seq=0, major=1, minor=0):
    return m.Hello(seq=seq, major=major, minor=minor, vendor="Acme Gaming", model="CR-8", serial="SN1",
                   firmware="2.4.1", boot=boot)


def card(seq, rank=10, suit=1, mode=m.MODE_GAME):
    return m.CardRead(seq=seq, rank=rank, suit=suit, confidence=250, mode=mode)


class Host:
    """A session with a clock the test moves, and what it sent decoded."""

    def __init__(self, shuffler: bool = False, **timing):
        self.now = T0
        self.session = NativeSession("native:test", host_hello("table-7", boot=42), Timing(**timing),
                                     shuffler=shuffler)
        self.sent: list[m.Message] = []
        self._decoder = Decoder()
        self.readings = self.session.link_up(0, self.now, UTC)
        self._collect()

    def _collect(self):
        self.sent += [item for _, item in self._decoder.feed(self.session.outgoing())]

    def feed(self, *msgs, raw: bytes = b"", advance: float = 0.0):
        self.now += int(advance * NS)
        data = raw + b"".join(encode(x) for x in msgs)
        readings, _ = self.session.receive(data, self.now, UTC)
        self._collect()
        return readings

    def tick(self, advance: float):
        self.now += int(advance * NS)
        self.session.tick(self.now, UTC)
        self._collect()

    def ack(self, reading):
        self.session.acknowledge(reading, self.now)
        self._collect()

    def sent_of(self, cls):
        return [x for x in self.sent if isinstance(x, cls)]

    def start(self, boot=BOOT, last_seq=0, unacked=0):
        """Hello exchange, then the heartbeat that tells where the shoe's numbering stands."""
        out = self.feed(shoe_hello(boot, last_seq), m.Heartbeat(seq=last_seq, unacked=unacked))
        return out


def test_the_host_says_hello_when_the_link_opens_and_repeats_it_until_answered():
    # SPEC.md §8: "The host sends its Hello when it opens the link and repeats it every second until a
    # shoe Hello arrives." §5.2: host vendor is the software, model the table id.
    h = Host(hello_repeat=1.0)
    hellos = h.sent_of(m.Hello)
    assert len(hellos) == 1 and hellos[0].vendor == "shoed" and hellos[0].model == "table-7" and hellos[0].seq == 0
    h.tick(0.5)
    assert len(h.sent_of(m.Hello)) == 1
    h.tick(0.6)
    assert len(h.sent_of(m.Hello)) == 2
    h.feed(shoe_hello())
    h.tick(1.5)
    assert len(h.sent_of(m.Hello)) == 2, "no more repeats once the shoe answered"


def test_after_the_hello_exchange_the_clock_is_set():
    # SPEC.md §10: "The host sends [set_time] after each Hello exchange".
    h = Host()
    readings = h.feed(shoe_hello())
    assert [r.kind for r in readings] == ["hello"]
    (st_,) = h.sent_of(m.SetTime)
    assert st_.utc_ms == UTC // 1_000_000
    assert readings[0].detail == {"vendor": "Acme Gaming", "model": "CR-8", "serial": "SN1", "firmware": "2.4.1",
                                  "version": "1.0", "boot": BOOT, "negotiated": "1.0"}


@pytest.mark.parametrize(
    "when, answered",
    [
        (0.1, False),  # soon after our Hello: it is the shoe's answer (SPEC.md §8, no loop)
        (1.5, True),  # long after: the shoe never got ours and repeats its Hello
    ],
)
def test_a_shoe_hello_is_answered_only_when_it_needs_an_answer(when, answered):
    h = Host(hello_repeat=1.0)
    h.feed(shoe_hello(), advance=when)
    assert len(h.sent_of(m.Hello)) == 1 + answered


def test_a_restarted_shoe_gets_our_hello_and_is_reported():
    # SPEC.md §8: the host answers a Hello whose boot differs from the last exchanged; §6.4: a new boot
    # means the shoe restarted and what it held unacknowledged is gone.
    h = Host()
    h.start(unacked=0)
    h.feed(m.Heartbeat(seq=3, unacked=2), advance=0.1)
    readings = h.feed(shoe_hello(boot=7), advance=0.05)
    assert len(h.sent_of(m.Hello)) == 2
    (hello,) = readings
    assert hello.detail["restarted"] is True and hello.detail["lost_unacked"] == 2


def test_a_line_that_echoes_the_hosts_hello_is_said_once_and_the_session_keeps_its_shoe():
    # An RS-485 adapter in echo mode, or a loop-back: the host's own Hello comes back. It is never the
    # shoe's: the session stays bound to the shoe's boot, nothing restarts, and cards go on being taken.
    h = Host()
    h.start(unacked=0)
    (c1,) = [r for r in h.feed(card(1), advance=0.1) if r.kind == "card"]
    echoed = h.feed(h.session.host_hello, advance=0.1)
    assert [(r.kind, r.code) for r in echoed] == [("warning", "line_echo")]
    assert h.feed(h.session.host_hello, advance=0.1) == []  # said once
    assert h.session.boot == BOOT
    readings = h.feed(card(1), card(2), advance=0.1)  # the repeat of 1 is not taken again
    assert [(r.kind, r.shoe_seq) for r in readings if r.kind != "warning"] == [("card", 2)]
    assert not [r for r in echoed + readings if r.kind == "hello"]


# SPEC.md §6.3: (s - last) mod 65536 -> verdict. last = 5 here.
TAKING = [
    (6, "take", "the next one"),
    (5, "duplicate", "0: the one taken last"),
    (1, "duplicate", "an old one"),
    (5 + 32768, "duplicate", "32768 ahead counts as behind"),
    (7, "gap", "2 ahead: 6 is missing"),
    (5 + 32767, "gap", "32767 ahead"),
]


@pytest.mark.parametrize("seq, verdict, why", TAKING, ids=[c[2] for c in TAKING])
def test_take_duplicate_gap(seq, verdict, why):
    h = Host()
    h.session.restore(5, BOOT)  # the journal holds seq 5 of this boot: 5 and before were acknowledged
    h.start(last_seq=5, unacked=0)
    acks_before = len(h.sent_of(m.Ack))
    readings = h.feed(card(seq % 65536))
    acks = h.sent_of(m.Ack)[acks_before:]
    if verdict == "take":
        assert [r.kind for r in readings] == ["card"] and readings[0].shoe_seq == seq
        assert acks == [], "never acknowledged before the daemon says it is journaled"
    elif verdict == "duplicate":
        assert readings == []
        assert [a.ack for a in acks] == [5], "ack last again: the shoe's earlier ack may have been lost"
    else:
        assert [(r.kind, r.code) for r in readings] == [("warning", "seq_gap")] and acks == []


def test_a_gap_is_reported_once_and_the_repeat_is_taken():
    # SPEC.md §12.11: card 2 lost on the wire, 3 dropped as a gap, the repeats of 2 and 3 taken.
    h = Host()
    h.start()
    r1 = h.feed(card(1, rank=7, suit=2))
    h.ack(r1[0])
    gap = h.feed(card(3, rank=4, suit=0))
    again = h.feed(card(3, rank=4, suit=0))
    repeat = h.feed(card(2, rank=13, suit=1), card(3, rank=4, suit=0))
    assert [r.code for r in gap] == ["seq_gap"] and again == []
    assert [r.card for r in repeat] == ["KD", "4C"]
    assert h.session.stats.gaps == 2


def test_nothing_is_taken_before_the_hello_on_this_link():
    # SPEC.md §6.3: "The host takes nothing from a link before it has the shoe's Hello on that link".
    h = Host()
    assert h.feed(card(1)) == []
    assert [r.kind for r in h.start()] == ["hello"]
    assert [r.card for r in h.feed(card(1))] == ["TD"]


def test_without_a_record_last_comes_from_the_first_heartbeat():
    # SPEC.md §6.3: "learns last from the shoe's first heartbeat or status: last = (seq - unacked)".
    h = Host()
    h.feed(shoe_hello(seq=41))
    assert h.feed(card(40)) == [], "nothing before the heartbeat"
    h.feed(m.Heartbeat(seq=42, unacked=2))
    assert h.session.last == 40
    assert [r.shoe_seq for r in h.feed(card(41), card(42))] == [41, 42]


def test_restored_from_the_journal_repeats_are_dropped_and_acknowledged():
    # SPEC.md §6.3: after a host restart, last comes from the records; the daemon restores it.
    h = Host()
    h.session.restore(7, BOOT)
    h.feed(shoe_hello(seq=9))
    assert h.sent_of(m.Ack)[-1].ack == 7, "the ack for last goes out at once (SPEC.md §7)"
    assert h.feed(card(6), card(7)) == []
    assert [r.shoe_seq for r in h.feed(card(8), card(9))] == [8, 9]


def test_a_restored_record_of_another_boot_is_not_used():
    h = Host()
    h.session.restore(7, 0xDEAD)
    readings = h.feed(shoe_hello(seq=2), m.Heartbeat(seq=2, unacked=2))
    assert readings[0].detail["restarted"] is True
    assert [r.shoe_seq for r in h.feed(card(1), card(2))] == [1, 2], "the new session starts again at 1"


def test_acknowledge_is_cumulative_and_only_forward():
    # SPEC.md §5.11: an ack covers every reliable message up to and including its seq.
    h = Host()
    h.start()
    r = h.feed(card(1), card(2), card(3))
    h.ack(r[2])
    h.ack(r[0])  # already covered
    assert [a.ack for a in h.sent_of(m.Ack)] == [3]


def test_a_reading_of_an_old_boot_is_not_acknowledged():
    h = Host()
    h.start()
    old = h.feed(card(1))[0]
    h.feed(shoe_hello(boot=99), m.Heartbeat(seq=0, unacked=0))
    h.ack(old)
    assert h.sent_of(m.Ack) == []


def test_an_impossible_payload_is_a_firmware_fault_said_once():
    # SPEC.md §6.3: "A reliable message whose payload is invalid ... the host MUST raise a fault".
    import struct
    import zlib

    from firmware_protocol.codec import cobs_encode

    content = bytes((1, 0x10)) + struct.pack("<H", 1) + bytes((14, 0, 255, 0, 0))  # rank 14
    frame = cobs_encode(content + struct.pack("<I", zlib.crc32(content))) + b"\x00"
    h = Host()
    h.start()
    first = h.feed(raw=frame)
    second = h.feed(raw=frame)
    assert [(r.kind, r.code) for r in first] == [("alarm", "firmware_fault")] and second == []
    assert first[0].card is None


def test_an_incompatible_shoe_is_an_alarm_and_nothing_is_taken():
    # SPEC.md §8: "If the majors differ ... the host records 'incompatible shoe protocol' ... and takes nothing".
    h = Host()
    readings = h.feed(shoe_hello(major=2), m.Heartbeat(seq=0, unacked=0))
    assert [(r.kind, r.code) for r in readings] == [("alarm", "incompatible_protocol")]
    assert h.feed(card(1)) == []


def test_heartbeats_when_idle_and_silence():
    # SPEC.md §7: something at least once a second; 3 s without a valid frame is a lost link.
    h = Host(heartbeat=0.5, silence=3.0)
    h.start()
    h.tick(0.6)
    assert len(h.sent_of(m.Heartbeat)) == 1
    assert not h.session.silent(h.now)
    h.feed(raw=b"\x01\x02noise\x00", advance=2.0)  # noise does not keep a link alive
    assert h.session.silent(h.now + int(1.0 * NS))


def test_the_gate_is_repeated_until_a_status_shows_it():
    # SPEC.md §10: "the host repeats its gate message every 200 ms until a status shows the state asked for".
    h = Host(gate_repeat=0.2)
    h.start()
    h.feed(m.Status(seq=0, gate_locked=True), advance=0.01)  # the answer to set_time
    h.session.set_gate(False, h.now)
    h._collect()
    h.tick(0.25)
    assert [g.locked for g in h.sent_of(m.Gate)] == [False, False]
    h.feed(m.Status(seq=0, gate_locked=False))
    h.tick(0.25)
    h.tick(0.25)
    assert len(h.sent_of(m.Gate)) == 2


def test_every_kind_of_reliable_message():
    # SPEC.md §5.3 - §5.8.
    h = Host()
    h.start()
    msgs = [
        m.CardRead(seq=1, rank=1, suit=3, confidence=255, faced=True, mode=m.MODE_BURN),
        m.Unreadable(seq=2, mode=m.MODE_BURN, reason=m.UNREADABLE_LOW_CONFIDENCE),
        m.Unreadable(seq=3, mode=m.MODE_GAME, reason=200),
        m.Button(seq=4, button=m.BUTTON_BURN_END), m.CutCard(seq=5), m.ShoeRemoved(seq=6), m.ShoeInserted(seq=7),
        m.Tamper(seq=8, source=m.TAMPER_CASE, active=False), m.Tamper(seq=9, source=9, active=True),
        m.Alarm(seq=10, code=513, text="jam"),
    ]
    got = [(r.kind, r.card, r.mode, r.button, r.code, r.faced) for r in h.feed(*msgs)]
    assert got == [
        ("card", "AS", "burn", None, None, True),
        ("unreadable", None, "burn", None, "low_confidence", False),
        ("unreadable", None, "game", None, "vendor_200", False),
        ("button", None, "game", "burn_end", None, False),
        ("cut_card", None, "game", None, None, False),
        ("shoe_removed", None, "game", None, None, False),
        ("shoe_inserted", None, "game", None, None, False),
        ("tamper", None, "game", None, "case", False),
        ("tamper", None, "game", None, "sensor_9", False),
        ("alarm", None, "game", None, "513", False),
    ]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 40)), max_size=40),
       st.lists(st.binary(max_size=20), max_size=5))
def test_whatever_arrives_each_card_is_taken_once_and_in_order(events, noise):
    # SPEC.md §1 "Every card counts exactly once", "In order": the shoe's frames arrive repeated,
    # out of order and mixed with noise; the session takes seq 1, 2, 3... and nothing else.
    h = Host()
    h.start()
    taken = []
    for (how, seq), junk in zip(events, noise + [b""] * len(events)):
        msgs = [card(seq % 65536, rank=seq % 13 + 1)] * (1 + how % 2)
        for r in h.feed(*msgs, raw=junk):
            if r.kind == "card":
                taken.append(r.shoe_seq)
                h.ack(r)
    assert taken == list(range(1, len(taken) + 1))


# ----- protocol 1.1: the card-reading shuffler's messages -------------------------------------------------


def test_a_1_0_shoe_agrees_on_1_0_and_its_session_is_unchanged():
    """SPEC.md §8: the host says 1.1, a 1.0 shoe answers 1.0; both use 1.0 and cards flow as before."""
    h = Host()
    assert h.sent_of(m.Hello)[0].minor == 1
    readings = h.start()
    assert readings[0].detail["negotiated"] == "1.0"
    (reading,) = h.feed(card(1))
    assert reading.kind == "card" and reading.card == "TD"


def test_a_shuffler_message_in_a_session_agreed_at_1_0_is_not_taken():
    """SPEC.md §8: a message newer than the agreed version is an unknown type: not taken, not acknowledged."""
    h = Host(shuffler=True)
    h.start()
    acks_before = len(h.sent_of(m.Ack))
    (warning,) = h.feed(m.ShuffleStarted(seq=1, shuffle=7, decks=8))
    assert warning.kind == "warning" and warning.code == "frame_rejected" and "1.0" in warning.text
    assert h.session.last == 0 and len(h.sent_of(m.Ack)) == acks_before
    assert h.feed(m.ShuffleStarted(seq=1, shuffle=7, decks=8)) == []  # said once
    (reading,) = h.feed(card(1))
    assert reading.kind == "card"


def test_a_1_1_shuffler_reports_become_readings_with_their_fields():
    """SPEC.md §5.15 - §5.21: each report is a reliable reading, its fields in detail (the shuffler driver's
    session: the driver seals the order, shoed.drivers.shuffler)."""
    h = Host(shuffler=True)
    out = h.feed(shoe_hello(minor=1), m.Heartbeat(seq=0, unacked=0))
    assert out[0].detail["negotiated"] == "1.1"
    digest = m.order_digest(("7H", "KD"))
    readings = h.feed(
        m.ShuffleStarted(seq=1, shuffle=0xBEEF, decks=1),
        m.DeckCheck(seq=2, shuffle=0xBEEF, deck=1, present=51, missing=("AS",), foreign=("KH",)),
        m.OrderChunk(seq=3, shuffle=0xBEEF, position=0, cards=("7H", "KD")),
        m.ShuffleCompleted(seq=4, shuffle=0xBEEF, shoe=42, cards=2, digest=digest),
        m.ShufflerError(seq=5, shuffle=0xBEEF, fault=m.SHUFFLER_JAM, code=11, text="jam"),
        m.Meters(seq=6, shuffles=1, cards=2),
    )
    assert [r.kind for r in readings] == ["shuffle_started", "deck_check", "order_chunk", "shuffle_completed",
                                          "shuffler_error", "meters"]
    assert [r.shoe_seq for r in readings] == [1, 2, 3, 4, 5, 6]
    assert readings[1].detail["missing"] == ["AS"] and readings[1].detail["foreign"] == ["KH"]
    assert readings[2].detail["cards"] == ["7H", "KD"] and readings[2].detail["position"] == 0
    assert readings[3].detail["digest"] == digest and readings[3].detail["shoe"] == 42
    assert readings[4].detail["fault_name"] == "jam" and readings[4].detail["active"] is True
    assert all(r.detail["boot"] == BOOT for r in readings)
    h.ack(readings[2])
    assert h.sent_of(m.Ack)[-1].ack == 3  # chunks are acknowledged like any reliable message


def test_a_shufflers_messages_on_another_drivers_link_are_refused_without_their_bytes():
    """Only the shuffler driver seals the order: on a `native` link a shuffler's message is an unknown type
    for the device, said once a type without its frame (which may hold the order), never taken nor
    acknowledged; a plain shoe's draw (1.1 too) is taken as before."""
    h = Host()
    assert h.feed(shoe_hello(minor=1), m.Heartbeat(seq=0, unacked=0))[0].detail["negotiated"] == "1.1"
    acks_before = len(h.sent_of(m.Ack))
    chunk = m.OrderChunk(seq=1, shuffle=0xBEEF, position=0, cards=("7H", "KD", "2S"))
    (warning,) = h.feed(m.ShuffleStarted(seq=1, shuffle=0xBEEF, decks=1), chunk)[-1:]
    assert (warning.kind, warning.code, warning.raw) == ("warning", "frame_rejected", b"")
    assert "order_chunk" in warning.text and 'driver = "shuffler"' in warning.text
    digest = m.order_digest(("7H", "KD", "2S"))
    readings = h.feed(m.ShuffleCompleted(seq=1, shuffle=0xBEEF, shoe=1, cards=3, digest=digest), chunk)
    assert [r.raw for r in readings] == [b""] and "shuffle_completed" in readings[0].text  # the chunk: said
    for reading in readings + [warning]:
        assert "7H" not in repr(reading) and digest not in repr(reading)
    assert h.session.last == 0 and len(h.sent_of(m.Ack)) == acks_before
    # A chunk with an impossible payload is refused the same way, without its bytes.
    body = struct.pack("<BBHIHB", 1, 0x52, 1, 0xBEEF, 3, 2) + bytes([m.card_byte("9C"), 0x0E])  # 0x0E: no card
    (impossible,) = h.feed(raw=cobs_encode(body + struct.pack("<I", zlib.crc32(body))) + b"\0")
    assert (impossible.kind, impossible.code, impossible.raw) == ("warning", "frame_rejected", b"")
    assert "type 0x52" in impossible.text
    (draw,) = h.feed(m.Draw(seq=1))
    assert draw.kind == "draw" and draw.shoe_seq == 1


def test_a_plain_shoes_draws_are_readings_taken_once_in_order_and_acknowledged_like_cards():
    """SPEC.md §5.22: a draw is a reliable `draw` reading (mode, what saw the card leave); a repeat is dropped,
    a gap waits for the repeat, and the ack comes only once the daemon journaled it."""
    from shoed.daemon.loop import input_from_reading

    h = Host()
    assert h.feed(shoe_hello(minor=1), m.Heartbeat(seq=0, unacked=0))[0].detail["negotiated"] == "1.1"
    first, burn = h.feed(m.Draw(seq=1), m.Draw(seq=2, mode=m.MODE_BURN, trigger=m.DRAW_BUTTON))
    assert (first.kind, first.mode, first.code, first.card, first.shoe_seq) == ("draw", "game", "sensor", None, 1)
    assert (burn.kind, burn.mode, burn.code, burn.shoe_seq) == ("draw", "burn", "button", 2)
    assert first.detail == {"boot": BOOT}
    # What the table controller takes: kind draw, its source and mode (shoed/table/shuffle.py on_draw).
    item = input_from_reading(first)
    assert (item["kind"], item["source"], item["mode"]) == ("draw", "native:test", "game")
    assert h.sent_of(m.Ack) == []  # nothing acknowledged before the daemon says it is journaled
    assert h.feed(m.Draw(seq=2, mode=m.MODE_BURN, trigger=m.DRAW_BUTTON)) == []  # a repeat: dropped
    (gap,) = h.feed(m.Draw(seq=4))
    assert gap.kind == "warning" and gap.code == "seq_gap"
    (third, fourth) = h.feed(m.Draw(seq=3, trigger=200), m.Draw(seq=4))
    assert third.code == "vendor_200" and fourth.shoe_seq == 4
    h.ack(fourth)
    assert h.sent_of(m.Ack)[-1].ack == 4


def test_a_draw_in_a_session_agreed_at_1_0_is_not_taken():
    """SPEC.md §8: a 1.0 session knows no draw: not taken, not acknowledged, said once."""
    h = Host()
    h.start()
    (warning,) = h.feed(m.Draw(seq=1))
    assert warning.kind == "warning" and "draw" in warning.text and h.session.last == 0
    assert h.feed(m.Draw(seq=1)) == []
