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
from collections.abc import Callable
from typing import TypeVar

import shoed
import shoed.commands


class CommandError(Exception):
    """A user-facing error: printed as one line, exit status 2."""


# Types of arguments that several commands share: each a number with its bounds, refused
# with a one-line error that says what was expected.
N = TypeVar("N", int, float)


def _number(convert: Callable[[str], N], what: str, fits: Callable[[N], bool], bounds: str) -> Callable[[str], N]:
    """An argparse `type`: `text` as a number, refused with a one-line error if it is none or out of bounds."""

    def parse(text: str) -> N:
        try:
            value = convert(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not {what}") from None
        if not fits(value):
            raise argparse.ArgumentTypeError(f"{bounds}, not {text}")
        return value

    return parse


MAX_SECONDS = 86_400  # a day: the longest time any option takes (as the configuration's, shoed.daemon.config)
rate = _number(float, "a number", lambda v: 0.0 <= v <= 1.0, "a rate lies between 0 and 1")
seconds = _number(float, "a number of seconds", lambda v: 0 <= v <= MAX_SECONDS,
                  f"a number of seconds is 0 or more, at most {MAX_SECONDS}")
# A time to wait or to run for: nan, inf or a negative number made a wait without end or a traceback.
wait = _number(float, "a number of seconds", lambda v: 0 < v <= MAX_SECONDS,
               f"a number of seconds above 0, at most {MAX_SECONDS}")
duration = _number(float, "a number of seconds", lambda v: 0 < v <= 366 * MAX_SECONDS,
                   f"a number of seconds above 0, at most {366 * MAX_SECONDS} (a year)")
positive_int = _number(int, "a whole number", lambda v: v >= 1, "expected a whole number of at least 1")
count = _number(int, "a whole number", lambda v: v >= 0, "expected a whole number of 0 or more")


class Parser(argparse.ArgumentParser):
    """An ArgumentParser whose `late_epilog`, when set, is worked out only when the help is shown:
    the list of drivers imports third-party packages, which no other use of the parser should pay for."""

    late_epilog: Callable[[], str] | None = None

    def format_help(self) -> str:
        if self.late_epilog is not None:
            self.epilog = self.late_epilog()
        return super().format_help()


def drivers_epilog() -> str:
    """The registered drivers, shoed's own and those of installed packages, each with its summary."""
    from shoed.drivers import describe

    return "drivers: " + "; ".join(f"{name}: {summary}" for name, summary in describe().items())


def path(what: str) -> Callable[[str], str]:
    """An argparse `type` for a file or directory: an empty one is refused with one line, exit 2
    (it would otherwise name the current directory without saying so)."""

    def parse(text: str) -> str:
        if not text.strip():
            raise CommandError(f"{what} is empty: name it (the current directory is '.')")
        return text

    return parse


journal_path = path("the journal path")


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="shoed", description="Baccarat table-side daemon and tools.")
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
        from shoed.net.wire import one_line

        print(f"shoed: {one_line(str(exc))}", file=sys.stderr)  # one line, whatever the error quotes
        return 2
    except KeyboardInterrupt:
        print("shoed: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
