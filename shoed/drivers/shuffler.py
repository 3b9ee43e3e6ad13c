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
"""

from __future__ import annotations

from shoed.drivers.link import Transport
from shoed.drivers.native import NativeDriver


class ShufflerDriver(NativeDriver):
    """A card-reading shuffler on a serial port, any pyserial URL, or USB bulk endpoints."""

    name = "shuffler"

    def __init__(self, url: str, *, backend=None, **options) -> None:
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
