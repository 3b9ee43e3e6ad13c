"""Helpers for the network tests: keys in temporary directories, a serving loop,
and a small stand-in daemon (journal in a list, a publisher served from one
thread as the daemon's loop does, which also hands snapshots to the catch-up
endpoint's own thread, shoed.net.catchup).
"""

from __future__ import annotations

import collections
import queue
import shutil
import threading
import time
from pathlib import Path
from typing import Self

import zmq

from shoed.net.curve import ClientCurve, ServerCurve, create_key_pair
from shoed.net.publisher import Publisher
from shoed.net.catchup import CatchupServer, Endpoint, Limits

ANY_PORT = "tcp://127.0.0.1:*"


class Keys:
    """A server key pair, an allow-list with two clients on it, and a stranger."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.server_dir = root / "server"
        self.allow_dir = root / "allowed"
        self.clients_dir = root / "clients"
        self.allow_dir.mkdir(parents=True)
        self.server_public_file, self.server_secret_file, self.server_key = create_key_pair(self.server_dir, "shoed")
        self.client_keys = {}
        for name in ("dealer-console", "pit-boss", "stranger"):
            public_file, _, key = create_key_pair(self.clients_dir, name)
            self.client_keys[name] = key
            if name != "stranger":
                shutil.copy(public_file, self.allow_dir / public_file.name)

    def client(self, name: str) -> ClientCurve:
        return ClientCurve.from_files(self.clients_dir / f"{name}.key_secret", self.server_public_file)

    def server(self, context: zmq.Context, allow=None) -> ServerCurve:
        return ServerCurve(context, self.server_secret_file, allow if allow is not None else self.allow_dir)


class Serving:
    """Serve some endpoints' sockets from a thread, as the daemon's loop does."""

    def __init__(self, *servers) -> None:
        self.servers = servers
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        poller = zmq.Poller()
        owner = {}
        for server in self.servers:
            for sock in server.sockets():
                poller.register(sock, zmq.POLLIN)
                owner[sock] = server
        while not self._stop.is_set():
            for sock, _ in poller.poll(10):
                owner[sock].handle(sock)

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join(5)
        assert not self._thread.is_alive()


def catchup_server(context: zmq.Context, endpoint: str, table: str, journal_events, curve: ServerCurve | None = None,
                   limits: Limits | None = None) -> CatchupServer:
    """The daemon's snapshot and catch-up endpoint (not started), every event from `journal_events`
    (no events in memory), seen as surveillance sees them."""
    return CatchupServer(context, [Endpoint(endpoint, lambda e: e, lambda s: s, curve)], table, collections.deque(),
                         journal_events, limits or Limits())


class HandingOver:
    """The daemon's loop's side of the snapshot hand-over, on a thread: when the catch-up thread
    wants a snapshot, `snapshot()` makes one (None: the table hands none over)."""

    def __init__(self, server: CatchupServer, snapshot) -> None:
        self.server, self.snapshot, self.made = server, snapshot, 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            now = time.monotonic()
            if self.server.box.wanted(now):
                state = self.snapshot()
                if state is not None:
                    self.server.box.put(state, now)
                    self.made += 1
            time.sleep(0.002)

    def __enter__(self) -> Self:
        self.server.start()
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join(5)
        self.server.close()


class FakeTable:
    """A stand-in daemon for one table.

    `post()` queues an event; the table's thread gives it the next seq,
    journals it and publishes it, except seqs listed in `lose`, which are
    journaled but not sent (as if dropped on the way). The snapshot state is
    the list of every event's `n` field so far, so a client can check that
    snapshot + events equals the journal.
    """

    def __init__(
        self,
        context: zmq.Context,
        table: str = "t1",
        events_endpoint: str = ANY_PORT,
        snapshot_endpoint: str = ANY_PORT,
        *,
        journal: list[dict] | None = None,
        lose: set[int] = frozenset(),
        heartbeat: float = 0.1,
        curve: ServerCurve | None = None,
        keep_from: int = 1,
    ) -> None:
        self.context = context
        self.table = table
        self.journal = journal if journal is not None else []
        self.lose = set(lose)
        self.heartbeat = heartbeat
        self.curve = curve
        self.keep_from = keep_from  # events below this are "rotated out" of the journal
        self._endpoints = (events_endpoint, snapshot_endpoint)
        self._posts: queue.Queue = queue.Queue()
        self._stop = threading.Event()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self.error: BaseException | None = None
        self._posted = 0
        self._done = 0

    @property
    def last_seq(self) -> int:
        return self.journal[-1]["seq"] if self.journal else 0

    def state(self) -> dict:
        return {"seq": self.last_seq, "ns": [e["n"] for e in self.journal]}

    def events_between(self, first: int, last: int):
        if first < self.keep_from:
            raise LookupError(f"events before {self.keep_from} are no longer kept")
        return [e for e in self.journal if first <= e["seq"] <= last]

    def post(self, kind: str = "card.dealt", **fields) -> None:
        self._posted += 1
        self._posts.put((kind, fields))

    def start(self) -> FakeTable:
        self._thread.start()
        assert self._ready.wait(5), "fake table did not start"
        if self.error:
            raise self.error
        return self

    def _run(self) -> None:
        try:
            pub = Publisher(self.context, self._endpoints[0], self.table, self.curve,
                            last_seq=self.journal[-1]["seq"] if self.journal else None,
                            heartbeat_interval=self.heartbeat)
        except zmq.ZMQError as exc:  # reported to the test by start()
            self.error = exc
            self._ready.set()
            return
        try:
            snap = catchup_server(self.context, self._endpoints[1], self.table, self.events_between, self.curve)
        except zmq.ZMQError as exc:
            pub.close()
            self.error = exc
            self._ready.set()
            return
        self.publisher, self.snapshot_server = pub, snap
        self.events_endpoint, self.snapshot_endpoint = pub.endpoint, snap.endpoints[0]
        snap.start()
        self._ready.set()
        try:
            while not self._stop.is_set():
                now = time.monotonic()
                if snap.box.wanted(now):  # a client asked: the table's thread makes the snapshot
                    snap.box.put(self.state(), now)
                time.sleep(0.001)
                while True:
                    try:
                        kind, fields = self._posts.get_nowait()
                    except queue.Empty:
                        break
                    seq = self.last_seq + 1
                    event = {"table": self.table, "seq": seq, "kind": kind, "n": seq, **fields}
                    self.journal.append(event)
                    if seq in self.lose:
                        pub.last_seq = seq  # the publisher did send it; the network lost it
                    else:
                        pub.publish(event)
                    self._done += 1
                pub.maybe_heartbeat()
        finally:
            pub.close()
            snap.close()

    def wait_posted(self, timeout: float = 5.0) -> None:
        deadline = time.monotonic() + timeout
        while self._done < self._posted:
            assert time.monotonic() < deadline, "fake table did not publish in time"
            time.sleep(0.002)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(5)
        assert not self._thread.is_alive()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


def collect(client, until, timeout: float = 10.0, got: list[dict] | None = None) -> list[dict]:
    """Poll a TableClient until `until(received)` holds; fail after `timeout`.

    With `got`, appends to it (and `until` sees all of it); returns the list.
    """
    got = [] if got is None else got
    deadline = time.monotonic() + timeout
    while not until(got):
        assert time.monotonic() < deadline, f"gave up waiting; received {[(e['kind'], e['seq']) for e in got]}"
        got.extend(client.poll(0.05))
    return got


def replay(items: list[dict]) -> list[int]:
    """What a display shows: the last snapshot's state plus the events after it."""
    ns: list[int] = []
    for item in items:
        if item["kind"] == "snapshot":
            ns = list(item["state"]["ns"])
        else:
            ns.append(item["n"])
    return ns
