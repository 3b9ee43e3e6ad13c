"""Sequence numbers and reliable delivery (SPEC.md §6, §8): the rules as tables, then both ends on a lossy link.

The simulation runs a shoe and a host that follow SPEC.md §6 to the letter,
through real frames of the reference codec, over a wire that drops, corrupts
and garbles bytes in both directions, and checks the promise of §1: every card
recorded exactly once, in order.
"""

from __future__ import annotations

import random

import pytest

from firmware_protocol import Ack, CardRead, Decoder, Hello, Rejected, encode, session

# (SPEC.md §6.1, a, b, a is after b)
AFTER = [
    ("the next number", 6, 5, True),
    ("the same number", 5, 5, False),
    ("an earlier number", 4, 5, False),
    ("0 comes after 65535", 0, 65535, True),
    ("65535 is before 0", 65535, 0, False),
    ("32767 ahead is still after", 32767, 0, True),
    ("32768 ahead is before (half the space)", 32768, 0, False),
]


@pytest.mark.parametrize(("case", "a", "b", "after"), AFTER, ids=[c[0] for c in AFTER])
def test_seq_after(case, a, b, after):
    assert session.seq_after(a, b) is after


def test_seq_next_wraps():
    assert [session.seq_next(s) for s in (0, 65534, 65535)] == [1, 65535, 0]
    assert session.seq_ahead(2, 65535) == 3


# (SPEC.md §6.3 table, last taken, seq received, verdict)
HOST_VERDICTS = [
    ("the next one: take", 5, 6, session.TAKE),
    ("the first of a session: take", 0, 1, session.TAKE),
    ("across the wrap: take", 65535, 0, session.TAKE),
    ("the last one again: duplicate", 5, 5, session.DUPLICATE),
    ("an old one: duplicate", 5, 1, session.DUPLICATE),
    ("old across the wrap: duplicate", 2, 65530, session.DUPLICATE),
    ("32768 behind: duplicate", 40000, 7232, session.DUPLICATE),
    ("one missing: gap", 5, 7, session.GAP),
    ("gap across the wrap", 65535, 1, session.GAP),
    ("32767 ahead: gap", 0, 32767, session.GAP),
]


@pytest.mark.parametrize(("case", "last", "seq", "verdict"), HOST_VERDICTS, ids=[c[0] for c in HOST_VERDICTS])
def test_host_verdict(case, last, seq, verdict):
    assert session.classify(last, seq) == verdict


# (SPEC.md §6.2 acks, oldest unacked, unacked, ack, released)
ACKS = [
    ("releases up to and including ack", 10, 5, 12, 3),
    ("releases all", 10, 5, 14, 5),
    ("the one before the oldest: stale", 10, 5, 9, 0),
    ("beyond what was sent: ignored", 10, 5, 15, 0),
    ("far behind: stale", 10, 5, 60000, 0),
    ("across the wrap", 65534, 4, 0, 3),
    ("nothing unacked", 10, 0, 10, 0),
]


@pytest.mark.parametrize(("case", "oldest", "unacked", "ack", "released"), ACKS, ids=[c[0] for c in ACKS])
def test_shoe_ack(case, oldest, unacked, ack, released):
    assert session.acked_count(oldest, unacked, ack) == released


def test_host_without_records_learns_last_from_a_heartbeat():
    """SPEC.md §6.3: heartbeat seq 17 with 2 unacked: 16 and 17 are waiting, so last = 15."""
    assert session.last_taken_from(17, 2) == 15
    assert session.last_taken_from(1, 3) == 65534


# (SPEC.md §8, ours, theirs, agreed version)
NEGOTIATION = [
    ("same version", (1, 0), (1, 0), (1, 0)),
    ("newer shoe: the lower minor", (1, 0), (1, 3), (1, 0)),
    ("newer host: the lower minor", (1, 2), (1, 1), (1, 1)),
    ("different major: no session", (1, 0), (2, 0), None),
]


@pytest.mark.parametrize(("case", "ours", "theirs", "agreed"), NEGOTIATION, ids=[c[0] for c in NEGOTIATION])
def test_version_negotiation(case, ours, theirs, agreed):
    assert session.negotiate(Hello(major=ours[0], minor=ours[1]), Hello(major=theirs[0], minor=theirs[1])) == agreed


# ----- both ends on a lossy link ---------------------------------------------

TICK_MS = 10


class Wire:
    """One direction of a serial line that loses, corrupts and garbles bytes."""

    def __init__(self, rng: random.Random, loss: float, corrupt: float, noise: float) -> None:
        self.rng, self.loss, self.corrupt, self.noise = rng, loss, corrupt, noise
        self.in_flight: list[bytes] = []

    def send(self, frame: bytes) -> None:
        if self.rng.random() < self.loss:
            return
        if self.rng.random() < self.corrupt:
            frame = bytearray(frame)
            frame[self.rng.randrange(len(frame))] ^= 1 << self.rng.randrange(8)
            frame = bytes(frame)
        if self.rng.random() < self.noise:
            frame = bytes(self.rng.randrange(256) for _ in range(self.rng.randrange(1, 12))) + frame
        self.in_flight.append(frame)

    def receive(self) -> bytes:
        data, self.in_flight = b"".join(self.in_flight), []
        return data


class Shoe:
    """SPEC.md §6.2: queue, window of 16, go-back-N after 200 ms, cumulative acks."""

    def __init__(self, first_seq: int) -> None:
        self.last_assigned = (first_seq - 1) % session.SEQ_MOD
        self.queue: list[CardRead] = []
        self.sent = 0  # how many of the window's messages have been sent since the last go-back
        self.last_progress = 0
        self.decoder = Decoder()

    def deal(self, rank: int, suit: int) -> CardRead:
        self.last_assigned = session.seq_next(self.last_assigned)
        card = CardRead(seq=self.last_assigned, rank=rank, suit=suit)
        self.queue.append(card)
        return card

    def tick(self, now: int, wire: Wire) -> None:
        window = self.queue[:session.WINDOW]
        if window and now - self.last_progress >= session.RESEND_MS:
            self.sent = 0  # go back to the oldest
            self.last_progress = now
        for card in window[self.sent:]:
            wire.send(encode(card))
        self.sent = len(window)

    def receive(self, data: bytes, now: int) -> None:
        for _, item in self.decoder.feed(data):
            if isinstance(item, Ack) and self.queue:
                released = session.acked_count(self.queue[0].seq, len(self.queue), item.ack)
                if released:
                    del self.queue[:released]
                    self.sent = max(0, self.sent - released)
                    self.last_progress = now


class Host:
    """SPEC.md §6.3: take only the next number, record, then acknowledge; drop the rest."""

    def __init__(self, last: int) -> None:
        self.last = last
        self.journal: list[CardRead] = []
        self.decoder = Decoder()
        self.rejected = 0
        self.verdicts = {session.TAKE: 0, session.DUPLICATE: 0, session.GAP: 0}

    def receive(self, data: bytes, wire: Wire) -> None:
        ack = None
        for _, item in self.decoder.feed(data):
            if isinstance(item, Rejected):
                self.rejected += 1
                continue
            verdict = session.classify(self.last, item.seq)
            self.verdicts[verdict] += 1
            if verdict == session.TAKE:
                self.journal.append(item)  # the durable write would go here, before the ack
                self.last = item.seq
                ack = self.last
            elif verdict == session.DUPLICATE:
                ack = self.last
        if ack is not None:
            wire.send(encode(Ack(ack=ack)))


@pytest.mark.parametrize(("seed", "first_seq", "loss", "corrupt", "noise"), [
    (1, 1, 0.0, 0.0, 0.0),
    (2, 1, 0.2, 0.1, 0.1),
    (3, 65500, 0.3, 0.1, 0.2),  # wraps past 65535 on the way
    (4, 32000, 0.5, 0.2, 0.3),
])
def test_every_card_recorded_exactly_once_in_order_over_a_lossy_link(seed, first_seq, loss, corrupt, noise):
    """SPEC.md §1 and §6: lost, corrupted and garbled frames and lost acks lose no card and double none."""
    rng = random.Random(seed)
    to_host, to_shoe = Wire(rng, loss, corrupt, noise), Wire(rng, loss, corrupt, noise)
    shoe, host = Shoe(first_seq), Host(last=(first_seq - 1) % session.SEQ_MOD)
    dealt = []
    now = 0
    while (len(dealt) < 416 or shoe.queue) and now < 600_000:
        if len(dealt) < 416 and rng.random() < 0.3:  # a dealer draws several cards a second
            dealt.append(shoe.deal(rng.randint(1, 13), rng.randint(0, 3)))
        shoe.tick(now, to_host)
        host.receive(to_host.receive(), to_shoe)
        shoe.receive(to_shoe.receive(), now)
        now += TICK_MS
    assert host.journal == dealt
    assert not shoe.queue
    if loss:  # the run went through every path of §6.3: repeats, duplicates, gaps and rejected frames
        assert min(host.verdicts.values()) > 0 and host.rejected > 0
