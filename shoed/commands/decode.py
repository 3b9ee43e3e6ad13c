"""`shoed decode`: a raw byte capture from a shoe, as JSON lines.

Surveillance and support use it on field captures (a serial sniffer's dump,
`cat /dev/ttyACM0 > capture.bin`, a USB capture's payload bytes), or live on a
shoe's line (`cat /dev/ttyUSB0 | shoed decode --driver beetek`): the capture is
decoded as its bytes arrive, in the memory of a frame or two whatever its
length. One line per message with the byte offset where it starts in the
capture, and one line per rejected stretch with its offset and length; nothing
is ever repaired or guessed. The lines are the same the drivers see: the
native protocol's reference decoder, or the Bee-Tek framer.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator


def register(sub) -> None:
    from shoed.cli import drivers_epilog

    p = sub.add_parser(
        "decode",
        help="decode a raw shoe capture into JSON lines",
        description="Decode a raw byte capture from a shoe into JSON lines: one per message with its byte "
        "offset, one per rejected stretch with its offset and length.",
    )
    p.late_epilog = drivers_epilog
    p.add_argument("--driver", required=True, metavar="NAME",
                   help="the shoe's wire format: native, native-usb (same frames), beetek, or a driver an installed "
                        "package registers (listed below)")
    p.add_argument("file", nargs="?", default="-", metavar="FILE", help="the capture; - or nothing for standard input")
    p.set_defaults(func=run)


CHUNK = 1 << 16  # bytes read at a time: what has arrived, up to this


def run(args) -> int:
    from shoed.cli import CommandError
    from shoed.drivers import DriverError, capture_stream

    try:
        decode = capture_stream(args.driver)
    except DriverError as exc:
        raise CommandError(str(exc)) from None
    out = sys.stdout
    try:
        source = sys.stdin.buffer if args.file == "-" else open(args.file, "rb")
    except OSError as exc:
        raise CommandError(f"cannot read {args.file}: {exc.strerror or exc}") from None
    try:
        with source:
            for line in decode(_chunks(source, out, args.file)):
                out.write(json.dumps(line, ensure_ascii=True) + "\n")
            out.flush()
    except DriverError as exc:
        raise CommandError(str(exc)) from None
    except BrokenPipeError:
        raise
    except OSError as exc:
        raise CommandError(f"cannot write the decoded lines: {exc.strerror or exc}") from None
    return 0


def _chunks(source, out, name: str) -> Iterator[bytes]:
    """The capture's bytes as they arrive (a serial port, a pipe: what is there, never waiting to
    fill a chunk), the lines decoded so far written out before each wait."""
    from shoed.cli import CommandError

    while True:
        out.flush()
        try:
            chunk = source.read1(CHUNK)
        except OSError as exc:
            raise CommandError(f"cannot read {name}: {exc.strerror or exc}") from None
        if not chunk:
            return
        yield chunk
