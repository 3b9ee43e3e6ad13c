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
    """A user-facing error: printed as one line, exit status 2 (or the `code` given)."""

    def __init__(self, message: str, code: int = 2) -> None:
        super().__init__(message)
        self.code = code


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
columns = _number(int, "a whole number", lambda v: 20 <= v <= 1000, "a width is 20 to 1000 columns")


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


def _endpoint(bind: bool) -> Callable[[str], str]:
    def parse(text: str) -> str:
        from shoed.daemon.config import endpoint_problem

        problem = endpoint_problem(text, bind=bind)
        if problem is not None:
            raise CommandError(f"endpoint {text!r}: {problem}")
        return text

    return parse


# An argparse `type` for a ZeroMQ endpoint, checked as the configuration's are (shoed.daemon.config):
# one line, exit 2, before a socket is made. `endpoint` connects to one, `bind_endpoint` serves one.
endpoint = _endpoint(bind=False)
bind_endpoint = _endpoint(bind=True)


def log_level(text: str) -> str:
    """An argparse `type` for `--log-level`: a level's name (shoed.daemon.logs.LEVELS), in any case."""
    from shoed.daemon.logs import level_problem

    problem = level_problem(text)
    if problem is not None:
        raise argparse.ArgumentTypeError(problem)
    return text.upper()


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="shoed", description="Baccarat table-side daemon and tools.")
    parser.add_argument("--version", action="version", version=f"shoed {shoed.__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for info in sorted(pkgutil.iter_modules(shoed.commands.__path__), key=lambda m: m.name):
        module = importlib.import_module(f"shoed.commands.{info.name}")
        module.register(sub)
    return parser


SIGPIPE_EXIT = 141  # 128 + SIGPIPE: what a shell reports for a command whose reader went away


def main(argv: list[str] | None = None) -> int:
    result = None
    try:
        parser = build_parser()
        args = parser.parse_args(argv)
        result = int(args.func(args) or 0)
        sys.stdout.flush()  # a write that fails is this command's, not the interpreter's at exit
        return result
    except CommandError as exc:
        from shoed.net.wire import one_line

        print(f"shoed: {one_line(str(exc))}", file=sys.stderr)  # one line, whatever the error quotes
        return exc.code
    except KeyboardInterrupt:
        print("shoed: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader of the output went away (`| head`): no traceback, and no success either. What is
        # still buffered can go nowhere; standard output is pointed at /dev/null so that the flush at
        # exit does not fail again. A command that found a problem keeps its own status.
        _drop_stdout()
        return result if result else SIGPIPE_EXIT
    except OSError as exc:
        from shoed.journal.reader import JournalUnreadable

        if isinstance(exc, JournalUnreadable):  # raised where a journal is read, in any command
            print(f"shoed: {exc}", file=sys.stderr)
            return 2
        if not _is_stdout_error(exc):
            raise
        _drop_stdout()
        print(f"shoed: cannot write the output: {exc.strerror or exc}", file=sys.stderr)
        return 2


def _is_stdout_error(exc: OSError) -> bool:
    """Whether `exc` is a failed write of the output (no room, an I/O error on it): the files a command
    is told to write are its own to report (one line, naming them); what reaches here unnamed with
    such an error is standard output, whether the failed write left bytes buffered or not."""
    import errno

    try:
        sys.stdout.flush()
    except OSError:
        return True
    except ValueError:  # closed
        return False
    return exc.filename is None and exc.errno in (errno.ENOSPC, errno.EIO, errno.EFBIG, errno.EDQUOT)


def _drop_stdout() -> None:
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass
