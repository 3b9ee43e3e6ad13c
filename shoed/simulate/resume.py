"""Where the virtual shoe resumes its deal: the table's shoe and coup, as the journal left them.

A shoe that stays in while the daemon restarts goes on dealing the coup in progress. The
built-in virtual shoe is a process of the daemon's own, so it stops with the daemon; started
again, it resumes from what the rebuilt table says instead of putting a new shoe in:

- the cards left in the shoe, by identity (what was not seen yet), in a new order: the journal
  does not know the order of the cards still in the shoe, and nothing the table checks does;
- the burn, if it is not over; the cut card, if it is out, and the last coup;
- the coup in progress: the cards dealt so far, to whom, and the players' decisions, so that
  the next card is the one the tableau calls for; a complete or void coup waits for its confirm.

`resume_state(controller)` is the shell's side (a JSON object, written to the file that
`shoed simulate --resume FILE` reads); `check_resume(obj)` checks such an object, one clear
line for anything wrong. A table with no shoe open (or a closed one) resumes nothing: None.
"""

from __future__ import annotations

from typing import Any

from shoed.rules.cards import CardError, parse_card

PHASES = ("burn_first", "burning", "dealing", "finished")
COUP_STATES = ("none", "open", "complete", "void")


class ResumeError(ValueError):
    """The resume file is not one the virtual shoe can deal from (the message says why)."""


def resume_state(controller) -> dict[str, Any] | None:
    """The table's shoe and coup in progress, for the virtual shoe to resume; None with no shoe open."""
    shoe = controller.shoe
    if shoe is None or shoe.phase not in PHASES:
        return None
    left = [card for card, n in shoe.reconcile()["left_by_identity"].items() for _ in range(n)]
    coup = controller.coup
    state = controller.coup_state if coup is not None else "none"
    return {
        "phase": shoe.phase,
        "burn_due": shoe.burn_due,
        "left": left,
        "cut_card": shoe.cut_card_seen,
        "last_coup": shoe.last_coup,
        "coup": controller.coup_no,
        "coup_state": state,
        "player": [str(c) for c in coup.player] if coup is not None else [],
        "banker": [str(c) for c in coup.banker] if coup is not None else [],
        "order": list(coup.order) if coup is not None else [],
        "decisions": [[side, bool(draws)] for side, draws in coup.decisions] if coup is not None else [],
    }


def check_resume(obj: Any) -> dict[str, Any]:
    """The resume object, checked: ResumeError with one line naming what is wrong."""
    if not isinstance(obj, dict):
        raise ResumeError("the resume state is a JSON object")
    if obj.get("phase") not in PHASES:
        raise ResumeError(f"phase is one of {', '.join(PHASES)}, not {obj.get('phase')!r}")
    if obj.get("coup_state") not in COUP_STATES:
        raise ResumeError(f"coup_state is one of {', '.join(COUP_STATES)}, not {obj.get('coup_state')!r}")
    for name in ("burn_due", "coup"):
        if not isinstance(obj.get(name), int) or isinstance(obj.get(name), bool) or obj[name] < 0:
            raise ResumeError(f"{name} is a whole number, 0 or more, not {obj.get(name)!r}")
    if obj.get("last_coup") is not None and (not isinstance(obj["last_coup"], int) or obj["last_coup"] < 1):
        raise ResumeError(f"last_coup is a coup number or null, not {obj['last_coup']!r}")
    for name in ("left", "player", "banker"):
        cards = obj.get(name)
        if not isinstance(cards, list):
            raise ResumeError(f"{name} is a list of cards")
        try:
            [parse_card(text) for text in cards]
        except (CardError, TypeError, ValueError) as exc:
            raise ResumeError(f"{name}: {exc}") from None
    order = obj.get("order")
    if not isinstance(order, list) or any(who not in ("player", "banker") for who in order) \
            or order.count("player") != len(obj["player"]) or order.count("banker") != len(obj["banker"]):
        raise ResumeError("order names the player or the banker for each card dealt in the coup")
    decisions = obj.get("decisions")
    if not isinstance(decisions, list) or any(
            not isinstance(d, list) or len(d) != 2 or d[0] not in ("player", "banker") or not isinstance(d[1], bool)
            for d in decisions):
        raise ResumeError("decisions is a list of [side, draws] pairs")
    return obj
