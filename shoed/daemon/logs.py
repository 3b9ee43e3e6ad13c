"""Logs as events (structlog): one event per line, JSON when not on a terminal,
readable on a terminal; table, shoe, coup and card context bound once and
carried by every line; the standard library's loggers (pyserial, pyzmq, ours)
routed through the same renderer."""

from __future__ import annotations

import logging
import sys

from typing import Any

import structlog


LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")


def level_problem(level: object) -> str | None:
    """What makes `level` no log level (a name of LEVELS, in any case), in words; None if it is one."""
    if isinstance(level, str) and level.upper() in LEVELS:
        return None
    return f"a log level is one of {', '.join(LEVELS)} (any case), not {level!r}"


def setup(level: str = "INFO", json_lines: bool | None = None, stream=None) -> None:
    """Route every log line through one renderer at `level` (a name of LEVELS, in any case; another
    is refused before anything is set up, with the one-line error of the command line)."""
    problem = level_problem(level)
    if problem is not None:
        from shoed.cli import CommandError

        raise CommandError(f"--log-level: {problem}")
    stream = stream or sys.stdout
    if json_lines is None:
        json_lines = not stream.isatty()
    shared: list[Any] = [
        structlog.contextvars.merge_contextvars,
        structlog.stdlib.add_log_level,
        structlog.stdlib.add_logger_name,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
        structlog.processors.format_exc_info,
    ]
    renderer = structlog.processors.JSONRenderer() if json_lines else structlog.dev.ConsoleRenderer(colors=False)
    structlog.configure(
        processors=[*shared, structlog.stdlib.ProcessorFormatter.wrap_for_formatter],
        logger_factory=structlog.stdlib.LoggerFactory(),
        wrapper_class=structlog.stdlib.BoundLogger,
        cache_logger_on_first_use=True,
    )
    formatter = structlog.stdlib.ProcessorFormatter(
        foreign_pre_chain=shared,
        processors=[structlog.stdlib.ProcessorFormatter.remove_processors_meta, renderer],
    )
    handler = logging.StreamHandler(stream)
    handler.setFormatter(formatter)
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())


def bind(**context) -> None:
    """Bind context (table, shoe, coup, card) carried by every following line."""
    structlog.contextvars.bind_contextvars(**{k: v for k, v in context.items() if v is not None})


def get(name: str = "shoed"):
    return structlog.get_logger(name)
