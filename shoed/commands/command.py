"""`shoed command`: send one command to a running daemon, as the dealer console does.

    shoed command status
    shoed command void --arg reason="card exposed"
    shoed command enter_card --arg card=9H
    shoed command decide --arg side=player --arg draw=true

The client's CURVE secret key must be on the daemon's allow-list; by default the
`local-console` key that the embedded default makes in ./shoed-data/keys is used.
"""

from __future__ import annotations

import json


def register(sub) -> None:
    from shoed.events import COMMANDS

    p = sub.add_parser("command", help="send a command to a running daemon (CURVE-authenticated)",
                       epilog="commands: " + "; ".join(f"{c.name}: {c.help}" for c in COMMANDS.values()))
    p.add_argument("cmd", help=", ".join(COMMANDS))
    p.add_argument("--arg", action="append", default=[], metavar="NAME=VALUE",
                   help="an argument; numbers and true/false are converted")
    p.add_argument("--endpoint", default="tcp://127.0.0.1:5558")
    p.add_argument("--key", default="shoed-data/keys/local-console.key_secret", help="this client's secret key file")
    p.add_argument("--server-key", default="shoed-data/keys/server.key", help="the daemon's public key file")
    p.add_argument("--timeout", type=float, default=3.0)
    p.set_defaults(func=run)


def _value(text: str):
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    try:
        return int(text)
    except ValueError:
        return text


def run(args) -> int:
    from shoed.cli import CommandError
    from shoed.net.commands import CommandTimeout, send_command
    from shoed.net.curve import ClientCurve, CurveError

    params = {}
    for item in args.arg:
        name, sep, value = item.partition("=")
        if not sep or not name:
            raise CommandError(f"--arg {item!r}: write NAME=VALUE")
        params[name] = _value(value)
    try:
        keys = ClientCurve.from_files(args.key, args.server_key)
    except (CurveError, OSError) as exc:
        raise CommandError(f"cannot load the keys: {exc}") from None
    try:
        reply = send_command(args.endpoint, args.cmd, params, keys, timeout=args.timeout)
    except CommandTimeout:
        raise CommandError(f"no reply from {args.endpoint} within {args.timeout} s: the daemon is down, "
                           "or this key is not on its allow-list") from None
    print(json.dumps(reply, indent=2))
    return 0 if reply.get("ok") else 1
