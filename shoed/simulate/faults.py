"""Fault plans for the virtual shoe: what goes wrong, how often and when.

A plan is plain data. Dealing faults (unreadable cards, extra and missing
cards, foreign cards) change what the virtual dealer does and are recorded in
the ground truth; link faults (garbage, bit flips, lost and repeated frames,
disconnects) change only the bytes on the wire. Every fault has a rate, a
schedule, or both, and every draw comes from a random generator seeded from the
run's seed, so the same plan and seed always give the same faults.

`LinkNoise` is the pure part of the link faults: given a frame and a seeded
random generator it returns the bytes to write.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, fields


class FaultPlanError(ValueError):
    """A fault plan that cannot be followed (a rate outside 0..1, a bad schedule)."""


RATE_FIELDS = ("garbage", "ber", "lose", "repeat", "unreadable", "extra_card", "missing_card", "foreign_card")
SCHEDULE_FIELDS = ("disconnect_at", "unreadable_at", "extra_card_after", "missing_card_in", "foreign_card_at")


@dataclass(frozen=True)
class FaultPlan:
    """What goes wrong during a run. Rates are probabilities (0..1); schedules
    count from 1 over the whole run (all shoes): cards in the order they leave
    the shoe (burn cards included), coups in the order they are dealt."""

    # ----- link faults (bytes on the wire) ----------------------------------
    garbage: float = 0.0  # per frame: a burst of 1..32 random bytes written before it
    ber: float = 0.0  # per bit of every frame written: the bit is flipped
    lose: float = 0.0  # per frame written: it is not sent at all
    repeat: float = 0.0  # per frame written: it is sent twice
    disconnect_every: float | None = None  # seconds between unplugs of the link
    disconnect_at: tuple[int, ...] = ()  # unplug right after these cards were sent
    reconnect_after: float = 0.5  # seconds the link stays unplugged

    # ----- dealing faults (what the dealer and the reader do) ---------------
    unreadable: float = 0.0  # per card: the reader cannot identify it
    unreadable_at: tuple[int, ...] = ()  # card numbers
    extra_card: float = 0.0  # per coup: one card too many after the coup is complete
    extra_card_after: tuple[int, ...] = ()  # coup numbers
    missing_card: float = 0.0  # per coup: confirm pressed while the last card is still due
    missing_card_in: tuple[int, ...] = ()  # coup numbers
    foreign_card: float = 0.0  # per game card: a card from another deck is slipped in
    foreign_card_at: tuple[int, ...] = ()  # from these card numbers on, at the first chance

    def __post_init__(self) -> None:
        for name in RATE_FIELDS:
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or not 0.0 <= value <= 1.0:
                raise FaultPlanError(f"{name.replace('_', '-')} is a rate between 0 and 1, not {value!r}")
        for name in SCHEDULE_FIELDS:
            value = getattr(self, name)
            if isinstance(value, (list, set, frozenset)):
                value = tuple(sorted(value))
                object.__setattr__(self, name, value)
            if not isinstance(value, tuple) or any(not isinstance(v, int) or v < 1 for v in value):
                raise FaultPlanError(f"{name.replace('_', '-')} lists numbers counted from 1, not {value!r}")
        if self.disconnect_every is not None and not self.disconnect_every > 0:
            raise FaultPlanError(f"disconnect-every is a number of seconds above 0, not {self.disconnect_every!r}")
        if not self.reconnect_after >= 0:
            raise FaultPlanError(f"reconnect-after is a number of seconds, not {self.reconnect_after!r}")

    @property
    def link_faults(self) -> bool:
        return bool(self.garbage or self.ber or self.lose or self.repeat)


@dataclass
class LinkStats:
    """What the link faults did, counted by the shell."""

    frames: int = 0  # frames offered to the link
    lost: int = 0
    repeated: int = 0
    flipped_bits: int = 0
    corrupted_frames: int = 0
    garbage_bytes: int = 0
    disconnects: int = 0
    dropped_bytes: int = 0  # written while nobody could take them (buffer full, link unplugged)

    def to_json(self) -> dict:
        return {f.name: getattr(self, f.name) for f in fields(self)}


class LinkNoise:
    """Applies the plan's link faults to one frame at a time (no I/O, no clock)."""

    def __init__(self, plan: FaultPlan, rng: random.Random, stats: LinkStats | None = None):
        self.plan = plan
        self.rng = rng
        self.stats = stats if stats is not None else LinkStats()

    def apply(self, frame: bytes) -> tuple[bytes, list[str]]:
        """The bytes to write for `frame`, and the names of the faults applied."""
        plan, rng, stats = self.plan, self.rng, self.stats
        stats.frames += 1
        applied: list[str] = []
        out = bytearray()
        if plan.garbage and rng.random() < plan.garbage:
            burst = rng.randbytes(rng.randint(1, 32))
            out += burst
            stats.garbage_bytes += len(burst)
            applied.append("garbage")
        if plan.lose and rng.random() < plan.lose:
            stats.lost += 1
            applied.append("lost")
            return bytes(out), applied
        body = bytearray(frame)
        if plan.ber:
            flips = self._flips(len(body) * 8)
            for bit in flips:
                body[bit // 8] ^= 1 << (bit % 8)
            if flips:
                stats.flipped_bits += len(flips)
                stats.corrupted_frames += 1
                applied.append("bit_flip")
        out += body
        if plan.repeat and rng.random() < plan.repeat:
            out += body
            stats.repeated += 1
            applied.append("repeated")
        return bytes(out), applied

    def _flips(self, bits: int) -> list[int]:
        """Positions of flipped bits, each bit flipped with probability `ber`.
        Drawn as geometric gaps so a low rate costs one draw per frame, not one per bit."""
        import math

        ber, rng = self.plan.ber, self.rng
        if ber >= 1.0:
            return list(range(bits))
        out: list[int] = []
        log_keep = math.log1p(-ber)
        pos = -1
        while True:
            pos += 1 + int(math.log(1.0 - rng.random()) / log_keep)
            if pos >= bits:
                return out
            out.append(pos)
