"""Following tables: their events and journal heads, kept in the witness database.

One `TableClient` per table (the Clone pattern of `shoed.net.client`: every
event once, in seq order, gaps filled from the table's journal), with the
heartbeats delivered too, since they carry the journal's head while the table
is idle. Each poll's news is kept in one transaction.

After its own restart the witness resumes from the highest seq its database
holds for each table (an event, or the snapshot it joined at): the table's next heartbeat says how far it has got and
the client fetches the events in between through the snapshot endpoint. The
database's key (table, seq) makes a repeat harmless, so nothing is counted
twice; a table whose seq went backwards (a new journal) is followed from its
fresh snapshot, and what the witness saw before stays in the database.

A table that sends nothing at all (no snapshot, no event, no heartbeat) for
`silence_warning` seconds is a warning naming it and what to check: one that
never answered is most often a wrong server key (each table has its own key
pair), the witness's key missing from its allow-list or without the
surveillance role, or a wrong address; with CURVE a refused handshake looks
the same as no table there. It is said once until the table answers again.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from shoed.daemon import logs
from shoed.net import wire
from shoed.net.client import TableClient
from shoed.net.curve import ClientCurve
from shoed.witness.store import Head, SeenEvent, SeenHead, WitnessStore, utc_now

log = logs.get("shoed.witness")

SILENCE_WARNING_S = 10.0  # a table heard from at least every second (its heartbeats): silent this long is a fault


@dataclass(frozen=True, slots=True)
class Feed:
    """One table to follow: its id and endpoints, and the keys when its publishing is CURVE'd."""

    table: str
    events: str
    snapshot: str
    curve: ClientCurve | None = None


def observed(table: str, items: list[dict], received_utc: str) -> tuple[list[SeenEvent], list[SeenHead]]:
    """What a poll delivered, as rows for the database: events with the head of the record that holds
    them, and every head seen (on events, heartbeats and snapshots)."""
    events: list[SeenEvent] = []
    heads: list[SeenHead] = []
    for item in items:
        kind = item.get("kind")
        if kind == wire.SNAPSHOT:
            state = item.get("state") or {}
            head = Head.from_wire(state.get("journal"))
            source = f"snapshot:{item.get('reason')}"
        elif kind == wire.HEARTBEAT:
            head = Head.from_wire(item.get("journal"))
            source = "heartbeat"
        else:
            event = dict(item)
            head = Head.from_wire(event.pop("journal", None))
            # Events fetched to fill a gap come from the table's memory or journal without a head.
            events.append(SeenEvent(table, event["seq"], str(kind), event, head, "live" if head else "fetched",
                                    received_utc))
            source = "event"
        if head is not None:
            heads.append(SeenHead(table, head, item.get("seq"), source, received_utc))
    return events, heads


class Witness:
    """Follows tables and keeps what it sees; `run()` until `stop()` says so."""

    def __init__(self, store: WitnessStore, feeds: list[Feed], *, heartbeat_timeout: float = 3.0,
                 request_timeout: float = 2.0, silence_warning: float = SILENCE_WARNING_S) -> None:
        import zmq

        self.store = store
        self.context = zmq.Context()
        self.clients: dict[str, TableClient] = {}
        self.counts = {feed.table: 0 for feed in feeds}
        self.headless: set[str] = set()  # tables whose endpoint gives no journal head (a display's)
        self.silence_warning = silence_warning
        self.silent: set[str] = set()  # tables warned of as silent, until they answer again
        self.answered: set[str] = set()  # tables that sent anything since the witness started
        self.feeds = {feed.table: feed for feed in feeds}
        self._heard = {feed.table: time.monotonic() for feed in feeds}
        for feed in feeds:
            last = store.resume_seq(feed.table)
            self.clients[feed.table] = TableClient(
                feed.events, feed.snapshot, feed.table, curve=feed.curve, context=self.context,
                heartbeat_timeout=heartbeat_timeout, request_timeout=request_timeout, last_seq=last,
                heartbeats=True, watch_resets=True)
            log.info("following", table=feed.table, events=feed.events, snapshot=feed.snapshot,
                     resume_after=last, curve=feed.curve is not None)

    def step(self, timeout: float = 0.2) -> int:
        """One turn over every table; the number of events kept."""
        kept = 0
        share = timeout / max(1, len(self.clients))
        for table, client in self.clients.items():
            items = client.poll(share)
            if not items:
                self._check_silence(table)
                continue
            self._heard[table] = time.monotonic()
            self.answered.add(table)
            if table in self.silent:
                self.silent.discard(table)
                log.info("the table answers again", table=table)
            for item in items:
                if item.get("kind") != wire.SNAPSHOT:
                    continue
                if item.get("reason") != "initial":
                    log.warning("table resynchronised from a snapshot", table=table, reason=item.get("reason"),
                                seq=item.get("seq"))
                if not (item.get("state") or {}).get("journal") and table not in self.headless:
                    # A display's endpoint: what the players may not see yet is withheld, and no head is
                    # given; what is kept from it cannot prove the journal (verify --witness: differing).
                    self.headless.add(table)
                    log.error("the table's snapshot carries no journal head: this is a display's endpoint, not "
                              "the surveillance one ([publish] surveillance_events, with --key and --server-key)",
                              table=table, events=client.events_endpoint)
            events, heads = observed(table, items, utc_now())
            done = self.store.record(events, heads)
            if done.refused:
                log.error("the database refused values the table sent: those rows are not kept", table=table,
                          refused=done.refused)
            self.counts[table] += done.events
            kept += done.events
        return kept

    def _check_silence(self, table: str) -> None:
        """A table silent for `silence_warning` seconds: a warning that names it and what to check, once."""
        silent_s = time.monotonic() - self._heard[table]
        if table in self.silent or silent_s < self.silence_warning:
            return
        self.silent.add(table)
        feed = self.feeds[table]
        where = dict(table=table, events=feed.events, snapshot=feed.snapshot, silent_s=round(silent_s, 1),
                     curve=feed.curve is not None)
        if table in self.answered:
            log.warning(f"table {table} has sent nothing for {silent_s:.0f} s (no heartbeat): its daemon, its "
                        "box or the network between is down; the witness fills in what it missed when the "
                        "table answers again", **where)
        else:
            log.warning(f"table {table} has not answered for {silent_s:.0f} s: nothing of it is being kept. Check that "
                        "its server-key= (or --server-key) is this table's own public key (the server.key of "
                        "its box: each table has its own), that the witness's public key is on the table's "
                        "allow-list with --role surveillance (or pit), and that the endpoints are the table's "
                        "surveillance_events and surveillance_snapshot, reachable from here, with shoed running",
                        **where)

    def run(self, stop: Callable[[], bool], duration: float | None = None) -> None:
        """Turn over the tables until `stop()` or `duration`. A turn is short whatever the tables send
        (each client takes a bounded batch a poll), so a stop is seen within a turn."""
        deadline = None if duration is None else time.monotonic() + duration
        while not stop() and (deadline is None or time.monotonic() < deadline):
            self.step()

    def close(self) -> None:
        for client in self.clients.values():
            client.close()
        self.context.term()
