"""The virtual shoe's firmware keeps the shoe's side of firmware_protocol/SPEC.md.

Each test names the section it checks. Time is passed in as data.
"""

from __future__ import annotations

import itertools

import firmware_protocol as fp
from shoed.simulate.firmware import Firmware


def fw(**kw):
    return Firmware("VS-TEST", boot=0x5EED1234, **kw)


def queue_cards(f, n, now=0.0):
    out = []
    for i in range(n):
        _, sent = f.queue_message(fp.CardRead(rank=i % 13 + 1, suit=i % 4), now)
        out += sent
    return out


def hello_from_host():
    return fp.Hello(vendor="shoed", model="table 1")


def test_numbering_starts_at_one_and_unreliable_frames_carry_the_latest():
    # §6.1: reliable messages are numbered 1, 2, 3 ...; unreliable frames carry
    # the number of the latest reliable message (0 before any) and do not advance it.
    f = fw()
    assert f.hello(0.0).seq == 0
    msg, _ = f.queue_message(fp.Button(button=1), 0.0)
    assert msg.seq == 1
    assert f.heartbeat(0.0).seq == 1 and f.status(0.0).seq == 1
    msg, _ = f.queue_message(fp.CutCard(), 0.0)
    assert msg.seq == 2


def test_nothing_reliable_before_the_hosts_hello():
    # §8: "Until then it sends only Hello and heartbeat, and queues its reliable messages."
    f = fw()
    assert queue_cards(f, 3) == []
    due = f.due(0.0)
    assert [type(m) for m in due] == [fp.Hello]
    assert [type(m) for m in f.due(0.5)] == [fp.Heartbeat]
    assert [type(m) for m in f.due(1.0)] == [fp.Hello]  # repeated every second


def test_hello_is_answered_with_hello_heartbeat_and_window():
    f = fw()
    queue_cards(f, 20)
    out = f.on_host(hello_from_host(), 1.0)
    assert isinstance(out[0], fp.Hello) and out[0].boot == 0x5EED1234 and out[0].model == "virtual shoe"
    assert isinstance(out[1], fp.Heartbeat) and out[1].unacked == 20 and out[1].seq == 20
    # the host learns last = seq - unacked = 0 (§6.3)
    assert [m.seq for m in out[2:]] == list(range(1, 17))  # the window: the oldest 16


def test_acks_release_and_move_the_window():
    # §6.2: an ack a releases k = (a - oldest + 1) mod 65536 oldest messages when 1 <= k <= unacked.
    f = fw()
    queue_cards(f, 20)
    f.on_host(hello_from_host(), 0.0)
    out = f.on_host(fp.Ack(ack=3), 0.05)
    assert f.unacked == 17
    assert [m.seq for m in out] == [17, 18, 19]  # entered the window, sent at once
    assert f.on_host(fp.Ack(ack=2), 0.06) == [] and f.unacked == 17  # stale: ignored
    assert f.on_host(fp.Ack(ack=40), 0.07) == [] and f.unacked == 17  # beyond what was sent: ignored
    f.on_host(fp.Ack(ack=20), 0.08)
    assert f.unacked == 0


def test_go_back_n_after_200_ms_without_progress():
    f = fw()
    f.on_host(hello_from_host(), 0.0)
    sent = queue_cards(f, 3, now=0.0)
    assert [m.seq for m in sent] == [1, 2, 3]
    f.on_host(fp.Heartbeat(), 0.1)
    assert [m for m in f.due(0.15) if m.RELIABLE] == []
    again = [m for m in f.due(0.21) if m.RELIABLE]
    assert again == sent  # byte for byte the same messages, oldest first
    f.on_host(fp.Ack(ack=1), 0.3)
    assert [m for m in f.due(0.45) if m.RELIABLE] == []  # the ack was progress: the timer starts again
    assert [m.seq for m in f.due(0.51) if m.RELIABLE] == [2, 3]


def test_heartbeat_when_idle():
    # §7: each side sends at least one frame per second.
    f = fw()
    f.on_host(hello_from_host(), 0.0)
    assert f.due(0.3) == []
    beats = f.due(0.6)
    assert [type(m) for m in beats] == [fp.Heartbeat] and beats[0].uptime_ms == 600


def test_gate_starts_locked_and_answers_with_status():
    # §10: "At power-on a gate is locked"; "The shoe answers each gate message with a status".
    f = fw()
    assert not f.card_may_pass()
    out = f.on_host(fp.Gate(locked=False), 0.0)
    assert isinstance(out[0], fp.Status) and out[0].gate_locked is False
    assert f.card_may_pass()
    out = f.on_host(fp.Gate(locked=True), 0.1)
    assert out[0].gate_locked is True and not f.card_may_pass()


def test_a_shoe_without_a_gate_says_so():
    f = fw(gate="none")
    out = f.on_host(fp.Gate(locked=True), 0.0)
    assert out[0].gate_locked is False and f.card_may_pass()


def test_set_time_and_status_request():
    f = fw()
    assert f.on_host(fp.StatusRequest(), 1.0)[0].utc_ms == 0  # never set
    out = f.on_host(fp.SetTime(utc_ms=1_700_000_000_000), 2.0)
    assert out[0].utc_ms == 1_700_000_000_000
    assert f.on_host(fp.StatusRequest(), 3.5)[0].utc_ms == 1_700_000_001_500


def test_window_limits_dealing_as_fast_as_the_link_allows():
    f = fw()
    queue_cards(f, 15)
    assert f.may_queue(pace_zero=True)
    queue_cards(f, 1)
    assert not f.may_queue(pace_zero=True)
    assert f.may_queue(pace_zero=False)  # at a dealer's pace the queue holds up to ~1024


def test_sequence_numbers_wrap():
    # §6.1: "after 65535 comes 0, which is an ordinary number"
    f = fw()
    f.last_seq = 65534
    f.on_host(hello_from_host(), 0.0)
    seqs = [m.seq for m in queue_cards(f, 3)]
    assert seqs == [65535, 0, 1]
    f.on_host(fp.Ack(ack=0), 0.01)
    assert f.unacked == 1 and f.queue[0].msg.seq == 1


def test_window_repeats_slow_down_while_the_host_is_silent():
    # §7: "While the link is lost it repeats no more than once a second" (lost: 3 s without a valid frame).
    f = fw()
    f.on_host(hello_from_host(), 0.0)
    queue_cards(f, 2, now=0.0)
    times = []
    t = 0.0
    while t < 8.0:
        if any(m.RELIABLE for m in f.due(t)):
            times.append(round(t, 2))
        t += 0.01
    early = [x for x in times if x < 3.0]
    late = [x for x in times if x >= 3.2]
    assert len(early) >= 10  # every 200 ms while the host is there
    assert all(b - a >= 0.99 for a, b in itertools.pairwise(late))
