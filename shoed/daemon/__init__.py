"""The daemon: the shell that wires the shoe's drivers, the table controller, the journal and
ZeroMQ, and schedules them (`loop`); its configuration (`config`), systemd notifications
(`notify`) and logs (`logs`)."""

from typing import Any

__all__ = ["Daemon", "DaemonError", "input_from_reading"]


def __getattr__(name: str) -> Any:
    # The loop is imported when it is used: `shoed.daemon.logs` and `shoed.daemon.config` serve
    # every command of the CLI without loading the daemon.
    if name in __all__:
        from shoed.daemon import loop

        return getattr(loop, name)
    raise AttributeError(f"module 'shoed.daemon' has no attribute {name!r}")
