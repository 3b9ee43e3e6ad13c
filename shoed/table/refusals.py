"""Refused commands in the journal, at a bounded cost (docs/network.md, Commands).

A command the table refuses changes nothing, and is journaled so that surveillance sees who tried
what. One key may send 20 requests a second for ever, so each key's refusals are journaled one by
one only up to a budget: the first `FULL_PER_WINDOW` of a window of `WINDOW_NS` (from the key's
first refusal in it), each with its free text cut to `TEXT_KEPT` characters; the others of that
window are counted, and journaled as one `refused_commands` input when the window ends (or the
daemon stops): who (client, key, peer, role), how many of each command, the last refusal's reply,
and the times of the first and the last. That input changes nothing and makes no event.

Pure like the controller: time is data (the commands' own `mono_ns`), the shell asks `due(now)`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

TEXT_KEPT = 80  # characters of a refused command's free text (a void's reason) that are journaled
FULL_PER_WINDOW = 10  # refused commands of one key journaled one by one per window
WINDOW_NS = 60 * 1_000_000_000
KEYS_KEPT = 1024  # windows of their own kept at once; past it, keys (or peers) not yet kept share one more
OTHERS = "*"  # the key of that shared window
SUMMARY = "refused_commands"  # the input kind of the count of the others
WHO = ("client", "client_key", "peer", "role")


def cut(text: str) -> str:
    """Free text as a refused command's journal record keeps it."""
    return text if len(text) <= TEXT_KEPT else text[:TEXT_KEPT] + "…"


def shortened(item: dict[str, Any]) -> dict[str, Any]:
    """A refused command as it is journaled: text arguments over TEXT_KEPT characters cut (`cut`
    names each with its length before)."""
    args = item.get("args")
    if not isinstance(args, dict):
        return item
    long = {name: len(value) for name, value in args.items() if isinstance(value, str) and len(value) > TEXT_KEPT}
    if not long:
        return item
    return item | {"args": {name: cut(value) if name in long else value for name, value in args.items()},
                   "cut": long}


@dataclass(slots=True)
class _Window:
    start: int  # mono_ns of the key's first refusal in the window
    journaled: int = 0
    counted: dict[str, int] = field(default_factory=dict)  # command -> refusals not journaled one by one
    who: dict[str, Any] = field(default_factory=dict)
    error: str = ""
    first: tuple[int, int] = (0, 0)  # (mono_ns, utc_ns) of the first refusal counted
    last: tuple[int, int] = (0, 0)


@dataclass(slots=True)
class RefusedCommands:
    """Each key's refused commands: which to journal one by one, and the counts of the others."""

    full_per_window: int = FULL_PER_WINDOW
    window_ns: int = WINDOW_NS
    windows: dict[str, _Window] = field(default_factory=dict)
    ready: list[dict[str, Any]] = field(default_factory=list)  # counts of windows ended, not yet taken
    next_due: int | None = None  # mono_ns when the earliest window with counts ends

    def refused(self, item: dict[str, Any], error: str) -> dict[str, Any] | None:
        """A command input the table refused (with its `mono_ns` and `utc_ns`): the record to journal
        (shortened), or None when it is counted instead."""
        now = int(item["mono_ns"])
        key = str(item.get("client_key") or item.get("peer") or item.get("client"))
        if key not in self.windows and len(self.windows) >= KEYS_KEPT:
            # Many keys or peers (an endpoint without keys: a peer a connection): the windows ended
            # go first, then the rest share one, so what is kept stays bounded.
            self._sweep(now)
            if len(self.windows) >= KEYS_KEPT:
                key = OTHERS
        window = self.windows.get(key)
        if window is None or now - window.start >= self.window_ns:
            if window is not None and window.counted:
                self.ready.append(_summary(window))  # the window ended: its count is due (`due`)
                self.next_due = now
            window = self.windows[key] = _Window(now)
        if window.journaled < self.full_per_window:
            window.journaled += 1
            return shortened(item)
        cmd = str(item.get("cmd"))
        if not window.counted:
            window.first = (now, int(item["utc_ns"]))
            end = window.start + self.window_ns
            self.next_due = end if self.next_due is None else min(self.next_due, end)
        window.counted[cmd] = window.counted.get(cmd, 0) + 1
        window.who = {name: item.get(name) for name in WHO}
        window.error = cut(error)
        window.last = (now, int(item["utc_ns"]))
        return None

    def _sweep(self, now: int) -> None:
        """Forget the windows ended by `now`; the counts of those with counts are due at once."""
        for key, window in list(self.windows.items()):
            if now - window.start >= self.window_ns:
                if window.counted:
                    self.ready.append(_summary(window))
                    self.next_due = now
                del self.windows[key]

    def due(self, now: int, everything: bool = False) -> list[dict[str, Any]]:
        """The `refused_commands` inputs of the windows ended by `now` (every window with counts when
        `everything`: the daemon stops); windows ended are forgotten."""
        if not everything and (self.next_due is None or now < self.next_due):
            return []
        summaries, self.ready, self.next_due = self.ready, [], None
        for key, window in list(self.windows.items()):
            ended = now - window.start >= self.window_ns
            if window.counted and (ended or everything):
                summaries.append(_summary(window))
                del self.windows[key]
            elif ended:
                del self.windows[key]
            elif window.counted:
                end = window.start + self.window_ns
                self.next_due = end if self.next_due is None else min(self.next_due, end)
        return summaries


def _summary(window: _Window) -> dict[str, Any]:
    """The `refused_commands` input of a window: its refusals that were not journaled one by one."""
    first, last = window.first, window.last
    return {"kind": SUMMARY, **window.who, "count": sum(window.counted.values()),
            "commands": dict(sorted(window.counted.items())), "error": window.error,
            "first_mono_ns": first[0], "first_utc_ns": first[1], "last_mono_ns": last[0], "last_utc_ns": last[1]}
