"""`shoed config check FILE`: the configuration as the daemon would run it, or the one-line error."""

from __future__ import annotations

import json


def register(sub) -> None:
    p = sub.add_parser("config", help="check a configuration file (docs/configuration.md)")
    verbs = p.add_subparsers(dest="verb", metavar="VERB")
    verbs.required = True
    check = verbs.add_parser("check", help="print the resolved configuration, or what is wrong with it")
    check.add_argument("file", metavar="FILE", help="TOML configuration")
    check.set_defaults(func=run)


def run(args) -> int:
    from shoed.cli import CommandError
    from shoed.daemon.config import ConfigError, check, load_config, resolved

    try:
        config = load_config(args.file)
        ruleset = check(config)
    except ConfigError as exc:
        raise CommandError(str(exc)) from None
    print(json.dumps(resolved(config, ruleset), indent=2))
    return 0
