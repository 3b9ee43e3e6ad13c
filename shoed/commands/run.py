"""`shoed run`: the daemon itself.

With no configuration it runs the embedded default, which needs no hardware:
a virtual shoe on a pseudo-terminal, read through the native serial driver.
"""

from __future__ import annotations

from shoed import cli


def register(sub) -> None:
    from shoed.cli import drivers_epilog

    p = sub.add_parser("run", help="run the table daemon (no config: the built-in virtual shoe)")
    p.add_argument("--config", metavar="FILE", type=cli.path("the configuration file"), help="TOML configuration (see docs/configuration.md)")
    p.add_argument("--table", help="table id")
    p.add_argument("--ruleset", help="ruleset name or .toml path")
    p.add_argument("--decks", type=int, help="number of decks")
    p.add_argument("--journal", dest="journal_dir", metavar="DIR", type=cli.journal_path, help="journal directory")
    p.add_argument("--keys", dest="key_dir", metavar="DIR", type=cli.path("the key directory"), help="CURVE key directory (server key, clients/)")
    p.add_argument("--pub", dest="events", metavar="ENDPOINT", help="events PUB endpoint (tcp://127.0.0.1:5556)")
    p.add_argument("--snapshot", metavar="ENDPOINT", help="snapshot and catch-up endpoint (tcp://127.0.0.1:5557)")
    p.add_argument("--commands", metavar="ENDPOINT", help="command endpoint (tcp://127.0.0.1:5558)")
    p.add_argument("--surveillance-pub", dest="surveillance_events", metavar="ENDPOINT",
                   help="surveillance events PUB endpoint: every event, CURVE keys on the allow-list (none by default)")
    p.add_argument("--surveillance-snapshot", metavar="ENDPOINT",
                   help="surveillance snapshot and catch-up endpoint (CURVE; none by default)")
    p.add_argument("--source", metavar="DRIVER:URL", action="append",
                   help="a shoe source in priority order, e.g. native:/dev/shoe-native, beetek:/dev/shoe-beetek "
                        "(the drivers are listed below)")
    p.add_argument("--sim-pace", type=float, help="virtual shoe: seconds between cards (default 1.5; 0 = flat out)")
    p.add_argument("--sim-seed", type=int, help="virtual shoe: shuffle seed")
    p.add_argument("--sim-shoes", type=int, help="virtual shoe: stop after this many shoes (default: for ever)")
    p.add_argument("--stall-after", dest="stall_after_s", type=float, metavar="SECONDS",
                   help="a wait (for a card, a confirm, a decision, a correction) longer than this raises the "
                        "`stalled` alarm (default 120; 0: never)")
    p.late_epilog = drivers_epilog  # shoed's own and those installed packages register
    p.add_argument("--log-level", default="INFO", type=cli.log_level,
                   help="DEBUG, INFO (the default), WARNING, ERROR or CRITICAL")
    p.add_argument("--log-json", action="store_true", default=None, help="JSON log lines even on a terminal")
    p.set_defaults(func=run)


def run(args) -> int:
    from shoed.cli import CommandError
    from shoed.daemon import Daemon, DaemonError, logs
    from shoed.daemon.config import EMBEDDED_RULESET, ConfigError, Source, load_config, with_options
    from shoed.rules.ruleset import RulesetError

    logs.setup(args.log_level, json_lines=args.log_json)
    daemon = None
    try:
        config = load_config(args.config)
        sources = None
        if args.source:
            given: list[Source] = []
            for text in args.source:
                driver, sep, url = text.partition(":")
                if not sep or not driver:
                    raise ConfigError(f"--source {text!r}: write DRIVER:URL, e.g. native:/dev/ttyACM0")
                given.append(Source(driver, url))
            sources = tuple(given)
        config = with_options(
            config, table=args.table, ruleset=args.ruleset, decks=args.decks, journal_dir=args.journal_dir,
            key_dir=args.key_dir, events=args.events, snapshot=args.snapshot, commands=args.commands,
            surveillance_events=args.surveillance_events, surveillance_snapshot=args.surveillance_snapshot,
            sources=sources, sim_pace=args.sim_pace, sim_seed=args.sim_seed, sim_shoes=args.sim_shoes,
            stall_after_s=args.stall_after_s,
        )
        if sources is not None and config.embedded_default:
            config = with_options(config, embedded_default=False)
        if config.embedded_default and args.ruleset is None:
            config = with_options(config, ruleset=EMBEDDED_RULESET)
        daemon = Daemon(config)
        return daemon.run()
    except DaemonError as exc:  # the code the daemon logged: 3 for a journal that cannot be written (a full disk)
        raise CommandError(str(exc), (daemon.exit_code if daemon is not None else 0) or 2) from None
    except (ConfigError, RulesetError) as exc:
        raise CommandError(str(exc)) from None
