"""A table's endpoints in hostile hands, as a display, `shoed watch` or the witness meets them
(shoed.net.client): real ZeroMQ sockets on loopback, a stand-in peer that lies.

The client's requests end within their timeout whatever the peer sends (stray replies do not put
the timeout off); it takes no more events than it asked for, no message past its size limit, and a
heartbeat that names an absurd seq costs it one request, then a fresh snapshot.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import pytest
import zmq

from shoed.net import wire
from shoed.net.client import DRAIN_MAX, FetchError, SnapshotClient, TableClient, WrongTable
from shoed.net.limits import MAX_REPLY_BYTES

TABLE = "t1"


class Liar:
    """A ROUTER that answers each request with what `answer(request)` gives (dicts, or raw bytes),
    and sends `noise()` to every peer it has heard from every 0.1 s."""

    def __init__(self, ctx: zmq.Context, answer: Callable[[dict], list], noise: Callable[[], list] = list) -> None:
        self.socket = ctx.socket(zmq.ROUTER)
        self.socket.linger = 0
        self.socket.bind("tcp://127.0.0.1:*")
        self.endpoint = self.socket.getsockopt_string(zmq.LAST_ENDPOINT)
        self.answer, self.noise = answer, noise
        self.requests: list[dict] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        peers: set[bytes] = set()
        while not self._stop.is_set():
            if self.socket.poll(100):
                peer, raw = self.socket.recv_multipart()
                peers.add(peer)
                request = wire.decode(raw)
                self.requests.append(request)
                for reply in self.answer(request):
                    self._send(peer, reply)
            for peer in peers:
                for message in self.noise():
                    self._send(peer, message)

    def _send(self, peer: bytes, message) -> None:
        self.socket.send_multipart([peer, message if isinstance(message, bytes) else wire.encode(message)])

    def close(self) -> None:
        self._stop.set()
        self._thread.join(5)
        self.socket.close(0)


@pytest.fixture
def liars(ctx):
    made: list[Liar] = []
    yield lambda *a, **k: made.append(Liar(ctx, *a, **k)) or made[-1]
    for liar in made:
        liar.close()


@pytest.mark.timeout(30)
def test_stray_replies_do_not_put_off_the_timeout(ctx, liars):
    """A peer that answers every request with another request's id, again and again, kept a
    snapshot request waiting for ever."""
    liar = liars(lambda request: [], noise=lambda: [{"id": "r999", "ok": True, "seq": 1, "state": {}}])
    client = SnapshotClient(ctx, liar.endpoint, timeout=1.0)
    started = time.monotonic()
    with pytest.raises(FetchError, match="no reply .* within 1 s"):
        client.snapshot()
    assert time.monotonic() - started < 3
    client.close()


@pytest.mark.timeout(30)
def test_no_more_events_are_taken_than_were_asked_for(ctx, liars):
    """An events reply that never says `done` grew the client's list for as long as the peer sent."""
    def endless(request):
        if request.get("op") != "events":
            return []
        chunk = [{"table": TABLE, "kind": "card.dealt", "seq": n} for n in range(1, 101)]
        return [{"id": request["id"], "ok": True, "events": chunk} for _ in range(200)]

    liar = liars(endless)
    client = SnapshotClient(ctx, liar.endpoint, timeout=1.0)
    with pytest.raises(FetchError, match="more events sent than asked for"):
        client.events(1, 150)
    client.close()


@pytest.mark.timeout(60)
def test_a_reply_past_the_size_limit_is_never_taken(ctx, liars):
    padded = {"seq": 1, "state": {"pad": "x" * (MAX_REPLY_BYTES + 1024)}}
    liar = liars(lambda request: [{"id": request["id"], "ok": True, **padded}])
    client = SnapshotClient(ctx, liar.endpoint, timeout=1.0)
    with pytest.raises(FetchError, match="no reply"):
        client.snapshot()  # libzmq drops the message (and the connection) before it is read
    client.close()
    small = liars(lambda request: [{"id": request["id"], "ok": True, "seq": 1, "state": {"pad": "x" * 1000}}])
    client = SnapshotClient(ctx, small.endpoint, timeout=1.0)
    assert client.snapshot()[0] == 1
    client.close()


@pytest.mark.timeout(60)
def test_a_heartbeat_that_names_an_absurd_seq_costs_one_request(ctx, liars):
    """A heartbeat with seq 10**12 made the client list 10**8 windows to fetch before the first
    request (gigabytes), then ask for each in turn. One request is asked, refused, and a fresh
    snapshot taken instead."""
    def table(request):
        if request.get("op") == "snapshot":
            return [{"id": request["id"], "ok": True, "table": TABLE, "seq": 5, "state": {"n": 5}}]
        return [{"id": request["id"], "ok": False, "error": "events past the journal's end"}]

    liar = liars(table)
    pub = ctx.socket(zmq.PUB)
    pub.linger = 0
    pub.bind("tcp://127.0.0.1:*")
    client = TableClient(pub.getsockopt_string(zmq.LAST_ENDPOINT), liar.endpoint, TABLE, context=ctx,
                         request_timeout=1.0)
    try:
        got: list[dict] = []
        deadline = time.monotonic() + 20
        while not any(g.get("reason") == "gap" for g in got) and time.monotonic() < deadline:
            pub.send_multipart([f"{TABLE}.{wire.HEARTBEAT}".encode(),
                                wire.encode({"table": TABLE, "kind": wire.HEARTBEAT, "seq": 10**12})])
            got += client.poll(0.2)
        reasons = [(g["kind"], g.get("reason")) for g in got]
        assert ("snapshot", "initial") in reasons and ("snapshot", "gap") in reasons, reasons
        asked = [r for r in liar.requests if r.get("op") == "events"]
        assert asked and asked[0]["from"] == 6 and asked[0]["to"] - asked[0]["from"] < client.max_range
    finally:
        client.close()
        pub.close(0)


@pytest.mark.timeout(60)
def test_another_tables_answers_are_never_taken_for_this_tables(ctx, liars):
    """Endpoints swapped in a list: the snapshot endpoint answers for t2. Neither its snapshot nor the
    events it sends are delivered as t1's."""
    def other(request):
        if request.get("op") == "snapshot":
            return [{"id": request["id"], "ok": True, "table": "t2", "seq": 5, "state": {"n": 5}}]
        events = [{"table": "t2", "kind": "card", "seq": n} for n in range(request["from"], request["to"] + 1)]
        return [{"id": request["id"], "ok": True, "events": events},
                {"id": request["id"], "ok": True, "done": True, "count": len(events)}]

    liar = liars(other)
    fresh = TableClient("tcp://127.0.0.1:9", liar.endpoint, TABLE, context=ctx, request_timeout=1.0)
    resumed = TableClient("tcp://127.0.0.1:9", liar.endpoint, TABLE, context=ctx, request_timeout=1.0,
                          last_seq=2, heartbeat_timeout=0.2)
    try:
        assert fresh.poll(0.5) == [] and fresh.last_seq is None
        assert resumed.poll(0.8) == [] and resumed.last_seq == 2
    finally:
        fresh.close()
        resumed.close()
    requests = SnapshotClient(ctx, liar.endpoint, table=TABLE, timeout=1.0)
    with pytest.raises(WrongTable, match="answers for table 't2', not 't1'"):
        requests.snapshot()
    with pytest.raises(WrongTable):
        requests.events(3, 4)
    requests.close()


@pytest.mark.timeout(60)
def test_a_flooding_table_is_taken_a_bounded_batch_a_poll(ctx, liars):
    liar = liars(lambda request: [{"id": request["id"], "ok": True, "table": TABLE, "seq": 0, "state": {}}])
    pub = ctx.socket(zmq.PUB)
    pub.linger = 0
    pub.sndhwm = 0
    pub.bind("tcp://127.0.0.1:*")
    client = TableClient(pub.getsockopt_string(zmq.LAST_ENDPOINT), liar.endpoint, TABLE, context=ctx,
                         request_timeout=1.0, rcvhwm=0)
    try:
        assert client.poll(1.0)[0]["reason"] == "initial"
        time.sleep(0.3)  # the subscription reaches the publisher
        for n in range(1, 3 * DRAIN_MAX + 1):
            pub.send_multipart([f"{TABLE}.card".encode(), wire.encode({"table": TABLE, "kind": "card", "seq": n})])
        time.sleep(0.5)
        sizes = []
        while len(sizes) < 10 and sum(sizes) < 3 * DRAIN_MAX:
            sizes.append(len(client.poll(0.5)))
        assert max(sizes) == DRAIN_MAX and sum(sizes) == 3 * DRAIN_MAX, sizes
    finally:
        client.close()
        pub.close(0)


@pytest.mark.timeout(60)
def test_a_table_whose_seq_goes_back_is_noticed_at_its_first_older_event(ctx, liars):
    """A daemon started again on an older journal deals on from a lower seq. Its events were dropped as
    repeats until its seq passed the old one; a witness (watch_resets) asks for a snapshot at the first."""
    state = {"seq": 10}
    liar = liars(lambda request: [{"id": request["id"], "ok": True, "table": TABLE, "seq": state["seq"],
                                   "state": {"n": state["seq"]}}])
    pub = ctx.socket(zmq.PUB)
    pub.linger = 0
    pub.bind("tcp://127.0.0.1:*")
    endpoint = pub.getsockopt_string(zmq.LAST_ENDPOINT)
    clients = [TableClient(endpoint, liar.endpoint, TABLE, context=ctx, request_timeout=1.0, watch_resets=watch)
               for watch in (True, False)]
    try:
        for client in clients:
            assert client.poll(1.0)[0]["reason"] == "initial"
        time.sleep(0.3)
        state["seq"] = 4  # the table now: seq 4 of another journal; its next events are 5, 6
        got: list[list[dict]] = [[], []]
        for seq in (5, 6):
            pub.send_multipart([f"{TABLE}.card".encode(), wire.encode({"table": TABLE, "kind": "card", "seq": seq})])
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and not any(g.get("reason") == "reset" for g in got[0]):
            for n, client in enumerate(clients):
                got[n] += client.poll(0.1)
        got[0] += clients[0].poll(0.3)
        assert [(g["kind"], g.get("reason"), g["seq"]) for g in got[0]] == [("snapshot", "reset", 4), ("card", None, 5),
                                                                             ("card", None, 6)]
        assert got[1] == [] and clients[1].stats["duplicates"] == 2  # a display waits for the heartbeat
    finally:
        for client in clients:
            client.close()
        pub.close(0)


@pytest.mark.timeout(60)
def test_events_of_reserved_or_shell_kinds_are_never_delivered(ctx, liars):
    """A published `snapshot` would replace a display's state without the snapshot client's table and
    seq checks; a `watch.*` kind is one a display's shell makes itself (shoed.display.state). Neither
    comes from a table: dropped and counted as malformed, the events around them delivered."""
    liar = liars(lambda request: [{"id": request["id"], "ok": True, "table": TABLE, "seq": 0, "state": {}}])
    pub = ctx.socket(zmq.PUB)
    pub.linger = 0
    pub.bind("tcp://127.0.0.1:*")
    client = TableClient(pub.getsockopt_string(zmq.LAST_ENDPOINT), liar.endpoint, TABLE, context=ctx,
                         request_timeout=1.0)
    try:
        assert client.poll(1.0)[0]["reason"] == "initial"
        time.sleep(0.3)  # the subscription reaches the publisher
        sent = [("card", {}), ("snapshot", {"state": {"table": "t9"}}), ("watch.odds", {"odds": {}}),
                ("watch.connection", {"state": "live"}), ("card", {})]
        for seq, (kind, extra) in enumerate(sent, 1):
            topic = f"{TABLE}.{wire.group_of(kind)}".encode()
            pub.send_multipart([topic, wire.encode({"table": TABLE, "kind": kind, "seq": seq, **extra})])
        got: list[dict] = []
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and len(got) < 2:
            got += client.poll(0.1)
        assert [(g["kind"], g["seq"]) for g in got] == [("card", 1), ("card", 5)]
        assert client.stats["malformed"] == 3 and client.stats["gaps"] == 0
    finally:
        client.close()
        pub.close(0)
