"""`shoed command`: send one command to a running daemon, as the dealer console does.

    shoed command status
    shoed command void --arg reason="card exposed"
    shoed command enter_card --arg card=9H
    shoed command decide --arg side=player --arg draw=true

The client's CURVE secret key must be on the daemon's allow-list; by default the
`local-console` key that the embedded default makes in ./shoed-data/keys is used.
A lab bench's command endpoint without CURVE (`curve_commands = false`) takes
commands without keys:

    shoed command status --no-curve
"""

from __future__ import annotations

import json

from shoed import cli


def register(sub) -> None:
    from shoed.table.events import COMMANDS

    p = sub.add_parser("command", help="send a command to a running daemon (CURVE-authenticated; "
                       "--no-curve on a lab bench)",
                       epilog="commands: " + "; ".join(f"{c.name}: {c.help}" for c in COMMANDS.values()))
    p.add_argument("cmd", help=", ".join(COMMANDS))
    p.add_argument("--arg", action="append", default=[], metavar="NAME=VALUE",
                   help="an argument; converted to a number or true/false only where the "
                   "command's argument is one (a reason of digits stays text)")
    p.add_argument("--endpoint", default="tcp://127.0.0.1:5558", type=cli.endpoint,
                   help="the daemon's command endpoint (default tcp://127.0.0.1:5558)")
    p.add_argument("--key", default="shoed-data/keys/local-console.key_secret", help="this client's secret key file")
    p.add_argument("--server-key", default="shoed-data/keys/server.key", help="the daemon's public key file")
    p.add_argument("--no-curve", action="store_true",
                   help="send without CURVE and without keys (--key and --server-key are not read): for a lab "
                   "bench's command endpoint that takes none (curve_commands = false)")
    p.add_argument("--timeout", type=cli.wait, default=3.0)
    p.add_argument("--json", action="store_true",
                   help="print the whole reply as JSON (`status`: the table's whole state; otherwise a summary)")
    p.set_defaults(func=run)


def _kinds(cmd: str, name: str) -> set[str] | None:
    """The kinds of value (msgspec's type names: "int", "bool", "str", "literal", ...) a command's
    argument takes, from the command table; None for an unknown command or argument."""
    import msgspec.inspect

    from shoed.table.events import COMMANDS

    spec = COMMANDS.get(cmd)
    if spec is None:
        return None
    info = msgspec.inspect.type_info(spec.args)
    for field in getattr(info, "fields", ()):
        if field.encode_name == name:
            types = field.type.types if isinstance(field.type, msgspec.inspect.UnionType) else (field.type,)
            kinds = set()
            for t in types:
                if isinstance(t, msgspec.inspect.LiteralType):
                    kinds |= {type(v).__name__ for v in t.values}
                elif isinstance(t, msgspec.inspect.IntType):
                    kinds.add("int")
                elif isinstance(t, msgspec.inspect.BoolType):
                    kinds.add("bool")
                elif isinstance(t, msgspec.inspect.StrType):
                    kinds.add("str")
                else:
                    kinds.add(type(t).__name__)
            return kinds
    return None


def _value(text: str, kinds: set[str] | None = None):
    """An --arg's value as the argument takes it: text stays text where the argument takes text
    (`reason=4711` is a reason); true/false and whole numbers are converted only where it takes
    those. An argument the command table does not know (None) is converted as it looks: the
    daemon refuses it with its reason."""
    if kinds is not None and "str" in kinds:
        return text
    if text.lower() in ("true", "false") and (kinds is None or "bool" in kinds):
        return text.lower() == "true"
    if kinds is None or "int" in kinds:
        try:
            return int(text)
        except ValueError:
            pass
    return text


def run(args) -> int:
    from shoed.cli import CommandError
    from shoed.net.commands import CommandTimeout, CurveMismatch, send_command
    from shoed.net.curve import ClientCurve, CurveError

    params = {}
    for item in args.arg:
        name, sep, value = item.partition("=")
        if not sep or not name:
            raise CommandError(f"--arg {item!r}: write NAME=VALUE")
        params[name] = _value(value, _kinds(args.cmd, name))
    keys = None
    if not args.no_curve:
        try:
            keys = ClientCurve.from_files(args.key, args.server_key)
        except (CurveError, OSError) as exc:
            raise CommandError(f"cannot load the keys: {exc}") from None
    try:
        reply = send_command(args.endpoint, args.cmd, params, keys, timeout=args.timeout, insecure=keys is None)
    except CurveMismatch:
        if keys is None:
            raise CommandError(f"{args.endpoint} takes commands with CURVE keys only: give --key and "
                               "--server-key, without --no-curve") from None
        raise CommandError(f"{args.endpoint} takes commands without CURVE (curve_commands = false, a lab "
                           "bench): send with --no-curve") from None
    except CommandTimeout:
        if keys is None:
            raise CommandError(f"no reply from {args.endpoint} within {args.timeout} s: the daemon is down") \
                from None
        raise CommandError(f"no reply from {args.endpoint} within {args.timeout} s: the daemon is down, "
                           "or this key is not on its allow-list (an endpoint without CURVE: --no-curve)") from None
    if args.cmd == "status" and reply.get("ok") and not args.json:
        print(status_summary(reply.get("status") or {}))
    else:
        print(json.dumps(reply, indent=2))
    return 0 if reply.get("ok") else 1


def status_summary(state: dict) -> str:
    """The table's state in a few lines for the pit: what it waits for first."""
    lines = []
    shoe = state.get("shoe") or {}
    coup = state.get("coup") or {}
    head = f"table {state.get('table')} · {state.get('ruleset')} · {state.get('decks')} decks"
    if shoe:
        head += f" · shoe {shoe.get('id')} ({shoe.get('phase')})"
        if coup:
            head += f" · coup {coup.get('number')} {coup.get('state')}"
    else:
        head += " · no shoe"
    lines.append(head)
    waiting = state.get("waiting") or {}
    if waiting:
        since = f" since {waiting['since'][:19].replace('T', ' ')}Z" if waiting.get("since") else ""
        lines.append(f"waiting for: {waiting.get('for')}: {waiting.get('text')}{since}")
    if state.get("locked"):
        lines.append(f"LOCKED: {state['locked']}")
    if shoe:
        cut = f"cut card out, last coup {shoe.get('last_coup')}" if shoe.get("cut_card") else "cut card not out"
        lines.append(f"cards: {shoe.get('cards_seen')} seen, {shoe.get('cards_left')} left, "
                     f"{shoe.get('burned')} burned · {cut}")
    from shoed.table.results import results_of
    from shoed.rules.stats import tally

    coups = state.get("coups") or []
    counts = tally(results_of(coups))
    voids = [c for c in coups if c.get("void")]
    lines.append(f"coups: {counts.coups} results (banker {counts.banker}, player {counts.player}, "
                 f"tie {counts.tie}), {len(voids)} void")
    if coups:
        last = coups[-1]
        if last.get("void"):
            lines.append(f"last: coup {last.get('coup')} void ({last.get('reason')})")
        else:
            winner = str(last.get("winner"))
            lines.append(f"last: coup {last.get('coup')} {winner.upper()} wins, player {last.get('player_total')} "
                         f"banker {last.get('banker_total')}")
    for p in state.get("pending_misdeals") or []:
        lines.append(f"misdeal {p.get('id')}: {p.get('kind')}, correct by: {p.get('correction')}")
    for name, text in (state.get("alarms") or {}).items():
        lines.append(f"ALARM {name}: {text}")
    devices = state.get("devices") or {}
    if devices:
        lines.append("devices: " + ", ".join(f"{k} {v}" for k, v in devices.items()))
    return "\n".join(lines)
