"""The `shuffler` driver: a card-reading shuffler speaking the shoed protocol 1.1.

A shuffler uses the shoe protocol's frames, Hello, sequence numbers and acks
(firmware_protocol/SPEC.md §5.15), so this driver is the `native` driver with
its own name: the same session, duplicate filter, acknowledgements and
reconnects. Its reliable reports become readings of kinds `shuffle_started`,
`deck_check`, `order_chunk`, `shuffle_completed`, `shuffler_error` and
`meters`, each with the message's fields in `detail` (card lists as lists of
texts). Each chunk of the order is acknowledged only after the daemon has
journaled it, so a link lost mid-order resumes at the first chunk not yet
recorded.

URLs: any pyserial URL (`/dev/ttyACM0`, `/dev/serial/by-id/...`, `socket://host:port`,
`rfc2217://...`, `loop://`), or `usb://VID:PID[/SERIAL]` for a shuffler on
USB bulk endpoints (the `native-usb` transport; needs pyusb).

The order is the table's most valuable secret. Option `order_key_file`
(required) names a file with a 256-bit key (64 hex digits, e.g. from
`openssl rand -hex 32`), kept outside the journal directory: each chunk's cards
leave the driver sealed with AES-GCM under it (`detail["sealed"]`, bound to
the shuffler's boot, the shuffle and the position), and the chunk's raw frame
is left out, so the order is never in a reading, the journal or a log in
plain text. The table controller opens them with the same key. The completed
shuffle's digest of the order, and any bytes of the link that may hold a chunk
or that digest, are kept only as keyed hashes under subkeys of the same key.
"""

from __future__ import annotations

import dataclasses

from shoed.drivers.base import DriverError, Reading
from shoed.drivers.link import Transport
from shoed.drivers.native import NativeDriver
from shoed.rules.shuffle import evidence, read_key, sealed_detail


class ShufflerDriver(NativeDriver):
    """A card-reading shuffler on a serial port, any pyserial URL, or USB bulk endpoints."""

    name = "shuffler"
    shuffler_messages = True  # the session gives this driver the shuffler's messages (and no other driver)

    def __init__(self, url: str, *, backend=None, order_key_file: str | None = None, **options) -> None:
        self.order_key = load_order_key(order_key_file)
        if url.startswith("usb://"):
            from shoed.drivers.native_usb import parse_usb_url

            parse_usb_url(url)  # a bad address is an error now, not at the first reconnect
        self.backend = backend
        super().__init__(url, **options)

    def _make_transport(self) -> Transport:
        if self.url.startswith("usb://"):
            from shoed.drivers.native_usb import UsbTransport

            return UsbTransport(self.url, backend=self.backend)
        return super()._make_transport()

    def _on_data(self, data: bytes, offset: int, mono_ns: int, utc_ns: int) -> list[Reading]:
        return [self._sealed(r) for r in super()._on_data(data, offset, mono_ns, utc_ns)]

    def _sealed(self, reading: Reading) -> Reading:
        """An order chunk with its cards sealed and its raw frame (which holds them in plain) left out; a
        completed shuffle with the digest of its order as a keyed hash (`digest_hmac`) and its frame left out.
        Any other reading whose bytes may hold a chunk or a digest (a chunk out of turn, one forged under a seq
        taken, one with an impossible payload, a stretch that is no frame) keeps their keyed hash only
        (`raw_hmac`, `taken` as `hmac:<hex>`): a plain hash of them would give the cards back to whoever
        tries the few that are not known yet."""
        if reading.kind in ("shuffle_completed", "order_chunk"):
            return dataclasses.replace(reading, raw=b"", detail=sealed_detail(self.order_key, reading.kind,
                                                                               reading.detail))
        detail = reading.detail
        taken = detail.get("taken") if isinstance(detail, dict) else None
        if isinstance(taken, str) and _may_hold_order(bytes.fromhex(taken)):
            detail = {**detail, "taken": "hmac:" + evidence(self.order_key, bytes.fromhex(taken))}
        if reading.raw and _may_hold_order(reading.raw):
            detail = {**detail, "raw_hmac": evidence(self.order_key, reading.raw)}
            return dataclasses.replace(reading, raw=b"", detail=detail)
        return reading if detail is reading.detail else dataclasses.replace(reading, detail=detail)


def _may_hold_order(raw: bytes) -> bool:
    """Bytes that are, or may be, an order chunk's frame or a completed shuffle's (with the order's digest):
    anything but a frame of another type."""
    from firmware_protocol import OrderChunk, ShuffleCompleted
    from shoed.drivers.native_session import frame_header

    kind = frame_header(raw)[0]
    return kind is None or kind in (OrderChunk.TYPE, ShuffleCompleted.TYPE)


def load_order_key(path: str | None) -> bytes:
    """The order key from its file; DriverError with what to do when it is missing or malformed."""
    if not path:
        raise DriverError("the shuffler driver needs order_key_file = PATH: a file with 64 hex digits "
                          "(openssl rand -hex 32 > PATH), outside the journal directory")
    try:
        from shoed.files import KEY_FILE_MAX, read_regular

        return read_key(read_regular(path, KEY_FILE_MAX))
    except OSError as exc:
        raise DriverError(f"cannot read the order key file {path}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise DriverError(f"order key file {path}: {exc}") from None
