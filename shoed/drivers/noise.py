"""Noise on a serial line, coalesced: one reading per interval, never one per rejected stretch.

A line that carries garbage (a loose connector, a hostile device on the bus)
makes the framer reject stretch after stretch. Reported one by one, each is a
journal record with its own fsync and a published event: 10 kB of `01 00`
made 5,000 of them, and the card behind them waited seconds. Here the
stretches are counted by kind and their bytes kept (the first `kept_bytes`
of them, for the record), and the driver reports them as one `warning`
reading: when a good frame arrives (before it, so the journal keeps the
order of the line), or when the noise has gone on for `interval_ns` (the driver
asks `due_ns()` when to look again, so noise that stops with no frame behind
it is still reported). Every serial driver uses it: native, shuffler (a
native session) and Bee-Tek.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from shoed.drivers.base import Reading

INTERVAL_NS = 1_000_000_000
KEPT_BYTES = 4096


@dataclass
class NoiseStretch:
    """What was rejected since the last report."""

    offset: int  # where the first stretch started on the stream
    first_ns: int
    utc_ns: int
    stretches: int = 0
    bytes: int = 0
    kinds: dict[str, int] = field(default_factory=dict)
    kind_bytes: dict[str, int] = field(default_factory=dict)  # bytes rejected, by kind
    kept: bytearray = field(default_factory=bytearray)
    reason: str = ""

    def detail(self) -> dict:
        return {"reject": max(self.kinds, key=lambda kind: self.kinds[kind]), "length": self.bytes, "stretches": self.stretches,
                "kinds": dict(self.kinds), "kept": len(self.kept)}

    def text(self) -> str:
        if self.stretches == 1:
            return self.reason
        return f"{self.stretches} rejected stretches ({self.bytes} bytes) of noise on the line; last: {self.reason}"


def noise_reading(stretch: NoiseStretch, source: str, code: str) -> Reading:
    """The one `warning` reading that reports a stretch of noise (every serial driver's)."""
    return Reading(kind="warning", mode="game", code=code, text=stretch.text(), source=source,
                   raw=bytes(stretch.kept), offset=stretch.offset, mono_ns=stretch.first_ns,
                   utc_ns=stretch.utc_ns, detail=stretch.detail())


class NoiseCoalescer:
    def __init__(self, interval_ns: int = INTERVAL_NS, kept_bytes: int = KEPT_BYTES) -> None:
        self.interval_ns = interval_ns
        self.kept_bytes = kept_bytes
        self.pending: NoiseStretch | None = None

    def note(self, kind: str, raw: bytes, length: int, reason: str, offset: int, now_ns: int, utc_ns: int) -> None:
        stretch = self.pending
        if stretch is None:
            stretch = self.pending = NoiseStretch(offset, now_ns, utc_ns)
        stretch.stretches += 1
        stretch.bytes += length
        stretch.kinds[kind] = stretch.kinds.get(kind, 0) + 1
        stretch.kind_bytes[kind] = stretch.kind_bytes.get(kind, 0) + length
        stretch.reason = reason
        room = self.kept_bytes - len(stretch.kept)
        if room > 0:
            stretch.kept += raw[:room]

    def due_ns(self) -> int | None:
        """Monotonic ns when the noise held now is to be reported even with no frame behind it."""
        return None if self.pending is None else self.pending.first_ns + self.interval_ns

    def due(self, now_ns: int) -> bool:
        return self.pending is not None and now_ns - self.pending.first_ns >= self.interval_ns

    def take(self) -> NoiseStretch | None:
        stretch, self.pending = self.pending, None
        return stretch

    def readings(self, source: str, code: str) -> list[Reading]:
        """The noise held, as its one reading, and forgotten (none held: nothing)."""
        stretch = self.take()
        return [] if stretch is None else [noise_reading(stretch, source, code)]
