"""Short journals of the cases a new behaviour (shoed.table.controller.BEHAVIOUR) takes otherwise.

Each case is a script of inputs fed through the table controller and written by the real `Journal` as the
daemon writes it: a shoe's file starts with a checkpoint, and where the step that opened the shoe dealt at
once (a card opening the next shoe at a table with auto_confirm), with the table as it was before that step.
Recorded under the behaviour before the change, the journals are kept (`behaviour-N-cases/`) and
`tests/test_behaviour.py` replays them byte for byte, as surveillance replays a journal an earlier version
wrote; the same scripts under the newest behaviour are tested there too (`pending_at_close` is only that:
under behaviour 2 a shoe's misdeal outlived the shoe, and a card entered for it after the shoe was gone
opened the next shoe, which the next shoe's file, starting from a checkpoint without it, does not replay).

    python -m tests.corpus.cases DIR [NAME ...]   # write the cases' journals into DIR/<name>/
    python -m tests.corpus.cases --behaviour 3 DIR NAME   # under an earlier behaviour the controller keeps
"""

from __future__ import annotations

import sys
from datetime import UTC, datetime
from pathlib import Path

TABLE = "t1"
START_NS = 1_767_225_600_000_000_000  # 2026-01-01T00:00:00Z
SHOE = "native:/dev/shoe"
BEETEK = "beetek:/dev/ttyUSB0"


def _card(card: str, mode: str, source: str = SHOE) -> dict:
    return {"kind": "card", "card": card, "mode": mode, "source": source}


def _pit(cmd: str, **args) -> dict:
    return {"kind": "command", "cmd": cmd, "args": args, "client": "pit-console", "role": "pit"}


# name -> (what it shows, auto_confirm, the inputs)
CASES: dict[str, tuple[str, bool, list[dict]]] = {
    "pending_at_close": (
        "an unreadable card's misdeal open when the shoe is removed; enter_card after it", True,
        [*(_card(c, "burn") for c in ("2H", "3C", "4C")), *(_card(c, "game") for c in ("9S", "9D", "KS", "KD")),
         {"kind": "unreadable", "mode": "game", "code": "no_index", "source": SHOE},
         {"kind": "shoe_removed", "source": SHOE}, _pit("enter_card", card="5H"), _card("6D", "burn")]),
    "void_burn_during_coup": (
        "a card read in burn mode while a coup card is due (burn_during_coup), then the coup voided", False,
        [{"kind": "shoe_inserted", "source": SHOE}, _card("AH", "burn"), _card("3C", "burn"), _card("9S", "game"),
         _card("4D", "burn"), _pit("void", reason="card exposed"), _pit("confirm"), _pit("close_shoe")]),
    "end_burn_after_unread": (
        "two game cards while the burn is due, the first unread (two burn_short); end_burn on each, oldest first",
        True,
        [_card("AH", "burn", BEETEK), {"kind": "unreadable", "mode": "game", "code": "no_mode", "source": BEETEK},
         _card("9S", "game", BEETEK), _pit("end_burn"), _pit("end_burn"), _pit("enter_card", card="2D"),
         _pit("burn_card"), _card("KD", "game", BEETEK)]),
    "locked_unread_burn": (
        "an unreadable burn card while the table is held (an integrity lock)", False,
        [{"kind": "shoe_inserted", "source": SHOE}, _card("AH", "burn"),
         {"kind": "integrity", "text": "the shoe's stream could not be verified"},
         {"kind": "unreadable", "mode": "burn", "code": "no_index", "source": SHOE}, _pit("unlock"),
         _card("9S", "game"), _card("9D", "game")]),
    "confirm_without_coup": (
        "confirm pressed while the burn is due, and again after the shoe's last coup was confirmed", False,
        [{"kind": "shoe_inserted", "source": SHOE}, _pit("confirm"), _card("AH", "burn"),
         {"kind": "button", "button": "confirm", "source": SHOE}, _card("3C", "burn"),
         {"kind": "cut_card", "source": SHOE}, *(_card(c, "game") for c in ("9S", "9D", "KS", "KD")),
         _pit("confirm"), _pit("confirm"), {"kind": "button", "button": "confirm", "source": SHOE},
         _pit("close_shoe")]),
    "two_unread_entered_unnamed": (
        "two unreadable cards waiting, the newest entered without naming its misdeal, then each named", False,
        [{"kind": "shoe_inserted", "source": SHOE}, _card("AH", "burn"), _card("3C", "burn"),
         {"kind": "unreadable", "mode": "game", "code": "no_index", "source": SHOE},
         {"kind": "unreadable", "mode": "game", "code": "no_index", "source": SHOE},
         _pit("enter_card", card="9D"), _pit("enter_card", card="9S", misdeal=1), _pit("enter_card", card="9D",
                                                                                    misdeal=2),
         _card("KS", "game"), _card("KD", "game")]),
}


def feed_case(table, inputs: list[dict], on_step=None) -> list[dict]:
    """Feed the inputs, one second apart, through `table`; every event. `on_step(item, step, before)` is
    called with the checkpoint record taken before a step between shoes (None otherwise)."""
    from shoed.table.replay import checkpoint_record

    events: list[dict] = []
    for n, item in enumerate(inputs, start=1):
        item = {**item, "mono_ns": n * 1_000_000_000, "utc_ns": START_NS + n * 1_000_000_000}
        before = checkpoint_record(table) if on_step is not None and table.between_shoes else None
        step = table.feed(item)
        events += step.events
        if on_step is not None:
            on_step(item, step, before)
    return events


def new_table(auto_confirm: bool, behaviour: int | None = None):
    from shoed.rules.ruleset import load_ruleset
    from shoed.table import TableController

    ruleset = load_ruleset("punto-banco")
    more = {} if behaviour is None else {"behaviour": behaviour}
    return TableController(TABLE, ruleset, ruleset.decks, auto_confirm=auto_confirm, **more)


def record_case(name: str, directory: Path, behaviour: int | None = None) -> None:
    """Write case `name`'s journal into `directory`, as the daemon would (shoed.daemon.loop.TableLoop.handle)."""
    from shoed.journal import Journal
    from shoed.table.replay import checkpoint_record
    from tests.corpus.record import journal_step

    what, auto_confirm, inputs = CASES[name]
    table = new_table(auto_confirm, behaviour)
    now = [START_NS]
    journal = Journal(directory, TABLE, clock=lambda: datetime.fromtimestamp(now[0] / 1e9, UTC))
    journal.open_shoe("table", first=[checkpoint_record(table)])

    def on_step(item: dict, step, before: dict | None) -> None:
        now[0] = item["utc_ns"]
        journal_step(journal, table, item, step, before)

    feed_case(table, inputs, on_step)
    journal.close()
    for mark in directory.glob("*.verified"):  # the box's own state (inodes, times), not the journal's record
        mark.unlink()
    (directory / "CASE").write_text(f"{what}. Written by shoed under behaviour {table.behaviour} "
                                    f"(tests/corpus/cases.py); replayed by tests/test_behaviour.py.\n")


def main(argv: list[str]) -> int:
    behaviour = None
    if argv[:1] == ["--behaviour"] and len(argv) > 1:
        behaviour, argv = int(argv[1]), argv[2:]
    if not argv:
        print(__doc__)
        return 2
    root = Path(argv[0])
    for name in argv[1:] or list(CASES):
        (root / name).mkdir(parents=True, exist_ok=False)
        record_case(name, root / name, behaviour)
        print(f"{name}: {root / name}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
