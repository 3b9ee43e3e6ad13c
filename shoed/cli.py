"""The `shoed` command line.

Each subcommand lives in its own module under `shoed/commands/` and exposes
`register(subparsers)`; the module imports what it needs only when it runs,
so `shoed rules ...` never pays for ZeroMQ, USB or OpenCV.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys

import shoed
import shoed.commands


class CommandError(Exception):
    """A user-facing error: printed as one line, exit status 2."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="shoed", description="Baccarat table-side daemon and tools.")
    parser.add_argument("--version", action="version", version=f"shoed {shoed.__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for info in sorted(pkgutil.iter_modules(shoed.commands.__path__), key=lambda m: m.name):
        module = importlib.import_module(f"shoed.commands.{info.name}")
        module.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    try:
        parser = build_parser()
        args = parser.parse_args(argv)
        return int(args.func(args) or 0)
    except CommandError as exc:
        print(f"shoed: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("shoed: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
