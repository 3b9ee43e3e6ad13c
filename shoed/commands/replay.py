"""`shoed replay PATH`: drive a journal's recorded inputs through the same table
controller and report every event that differs from the recorded ones.

Surveillance replays a disputed shoe with it; `--publish` sends the replayed
events on a ZeroMQ PUB socket (at the recorded pace, `--speed X` faster, or
`--max` flat out) so a display can show the shoe again.
"""

from __future__ import annotations

import json
import sys
import time


def register(sub) -> None:
    p = sub.add_parser("replay", help="replay a journal through the controller and compare its events")
    p.add_argument("path", metavar="PATH", help="a journal file or a directory of them")
    pace = p.add_mutually_exclusive_group()
    pace.add_argument("--speed", type=float, default=None, help="replay at X times the recorded pace")
    pace.add_argument("--max", action="store_true", help="replay as fast as possible (the default without --publish)")
    p.add_argument("--publish", metavar="ENDPOINT", help="publish the replayed events on a PUB socket")
    p.add_argument("--secret-file", metavar="FILE", help="the journal's HMAC secret, if it is keyed")
    p.add_argument("--json", action="store_true", help="print a JSON report")
    p.set_defaults(func=run)


def run(args) -> int:
    from pathlib import Path

    from shoed.cli import CommandError
    from shoed.journal import JournalCorrupt, iter_records
    from shoed.replay import Replay

    path = Path(args.path)
    if not path.exists():
        raise CommandError(f"no journal at {path}")
    secret = Path(args.secret_file).read_bytes().strip() if args.secret_file else None
    publisher = context = None
    if args.publish:
        import zmq

        from shoed.net import wire

        context = zmq.Context()
        publisher = context.socket(zmq.PUB)
        publisher.linger = 1000
        publisher.bind(args.publish)
        time.sleep(0.3)  # let subscribers connect before the first event
    state = Replay()
    started = time.monotonic()
    first_mono = None
    corrupt = None
    try:
        for record in iter_records(path, secret):
            events = state.feed(record, None)
            if publisher is None or not events:
                continue
            if args.speed and not args.max:
                mono = events[0]["mono_ns"]
                first_mono = first_mono if first_mono is not None else mono
                due = started + (mono - first_mono) / 1e9 / args.speed
                delay = due - time.monotonic()
                if delay > 0:
                    time.sleep(min(delay, 60))
            for event in events:
                publisher.send_multipart([wire.topic_for(event["table"], event["kind"]).encode(), wire.encode(event)])
    except JournalCorrupt as exc:
        corrupt = str(exc)
    finally:
        if publisher is not None:
            publisher.close()
            context.term()
    report = {
        "steps": state.steps,
        "events": state.events,
        "differences": [d.to_json() for d in state.differences],
        "corrupt": corrupt,
        "identical": not state.differences and corrupt is None,
    }
    if args.json:
        print(json.dumps(report))
    else:
        print(f"replayed {state.steps} inputs, {state.events} events")
        for d in state.differences:
            print(f"DIFFERENCE at jseq {d.jseq} (seq {d.seq}): {d.reason}")
            print(f"  recorded: {json.dumps(d.recorded)[:400]}")
            print(f"  replayed: {json.dumps(d.replayed)[:400]}")
        if corrupt:
            print(f"JOURNAL CORRUPT: {corrupt}", file=sys.stderr)
        if report["identical"]:
            print("every replayed event is identical to the recorded one")
    return 0 if report["identical"] else 1
