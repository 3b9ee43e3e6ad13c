"""`shoed odds`: exact odds and house edge of every bet, for a full or partly dealt shoe.

The JSON printed with `--json` is a stable contract (tests outside this
repository read it): `combinations` holds exact integer counts (the published
six-card convention), `house_edge` one JSON float per bet. Keys are added,
never renamed; a figure that cannot be computed is left out, not null.
"""

from __future__ import annotations

import json


def register(sub) -> None:
    odds = sub.add_parser(
        "odds",
        help="exact odds and house edge of every bet, for a full shoe or what is left of one",
        description=(
            "Count every coup exactly (ordered six-card sequences, as the published tables do) "
            "and give each bet's house edge. Needs a ruleset with a fixed tableau."
        ),
    )
    odds.add_argument("--ruleset", required=True, help="built-in ruleset name or path to a .toml file")
    shoe = odds.add_mutually_exclusive_group()
    shoe.add_argument("--decks", type=int, help="a full shoe of this many decks (default: the ruleset's)")
    shoe.add_argument(
        "--remaining",
        metavar="SPEC",
        help=(
            "the cards left: 13 rank counts A,2,..,9,T,J,Q,K (e.g. 32,32,...,32), "
            "or ten value=count pairs 0=..,1=..,..,9=.. (0 = tens and faces; pair bets then unpriced)"
        ),
    )
    odds.add_argument("--json", action="store_true", help="print one JSON object (the contract)")
    odds.set_defaults(func=run)


def run(args) -> int:
    from shoed.cli import CommandError
    from shoed.rules import odds
    from shoed.rules.ruleset import RulesetError, load_ruleset

    try:
        ruleset = load_ruleset(args.ruleset)
        if args.remaining is not None:
            composition = odds.parse_remaining(_ascii_only(args.remaining))
            decks = None
        else:
            decks = ruleset.decks if args.decks is None else args.decks
            composition = odds.full_shoe(decks)
        counts = odds.exact_counts(ruleset, composition)
        expectation = odds.player_expectation(ruleset, counts)
    except (RulesetError, ValueError) as exc:
        raise CommandError(str(exc)) from None
    report = build_report(ruleset, composition, decks, counts, expectation, odds.unpriced_bets(ruleset, counts))
    if args.json:
        print(json.dumps(report))
    else:
        print(describe(report))
    return 0


def _ascii_only(spec: str) -> str:
    """`--remaining` as written: counts in the digits 0-9 only, as a card is written in ASCII only
    (another script's digits, such as the Arabic-Indic, are read by no count or card of shoed)."""
    for item in spec.split(","):
        if not item.isascii():
            written = item.strip(" \t")  # what is not ASCII is shown as it is (str.strip takes a no-break space)
            raise ValueError(f"--remaining: {written!r}: counts are written in the ASCII digits 0-9")
    return spec


def build_report(ruleset, composition, decks, counts, expectation, unpriced) -> dict:
    from shoed.rules.odds import RANKS

    report = {
        "ruleset": ruleset.name,
        "cards": counts.cards,
        "composition": _composition_json(composition, RANKS),
        "combinations": counts.to_json(),
        "probabilities": {
            name: float(counts.probability(name))
            for name in ("banker", "player", "tie", "banker_six", "natural", "player_pair", "banker_pair")
            if getattr(counts, name) is not None
        },
        "house_edge": {bet: float(-value) for bet, value in expectation.items()},
        "house_edge_exact": {bet: str(-value) for bet, value in expectation.items()},
        "player_expectation": {bet: float(value) for bet, value in expectation.items()},
    }
    if decks is not None:
        report["decks"] = decks
    if unpriced:
        report["unpriced"] = {bet: "pair bets need the remaining cards counted by rank, not by value" for bet in unpriced}
    return report


def _composition_json(composition, ranks: int) -> dict:
    from shoed.rules.cards import RANK_LETTERS

    if len(composition) == ranks:
        return {"by_rank": dict(zip(RANK_LETTERS, composition, strict=True))}
    return {"by_value": {str(v): n for v, n in enumerate(composition)}}


def describe(report: dict) -> str:
    combos, probs = report["combinations"], report["probabilities"]
    shoe = f"{report['decks']} decks, " if "decks" in report else "remaining shoe, "
    lines = [f"{report['ruleset']}: {shoe}{report['cards']} cards; coups counted as ordered six-card sequences", ""]
    width = max(len(f"{combos['total']:,}"), 12)
    lines.append(f"{'outcome':<14} {'combinations':>{width}}  probability")
    for name in ("banker", "player", "tie", "banker_six", "natural", "player_pair", "banker_pair"):
        if name in combos:
            lines.append(f"{name:<14} {combos[name]:>{width},}  {probs[name]:.8f}")
    lines.append(f"{'total':<14} {combos['total']:>{width},}")
    cards = ", ".join(f"{k} cards {v:,}" for k, v in combos["by_cards"].items())
    lines += [f"coups by cards: {cards}", ""]
    lines.append(f"{'bet':<14} {'house edge':>12}  {'player expectation':>18}")
    for bet, edge in report["house_edge"].items():
        lines.append(f"{bet:<14} {edge * 100:>11.6f}%  {report['player_expectation'][bet] * 100:>17.6f}%")
    for bet, reason in report.get("unpriced", {}).items():
        lines.append(f"{bet:<14} {'unpriced':>12}  ({reason})")
    return "\n".join(lines)
