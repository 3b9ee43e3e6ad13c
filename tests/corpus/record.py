"""The corpus of recorded journals: whole shoes of every kind the table meets, as the daemon journals them.

Each scenario is a deterministic script of inputs (the virtual dealer's shoes, with dealing faults,
a pit that corrects every misdeal, Royal decisions, failover between a shoe and a camera, live odds,
power off and on) fed through the table controller and written by the real `Journal`, one file per
shoe, as the daemon writes it. `tests/corpus/test_corpus.py` replays every journal and requires each
replayed event to be byte for byte the recorded one (gpsd's regression logs).

A change of behaviour made on purpose records the corpus again in the same commit, and the
CHANGELOG says what changed:

    python -m tests.corpus.record            # rewrite tests/corpus/journals/
    python -m tests.corpus.record --check    # exit 1 if recording now gives other bytes
    python -m tests.corpus.record --behaviour 3 shuffler   # a scenario added later, as behaviour 3 takes it,
                                                           # into journals-behaviour-3/

A scenario with a card-reading shuffler seals its orders under ORDER_KEY (a replay opens them with it).
"""

from __future__ import annotations

import argparse
import hashlib
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent
JOURNALS = HERE / "journals"
TABLE = "t1"
SHOE, CAMERA = "native:/dev/shoe-native", "camera:/dev/shoe-camera"
SHUFFLER = "shuffler:/dev/shuffler"
# The order key of the scenarios with a card-reading shuffler: their checkpoints hold the order sealed under it,
# and a replay opens it with it (shoed journal replay --order-key-file).
ORDER_KEY = bytes(range(50, 82))
START_NS = 1_767_225_600_000_000_000  # 2026-01-01T00:00:00Z
STEP_NS = 1_500_000_000


@dataclass(frozen=True)
class Scenario:
    name: str
    ruleset: str
    what: str
    seed: int
    shoes: int = 1
    faults: dict | None = None
    cut_from_end: int | None = None  # None: the ruleset's default (a whole shoe)
    camera: bool = False  # a camera over the shoe's exit; the shoe is lost for a stretch
    odds: bool = True
    void_coups: tuple[int, ...] = ()  # the pit voids these coups (counted over the run) once complete
    shuffler: bool = False  # a card-reading shuffler verifies each shoe's shuffle before the shoe goes in
    switched: tuple[int, int] | None = None  # (shoe, card): that card out of that shoe is not the shuffled order's
    plain: bool = False  # the shoe reads no card: each card out is a draw, and a camera over its exit reads it


SCENARIOS = (
    Scenario("punto-banco", "punto-banco", "two whole 6-deck shoes, live odds, a power cycle between them",
             seed=11, shoes=2),
    Scenario("macau-faults", "macau-statutory", "8 decks with every dealing fault, each corrected by the pit",
             seed=12, faults={"extra_card": 0.08, "missing_card": 0.06, "unreadable": 0.02, "foreign_card": 0.01},
             void_coups=(7, 19)),
    Scenario("royal-decisions", "baccarat-royal", "Baccarat Royal: the players' draw-or-stand decisions",
             seed=13, faults={"extra_card": 0.05}),
    Scenario("mini-luzern", "mini-baccarat-luzern", "mini baccarat, a short shoe (early cut card)",
             seed=14, shoes=2, cut_from_end=None),
    Scenario("austria-failover", "macau-casinos-austria", "a camera over the shoe's exit takes over while the "
             "shoe is lost, and gives back", seed=15, camera=True, cut_from_end=150),
    Scenario("shuffler", "macau-statutory", "a card-reading shuffler verifies two shoes' shuffles; each shoe opens with "
             "its commitment, every card is checked against the shuffled order, a card switched in the second "
             "shoe holds its coup for the pit's void, each shoe closes with its reveal", seed=16, shoes=2,
             cut_from_end=300, shuffler=True, switched=(2, 60)),
    Scenario("shuffler-plain-shoe", "macau-statutory", "a plain shoe that reads no card: each card out is a draw "
             "that takes its identity from the verified shuffle once the cut is found, a camera over the shoe's "
             "exit checks each, and a card switched in the shoe is caught by the camera and voided", seed=17,
             cut_from_end=300, shuffler=True, plain=True, switched=(1, 100)),
)


class _Clock:
    def __init__(self) -> None:
        self.i = 0

    def stamp(self, item: dict) -> dict:
        self.i += 1
        return {**item, "mono_ns": 1_000_000_000 + self.i * STEP_NS, "utc_ns": START_NS + self.i * STEP_NS}


def _shoe_inputs(scenario: Scenario) -> Iterator[dict]:
    """The virtual dealer's shoe events as driver readings (no times yet)."""
    from shoed.rules.ruleset import load_ruleset
    from shoed.simulate.dealer import DealSetup, deal
    from shoed.simulate.faults import FaultPlan

    ruleset = load_ruleset(scenario.ruleset)
    reports: dict[int, list[dict]] = {}  # a shuffler's reports of each shoe, as its driver gives them
    orders: tuple[tuple[str, ...], ...] = ()
    if scenario.shuffler:
        from shoed.drivers.native_session import shuffler_detail
        from shoed.rules.shuffle import sealed_detail
        from shoed.simulate.shuffler import shuffle_run

        run = shuffle_run(scenario.seed, decks=ruleset.decks, shoes=scenario.shoes)
        for k, event in enumerate(run.events, start=1):
            detail = sealed_detail(ORDER_KEY, event.kind, {"boot": 1, **shuffler_detail(event.message)})
            reports.setdefault(event.shoe, []).append({"kind": event.kind, "source": SHUFFLER, "shoe_seq": k,
                                                       "detail": detail})
        dealt = [list(order) for order in run.dealt_orders]
        if scenario.switched is not None:
            shoe, at = scenario.switched
            cards = dealt[shoe - 1]
            cards[at] = next(c for c in ("AS", "KD", "7C") if c not in (cards[at], cards[at + 1]))
        orders = tuple(tuple(cards) for cards in dealt)
    setup = DealSetup(ruleset, seed=scenario.seed, shoes=scenario.shoes, cut_from_end=scenario.cut_from_end,
                      faults=FaultPlan(**(scenario.faults or {})), orders=orders)
    for n, e in enumerate(deal(setup), start=1):
        yield from reports.pop(e.shoe, [])  # the shuffle verified before its shoe goes in
        item: dict = {"kind": e.kind, "source": SHOE, "shoe_seq": n}
        if e.kind == "shoe_inserted" and scenario.shuffler:  # the daemon journals a fresh nonce with it
            item["salt_nonce"] = hashlib.sha256(f"corpus {scenario.name} shoe {e.shoe}".encode()).hexdigest()
        if e.kind == "card" and scenario.plain:  # the shoe tells only that a card came out; a camera reads it
            item |= {"kind": "draw", "mode": e.mode, "truth": e.card}
        elif e.kind == "card":
            item |= {"card": e.card, "mode": e.mode, "confidence": 1.0}
        elif e.kind == "unreadable":
            item |= {"mode": e.mode, "code": "no_index", "truth": e.card}
        elif e.kind == "button":
            item["button"] = e.button
        elif e.kind == "alarm":
            item |= {"code": str(e.code), "text": e.text}
        yield item


def journal_step(journal, table, item: dict, step, before: dict | None) -> None:
    """Journal one step as the daemon does (shoed.daemon.loop.TableLoop.handle): a shoe's file starts with a
    checkpoint; where the step that opened the shoe dealt at once (a card opening the next shoe at a table with
    auto_confirm), with `before`, the table as it was before that step (taken while it was between shoes)."""
    from shoed.table import StartShoeFile
    from shoed.table.replay import checkpoint_record, step_record

    opened = next((e for e in step.effects if type(e) is StartShoeFile), None)
    if opened is not None and before is not None and not table.checkpointable:
        journal.open_shoe(opened.shoe_id, first=[before])
        opened = None
    journal.append(step_record(item, step.events))
    if opened is not None:
        journal.open_shoe(opened.shoe_id, first=[checkpoint_record(table)])


def record(scenario: Scenario, directory: Path, behaviour: int | None = None) -> int:
    """Write the scenario's journal into `directory`; return the number of steps. `behaviour`: the table's
    (shoed.table.controller.BEHAVIOUR, the newest, unless given), and the power-on inputs ask for it."""
    from shoed.journal import FileOps, Journal
    from shoed.table.replay import checkpoint_record
    from shoed.rules.odds import live_odds
    from shoed.rules.ruleset import load_ruleset
    from shoed.table import TableController, WorkOutOdds
    from shoed.table.controller import BEHAVIOUR

    class NoSync(FileOps):  # the bytes are the same; the corpus is written once
        def fsync(self, fd: int) -> None:
            pass

    ruleset = load_ruleset(scenario.ruleset)
    behaviour = BEHAVIOUR if behaviour is None else behaviour
    table = TableController(TABLE, ruleset, ruleset.decks, order_key=ORDER_KEY if scenario.shuffler else None,
                            behaviour=behaviour)
    clock = _Clock()
    # The journal's file names and headers take the time of the input that opened the shoe.
    journal = Journal(directory, TABLE, ops=NoSync(),
                      clock=lambda: datetime.fromtimestamp((START_NS + clock.i * STEP_NS) / 1e9, UTC))
    journal.open_shoe("table", first=[checkpoint_record(table)])
    steps = 0
    coups_seen = 0
    sources = [SHOE, CAMERA] if scenario.camera or scenario.plain else [SHOE]

    def handle(item: dict) -> list[dict]:
        nonlocal steps
        item = clock.stamp(item)
        before = checkpoint_record(table) if table.between_shoes else None
        out = table.feed(item)
        journal_step(journal, table, item, out, before)
        steps += 1
        for effect in out.effects:  # as the daemon carries them out
            if isinstance(effect, WorkOutOdds) and scenario.odds:
                computed = live_odds(effect.ruleset, effect.composition)
                if computed is not None:
                    handle({"kind": "odds", "odds": computed})
        return out.events

    def command(cmd: str, **args) -> list[dict]:
        return handle({"kind": "command", "cmd": cmd, "args": args, "client": "pit-console"})

    def pit(events: Iterable[dict], truth: str | None) -> None:
        """A careful pit: corrects each misdeal as the ruleset allows, confirms after a void."""
        nonlocal coups_seen
        for e in list(events):
            if e["kind"] == "misdeal":
                entry = e["misdeal"]
                kind = entry["kind"]
                if kind == "sequence_mismatch":  # a card not the shuffled order's: the coup cannot stand
                    pit(command("void", reason="not the shuffled order's card"), None)
                elif kind == "unreadable_card" and truth and entry.get("correctable", True):
                    pit(command("enter_card", card=truth, misdeal=entry["id"]), None)
                elif kind != "missing_card" and entry.get("correctable", True):
                    # At a shuffler's table a card goes to the discard: put back, the order would wait for it again.
                    correction = "return_card" if entry["id"] % 2 and not scenario.shuffler else "burn_card"
                    pit(command(correction, misdeal=entry["id"]), None)
            elif e["kind"] == "alarm" and e["alarm"] == "sequence_mismatch" and e["active"] and e.get("mismatch"):
                # what was done to the shoe is known (substituted, removed, ...): the pit has seen to it
                pit(command("clear_alarm", alarm="sequence_mismatch"), None)
            elif e["kind"] == "coup.result":
                coups_seen += 1
                if coups_seen in scenario.void_coups:
                    pit(command("void", reason="card exposed"), None)

    handle({"kind": "power", "state": "on", "clean": True, "sources": sources, "recovery": [], "behaviour": behaviour})
    inputs = list(_shoe_inputs(scenario))
    shoes_done = 0
    lost_from = len(inputs) // 3 if scenario.camera else None
    lost_to = len(inputs) // 2 if scenario.camera else None
    for n, item in enumerate(inputs):
        truth = item.pop("truth", None)
        if item["kind"] == "draw":  # the camera reads each card as it lies after its draw
            pit(handle(item), truth)
            pit(handle({"kind": "card", "card": truth, "source": CAMERA, "mode": item["mode"], "confidence": 0.97}),
                truth)
            continue
        if scenario.camera:
            if n == lost_from:
                handle({"kind": "link", "link": "lost", "source": SHOE, "detail": {"error": "cable"}})
            if n == lost_to:
                handle({"kind": "link", "link": "connected", "source": SHOE, "detail": {}})
            if item["kind"] == "card":
                camera_read = {"kind": "card", "card": item["card"], "source": CAMERA, "mode": item["mode"],
                               "confidence": 0.97}
                if lost_from is not None and lost_from <= n < lost_to:
                    pit(handle(camera_read), truth)
                    continue  # the shoe is lost: only the camera saw this card
                pit(handle(camera_read), truth)
        events = handle(item)
        pit(events, truth)
        if any(e["kind"] == "shoe.closed" for e in events):
            shoes_done += 1
            if shoes_done < scenario.shoes and scenario.name == "punto-banco":
                handle({"kind": "power", "state": "off"})
                handle({"kind": "power", "state": "on", "clean": True, "sources": sources, "recovery": [],
                        "behaviour": behaviour})
    handle({"kind": "power", "state": "off"})
    journal.close()
    # The verified-up-to mark is the box's own state (inodes, times), not the journal's record.
    for mark in directory.glob("*.verified"):
        mark.unlink()
    return steps


def record_all(root: Path, scenarios: Iterable[Scenario] = SCENARIOS,
               progress: Callable[[str], None] = lambda _: None, behaviour: int | None = None) -> None:
    for scenario in scenarios:
        target = root / scenario.name
        if target.exists():
            shutil.rmtree(target)
        target.mkdir(parents=True)
        steps = record(scenario, target, behaviour)
        (target / "SCENARIO").write_text(f"{scenario.what}\nruleset {scenario.ruleset}, seed {scenario.seed}\n")
        progress(f"{scenario.name}: {steps} steps")


def same_bytes(a: Path, b: Path) -> list[str]:
    """Files that differ between two corpus trees (by relative path)."""
    names = sorted({p.relative_to(a) for p in a.rglob("*") if p.is_file()}
                   | {p.relative_to(b) for p in b.rglob("*") if p.is_file()})
    return [str(n) for n in names if not ((a / n).is_file() and (b / n).is_file()
                                          and (a / n).read_bytes() == (b / n).read_bytes())]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.corpus.record", description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="record into a scratch folder and compare")
    parser.add_argument("--behaviour", type=int, metavar="N",
                        help="record under an earlier behaviour, into journals-behaviour-N/ (a scenario added after "
                             "it: as that behaviour takes it)")
    parser.add_argument("names", nargs="*", metavar="NAME", help="these scenarios only (default: all)")
    args = parser.parse_args(argv)
    chosen = [s for s in SCENARIOS if not args.names or s.name in args.names]
    unknown = sorted(set(args.names) - {s.name for s in SCENARIOS})
    if unknown:
        parser.error(f"no scenario {', '.join(unknown)}; scenarios: {', '.join(s.name for s in SCENARIOS)}")
    if args.behaviour is not None:
        record_all(HERE / f"journals-behaviour-{args.behaviour}", chosen, print, args.behaviour)
        return 0
    if args.check:
        with tempfile.TemporaryDirectory() as scratch:
            record_all(Path(scratch), chosen)
            differ = [f"{s.name}/{n}" for s in chosen for n in same_bytes(JOURNALS / s.name, Path(scratch) / s.name)]
        for name in differ:
            print(f"differs: {name}")
        return 1 if differ else 0
    record_all(JOURNALS, chosen, progress=print)
    return 0


if __name__ == "__main__":
    sys.exit(main())
