"""`shoed witness`: an external witness that keeps tables' journal heads and events in a database.

    shoed witness --db sqlite:///var/lib/shoed-witness/witness.db --key witness.key_secret --server-key t1.key \\
        t1=tcp://10.0.0.11:5560
    shoed witness --db postgresql://witness@surveillance/shoed --key witness.key_secret \\
        t1=tcp://10.0.0.11:5560,server-key=t1.key t2=tcp://10.0.0.12:5560,snapshot=tcp://10.0.0.12:6000,server-key=t2.key

Each table's surveillance endpoints (`[publish] surveillance_events`), which
require CURVE: a display's endpoints withhold cards and give no journal head.
A table is `TABLE=EVENTS` with optional `,snapshot=ENDPOINT` (default: the
events port + 1) and `,server-key=FILE` (the table's public CURVE key, its
box's server.key: every table has its own; `--server-key` is the key of the
tables given without one). `--key` is the witness's own secret key, on each
table's allow-list. A table that sends nothing for 10 s is a warning naming
it and what to check (shoed.witness.follow). See docs/witness.md.
"""

from __future__ import annotations

import signal

from shoed import cli


def register(sub) -> None:
    p = sub.add_parser(
        "witness",
        help="keep tables' journal heads and events in a database (SQLite or PostgreSQL), off the box",
        description=(
            "Follow one or many tables and keep the journal heads they publish and the events they send "
            "in a database, so that `shoed journal verify --witness URL` can later prove that a journal "
            "was not cut short, deleted or replaced. Resumes after its own restart from what the database "
            "holds. Stops on SIGTERM or Ctrl-C."
        ),
    )
    p.add_argument("tables", nargs="+", metavar="TABLE=EVENTS[,snapshot=EP][,server-key=FILE]",
                   help="a table's surveillance events endpoint to follow, e.g. t1=tcp://10.0.0.11:5560")
    p.add_argument("--db", required=True, metavar="URL",
                   help="sqlite:///PATH (embedded) or postgresql://USER@HOST/DB (surveillance server)")
    p.add_argument("--key", metavar="FILE", help="the witness's CURVE secret key file (tables that publish with CURVE)")
    p.add_argument("--server-key", metavar="FILE", help="a table's public CURVE key file (its box's server.key), for the tables given "
                   "without server-key=: each table has its own")
    p.add_argument("--duration", type=cli.duration, metavar="SECONDS", help="stop after this long (default: run until stopped)")
    p.add_argument("--log-level", default="INFO", type=cli.log_level, help="DEBUG, INFO (the default), WARNING, "
                   "ERROR or CRITICAL")
    p.add_argument("--log-json", action="store_true", default=None, help="JSON log lines even on a terminal")
    p.set_defaults(func=run)


def parse_table(spec: str, key: str | None, server_key: str | None):
    """`TABLE=EVENTS[,snapshot=EP][,server-key=FILE]` as a Feed."""
    from shoed.cli import CommandError
    from shoed.commands.watch import snapshot_endpoint
    from shoed.net.curve import ClientCurve, CurveError
    from shoed.net.wire import WireError, check_table_id
    from shoed.witness.follow import Feed

    table, sep, rest = spec.partition("=")
    parts = rest.split(",")
    if not sep or not parts[0]:
        raise CommandError(f"table {spec!r}: write TABLE=EVENTS, e.g. t1=tcp://127.0.0.1:5556")
    try:
        check_table_id(table)
    except WireError as exc:
        raise CommandError(f"table {spec!r}: {exc}") from None
    options = {}
    for part in parts[1:]:
        name, eq, value = part.partition("=")
        if not eq or name not in ("snapshot", "server-key") or not value:
            raise CommandError(f"table {spec!r}: {part!r} is not snapshot=ENDPOINT or server-key=FILE")
        options[name] = value
    try:
        snapshot = options.get("snapshot") or snapshot_endpoint(parts[0])
    except CommandError:
        raise CommandError(f"table {spec!r}: give its snapshot endpoint, {table}={parts[0]},snapshot=ENDPOINT "
                           f"(it is derived only from a tcp:// endpoint: the next port)") from None
    server = options.get("server-key", server_key)
    curve = None
    if server or key:
        if not (server and key):
            raise CommandError(f"table {table}: CURVE needs both --key and a server key")
        try:
            curve = ClientCurve.from_files(key, server)
        except (CurveError, OSError) as exc:
            raise CommandError(f"table {table}: cannot load the keys: {exc}") from None
    return Feed(table, parts[0], snapshot, curve)


def run(args) -> int:
    from shoed.daemon import logs
    from shoed.cli import CommandError
    from shoed.witness.follow import Witness
    from shoed.witness.store import WitnessStore, WitnessStoreError, describe

    logs.setup(args.log_level, json_lines=args.log_json)
    feeds = [parse_table(spec, args.key, args.server_key) for spec in args.tables]
    names = [f.table for f in feeds]
    log = logs.get("shoed.witness")
    keyless = [f.table for f in feeds if f.curve is None]
    if keyless:
        log.warning("following without CURVE keys: a table's surveillance endpoints require the witness's key "
                    "(--key, on the allow-list with --role surveillance) and the table's (--server-key)",
                    tables=keyless)
    if len(set(names)) != len(names):
        raise CommandError(f"a table is named twice: {' '.join(names)}")
    stopping = []

    def stop(signum, frame):
        stopping.append(signum)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    try:
        store = WitnessStore(args.db)
    except WitnessStoreError as exc:
        raise CommandError(str(exc)) from None
    witness = None
    try:
        witness = Witness(store, feeds)
        log.info("witness ready", db=describe(args.db), tables=names)
        witness.run(lambda: bool(stopping), args.duration)
    except WitnessStoreError as exc:
        if not stopping:
            raise CommandError(str(exc)) from None
        # Stopped while the database held a statement back: that poll's news is fetched again at the restart.
        log.warning("stopped while writing to the database: the last poll is not kept", error=str(exc))
    finally:
        if witness is not None:
            witness.close()
            log.info("witness stopped", events=witness.counts)
        store.close()
    return 0
