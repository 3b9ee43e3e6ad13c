"""Link rules of the shoe protocol as pure functions (SPEC.md §6 and §7).

Sequence arithmetic modulo 2**16, the host's rule for taking a reliable
message exactly once, the shoe's rule for what a cumulative ACK releases, and
version negotiation. The daemon's native driver and the virtual shoe both use
these, so the two ends of a test link follow the same written rules.
"""

from __future__ import annotations

from firmware_protocol import messages as m

SEQ_MOD = 1 << 16
SEQ_HALF = 1 << 15

# Timing (SPEC.md §7). Milliseconds.
RESEND_MS = 200  # the shoe repeats its unacknowledged window after this long without progress
ACK_WITHIN_MS = 50  # the host acknowledges at most this long after the record is durable
HEARTBEAT_MS = 1000  # each side sends something at least this often
LINK_LOSS_MS = 3000  # silence this long means the link is lost
HELLO_REPEAT_MS = 1000  # a Hello without an answer is repeated this often

WINDOW = 16  # reliable messages in flight (sent, not acknowledged) at most
QUEUE_MIN = 1024  # reliable messages a shoe must be able to hold without losing one
UNACKED_MAX = SEQ_HALF - 1  # beyond this, seq comparison would be ambiguous: the shoe locks its gate first

# What the host does with a reliable message (SPEC.md §6.3).
TAKE = "take"  # the next one: journal it, then acknowledge
DUPLICATE = "duplicate"  # taken before: drop it, acknowledge again
GAP = "gap"  # an earlier one is missing: drop it, the shoe goes back and repeats


def seq_next(seq: int) -> int:
    return (seq + 1) % SEQ_MOD


def seq_ahead(a: int, b: int) -> int:
    """How many steps `a` is after `b`, modulo 2**16 (0 .. 65535)."""
    return (a - b) % SEQ_MOD


def seq_after(a: int, b: int) -> bool:
    """True when `a` comes after `b` (within half the sequence space ahead)."""
    return 0 < (a - b) % SEQ_MOD < SEQ_HALF


def classify(last_taken: int, seq: int) -> str:
    """The host's verdict on a reliable message `seq` when it has taken up to `last_taken`."""
    ahead = (seq - last_taken) % SEQ_MOD
    if ahead == 1:
        return TAKE
    if ahead == 0 or ahead >= SEQ_HALF:
        return DUPLICATE
    return GAP


def acked_count(oldest: int, unacked: int, ack: int) -> int:
    """How many of the shoe's `unacked` reliable messages, the first numbered `oldest`,
    a cumulative Ack(`ack`) releases; 0 for a stale or foreign ack."""
    count = (ack - oldest + 1) % SEQ_MOD
    return count if 1 <= count <= unacked else 0


def last_taken_from(seq: int, unacked: int) -> int:
    """For a host with no record of this shoe session: the seq just before the shoe's
    oldest unacknowledged message, from a Heartbeat or Status (`seq`, `unacked`)."""
    return (seq - unacked) % SEQ_MOD


def numbering_fault(last: int | None, durable: int | None, seq: int, unacked: int) -> str | None:
    """What is wrong with a Heartbeat or Status (`seq`, `unacked`) against what the host holds of the same
    shoe session (SPEC.md §6.3): the host has taken up to `last` and recorded durably up to `durable`
    (None: nothing yet). None when the two agree."""
    if unacked > UNACKED_MAX:
        return f"{unacked} messages unacknowledged, at most {UNACKED_MAX}"
    if durable is not None and seq_after(durable, seq):
        return f"its last message is seq {seq}, before seq {durable} that the host has recorded"
    oldest = seq_next(last_taken_from(seq, unacked))
    if last is not None and seq_after(oldest, seq_next(last)):
        return (f"its oldest unacknowledged message is seq {oldest}, after seq {seq_next(last)} that the host "
                "waits for: messages the host never took were released")
    return None


def negotiate(ours: m.Hello, theirs: m.Hello) -> tuple[int, int] | None:
    """The protocol version both sides use: same major, the lower minor; None when majors differ."""
    if ours.major != theirs.major:
        return None
    return ours.major, min(ours.minor, theirs.minor)
