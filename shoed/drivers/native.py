"""The `native` driver: the shoed firmware protocol over a serial port or any pyserial URL.

URLs: `/dev/ttyACM0`, `/dev/serial/by-id/...` (opened exclusively), `loop://`,
`socket://host:port`, `rfc2217://host:port`. The protocol logic is
`NativeSession` (shoed/drivers/native_session.py); this module is the shell
around it: the poll loop, the port, reconnecting after an unplug, the clock.

Reliable readings (cards, unreadable cards, a plain shoe's draws, buttons, cut
card, shoe in/out, tamper, alarms) carry `shoe_seq` and `detail["boot"]`; the daemon journals
them and then calls `acknowledge(reading)`, and after its own restart calls
`set_last_seq(seq, boot)` with the last journaled pair so repeats are dropped.
Driver methods are called from one thread (the daemon's loop).
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable, Iterator

import shoed
from firmware_protocol import Decoder, EncodeError, Rejected, encode, to_json
from firmware_protocol import messages as m
from shoed.drivers.base import DriverError, Reading
from shoed.drivers.link import LinkDriver, SerialTransport, Transport
from shoed.net.wire import WireError, check_table_id
from shoed.drivers.native_session import DEFAULT_CONFIDENCE_FLOOR, NativeSession, SessionStats, Timing

BAUDRATE = 115200  # SPEC.md §2 (ignored by USB CDC-ACM shoes)


def host_hello(table: str = "", boot: int | None = None) -> m.Hello:
    """The Hello shoed sends (SPEC.md §5.2): vendor shoed, model the table id, random boot per start.
    The table id is sent whole: NativeDriver refuses one that is not a table id (shoed.net.wire)."""
    return m.Hello(
        vendor="shoed", model=table, serial="", firmware=shoed.__version__,
        boot=boot if boot is not None else int.from_bytes(os.urandom(4), "little"),
    )


def check_table(table: object) -> str:
    """The `table` option: empty (none sent), or a table id (shoed.net.wire.check_table_id) that fits a
    Hello's model (SPEC.md §5.2: at most 64 bytes of printable text); DriverError otherwise."""
    if table == "":
        return ""
    try:
        check_table_id(table)  # type: ignore[arg-type]
        encode(host_hello(table, boot=0))  # type: ignore[arg-type]
    except (WireError, EncodeError) as exc:
        raise DriverError(f"table option: {exc}") from None
    return table  # type: ignore[return-value]


class NativeDriver(LinkDriver):
    """A shoe speaking the shoed protocol over a byte stream.

    Options: `baudrate` (115200), `table` (sent in our Hello as the model),
    `heartbeat`, `silence`, `hello_repeat`, `gate_repeat` (seconds; tests shorten
    them), `backoff_initial`, `backoff_max` (reconnect back-off),
    `confidence_floor` (0..1, default 0.5: a card read less surely is unreadable,
    entered by hand; docs/stream-integrity.md).
    """

    name = "native"
    shuffler_messages = False  # a card-reading shuffler's messages are the `shuffler` driver's (shoed.drivers.shuffler)

    def __init__(self, url: str, *, baudrate: int = BAUDRATE, table: str = "", heartbeat: float | None = None,
                 silence: float | None = None, hello_repeat: float | None = None, gate_repeat: float | None = None,
                 confidence_floor: float = DEFAULT_CONFIDENCE_FLOOR, **options) -> None:
        self.baudrate = baudrate
        timing = Timing()
        for name, value in (("heartbeat", heartbeat), ("silence", silence), ("hello_repeat", hello_repeat),
                            ("gate_repeat", gate_repeat)):
            if value is not None:
                setattr(timing, name, value)
        hello = host_hello(check_table(table))
        super().__init__(url, **options)
        self.session = NativeSession(self.source, hello, timing, float(confidence_floor),
                                     shuffler=self.shuffler_messages)

    def _make_transport(self) -> Transport:
        return SerialTransport(self.url, baudrate=self.baudrate)

    @property
    def stats(self) -> SessionStats:
        return self.session.stats

    # -- the shell around the session

    def _flush(self) -> None:
        self._send(self.session.outgoing())

    def _on_connect(self, mono_ns: int, utc_ns: int) -> list[Reading]:
        readings = self.session.link_up(self._offset, mono_ns, utc_ns)
        self._flush()
        return readings

    def _on_data(self, data: bytes, offset: int, mono_ns: int, utc_ns: int) -> list[Reading]:
        readings, alive = self.session.receive(data, mono_ns, utc_ns)
        if alive:
            self._link_up()
            readings = self._queue + readings
            self._queue = []
        self._flush()
        return readings

    def _next_tick(self) -> float | None:
        now_ns = time.monotonic_ns()
        return time.monotonic() + (self.session.next_due(now_ns) - now_ns) / 1e9

    def _on_tick(self, mono_ns: int, utc_ns: int) -> list[Reading]:
        if self.session.silent(mono_ns):
            self._drop_transport(f"no valid frame from the shoe for {self.session.timing.silence:g} s")
            return []
        readings = self.session.noise_due(mono_ns)
        self.session.tick(mono_ns, utc_ns)
        self._flush()
        return readings

    # -- Driver

    def acknowledge(self, reading: Reading) -> None:
        self.session.acknowledge(reading, time.monotonic_ns())
        self._flush()

    def set_gate(self, locked: bool) -> None:
        self.session.set_gate(locked, time.monotonic_ns())
        self._flush()

    def set_last_seq(self, seq: int | None, boot: int | None, raw: bytes | None = None) -> None:
        self.session.restore(seq, boot, raw)


def decode_stream(chunks: Iterable[bytes]) -> Iterator[dict]:
    """`shoed decode --driver native`: one dict per frame or rejected stretch, with its stream
    offset, as the capture's chunks arrive (the decoder holds two frames' bytes at most, whatever
    the capture's length)."""
    decoder = Decoder()
    for chunk in chunks:
        for offset, item in decoder.feed(chunk):
            line = to_json(item)
            if isinstance(item, Rejected):
                line["rejected"] = True
            else:
                line = {"offset": offset, **line}
            yield line
    if decoder.pending:
        # The capture ends inside a frame: its start is there, its delimiter never came.
        tail = decoder.held
        yield {"type": "rejected", "kind": "truncated", "reason": "the capture ends before the frame's delimiter",
               "offset": decoder.offset, "length": len(tail), "raw": tail.hex(), "rejected": True}


def decode_capture(data: bytes) -> list[dict]:
    """A whole capture decoded (decode_stream)."""
    return list(decode_stream([data]))
