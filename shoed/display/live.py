"""The shell of `shoed watch`: the table's ZeroMQ feed in, a rich screen out.

The state and its drawing are pure (`shoed.display.state`, `.terminal`); this
module owns what is not: the TableClient (which subscribes, takes the
snapshot, fills gaps and reconnects), the clock that tells a silent link, and
the terminal. A daemon that restarts is seen as silence ("reconnecting"),
then a snapshot or the missing events: the display carries on by itself.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from dataclasses import replace

from shoed.display.state import CONNECTING, LIVE, RECONNECTING, DisplayState, apply, initial, shown
from shoed.display.terminal import render

POLL = 0.25  # seconds between screen refreshes at most


def link_state(has_snapshot: bool, last_heard: float | None, now: float, timeout: float) -> str:
    """What the header says about the link: connecting until the first snapshot,
    then live, or reconnecting after `timeout` seconds without a word (the
    daemon sends a heartbeat every second when idle)."""
    if not has_snapshot or last_heard is None:
        return CONNECTING
    return RECONNECTING if now - last_heard > timeout else LIVE


def local_odds(state: DisplayState) -> dict | None:
    """Odds of the snapshot's remaining shoe, computed here when the snapshot
    brings none (the table sends them after each coup). None when they cannot
    be: no shoe, a ruleset not installed here, a free-choice game."""
    if state.odds is not None or state.remaining_by_rank is None or not state.ruleset:
        return None
    if state.phase not in ("dealing", "finished"):
        return None
    from shoed.rules.odds import live_odds
    from shoed.rules.ruleset import RulesetError, load_ruleset

    if state.ruleset.endswith(".toml") or "/" in state.ruleset:
        return None  # a built-in ruleset's name only: a file named by what came over the wire is never read
    try:
        return live_odds(load_ruleset(state.ruleset), tuple(state.remaining_by_rank))
    except (RulesetError, ValueError, OSError):
        return None


class Feed:
    """A TableClient folded into a DisplayState, one poll at a time."""

    def __init__(self, client, table: str, clock: Callable[[], float] = time.monotonic) -> None:
        self.client = client
        self.clock = clock
        self.state = initial(table)
        self.last_heard: float | None = None
        self._heard_count = -1

    def _counter(self) -> int:
        stats = self.client.stats
        return sum(stats.get(k, 0) for k in ("events", "heartbeats", "snapshots", "duplicates"))

    def _apply(self, item: dict) -> DisplayState:
        """The state after one item of the client's. The fold drops what it cannot take
        (shoed.display.state.checked); anything else that goes wrong with one item drops that
        item too, counted as one, and the last good state stays on the screen."""
        state = self.state
        try:
            state = apply(state, item)
            if state.snapshots != self.state.snapshots:
                odds = local_odds(state)
                if odds is not None:
                    state = apply(state, {"kind": "watch.odds", "odds": odds})
        except Exception as exc:  # one item from the wire never ends the display
            kind = item.get("kind") if isinstance(item, dict) else None
            why = f"{kind if isinstance(kind, str) else 'an item'}: {type(exc).__name__}"
            return replace(self.state, dropped=self.state.dropped + 1, dropped_why=shown(why))
        return state

    def poll(self, timeout: float = POLL) -> bool:
        """Take what arrived within `timeout`; True if the state changed."""
        before = self.state
        for item in self.client.poll(timeout):
            self.state = self._apply(item)
        wire_dropped = self.client.stats.get("malformed", 0)
        if wire_dropped != self.state.wire_dropped:
            self.state = apply(self.state, {"kind": "watch.dropped", "count": wire_dropped})
        now = self.clock()
        count = self._counter()
        if count != self._heard_count:
            self._heard_count, self.last_heard = count, now
        link = link_state(self.state.snapshots > 0, self.last_heard, now, self.client.heartbeat_timeout)
        if link != self.state.connection:
            self.state = apply(self.state, {"kind": "watch.connection", "state": link})
        return self.state is not before


def watch(events: str, snapshot: str, table: str, *, console=None, screen: bool = True, curve=None) -> int:
    """Run the display until Ctrl-C (`curve`: a ClientCurve for CURVE endpoints)."""
    from rich.live import Live

    from shoed.net.client import TableClient

    with TableClient(events, snapshot, table, curve=curve) as client:
        feed = Feed(client, table)
        try:
            with Live(render(feed.state), console=console, screen=screen, auto_refresh=False,
                      redirect_stdout=False, redirect_stderr=False) as live:
                while True:
                    if feed.poll(POLL):
                        live.update(render(feed.state), refresh=True)
        except KeyboardInterrupt:
            return 0


def once(events: str, snapshot: str, table: str, timeout: float, settle: float = 0.5,
         curve=None) -> DisplayState | None:
    """The state after the first snapshot and what follows within `settle`
    seconds; None if no snapshot came within `timeout` seconds."""
    from shoed.net.client import TableClient

    with TableClient(events, snapshot, table, curve=curve) as client:
        feed = Feed(client, table)
        deadline = time.monotonic() + timeout
        while feed.state.snapshots == 0:
            if time.monotonic() >= deadline:
                return None
            feed.poll(min(POLL, max(0.0, deadline - time.monotonic())))
        end = time.monotonic() + settle
        while time.monotonic() < end:
            feed.poll(max(0.0, min(POLL, end - time.monotonic())))
        return feed.state
