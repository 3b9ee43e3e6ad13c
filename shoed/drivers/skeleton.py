"""A driver's skeleton: everything a new shoe driver provides, in the order a reader meets it.

Copy this file to `shoed/drivers/<name>.py` (or into your own package), fill in each method,
then register it: shoed's own drivers get a line in `shoed.drivers._REGISTRY`; a third-party
package declares an entry point instead, and the daemon finds it by name:

    [project.entry-points."shoed.drivers"]
    myshoe = "myshoe.driver:MyShoeDriver"

Once the package is installed beside shoed, `driver = "myshoe"` in a `[[sources]]` table (or
`shoed run --source myshoe:URL`) uses it, and `shoed decode --driver myshoe` finds `decode_stream`
(or, without it, `decode_capture`) in the module the entry point names.

What the daemon relies on (see `shoed.drivers.base`):
- `poll(timeout)` returns within `timeout` seconds, never blocks forever, and reconnects by
  itself, reporting `link` readings: `connected` once the shoe is first heard, `lost` and
  `restored` (the table knows a shoe's link from these alone: a shoe missing when the daemon
  started stays `lost` on every display until its driver says `connected`);
- a card is never guessed: bytes that do not decode to exactly one card become an
  `unreadable` reading or a `warning`, never a `card`;
- `acknowledge(reading)` comes only after the reading is durably journaled;
- every `Reading` carries the raw bytes it came from and its offset in the stream, so the
  journal keeps the evidence and `shoed decode` can read a field capture.

This skeleton is not registered; `tests/drivers/test_registry.py` checks that it still lists
every method of the `Driver` interface.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from shoed.drivers.base import Capabilities, Driver, Reading


class SkeletonDriver(Driver):
    name = "skeleton"  # the registry name (the entry point's): what `driver = "..."` says in the configuration
    summary = "one line for `shoed run --help` and `shoed decode --help`"
    # What the shoe can do: the daemon asks this, never the driver's name. `tells_mode=True` only where every
    # card's reading carries the shoe's own mode (burn or game): a game card while the burn is due then holds
    # the table (burn_short); without it, every card out of the shoe while the burn is due is burned.
    capabilities = Capabilities(reads_identities=True, gate=False, buttons=False, sequenced=False, tells_mode=False)
    # The keys a `[[sources]]` table may give it besides `driver` and `url`; they reach `__init__` as
    # keyword arguments (`self.options`). Any other key is refused when the configuration is read.
    source_options = frozenset({"baudrate"})

    def open(self) -> None:
        """Open the link (a pyserial URL: `serial.serial_for_url(self.url, ...)`). Raise
        `DriverError` with one clear line for a missing node, a denied permission, a busy port."""
        raise NotImplementedError("open the link to the shoe")

    def close(self) -> None:
        """Release the link; safe to call twice."""
        raise NotImplementedError("release the link")

    def poll(self, timeout: float) -> list[Reading]:
        """Read what arrived (at most `timeout` seconds of waiting), feed it to the framer (a
        pure function over a byte buffer: frame and bytes used, or "need more"), and turn each
        frame into a `Reading` stamped with `time.monotonic_ns()` and `time.time_ns()`."""
        raise NotImplementedError("read, frame and decode")

    def acknowledge(self, reading: Reading) -> None:
        """The reading is journaled: a shoe that repeats unacknowledged frames may drop it now."""
        raise NotImplementedError("acknowledge, or delete this method if the shoe keeps nothing")

    def set_gate(self, locked: bool) -> None:
        """Lock or unlock the card gate (only with `capabilities.gate`)."""
        raise NotImplementedError("drive the gate, or delete this method if the shoe has none")

    def set_last_seq(self, seq: int | None, boot: int | None, raw: bytes | None = None) -> None:
        """After a restart: the last sequence number journaled and its frame's bytes, to compare
        a repeat of it with (only with `capabilities.sequenced`)."""
        raise NotImplementedError("restore the repeat filter, or delete this method")


def decode_stream(chunks: Iterable[bytes]) -> Iterator[dict]:
    """A field capture of the shoe's bytes, or a live line, as readings (JSON-ready), for `shoed
    decode`: each chunk decoded as it comes, with the same streaming framer the driver uses, so
    that the memory it takes is bounded whatever the capture's length; at the end, what is left
    as a rejected stretch."""
    raise NotImplementedError("decode the chunks with the same framer the driver uses")


def decode_capture(data: bytes) -> list[dict]:
    """A whole capture decoded: `list(decode_stream([data]))`. A module with `decode_capture`
    alone is given captures whole, 256 MB at most (`shoed.drivers.WHOLE_CAPTURE_MAX`)."""
    return list(decode_stream([data]))
