"""What the table waits for: a card, a burn card, a decision, a confirm, a correction.

Every state the table can stop in is named here, with what ends it, so that
`status`, the snapshot and the displays say what the table waits for and since
when, and a wait longer than the configured `stall_after_s` raises the
`stalled` alarm (TableController._on_tick). Pure: reads the controller's state,
no clock (the time of a wait is the time of the input that began it).

    for          the table waits for                       what ends the wait
    unlock       the pit to clear an integrity lock        `unlock`
    shoe         a shoe (none is open)                     shoe in, or `open_shoe`
    burn         the exposed first card, then the burn     burn cards through the shoe
    card         the next card of the coup                 the card, dealt through the shoe
    decision     a free choice of the player or banker     decision buttons, or `decide`
    confirm      the dealer's confirm of a result or void  confirm button, or `confirm`
    correction   a misdeal to be corrected                 `burn_card`, `return_card`, `enter_card`,
                                                           `end_burn`, `decide`, or `void`
    close_shoe   the last coup is over                     shoe out, or `close_shoe`
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from shoed.table import controller as _table
from shoed.rules import misdeal as md
from shoed.rules.shoe import BURN_FIRST, BURNING, CLOSED, FINISHED

if TYPE_CHECKING:
    from shoed.table.controller import TableController

# Waits that raise the `stalled` alarm when they last too long. A table with no shoe is
# closed, not stalled; a locked table has its own alarm (`integrity`).
STALLS = frozenset({"burn", "card", "decision", "confirm", "correction", "close_shoe"})


def unlock_text(lock: str) -> str:
    """What a locked table waits for, in the dealer's words (`lock`: what locked it)."""
    return f"the pit to clear the lock ({lock})"


def what_table_waits_for(table: TableController) -> tuple[str, str]:
    """(for, text): what the table waits for, in the dealer's words."""
    if table.locked:
        return "unlock", unlock_text(table.locked)
    shoe = table.shoe
    if shoe is None or shoe.phase == CLOSED:
        return "shoe", "a shoe to be put in (or `open_shoe`)"
    for entry in table.pending:
        if entry["kind"] == md.MISSING_CARD:
            continue
        return "correction", f"misdeal {entry['id']} ({entry['kind']}) to be corrected: {entry['correction']}"
    for entry in table.pending:  # a missing card is corrected by dealing it, or by the decision it waits for
        if entry["correction"] == md.DECIDE:
            return "decision", f"the decision that misdeal {entry['id']} waits for"
        return "card", f"the missing card of misdeal {entry['id']}"
    if shoe.phase == BURN_FIRST:
        return "burn", "the exposed first card of the burn"
    if shoe.phase == BURNING:
        return "burn", f"{shoe.burn_due} more burn card(s)"
    state = table.coup_state
    if state == _table.OPEN and table.coup is not None:
        nxt = table.coup.next
        if nxt in ("player", "banker"):
            return "card", f"a card for the {nxt} (coup {table.coup_no})"
        if nxt and nxt.startswith("decision:"):
            return "decision", f"the {nxt.partition(':')[2]}'s decision (coup {table.coup_no})"
    if shoe.phase == FINISHED:
        return "close_shoe", "the shoe to be taken out: its last coup is over"
    if table.auto_confirm and state in (_table.COMPLETE, _table.VOID):
        return "card", "the first card of the next coup"
    if state == _table.COMPLETE:
        return "confirm", f"the dealer's confirm of the result of coup {table.coup_no}"
    if state == _table.VOID:
        return "confirm", f"the dealer's confirm of the void of coup {table.coup_no}: the next coup opens with it"
    return "confirm", "the dealer's confirm that opens the next coup"


def wait_key(table: TableController) -> tuple[Any, ...]:
    """Changes whenever the table moves on: a new wait, or progress in the same one (a card).
    One flat tuple: the lock, the coup's number and state, the shoe's id, phase, cards out and
    burn due, the coup's cards and decisions, the open misdeals. From behaviour 4 the cards out of the
    shoe, read or not: a face-down burn card identified later (a card-reading shuffler's order) is no
    card out and no event, so the wait goes on as every display saw it (behaviour 3 counted the cards
    seen, which such an identification moved)."""
    shoe = table.shoe
    coup = table.coup
    pending = table.pending
    ids = tuple([p["id"] for p in pending]) if pending else ()
    if shoe is None:
        return (table.locked, table.coup_no, table.coup_state, None, None, 0, 0, 0, 0, ids)
    out = shoe.cards_out if table.behaviour >= 4 else shoe.total_seen
    if coup is None:
        return (table.locked, table.coup_no, table.coup_state, shoe.shoe_id, shoe.phase, out, shoe.burn_due, 0, 0, ids)
    return (table.locked, table.coup_no, table.coup_state, shoe.shoe_id, shoe.phase, out, shoe.burn_due,
            len(coup.order), len(coup.decisions), ids)
