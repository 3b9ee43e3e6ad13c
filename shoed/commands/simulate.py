"""`shoed simulate`: a virtual card-reading shoe on a pseudo-terminal or TCP port.

Prints the path (or socket:// URL) to open on its first line of stdout, then
deals until every shoe is done (native: and acknowledged by the host) or until
Ctrl-C / SIGTERM. The ground truth of everything dealt can be written as JSON
lines with --truth.
"""

from __future__ import annotations

import argparse

from shoed import cli
from shoed.files import is_stream

RESUME_MAX = 16 << 20  # bytes: a --resume file, a shoe's state, is a few kilobytes


def _card_numbers(text: str) -> tuple[int, ...]:
    out = []
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        try:
            value = int(part)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{part!r} is not a card number (write e.g. 12,40,77)") from None
        if value < 1:
            raise argparse.ArgumentTypeError(f"cards are counted from 1, not {value}")
        out.append(value)
    if not out:
        raise argparse.ArgumentTypeError("give at least one card number, e.g. 12,40,77")
    return tuple(sorted(set(out)))


def register(sub) -> None:
    p = sub.add_parser(
        "simulate",
        help="a virtual shoe: deals real shoes by a ruleset on a pty or TCP port",
        description=(
            "Run a virtual card-reading shoe. It shuffles, burns and deals coups by the "
            "ruleset's tableau and speaks the native protocol or the Bee-Tek format on a "
            "pseudo-terminal (or TCP port). The first line of output is the path to open."
        ),
    )
    p.add_argument("--ruleset", default="punto-banco", help="built-in ruleset name or .toml path (default punto-banco)")
    p.add_argument("--decks", type=cli.positive_int, help="decks in the shoe (default: the ruleset's)")
    p.add_argument(
        "--cut", type=int, metavar="CARDS", help="cut card this many cards from the end (default: the ruleset's)"
    )
    p.add_argument("--protocol", choices=("native", "beetek"), default="native", help="what the shoe speaks")
    p.add_argument("--listen", metavar="socket://HOST:PORT", help="serve one TCP client instead of a pty")
    p.add_argument("--link", metavar="PATH", help="keep a symlink PATH pointing at the current pty (survives replugs)")
    p.add_argument(
        "--pace", type=cli.seconds, default=1.5, help="seconds between cards (default 1.5; 0 = as fast as the link allows)"
    )
    p.add_argument(
        "--shoes", type=cli.count, default=1, help="shoes to deal, one after the other (default 1; 0 = without end)"
    )
    p.add_argument(
        "--seed", type=int, help="seed of the shuffle, the players' choices and the faults (default: random)"
    )
    p.add_argument("--serial", help="serial number the shoe reports in its Hello")
    p.add_argument(
        "--gate",
        choices=("locked", "open", "none"),
        default=None,
        help="native: the card gate at power-on (SPEC.md §10: locked until the host unlocks it; the default), "
        "open, or none (a shoe without a gate)",
    )
    p.add_argument(
        "--plain",
        action="store_true",
        help="native: a plain shoe that reads no card; it sends a draw (protocol 1.1) for each card out, and "
        "the table takes the card from the shuffled order (with --shuffler, the shoe it shuffled)",
    )
    p.add_argument("--truth", metavar="FILE",
                   help="write the ground truth as JSON lines to FILE, a new file (one already there is refused)")
    f = p.add_argument_group("link faults")
    f.add_argument("--garbage", type=cli.rate, default=0.0, metavar="RATE", help="per frame: random bytes before it")
    f.add_argument("--ber", type=cli.rate, default=0.0, metavar="RATE", help="bit error rate: per bit, flipped")
    f.add_argument("--lose", type=cli.rate, default=0.0, metavar="RATE", help="per frame: not sent")
    f.add_argument("--repeat", type=cli.rate, default=0.0, metavar="RATE", help="per frame: sent twice")
    dis = f.add_mutually_exclusive_group()
    dis.add_argument("--disconnect-every", type=cli.seconds, metavar="SECONDS", help="unplug the link this often")
    dis.add_argument(
        "--disconnect-at", type=_card_numbers, metavar="CARD,...", help="unplug after these cards (counted from 1)"
    )
    f.add_argument(
        "--reconnect-after",
        type=cli.seconds,
        default=0.5,
        metavar="SECONDS",
        help="how long the link stays unplugged (default 0.5)",
    )
    d = p.add_argument_group("dealing faults")
    d.add_argument(
        "--unreadable", type=cli.rate, default=0.0, metavar="RATE", help="per card: the reader cannot identify it"
    )
    d.add_argument(
        "--extra-card", type=cli.rate, default=0.0, metavar="RATE", help="per coup: one card too many after it is complete"
    )
    d.add_argument(
        "--missing-card",
        type=cli.rate,
        default=0.0,
        metavar="RATE",
        help="per coup: confirm pressed while the last card is due",
    )
    d.add_argument(
        "--foreign-card",
        type=cli.rate,
        default=0.0,
        metavar="RATE",
        help="per game card: a card from another deck slips in",
    )
    t = p.add_argument_group("following the table (a careful dealer: shoed/simulate/follow.py)")
    t.add_argument("--follow", metavar="EVENTS,SNAPSHOT,COMMANDS",
                   help="the daemon's three endpoints: correct misdeals, confirm again after a refused confirm, "
                        "and stop dealing a coup the table voided, as the table asks")
    t.add_argument("--resume", metavar="FILE",
                   help="do not put a new shoe in: go on with the shoe the table has open, as this JSON file "
                        "says (written by the daemon for its built-in virtual shoe: shoed/simulate/resume.py)")
    t.add_argument("--follow-table", default="t1", metavar="ID", help="the table to follow (default t1)")
    t.add_argument("--key", metavar="FILE", help="this dealer's secret key file, for the command endpoint "
                   "(without --key and --server-key, commands go without CURVE: a lab bench's endpoint, "
                   "curve_commands = false)")
    t.add_argument("--server-key", metavar="FILE", help="the daemon's public key file")
    s = p.add_argument_group("card-reading shuffler (protocol 1.1)")
    s.add_argument(
        "--shuffler",
        action="store_true",
        help="also run a virtual card-reading shuffler on its own pty (second line of output): it shuffles "
        "each shoe, reports it, and the virtual shoe deals exactly what it shuffled, cut by the dealer",
    )
    s.add_argument("--shuffler-link", metavar="PATH", help="keep a symlink PATH pointing at the shuffler's pty")
    s.add_argument("--shuffler-listen", metavar="socket://HOST:PORT", help="serve the shuffler on a TCP port")
    s.add_argument(
        "--shuffler-faults",
        type=_shuffler_faults,
        default=frozenset(),
        metavar="FAULT,...",
        help="seeded shuffler faults: missing-card, foreign-card, jam, lose-link (the link lost mid-order), "
        "weak-shuffle (one riffle of the previous shoe; needs shoe 2 or later); and at the table, the shoe dealt "
        "not the shoe shuffled: switch-card, remove-card, insert-card, swap-cards (two cards out of order)",
    )
    s.add_argument(
        "--shuffler-fault-shoe", type=cli.positive_int, default=1, metavar="N", help="the shoe the faults go into (default 1)"
    )
    p.set_defaults(func=run)


def _shuffler_faults(text: str) -> frozenset[str]:
    from shoed.simulate.shuffler import FAULTS

    names = frozenset(part.strip() for part in text.split(",") if part.strip())
    unknown = sorted(names - set(FAULTS))
    if unknown:
        raise argparse.ArgumentTypeError(f"unknown shuffler fault {', '.join(unknown)}: choose from {', '.join(FAULTS)}")
    return names


def _follow_endpoints(args) -> list[str] | None:
    """--follow's three endpoints, each checked as the daemon's configuration checks one
    (shoed.daemon.config.endpoint_problem), before anything starts."""
    from shoed.cli import CommandError
    from shoed.daemon.config import endpoint_problem

    if not args.follow:
        return None
    parts = args.follow.split(",")
    if len(parts) != 3 or not all(parts):
        raise CommandError(f"--follow {args.follow!r}: write EVENTS,SNAPSHOT,COMMANDS (the daemon's endpoints)")
    for part in parts:
        problem = endpoint_problem(part, bind=False)
        if problem is not None:
            raise CommandError(f"--follow: endpoint {part!r}: {problem}")
    if bool(args.key) != bool(args.server_key):
        raise CommandError("--key and --server-key go together")
    return parts


def _follower(args, shoe):
    from shoed.simulate.follow import TableFollower

    parts = _follow_endpoints(args)
    if parts is None:
        return None
    return TableFollower(shoe, args.follow_table, *parts, key_file=args.key, server_key_file=args.server_key)


def _resume(path: str | None) -> dict | None:
    import json

    from shoed.cli import CommandError
    from shoed.simulate.resume import ResumeError, check_resume

    if path is None:
        return None
    from shoed.files import read_regular

    try:
        return check_resume(json.loads(read_regular(path, RESUME_MAX)))
    except OSError as exc:
        raise CommandError(f"--resume {path}: {exc.strerror or exc}") from None
    except (ValueError, ResumeError) as exc:
        raise CommandError(f"--resume {path}: {exc}") from None


def run(args) -> int:
    import os
    import signal
    import sys
    import threading

    from shoed.cli import CommandError
    from shoed.rules.ruleset import RulesetError
    from shoed.simulate import DealError, FaultPlan, FaultPlanError, SimulatorError, VirtualShoe
    from shoed.simulate.link import LinkError

    if args.disconnect_every is not None and args.disconnect_every <= 0:
        raise CommandError("--disconnect-every is a number of seconds above 0")
    if args.plain and args.protocol != "native":
        raise CommandError("--plain is a shoe of the native protocol 1.1: leave out --protocol beetek")
    if args.shuffler and args.shoes == 0:
        raise CommandError("--shuffler shuffles a set number of shoes: give --shoes 1 or more")
    if not args.shuffler:
        for given, option in ((args.shuffler_faults, "--shuffler-faults"), (args.shuffler_link, "--shuffler-link"),
                              (args.shuffler_listen, "--shuffler-listen")):
            if given:
                raise CommandError(f"{option} is the virtual shuffler's: give --shuffler too")
    if args.gate is not None and args.protocol != "native":
        raise CommandError("--gate is the native shoe's card gate (a Bee-Tek shoe has none): leave out "
                           "--protocol beetek")
    if args.truth is not None and os.path.lexists(args.truth) and not is_stream(args.truth):
        raise CommandError(f"--truth {args.truth} already exists: it is never overwritten; name a new file")
    _follow_endpoints(args)
    shuffler = None
    try:
        plan = FaultPlan(
            garbage=args.garbage,
            ber=args.ber,
            lose=args.lose,
            repeat=args.repeat,
            disconnect_every=args.disconnect_every,
            disconnect_at=args.disconnect_at or (),
            reconnect_after=args.reconnect_after,
            unreadable=args.unreadable,
            extra_card=args.extra_card,
            missing_card=args.missing_card,
            foreign_card=args.foreign_card,
        )
        orders: tuple[tuple[str, ...], ...] = ()
        if args.shuffler:
            from shoed.rules.ruleset import load_ruleset
            from shoed.simulate.shuffler import ShufflerFaults, VirtualShuffler, shuffle_run

            import secrets

            # One seed for both devices, so that the shoe's truth and the shuffler's agree.
            seed = args.seed if args.seed is not None else secrets.randbits(32)
            args.seed = seed
            decks = args.decks or load_ruleset(args.ruleset).decks
            shuffled = shuffle_run(seed, decks, args.shoes, ShufflerFaults(args.shuffler_faults,
                                                                            args.shuffler_fault_shoe))
            orders = shuffled.dealt_orders
            shuffler = VirtualShuffler(shuffled, link=args.shuffler_link, listen=args.shuffler_listen)
        shoe = VirtualShoe(
            ruleset=args.ruleset,
            protocol=args.protocol,
            seed=args.seed,
            pace=args.pace,
            faults=plan,
            shoes=args.shoes,
            link=args.link,
            listen=args.listen,
            decks=args.decks,
            cut_from_end=args.cut,
            serial=args.serial,
            truth_file=args.truth,
            gate=args.gate or "locked",
            orders=orders,
            resume=_resume(args.resume),
            # The shoes go in once the shuffler has reported (and the host recorded) their shuffles.
            ready=(lambda: shuffler.done) if shuffler is not None else None,
            plain=args.plain,
            keep_truth=False,  # the truth file has every event: a shoe without end holds none in memory
        )
        follower = _follower(args, shoe)
        if follower is not None:
            # The dealer looks at the table before the first card (and the shuffler, if any, has reported).
            after = shoe.ready
            shoe.ready = lambda: follower.watching.is_set() and (after is None or after())
            shoe.may_remove = follower.shoe_finished
            shoe.confirm_waits = True
        address = shoe.start()
        try:
            shuffler_address = shuffler.start() if shuffler is not None else None
        except BaseException:
            shoe.stop()
            raise
    except (RulesetError, FaultPlanError, DealError, SimulatorError, LinkError) as exc:
        raise CommandError(str(exc)) from None
    except OSError as exc:
        raise CommandError(f"cannot start the virtual shoe: {exc}") from None

    print(address, flush=True)
    if shuffler_address is not None:
        print(shuffler_address, flush=True)
    print(
        f"shoed simulate: {shoe.setup.ruleset.name}, {shoe.setup.deck_count} decks, {f'{args.shoes} shoe(s)' if args.shoes else 'shoes without end'}, "
        f"{args.protocol}{' plain (draws)' if args.plain else ''}, seed {shoe.seed}, boot {shoe.boot:08x}",
        file=sys.stderr,
        flush=True,
    )

    stopping = threading.Event()

    def on_signal(signum, frame):
        stopping.set()

    previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
    if follower is not None:
        follower.start()
    try:
        while not stopping.is_set():
            if shoe.wait_done(0.2) and (shuffler is None or shuffler.wait_done(0.2)):
                if args.protocol == "beetek":
                    stopping.wait(0.5)  # no acknowledgements: give the reader time to drain the line
                break
    except SimulatorError as exc:
        raise CommandError(str(exc)) from None
    finally:
        if follower is not None:
            follower.stop()
        failed = []
        for device in (shoe, shuffler):
            try:
                if device is not None:
                    device.stop()
            except SimulatorError as exc:  # its truth file could not be written to the end
                failed.append(str(exc))
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        if failed:
            raise CommandError(failed[0])
    status = "done" if shoe.done else "stopped"
    stats = shoe.link_stats
    print(
        f"shoed simulate: {status} after {shoe.events_out} events ({shoe.cards_out} cards); link: {stats.frames} frames, "
        f"{stats.lost} lost, {stats.repeated} repeated, {stats.corrupted_frames} corrupted, "
        f"{stats.garbage_bytes} garbage bytes, {stats.disconnects} unplugs",
        file=sys.stderr,
        flush=True,
    )
    return 0
