"""`shoed replay PATH`: drive a journal's recorded inputs through the same table
controller and report every event that differs from the recorded ones.

Surveillance replays a disputed shoe with it; `--publish` sends the replayed
events on a ZeroMQ PUB socket (at the recorded pace, `--speed X` faster, or
`--max` flat out) so a display can show the shoe again, and serves the replayed
table's snapshot and past events beside it (`--snapshot`, by default the next
port), with a heartbeat in the recorded pauses, so `shoed watch` can join.

Without `--publish` the shoe files are replayed in `--jobs` processes (one
per CPU by default) and joined at their seams (shoed.journal.replay): the
same proof, the same report, as one process gives.
"""

from __future__ import annotations

import collections
import json
import os
import sys
import time

from shoed import cli

HEARTBEAT_INTERVAL = 1.0  # as the daemon: a display takes over 3 s of silence for a lost table
WINDOW = 5000  # past events kept for a display's catch-up, as the daemon keeps
SHOWN_PEER_HWM = 100  # replies queued to one display that reads nothing; more are dropped
CHUNK = 100
AUDIENCES = ("display", "surveillance")  # shoed.table.audience's, named here so that --help needs no import
DISPLAY = "display"
REVEALS = ("dealt", "result")


def register(sub) -> None:
    p = sub.add_parser("replay", help="replay a journal through the controller and compare its events")
    p.add_argument("path", metavar="PATH", type=cli.journal_path, help="a journal file or a directory of them")
    pace = p.add_mutually_exclusive_group()
    pace.add_argument("--speed", type=float, default=None, metavar="X",
                      help="with --publish: X times the recorded pace (default 1, the recorded pace)")
    pace.add_argument("--max", action="store_true",
                      help="with --publish: as fast as possible (without --publish a replay always is)")
    p.add_argument("--publish", metavar="ENDPOINT", type=cli.bind_endpoint, help="publish the replayed events on a PUB socket")
    p.add_argument("--snapshot", metavar="ENDPOINT", type=cli.bind_endpoint,
                   help="with --publish: serve the replayed table's snapshot and past events here, for `shoed watch` "
                        "(default: the publish endpoint's port + 1 for tcp)")
    p.add_argument("--audience", choices=AUDIENCES, default=None,
                   help="with --publish: what the replay shows, as the table's display stream did (default: "
                        "no face-down card, odds or alarm detail; shoed.table.audience) or all of it, as "
                        "surveillance's stream (for an endpoint only surveillance can reach)")
    p.add_argument("--reveal", choices=REVEALS, default=None,
                   help="with --audience display: when a hand's cards are faced, as the table's display_reveal "
                        "(default dealt)")
    p.add_argument("--secret-file", metavar="FILE", help="the journal's HMAC secret, if it is keyed")
    p.add_argument("--verify-key", metavar="FILE", help="the verification key of a forward-secure journal")
    p.add_argument("--order-key-file", metavar="FILE",
                   help="the key of a card-reading shuffler's sealed orders (docs/shuffler.md), if the table had one")
    p.add_argument("--jobs", type=int, default=None, metavar="N",
                   help="replay the shoe files in N processes (default: one per CPU; 1 with --publish)")
    p.add_argument("--json", action="store_true", help="print a JSON report")
    p.set_defaults(func=run)


def run(args) -> int:
    from pathlib import Path

    from shoed.cli import CommandError
    from shoed.commands.journal import read_secret
    from shoed.journal import JournalCorrupt
    from shoed.journal.reader import journal_files
    from shoed.journal.replay import ProcessLost, replay_journal

    path = Path(args.path)
    try:  # a missing path, or one that is neither a journal file nor a directory (a FIFO, a device)
        files = journal_files(path)
    except FileNotFoundError as exc:
        raise CommandError(str(exc)) from None
    if not files.count and not files.strays:
        raise CommandError(f"no journal files at {path}")  # nothing replayed is no proof
    if path.is_file():
        print(f"note: {path.name} replayed on its own: its link to the file before it and the state it starts "
              "in are taken from itself (replay the journal's folder to prove them)", file=sys.stderr)
    secret = read_secret(args.secret_file)
    if args.speed is not None and not args.speed > 0:
        raise CommandError("--speed is a number above 0 (--max replays as fast as possible)")
    speed = None if args.max else (args.speed if args.speed is not None else 1.0)  # the recorded pace by default
    order_key = None
    if args.order_key_file:
        from shoed.drivers import DriverError
        from shoed.drivers.shuffler import load_order_key

        try:
            order_key = load_order_key(args.order_key_file)
        except DriverError as exc:
            raise CommandError(str(exc)) from None
    for given, option in ((args.snapshot, "--snapshot"), (args.audience, "--audience"), (args.reveal, "--reveal")):
        if given is not None and not args.publish:
            raise CommandError(f"{option} serves a replay that is published: give --publish too")
    jobs = args.jobs if args.jobs is not None else (1 if args.publish else os.cpu_count() or 1)
    if jobs < 1:
        raise CommandError("--jobs is 1 or more")
    if args.publish and jobs != 1:
        raise CommandError("--publish sends the events in their recorded order: it needs --jobs 1")
    if args.verify_key is not None:  # a forward-secure journal
        from shoed.commands.journal import verify_keys

        secret = verify_keys(args)
    from shoed.table.audience import for_audience

    event_view, snapshot_view = for_audience(args.audience or DISPLAY, args.reveal or "dealt")
    publisher = context = shown = None
    if args.publish:
        import zmq

        from shoed.commands.watch import snapshot_endpoint
        from shoed.net import wire

        snapshot = args.snapshot
        if snapshot is None:
            try:
                snapshot = snapshot_endpoint(args.publish)
            except CommandError:
                snapshot = None  # not tcp: only where --snapshot names one
        if snapshot is not None:
            from shoed.daemon.config import endpoint_key

            key = endpoint_key(args.publish)
            if key is not None and key == endpoint_key(snapshot):
                raise CommandError(f"--publish and --snapshot name the same endpoint {snapshot}: give each its own")
        context = zmq.Context()
        publisher = context.socket(zmq.PUB)
        publisher.linger = 1000
        endpoint = args.publish
        try:
            publisher.bind(endpoint)
            if snapshot:
                endpoint = snapshot
                shown = Shown(context, snapshot, publisher, snapshot_view, paced=speed is not None)
        except zmq.ZMQError as exc:
            context.destroy(linger=0)  # every socket of it closed: none left to hold term() for ever
            raise CommandError(f"cannot bind {endpoint}: {exc.strerror}") from None
        time.sleep(0.3)  # let subscribers connect before the first event
    started = time.monotonic()
    first_mono = None

    def publish(record: dict, events: list) -> None:
        nonlocal first_mono
        assert publisher is not None  # given to the replay only with a publisher
        if speed is not None:
            mono = events[0]["mono_ns"]
            first_mono = first_mono if first_mono is not None else mono
            due = started + (mono - first_mono) / 1e9 / speed
            delay = due - time.monotonic()
            if delay > 0:
                if shown is not None:
                    shown.wait(min(delay, 60))
                else:
                    time.sleep(min(delay, 60))
        events = [event_view(event) for event in events]
        for event in events:
            publisher.send_multipart([wire.topic_for(event["table"], event["kind"]).encode(), wire.encode(event)])
        if shown is not None:
            shown.published(events)

    try:
        result = replay_journal(path, secret, jobs=jobs, on_events=publish if publisher is not None else None,
                                order_key=order_key, on_start=shown.follow if shown is not None else None)
    except ProcessLost as exc:
        raise CommandError(str(exc)) from None
    finally:
        if shown is not None:
            shown.close()
        if publisher is not None and context is not None:
            publisher.close()
            context.term()
    corrupt = str(JournalCorrupt(result.corrupt)) if result.corrupt is not None else None
    report = {
        "steps": result.steps,
        "events": result.events,
        "cards": result.cards,
        "files": result.files,
        "differences": [d.to_json() for d in result.differences],
        "more_differences": result.more_differences,
        "corrupt": corrupt,
        "identical": result.identical,
        "rulesets": result.rulesets,
        "torn": result.torn,
    }
    for table, torn in result.torn.items():  # a write cut by a stop: said, never corruption (as verify says it)
        from shoed.journal.reader import TornTail

        print(f"note: table {table}: {TornTail(**torn).describe()}", file=sys.stderr)
    if order_key is None and any("no order key is configured" in json.dumps(d.replayed) for d in result.differences):
        print("note: this table deals from a card-reading shuffler whose orders are sealed: replay with "
              "--order-key-file FILE (docs/shuffler.md)", file=sys.stderr)
    if args.json:
        print(json.dumps(report))
    else:
        print(f"replayed {result.steps} inputs ({result.cards} cards) from {result.files} files, {result.events} events")
        tables: dict = {}
        for r in result.rulesets:  # the table's first rules, then each change: said, never a difference
            before = tables.get(r["table"])
            tables[r["table"]] = r
            if before is not None:
                print(f"note: from {r['file']} table {r['table']} deals under {r['ruleset']}, {r['decks']} decks "
                      f"({before['ruleset']}, {before['decks']} decks before)")
        for d in result.differences:
            print(f"DIFFERENCE at jseq {d.jseq} (seq {d.seq}): {d.reason}")
            if d.left_out:
                print(f"  the events differ over {d.left_out:,} bytes: not shown")
                continue
            print(f"  recorded: {json.dumps(d.recorded)[:400]}")
            print(f"  replayed: {json.dumps(d.replayed)[:400]}")
        if result.more_differences:
            print(f"... and {result.more_differences:,} more differences after these (counted, not shown)")
        if corrupt:
            from shoed.journal.chain import GIVE_THE_KEY, NOT_VERIFIED, key_needed

            if result.corrupt is not None and key_needed(result.corrupt.reason):
                print(f"{NOT_VERIFIED}: {corrupt}: {GIVE_THE_KEY}", file=sys.stderr)
            else:
                print(f"JOURNAL CORRUPT: {corrupt}", file=sys.stderr)
        if report["identical"]:
            print("every replayed event is identical to the recorded one")
    return 0 if report["identical"] else 1


class Shown:
    """What a display that joins a published replay needs besides the events (the Clone pattern,
    as the daemon serves it: shoed.net.snapshot): the replayed table's snapshot and the events
    published so far, on a ROUTER socket, answered while the replay waits for the recorded pace;
    and a heartbeat when a pause lasts, so that the display does not take it for a lost table."""

    def __init__(self, context, endpoint: str, publisher, snapshot_view=lambda state: state,
                 paced: bool = True) -> None:
        import zmq

        from shoed.net.limits import HANDSHAKE_TIMEOUT
        from shoed.net.snapshot import MAX_REQUEST_BYTES

        self.socket = context.socket(zmq.ROUTER)
        self.socket.linger = 0
        # as the daemon's own snapshot endpoint: a request is small, and a peer that reads nothing
        # or never finishes its handshake costs a bounded queue, not the replay's memory
        self.socket.maxmsgsize = MAX_REQUEST_BYTES
        self.socket.sndhwm = SHOWN_PEER_HWM
        self.socket.rcvhwm = 64
        self.socket.handshake_ivl = round(HANDSHAKE_TIMEOUT * 1000)
        try:
            self.socket.bind(endpoint)
        except zmq.ZMQError:
            self.socket.close(0)  # a socket left open holds context.term() for ever
            raise
        self.publisher = publisher
        self.snapshot_view = snapshot_view  # the audience's (shoed.table.audience): the events come so already
        self.paced = paced
        self.replay = None  # the Replay of the file being replayed (shoed.journal.replay.replay_file)
        self.recent: collections.deque = collections.deque(maxlen=WINDOW)
        self.last_sent = time.monotonic()
        self.state: dict | None = None  # the snapshot as of the last events sent

    def follow(self, replay) -> None:
        self.replay = replay

    def published(self, events: list) -> None:
        """The events just sent; the table's state as they leave it is what a display that joins is
        served until the next are sent (the controller has gone on to the record that waits for its
        time: a snapshot of it would be ahead of the stream)."""
        self.recent.extend(events)
        self.last_sent = time.monotonic()
        controller = self.replay.controller if self.replay is not None else None
        if self.paced and controller is not None:  # as fast as possible, requests are never answered
            # Marked as a replay: a display that joins shows it so, never as the live table.
            self.state = {**self.snapshot_view(controller.snapshot()), "replay": True}

    def wait(self, seconds: float) -> None:
        """Answer requests (and keep the heartbeat) for `seconds`."""
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0:
            if self.socket.poll(int(min(left, HEARTBEAT_INTERVAL) * 1000) + 1):
                frames = self.socket.recv_multipart()
                for reply in self._replies(frames[-1]):
                    self.socket.send_multipart([frames[0], reply])
            if self.recent and time.monotonic() - self.last_sent >= HEARTBEAT_INTERVAL:
                self._heartbeat()

    def _heartbeat(self) -> None:
        from shoed.net import wire

        last = self.recent[-1]
        beat = {"table": last["table"], "kind": wire.HEARTBEAT, "interval": HEARTBEAT_INTERVAL, "seq": last["seq"]}
        self.publisher.send_multipart([wire.topic_for(last["table"], wire.HEARTBEAT).encode(), wire.encode(beat)])
        self.last_sent = time.monotonic()

    def _replies(self, body: bytes):
        from shoed.net import wire
        from shoed.net.snapshot import EventsRequest, RequestError, decode_request

        try:
            request = decode_request(body)
        except RequestError as exc:
            try:
                message = wire.decode(body)
            except wire.WireError:
                message = None
            if isinstance(message, dict) and message.get("op") == "credit":
                return  # flow control: every reply here is small and few
            yield wire.encode({"ok": False, "error": str(exc)})
            return
        echo: dict = {"id": request.id} if request.id is not None else {}
        base: dict = {"ok": True} | echo
        if isinstance(request, EventsRequest):
            found = [e for e in self.recent if request.first <= e["seq"] <= request.last]
            for i in range(0, len(found), CHUNK):
                yield wire.encode(base | {"op": "events", "events": found[i:i + CHUNK]})
            yield wire.encode(base | {"op": "events", "done": True, "count": len(found)})
            return
        state = self.state
        if state is None:
            yield wire.encode({"ok": False, "error": "no table replayed yet"} | echo)
            return
        yield wire.encode(base | {"op": "snapshot", "table": state["table"], "seq": state["seq"], "state": state})

    def close(self) -> None:
        self.socket.close(0)
