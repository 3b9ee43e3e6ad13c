"""Back-off between tries of something that failed: a shoe's link, a camera, a source that
would not open.

One rule serves them all: the first try after a failure waits `first` seconds, each failure
after it twice as long, never more than `most`; a success starts the count again. The waits
are data (`failed()` returns the next one), so the caller keeps its own clock: a thread waits
on its stop event, the daemon's loop compares with `time.monotonic()`.
"""

from __future__ import annotations


class Backoff:
    """Delays between tries: `first`, doubling to at most `most` seconds."""

    __slots__ = ("first", "most", "failures")

    def __init__(self, first: float, most: float) -> None:
        if not 0 < first <= most:
            raise ValueError(f"a back-off needs 0 < first <= most, not {first} and {most}")
        self.first = first
        self.most = most
        self.failures = 0  # failures since the last success

    def failed(self) -> float:
        """One more failure: the seconds to wait before the next try."""
        self.failures += 1
        # the exponent is capped, so a source failing for days never makes a huge float
        return min(self.most, self.first * 2.0 ** min(self.failures - 1, 64))

    def succeeded(self) -> None:
        """A try worked: the next failure waits `first` again."""
        self.failures = 0
