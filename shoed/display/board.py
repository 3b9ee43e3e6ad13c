"""A shoe's scoreboard laid out as shapes on a page: what `shoed report` draws.

Pure: `scoreboard(summary)` returns a Board, a size and a list of circles,
lines, rectangles and labels in pixels. `shoed.display.png` paints it with
Pillow and `shoed.display.html` writes it as inline SVG, so the PNG and the
web page show the same board, and its size is known before anything is drawn.

The roads follow shoed/rules/roads.py. Conventions of the drawing (also in
the legend at the bottom of the board):

- bead plate: a filled disc per coup, red Banker, blue Player, green Tie, with its letter;
- big road: a red or blue ring per decision; a green stroke across it for the ties
  counted on it (with their number when more than one);
- marks on both: banker pair a red dot top left, player pair a blue dot bottom
  right, natural a gold dot top right;
- derived roads: big eye boy rings, small road discs, cockroach pig strokes, red or blue.

Its size has a bound whatever the journal holds: each road shows at most its last MAX_COLUMNS
columns (a real shoe needs fewer; the road's title says how many are left out) and a label at
most LABEL_MAX characters.
"""

from __future__ import annotations

from dataclasses import dataclass

from shoed.display.summary import ShoeSummary
from shoed.rules.roads import DERIVED, roads

RED, BLUE, GREEN, GOLD = "#c62828", "#1565c0", "#2e7d32", "#f9a825"
INK, FAINT, GRID, PAPER = "#212121", "#616161", "#d6d6d6", "#ffffff"
COLOUR = {"B": RED, "P": BLUE, "T": GREEN}
MARK_COLOUR = {"R": RED, "B": BLUE}

CELL = 28  # bead plate and big road
SMALL = 14  # derived roads: half a cell, as on a table's board
MARGIN = 24
GAP = 28
MIN_WIDTH = 960
MAX_COLUMNS = 80  # of each road: an 8-deck shoe's bead plate takes about 14, its big road fewer than 60
LABEL_MAX = 300
TITLES = {"big_eye_boy": "Big eye boy", "small_road": "Small road", "cockroach_pig": "Cockroach pig"}


@dataclass(frozen=True, slots=True)
class Circle:
    cx: float
    cy: float
    r: float
    fill: str | None = None
    stroke: str | None = None
    width: float = 1.0


@dataclass(frozen=True, slots=True)
class Line:
    x1: float
    y1: float
    x2: float
    y2: float
    stroke: str
    width: float = 1.0


@dataclass(frozen=True, slots=True)
class Rect:
    x: float
    y: float
    w: float
    h: float
    fill: str | None = None
    stroke: str | None = None
    width: float = 1.0


@dataclass(frozen=True, slots=True)
class Label:
    x: float
    y: float
    text: str
    size: float = 14
    fill: str = INK
    anchor: str = "start"  # start: (x, y) is the top left; middle: the centre
    bold: bool = False


@dataclass(frozen=True, slots=True)
class Board:
    width: int
    height: int
    shapes: tuple
    background: str = PAPER


def _grid(x: float, y: float, cols: int, rows: int, cell: float) -> list:
    shapes: list = [Rect(x, y, cols * cell, rows * cell, fill="#fafafa", stroke=GRID)]
    for c in range(1, cols):
        shapes.append(Line(x + c * cell, y, x + c * cell, y + rows * cell, GRID))
    for r in range(1, rows):
        shapes.append(Line(x, y + r * cell, x + cols * cell, y + r * cell, GRID))
    return shapes


def _marks(cx: float, cy: float, cell: float, banker_pair: bool, player_pair: bool, natural: bool) -> list:
    d, r = cell * 0.3, cell * 0.11
    out = []
    if banker_pair:
        out.append(Circle(cx - d, cy - d, r, fill=RED, stroke=PAPER))
    if player_pair:
        out.append(Circle(cx + d, cy + d, r, fill=BLUE, stroke=PAPER))
    if natural:
        out.append(Circle(cx + d, cy - d, r, fill=GOLD, stroke=PAPER))
    return out


def _columns(places, minimum: int) -> int:
    return max(max((p.col for p in places), default=-1) + 1, minimum)


def _label(x: float, y: float, text: str, *args, **kw) -> Label:
    """A label cut to LABEL_MAX characters."""
    return Label(x, y, text if len(text) <= LABEL_MAX else text[:LABEL_MAX - 3] + "...", *args, **kw)


def _first(cols: int) -> int:
    """The first column drawn of a road of `cols` columns: only the last MAX_COLUMNS are."""
    return max(0, cols - MAX_COLUMNS)


def _left_out(title: str, first: int, cols: int) -> str:
    return title + (f" (the last {cols - first} of {cols} columns)" if first else "")


def scoreboard(summary: ShoeSummary, *, stats: bool = True) -> Board:
    """The board of one shoe: title, bead plate, big road, derived roads, and with
    `stats` the statistics, reconciliation and provenance underneath."""
    road = roads(summary.results)
    rows = road.rows
    shapes: list = []
    y: float = MARGIN
    shapes.append(_label(MARGIN, y, f"Table {summary.table} \u00b7 shoe {summary.shoe}", 22, bold=True))
    y += 32
    sub = [summary.ruleset or "ruleset ?", f"{summary.decks} decks" if summary.decks else None,
           f"opened {summary.opened_utc}" if summary.opened_utc else None,
           f"closed {summary.closed_utc} ({summary.close_reason})" if summary.closed_utc else "not closed"]
    shapes.append(_label(MARGIN, y, " \u00b7 ".join(s for s in sub if s), 14, FAINT))
    y += 32

    # Bead plate and big road, side by side.
    bead_all = _columns([], (len(road.results) + rows - 1) // rows)
    big_all = _columns(road.big_road_grid, 0)
    bead_first, big_first = _first(bead_all), _first(big_all)
    bead_cols = max(10, bead_all - bead_first)
    big_cols = max(24, big_all - big_first)
    bead_x, big_x = MARGIN, MARGIN + bead_cols * CELL + GAP
    shapes.append(Label(bead_x, y, _left_out("Bead plate", bead_first, bead_all), 15, bold=True))
    big_title = "Big road" + (f" ({road.leading_ties} ties before the first decision)" if road.leading_ties else "")
    shapes.append(Label(big_x, y, _left_out(big_title, big_first, big_all), 15, bold=True))
    y += 24
    shapes += _grid(bead_x, y, bead_cols, rows, CELL)
    shapes += _grid(big_x, y, big_cols, rows, CELL)
    for i, outcome in enumerate(road.results):
        if i // rows < bead_first:
            continue
        cx, cy = bead_x + (i // rows - bead_first + 0.5) * CELL, y + (i % rows + 0.5) * CELL
        shapes.append(Circle(cx, cy, CELL * 0.42, fill=COLOUR[outcome.winner]))
        shapes.append(Label(cx, cy, outcome.winner, 14, PAPER, "middle", bold=True))
        shapes += _marks(cx, cy, CELL, outcome.banker_pair, outcome.player_pair, outcome.natural)
    for p in road.big_road_grid:
        if p.col < big_first:
            continue
        cell = road.big_road[p.column][p.index]
        cx, cy = big_x + (p.col - big_first + 0.5) * CELL, y + (p.row + 0.5) * CELL
        shapes.append(Circle(cx, cy, CELL * 0.36, stroke=COLOUR[cell.winner], width=3))
        ties = cell.ties + cell.ties_before
        if ties:
            k = CELL * 0.36
            shapes.append(Line(cx - k, cy + k, cx + k, cy - k, GREEN, 3))
            if ties > 1:
                shapes.append(Label(cx, cy, str(ties), 11, GREEN, "middle", bold=True))
        shapes += _marks(cx, cy, CELL, cell.banker_pair, cell.player_pair, cell.natural)
    y += rows * CELL + 20
    width: float = big_x + big_cols * CELL + MARGIN

    # The derived roads, half size, abreast.
    x = MARGIN
    shapes_y = y + 24
    for name, _ in DERIVED:
        places = road.grid(name)
        columns = road.derived(name)
        every = _columns(places, 0)
        first = _first(every)
        cols = max(20, every - first)
        shapes.append(Label(x, y, _left_out(TITLES[name], first, every), 15, bold=True))
        shapes += _grid(x, shapes_y, cols, rows, SMALL)
        for p in places:
            if p.col < first:
                continue
            colour = MARK_COLOUR.get(columns[p.column][p.index], INK)
            cx, cy = x + (p.col - first + 0.5) * SMALL, shapes_y + (p.row + 0.5) * SMALL
            if name == "big_eye_boy":
                shapes.append(Circle(cx, cy, SMALL * 0.33, stroke=colour, width=2))
            elif name == "small_road":
                shapes.append(Circle(cx, cy, SMALL * 0.36, fill=colour))
            else:
                k = SMALL * 0.34
                shapes.append(Line(cx - k, cy + k, cx + k, cy - k, colour, 2.5))
        x += cols * SMALL + GAP
    width = max(width, x - GAP + MARGIN, MIN_WIDTH)
    y = shapes_y + rows * SMALL + 24

    if stats:
        y = _statistics(summary, shapes, y)
    y = _legend(shapes, y)
    return Board(int(width), int(y + MARGIN), tuple(shapes))


def statistics_lines(summary: ShoeSummary) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """(counts, reconciliation) as label and value, in the order they are shown."""
    c = summary.counts()
    decisions = c["banker"] + c["player"] or 1
    counts = [
        ("Coups dealt", str(c["coups"])),
        ("Results", str(c["results"])),
        ("Banker", f"{c['banker']} ({100 * c['banker'] / decisions:.1f}% of decisions)"),
        ("Player", f"{c['player']} ({100 * c['player'] / decisions:.1f}% of decisions)"),
        ("Tie", str(c["tie"])),
        ("Banker pairs", str(c["banker_pairs"])),
        ("Player pairs", str(c["player_pairs"])),
        ("Naturals", str(c["naturals"])),
        ("Voids", str(c["voids"]) + ("".join(f"; coup {v.coup}: {v.reason}, by {v.who}, {(v.utc or '')[11:19]}"
                                             for v in summary.voids))),
        ("Misdeals", f"{c['misdeals']} ({c['misdeals_corrected']} corrected)"),
        ("Burned", f"{c['burned']}" + (f" (first card {summary.burn_first})" if summary.burn_first else "")),
        ("Cut card", f"last coup {summary.last_coup}" if summary.last_coup is not None else "not seen"),
    ]
    rec = summary.reconciliation
    if rec is None:
        recon = [("Reconciliation", "none: the shoe is not closed in this journal")]
    else:
        recon = [
            ("Balanced", "yes" if rec.get("balanced") else "NO"),
            ("Cards in the shoe", str(rec.get("capacity"))),
            ("Dealt in coups", str(rec.get("in_coups"))),
            ("Dealt in void coups", str(rec.get("in_void_coups"))),
            ("Burned", str(rec.get("burned"))),
            ("Discarded", str(rec.get("discarded"))),
            ("Left in the shoe", str(rec.get("left_in_shoe"))),
            ("Unaccounted", str(rec.get("unaccounted"))),
            ("Foreign (excess)", ", ".join(f"{k} x{v}" for k, v in (rec.get("excess") or {}).items()) or "none"),
        ]
    alarms = ", ".join(f"{name} x{n}" for name, n in summary.alarms) or "none"
    recon.append(("Alarms raised", alarms))
    return counts, recon


def _statistics(summary: ShoeSummary, shapes: list, y: float) -> float:
    counts, recon = statistics_lines(summary)
    shapes.append(Label(MARGIN, y, "Statistics", 15, bold=True))
    shapes.append(Label(MARGIN + 460, y, "Reconciliation", 15, bold=True))
    y += 24
    for i, (label, value) in enumerate(counts):
        shapes.append(_label(MARGIN, y + 20 * i, label, 13, FAINT))
        shapes.append(_label(MARGIN + 130, y + 20 * i, value, 13))
    for i, (label, value) in enumerate(recon):
        shapes.append(_label(MARGIN + 460, y + 20 * i, label, 13, FAINT))
        shapes.append(_label(MARGIN + 600, y + 20 * i, value, 13))
    y += 20 * max(len(counts), len(recon)) + 12
    p = summary.provenance
    # Plain hyphens: Pillow's built-in font has no en dash.
    key = f" ({summary.key})" if summary.key else ""
    line = (f"Journal: {p.describe()} ({p.records} steps), events seq {summary.seq[0]}-{summary.seq[1]}; "
            f"every record's hash checked{key}; last hash {p.last_hash}")
    shapes.append(_label(MARGIN, y, line, 11, FAINT))
    y += 18
    for note in summary.notes:
        shapes.append(_label(MARGIN, y, note, 12, RED))
        y += 18
    return y + 8


def _legend(shapes: list, y: float) -> float:
    x = MARGIN
    r = 6
    items = [
        (Circle(0, 0, r, fill=RED), "Banker"), (Circle(0, 0, r, fill=BLUE), "Player"),
        (Circle(0, 0, r, fill=GREEN), "Tie"), (Line(-r, r, r, -r, GREEN, 3), "ties on a big-road cell"),
        (Circle(0, 0, r * 0.6, fill=RED), "banker pair"), (Circle(0, 0, r * 0.6, fill=BLUE), "player pair"),
        (Circle(0, 0, r * 0.6, fill=GOLD), "natural"),
    ]
    cy = y + 8
    for shape, text in items:
        if isinstance(shape, Circle):
            shapes.append(Circle(x + r, cy, shape.r, fill=shape.fill))
        elif isinstance(shape, Line):
            shapes.append(Line(x + r + shape.x1, cy + shape.y1, x + r + shape.x2, cy + shape.y2, shape.stroke,
                               shape.width))
        shapes.append(Label(x + 2 * r + 6, cy - 8, text, 12, FAINT))
        x += 2 * r + 22 + 6 * len(text)  # text widths estimated: the layout has no font metrics
    return y + 20
