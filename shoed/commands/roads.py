"""`shoed roads`: the scoreboard roads of a shoe from its results.

The JSON printed by `roads --json` is a stable contract (table displays and
tests outside this repository read it): fields are added, never renamed.
The roads themselves are computed in `shoed.rules.roads`; this module only
reads the arguments and prints.
"""

from __future__ import annotations

import json
import sys


def register(sub) -> None:
    p = sub.add_parser(
        "roads",
        help="scoreboard roads (bead plate, big road, derived roads, ask road) from a shoe's results",
        description=(
            "Compute the scoreboard roads of a shoe. RESULTS is one letter per coup, B, P or T, each "
            "optionally followed by b (banker pair), p (player pair), n (natural): e.g. BPTB or BbnPpT. "
            "Spaces are ignored; '-' reads the results from standard input."
        ),
    )
    p.add_argument("--json", action="store_true", help="print one JSON object (the contract)")
    p.add_argument("--rows", type=int, default=6, help="rows of the drawn grids (default 6)")
    p.add_argument("results", nargs="*", metavar="RESULTS", help="the shoe's results so far, e.g. BPTBBP")
    p.set_defaults(func=run)


# Coups read at most: a shoe of eight decks holds about 80, a day's shoes a few thousand
MAX_COUPS = 10_000
MAX_ROWS = 100  # rows of the drawn grids at most (a scoreboard has six)
STDIN_MAX = 1 << 20  # characters of results read from standard input at most


def run(args) -> int:
    from shoed.cli import CommandError
    from shoed.rules.roads import ResultsError, parse_results, roads
    from shoed.rules.stats import tally

    text = " ".join(args.results)
    if text.strip() == "-":
        text = sys.stdin.read(STDIN_MAX + 1)
        if len(text) > STDIN_MAX:
            raise CommandError(f"the results on standard input go on past {STDIN_MAX >> 20} MB: "
                               f"give one shoe's results, {MAX_COUPS:,} coups at most")
    if not 1 <= args.rows <= MAX_ROWS:
        raise CommandError(f"--rows must be 1 to {MAX_ROWS}, not {args.rows}")
    try:
        results = parse_results(text)
        if len(results) > MAX_COUPS:
            raise CommandError(f"{len(results):,} coups given: {MAX_COUPS:,} at most (a shoe holds about 80)")
        road = roads(results, rows=args.rows)
    except ResultsError as exc:
        raise CommandError(str(exc)) from None
    if args.json:
        report = road.to_json()
        report["tally"] = tally(road.results).to_json()
        print(json.dumps(report))
    else:
        print(render(road, tally(road.results)))
    return 0


def _grid(places, label, rows: int, width: int) -> list[str]:
    """Text lines of a grid: `label(place)` is the text of each cell."""
    cols = max((p.col for p in places), default=-1) + 1
    grid = [[" " * width] * cols for _ in range(rows)]
    for p in places:
        grid[p.row][p.col] = label(p).ljust(width)
    return ["|" + "".join(line).rstrip() for line in grid]


def render(road, counts) -> str:
    """The roads as text, for a terminal."""
    rows = road.rows
    lines = [
        (
            f"{counts.coups} coups: Banker {counts.banker}, Player {counts.player}, Tie {counts.tie}; "
            f"banker pairs {counts.banker_pairs}, player pairs {counts.player_pairs}, naturals {counts.naturals}"
        ),
        "",
        "Bead plate",
    ]
    beads = [(i % rows, i // rows, o.winner) for i, o in enumerate(road.results)]
    cols = (len(road.results) + rows - 1) // rows
    plate = [[" "] * cols for _ in range(rows)]
    for r, c, w in beads:
        plate[r][c] = w
    lines += ["|" + " ".join(line).rstrip() for line in plate]

    def cell_label(p):
        cell = road.big_road[p.column][p.index]
        ties = cell.ties
        return cell.winner + ("" if not ties else str(ties) if ties < 10 else "+")

    lines += ["", "Big road (digit: ties on the cell)"]
    if road.leading_ties:
        lines.append(f"ties before the first decision: {road.leading_ties}")
    lines += _grid(road.big_road_grid, cell_label, rows, 3)
    titles = {"big_eye_boy": "Big eye boy", "small_road": "Small road", "cockroach_pig": "Cockroach pig"}
    for name, title in titles.items():
        columns = road.derived(name)
        lines += ["", f"{title} (R red, B blue)"]
        lines += _grid(road.grid(name), lambda p, columns=columns: columns[p.column][p.index], rows, 2)
    lines.append("")
    for side in ("banker", "player"):
        marks = road.ask_road[side]
        said = ", ".join(f"{titles[name].lower()} {marks[name] or '-'}" for name in titles)
        lines.append(f"Ask road, if {side.capitalize()} next: {said}")
    return "\n".join(lines)
