"""`shoed decode`: a raw byte capture from a shoe, as JSON lines.

Surveillance and support use it on field captures (a serial sniffer's dump,
`cat /dev/ttyACM0 > capture.bin`, a USB capture's payload bytes). One line per
message with the byte offset where it starts in the capture, and one line per
rejected stretch with its offset and length; nothing is ever repaired or
guessed. The lines are the same the drivers see: the native protocol's
reference decoder, or the Bee-Tek framer.
"""

from __future__ import annotations

import json
import sys


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


def run(args) -> int:
    from shoed.cli import CommandError
    from shoed.drivers import DriverError, capture_decoder

    try:
        decode_capture = capture_decoder(args.driver)
    except DriverError as exc:
        raise CommandError(str(exc)) from None
    try:
        if args.file == "-":
            data = sys.stdin.buffer.read()
        else:
            with open(args.file, "rb") as f:
                data = f.read()
    except OSError as exc:
        raise CommandError(f"cannot read {args.file}: {exc.strerror or exc}") from None
    out = sys.stdout
    for line in decode_capture(data):
        out.write(json.dumps(line, ensure_ascii=True) + "\n")
    out.flush()
    return 0
