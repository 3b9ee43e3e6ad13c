"""`shoed watch`: a table's live display in a terminal (roads, last coup, statistics, odds, alarms).

It joins late through the table's snapshot and follows its events; the
display itself is in `shoed.display` (pure state and drawing, and the shell).
"""

from __future__ import annotations

from shoed import cli


def register(sub) -> None:
    p = sub.add_parser(
        "watch",
        help="live table display in the terminal: last coup, roads, statistics, odds, alarms",
        description=(
            "Show a table live: the last coup's cards, totals and winner, the bead plate, big road and "
            "derived roads, statistics, the live odds (favourable bets highlighted) and active alarms. "
            "Joins at any time through the snapshot endpoint; across a daemon restart it shows "
            "'reconnecting' and carries on by itself. Ctrl-C to leave."
        ),
    )
    p.add_argument("endpoint", nargs="?", default="tcp://127.0.0.1:5556", metavar="ENDPOINT", type=cli.endpoint,
                   help="the table's event endpoint (default tcp://127.0.0.1:5556)")
    p.add_argument("--snapshot", metavar="ENDPOINT", type=cli.endpoint,
                   help="snapshot endpoint (default: the event endpoint's port + 1, e.g. tcp://127.0.0.1:5557)")
    p.add_argument("--table", default="t1", help="table id (default t1)")
    p.add_argument("--once", action="store_true",
                   help="print one screen after the snapshot and exit (scripts, logs); exit 2 if none comes")
    p.add_argument("--timeout", type=cli.wait, default=10.0, help="with --once: seconds to wait for the snapshot")
    p.add_argument("--width", type=cli.columns,
                   help="with --once: columns to draw, 20 to 1000 (default: the terminal's)")
    p.add_argument("--inline", action="store_true", help="draw below the prompt instead of on the full screen")
    p.add_argument("--key", metavar="FILE",
                   help="this client's secret key file, for CURVE endpoints: the surveillance endpoints (which "
                        "carry the odds and the alarms' texts), or display endpoints with curve_publish")
    p.add_argument("--server-key", metavar="FILE",
                   help="with --key: the daemon's public key file (default shoed-data/keys/server.key)")
    p.set_defaults(func=run)


DEFAULT_SERVER_KEY = "shoed-data/keys/server.key"


def snapshot_endpoint(events: str) -> str:
    """The default snapshot endpoint: tcp with the next port; other transports must be named."""
    from shoed.cli import CommandError

    scheme, sep, rest = events.partition("://")
    host, colon, port = rest.rpartition(":")
    if scheme == "tcp" and sep and colon and port.isascii() and port.isdigit() and int(port) < 65535:
        return f"tcp://{host}:{int(port) + 1}"
    raise CommandError(f"give the snapshot endpoint with --snapshot (cannot derive it from {events})")


def run(args) -> int:
    from shoed.cli import CommandError
    from shoed.net.wire import WireError, check_table_id

    try:
        check_table_id(args.table)
    except WireError as exc:
        raise CommandError(str(exc)) from None
    if args.server_key is not None and not args.key:
        raise CommandError("--server-key is the daemon's key for a CURVE endpoint: give this client's --key too")
    snapshot = args.snapshot or snapshot_endpoint(args.endpoint)
    curve = None
    if args.key:
        from shoed.net.curve import ClientCurve, CurveError

        try:
            curve = ClientCurve.from_files(args.key, args.server_key or DEFAULT_SERVER_KEY)
        except (CurveError, OSError, ValueError) as exc:
            raise CommandError(f"cannot load the keys: {exc}") from None
    if args.once:
        import sys

        from rich.console import Console

        from shoed.display.live import once
        from shoed.display.terminal import render

        state = once(args.endpoint, snapshot, args.table, args.timeout, curve=curve)
        if state is None:
            why = ("the daemon is down, or this key is not on its allow-list (the surveillance endpoints admit "
                   "the pit and surveillance roles only)") if curve is not None else "is the daemon running?"
            raise CommandError(f"no snapshot from {snapshot} within {args.timeout:g} s: {why}")
        Console(width=args.width, file=sys.stdout).print(render(state))
        return 0
    from shoed.display.live import watch

    return watch(args.endpoint, snapshot, args.table, screen=not args.inline, curve=curve)
