"""`shoed rules list` and `shoed rules check`: the rules engine at the command line.

The JSON printed by `rules check --json` is a stable contract (tests outside
this repository read it): fields are added, never renamed.
"""

from __future__ import annotations

import json


def register(sub) -> None:
    rules = sub.add_parser("rules", help="list the rulesets, check a coup against one")
    rsub = rules.add_subparsers(dest="rules_command", metavar="ACTION")
    rsub.required = True

    lst = rsub.add_parser("list", help="the built-in rulesets")
    lst.add_argument("--json", action="store_true", help="one JSON object per ruleset, as a list")
    lst.set_defaults(func=run_list)

    chk = rsub.add_parser("check", help="deal cards into one coup and report its state")
    chk.add_argument("--ruleset", required=True, help="built-in ruleset name or path to a .toml file")
    chk.add_argument(
        "--decide",
        action="append",
        default=[],
        metavar="SIDE=draw|stand",
        help="an active player's free choice (Baccarat Royal), e.g. player=draw",
    )
    chk.add_argument("--closed", action="store_true", help="the dealer closed the coup after these cards")
    chk.add_argument("--json", action="store_true", help="print one JSON object (the contract)")
    chk.add_argument("cards", nargs="*", metavar="CARD", help="cards in draw order, e.g. 9H 10s TD KS")
    chk.set_defaults(func=run_check)


def run_list(args) -> int:
    from shoed.rules.ruleset import builtin_names, load_ruleset

    rulesets = [load_ruleset(name) for name in builtin_names()]
    if args.json:
        print(json.dumps([r.summary() for r in rulesets], indent=2))
    else:
        for r in rulesets:
            print(f"{r.name:24} {r.decks} decks  {r.title}  [{r.document or r.source}]")
    return 0


def parse_decisions(items: list[str]) -> list[tuple[str, bool]]:
    from shoed.cli import CommandError

    out = []
    for item in items:
        side, _, choice = item.partition("=")
        side, choice = side.strip().lower(), choice.strip().lower()
        if side not in ("player", "banker") or choice not in ("draw", "stand"):
            raise CommandError(f"bad --decide {item!r}: write player=draw, player=stand, banker=draw or banker=stand")
        out.append((side, choice == "draw"))
    return out


def run_check(args) -> int:
    from shoed.cli import CommandError
    from shoed.rules.cards import CardError, parse_card
    from shoed.rules.coup import Coup
    from shoed.rules.ruleset import RulesetError, load_ruleset

    try:
        ruleset = load_ruleset(args.ruleset)
        cards = [parse_card(text) for text in args.cards]
    except (RulesetError, CardError) as exc:
        raise CommandError(str(exc)) from None
    coup = Coup(ruleset)
    for side, draws in parse_decisions(args.decide):
        coup = coup.decide(side, draws)
    misdeal = None
    for card in cards:
        coup, misdeal = coup.deal(card)
        if misdeal is not None:
            break
    if misdeal is None and args.closed:
        misdeal = coup.close()
    report = coup.to_json()
    report["ruleset"] = ruleset.name
    report["misdeal"] = misdeal.to_json() if misdeal else None
    if args.json:
        print(json.dumps(report))
    else:
        print(_describe(report))
    return 0


def _describe(report: dict) -> str:
    lines = [
        f"Player {' '.join(report['player_cards']) or '-'} = {report['player_total']}",
        f"Banker {' '.join(report['banker_cards']) or '-'} = {report['banker_total']}",
    ]
    if report["complete"]:
        extra = ", natural" if report["natural"] else ""
        lines.append(f"complete: {report['winner']} wins{extra}")
        lines.append("settlement: " + ", ".join(f"{k} {v:+g}" for k, v in report["settlement"].items()))
    else:
        lines.append(f"next: {report['next']}")
    if report["misdeal"]:
        m = report["misdeal"]
        how = m["correction"] if m["correctable"] else "void"
        lines.append(f"MISDEAL {m['kind']} at card {m['card_index']}: {m['reason']} ({how})")
    return "\n".join(lines)
