"""Scoreboard roads of a shoe: bead plate, big road, the three derived roads and the ask road.

Baccarat tables show the history of the shoe as "roads". shoed computes them
here, as pure functions of the shoe's results, so a table display, a
surveillance screen or a web page only has to draw cells. No I/O, no clock.

The rule documents of the games (docs/rules/) say nothing about
scoreboards; the roads below follow the conventions displays have used for
decades. They are written down here, numbered, and the tests cite these numbers.

Results
-------
A shoe's results are a sequence of outcomes: Banker (B), Player (P) or Tie
(T), each possibly marked with a banker pair, a player pair and/or a natural.
`parse_results` reads the text notation (see below); `Outcome.from_coup` takes
a finished coup from `shoed.rules.coup`.

Text notation: one upper-case letter per coup, `B`, `P` or `T`, optionally
followed by lower-case marks in any order: `b` banker pair, `p` player pair,
`n` natural. `BPTB` is four coups; `BbnPpT` is a Banker natural with a banker
pair, a Player win with a player pair, then a tie. Spaces are ignored. Any
other character is an error: a result is never guessed.

Bead plate
----------
BP1. Every coup, ties included, in order, one cell each.
BP2. Cells fill a column of six from top to bottom, then the next column.

Big road
--------
BR1. Only decisions (Banker or Player) are cells. A tie is not a cell: it is
     counted on the cell of the last decision before it (`ties`).
BR2. Ties before the first decision of the shoe have no cell to sit on. They
     are kept as `leading_ties` on the road, and repeated as `ties_before` on
     the first cell so a display can draw them there. A cell's `ties` only
     ever counts ties *after* it, so `leading_ties` plus every cell's `ties`
     is the number of ties in the shoe.
BR3. A decision for the same side as the last cell goes below it in the same
     column; a decision for the other side starts a new column. Ties in
     between change nothing.
BR4. The cell carries the marks of its own coup: banker pair, player pair,
     natural. The marks of a tie coup are in the bead plate, not the big road.
BR5. Logical columns have no height limit. The derived roads are computed
     from these logical columns, never from the drawn grid.
BR6. Drawn on a grid of six rows (`big_road_grid`), a column goes down until
     the bottom row, or until the cell below is already taken; it then turns
     right and runs along that row (the "dragon tail"), never going down
     again. Each new column starts in the top row of the first grid column
     after the previous column's start whose top cell is free.

Derived roads
-------------
Big eye boy, small road and cockroach pig read the big road's pattern. Each
looks back a fixed distance: k = 1 column for the big eye boy, k = 2 for the
small road, k = 3 for the cockroach pig. Every big-road cell from the road's
starting cell on adds one mark to it, red (R) or blue (B). For a cell at row r
(0 = top) of logical column c:

D1. New column (r = 0): compare the lengths of the two columns just before
    it, c-1 and c-1-k. Equal lengths: red. Different: blue.
D2. Same column, repeat (r > 0): column c-k has a cell at row r (it is at
    least r+1 long): red.
D3. Same column, just ended (r > 0): column c-k has exactly r cells, so it
    ended on the row above: blue.
D4. Same column, long gone (r > 0): column c-k has fewer than r cells: red.
D5. A mark needs its column of comparison: column c-k for r > 0, column
    c-1-k for r = 0. Cells before that add nothing. So the road starts at
    the 2nd cell of column k+1 (counting from 1), or, if that column has a
    single cell, at the 1st cell of column k+2: big eye boy at column 2 or 3,
    small road at column 3 or 4, cockroach pig at column 4 or 5.
D6. Marks are laid out in logical columns of one colour: a new column on
    every change of colour. `*_grid` draws them on six rows as BR6.

Ask road
--------
A1. For each derived road, the mark it would get if the next coup were a
    Banker win, and if it were a Player win; none if that cell would add no
    mark (D5). A tie would add no mark at all (BR1).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

import msgspec

BANKER, PLAYER, TIE = "B", "P", "T"
RED, BLUE = "R", "B"
ROWS = 6  # rows of a standard scoreboard

# The three derived roads and how many columns each looks back.
DERIVED = (("big_eye_boy", 1), ("small_road", 2), ("cockroach_pig", 3))
_DERIVED_NAMES = tuple(name for name, _ in DERIVED)

_MARKS = {"b": "banker_pair", "p": "player_pair", "n": "natural"}

if TYPE_CHECKING:
    from shoed.rules.coup import CoupResult


WINNERS = {"banker": BANKER, "player": PLAYER, "tie": TIE}  # a coup's winner (CoupResult.winner) as a letter


class ResultsError(ValueError):
    """Results notation that does not name a sequence of coups."""


@dataclass(frozen=True, slots=True)
class Outcome:
    """The result of one coup as the scoreboard sees it."""

    winner: str  # "B", "P" or "T"
    banker_pair: bool = False
    player_pair: bool = False
    natural: bool = False

    def __post_init__(self) -> None:
        if self.winner not in (BANKER, PLAYER, TIE):
            raise ResultsError(f"winner must be B, P or T, not {self.winner!r}")

    @classmethod
    def from_coup(cls, result: CoupResult) -> Outcome:
        """From a finished coup (`shoed.rules.coup.CoupResult`)."""
        winner = WINNERS[result.winner]
        make = _outcome if cls is Outcome else cls
        return make(winner, bool(result.banker_pair), bool(result.player_pair), bool(result.natural))

    def __str__(self) -> str:
        return self.winner + "".join(m for m, name in _MARKS.items() if getattr(self, name))

    def to_json(self) -> dict[str, Any]:
        return {
            "result": self.winner,
            "banker_pair": self.banker_pair,
            "player_pair": self.player_pair,
            "natural": self.natural,
        }


# Outcomes are immutable and few (24): one value each, shared by every coup that has it.
_outcome = functools.cache(Outcome)


def parse_results(text: str) -> tuple[Outcome, ...]:
    """Read the text notation (module docstring); raise ResultsError on anything else."""
    if not isinstance(text, str):
        raise ResultsError(f"results are written as text, not {type(text).__name__}")
    out: list[Outcome] = []
    marks: set[str] = set()
    winner = None

    def flush() -> None:
        if winner is not None:
            out.append(Outcome(winner, **{_MARKS[m]: True for m in marks}))

    for pos, ch in enumerate(text, 1):
        if ch in "BPT":
            flush()
            winner, marks = ch, set()
        elif ch in _MARKS:
            if winner is None:
                raise ResultsError(f"mark {ch!r} at position {pos} follows no result: write it after B, P or T")
            if ch in marks:
                raise ResultsError(f"mark {ch!r} twice on one coup at position {pos}")
            marks.add(ch)
        elif ch.isspace():
            continue
        else:
            raise ResultsError(
                f"unknown result {ch!r} at position {pos}: write B, P or T, each optionally followed by "
                "b (banker pair), p (player pair), n (natural)"
            )
    flush()
    return tuple(out)


def as_outcomes(results: str | Iterable[Any]) -> tuple[Outcome, ...]:
    """Results as outcomes: text notation, Outcome values, letters, or finished coups."""
    if isinstance(results, str):
        return parse_results(results)
    out = []
    for item in results:
        if isinstance(item, Outcome):
            out.append(item)
        elif isinstance(item, str):
            parsed = parse_results(item)
            if len(parsed) != 1:
                raise ResultsError(f"{item!r} is not one result")
            out.append(parsed[0])
        elif hasattr(item, "winner") and hasattr(item, "banker_pair"):
            out.append(Outcome.from_coup(item))
        else:
            raise ResultsError(f"not a result: {item!r}")
    return tuple(out)


class Cell(msgspec.Struct, frozen=True, gc=False):
    """One big-road cell: a decision and the ties counted on it. A frozen struct (msgspec), made
    in C: one is made for every coup (of plain values: the garbage collector need not track it)."""

    winner: str  # "B" or "P"
    coup: int  # 1-based number of the coup in the shoe (ties count as coups)
    ties: int = 0  # ties after this decision, before the next one (BR1)
    ties_before: int = 0  # ties before the shoe's first decision, first cell only (BR2)
    banker_pair: bool = False
    player_pair: bool = False
    natural: bool = False

    def to_json(self) -> dict[str, Any]:
        return {
            "winner": self.winner,
            "ties": self.ties,
            "ties_before": self.ties_before,
            "banker_pair": self.banker_pair,
            "player_pair": self.player_pair,
            "natural": self.natural,
            "coup": self.coup,
        }


class Place(msgspec.Struct, frozen=True, gc=False):
    """Where a logical cell is drawn on a grid. A frozen struct (msgspec), made in C at less cost
    than a look-up of an equal one made before."""

    row: int
    col: int
    column: int  # logical column
    index: int  # position in the logical column (0 = top)
    tail: bool  # drawn to the right of its column's first grid column (dragon tail)


@dataclass(frozen=True, slots=True)
class Roads:
    """All the roads of one shoe. Build with `roads(results)`."""

    results: tuple[Outcome, ...]
    rows: int
    bead_plate: tuple[tuple[Outcome, ...], ...]
    leading_ties: int
    big_road: tuple[tuple[Cell, ...], ...]
    big_road_grid: tuple[Place, ...]
    big_eye_boy: tuple[tuple[str, ...], ...]
    small_road: tuple[tuple[str, ...], ...]
    cockroach_pig: tuple[tuple[str, ...], ...]
    ask_road: dict[str, dict[str, str | None]]  # {"banker": {road: "R"|"B"|None}, "player": {...}}
    derived_grids: dict[str, tuple[Place, ...]]  # each derived road drawn on the grid (D6)

    def derived(self, name: str) -> tuple[tuple[str, ...], ...]:
        return cast(tuple[tuple[str, ...], ...], getattr(self, name))

    def grid(self, name: str) -> tuple[Place, ...]:
        """A derived road drawn on the grid (D6)."""
        return self.derived_grids[name]

    def to_json(self) -> dict[str, Any]:
        """The stable JSON form (`shoed roads --json`): fields are added, never renamed."""
        big = self.big_road
        out: dict[str, Any] = {
            "rows": self.rows,
            "coups": len(self.results),
            "bead_plate": [[o.winner for o in col] for col in self.bead_plate],
            "bead_plate_marks": [[o.to_json() for o in col] for col in self.bead_plate],
            "leading_ties": self.leading_ties,
            "big_road": [[cell.to_json() for cell in col] for col in big],
            "big_road_grid": [
                {
                    "row": p.row,
                    "col": p.col,
                    "column": p.column,
                    "index": p.index,
                    "tail": p.tail,
                    **big[p.column][p.index].to_json(),
                }
                for p in self.big_road_grid
            ],
        }
        for name, _ in DERIVED:
            out[name] = [list(col) for col in self.derived(name)]
        for name, _ in DERIVED:
            columns = self.derived(name)
            out[name + "_grid"] = [
                {"row": p.row, "col": p.col, "column": p.column, "index": p.index, "tail": p.tail,
                 "colour": columns[p.column][p.index]}
                for p in self.grid(name)
            ]
        out["ask_road"] = {side: dict(marks) for side, marks in self.ask_road.items()}
        return out


def bead_plate(results: Sequence[Outcome], rows: int = ROWS) -> tuple[tuple[Outcome, ...], ...]:
    """BP1, BP2: every coup in columns of `rows`, top to bottom."""
    return tuple(tuple(results[i:i + rows]) for i in range(0, len(results), rows))


def mark(lengths: Sequence[int], column: int, row: int, k: int) -> str | None:
    """D1-D5: the mark a big-road cell at (column, row) adds to the derived road
    looking k columns back, given the lengths of the columns before it; None if
    its column of comparison does not exist yet."""
    if row == 0:
        if column - 1 - k < 0:
            return None
        return RED if lengths[column - 1] == lengths[column - 1 - k] else BLUE
    if column - k < 0:
        return None
    return BLUE if lengths[column - k] == row else RED


def roads(results: str | Iterable[Any], rows: int = ROWS) -> Roads:
    """Every road of a shoe from its results so far (text notation, Outcome values
    or finished coups), drawn on `rows` rows (six on every standard scoreboard)."""
    return RoadBuilder.from_results(results, rows).roads()


# ---------------------------------------------------------------------------
# The roads, one coup at a time: the one algorithm behind the table's events, its
# snapshot, the displays and `shoed roads`.
#
# `RoadBuilder.add` takes one result and says what it added to every road, in
# O(1) amortised time. The tests hold it, after every coup, to a second and
# plainer form of the rules that lays out every road from all the results at
# once (tests/rules/road_oracle.py).


class GridCursor:
    """BR6 one cell at a time, without laying out the whole road again. A new column starts at the first free top cell after
    the previous column's start; a cell of the same column goes down, or right
    once it has turned (the dragon tail)."""

    __slots__ = ("rows", "taken", "start", "row", "col", "turned", "column", "index")

    def __init__(self, rows: int = ROWS) -> None:
        if rows < 1:
            raise ValueError("a grid needs at least one row")
        self.rows = rows
        self.taken: set[tuple[int, int]] = set()
        self.start = -1
        self.row = self.col = 0
        self.turned = False
        self.column = -1  # logical column of the last cell
        self.index = -1  # its place in that column

    def new_column(self) -> Place:
        self.start += 1
        while (0, self.start) in self.taken:
            self.start += 1
        self.row, self.col, self.turned = 0, self.start, False
        self.column += 1
        self.index = 0
        self.taken.add((0, self.start))
        return Place(0, self.start, self.column, 0, False)

    def extend(self) -> Place:
        """The next cell of the current column."""
        if self.column < 0:
            raise ValueError("no column to extend: start one first")
        row, col, taken = self.row, self.col, self.taken
        if not self.turned and row + 1 < self.rows and (row + 1, col) not in taken:
            self.row = row = row + 1
        else:
            self.turned = True
            col += 1
            while (row, col) in taken:  # not reached by well-formed roads; never overlap
                col += 1
            self.col = col
        self.index = index = self.index + 1
        taken.add((row, col))
        return Place(row, col, self.column, index, col != self.start)


class RoadStep(msgspec.Struct, frozen=True, gc=False):
    """What one coup added to the roads (a frozen struct, as Cell: one is made for every coup).

    `big_road` is the cell the coup added (`new_cell` True) or, for a tie, the
    cell its tie is counted on (BR1), with that cell's content after the coup;
    None for a tie before the shoe's first decision (BR2: see `leading_ties`).
    `derived` gives, per derived road, the mark the coup added and where it is
    drawn, or None (ties and cells before the road's start add none: D5)."""

    position: int  # 1-based place of this result in the shoe's results (as Cell.coup)
    outcome: Outcome
    bead_plate: Place  # row and col of the coup on the bead plate (BP2)
    big_road: Place | None
    cell: Cell | None
    new_cell: bool
    leading_ties: int
    derived: dict[str, tuple[str, Place] | None]
    ask_road: dict[str, dict[str, str | None]]  # A1, after this coup

    def to_json(self) -> dict[str, Any]:
        """The stable JSON form (the `road` of a coup.result event): fields are added, never renamed.
        Built in one expression, every dict fresh (an event owns its JSON): one is made for every coup."""
        outcome, bead, drawn, cell, derived, ask = (self.outcome, self.bead_plate, self.big_road, self.cell,
                                                    self.derived, self.ask_road)
        return {
            "position": self.position, "result": outcome.winner, "banker_pair": outcome.banker_pair,
            "player_pair": outcome.player_pair, "natural": outcome.natural,
            "bead_plate": {"row": bead.row, "col": bead.col},
            # the place, then the cell, then whether the coup added it
            "big_road": None if drawn is None or cell is None else {
                "row": drawn.row, "col": drawn.col, "column": drawn.column, "index": drawn.index, "tail": drawn.tail,
                "winner": cell.winner, "ties": cell.ties, "ties_before": cell.ties_before,
                "banker_pair": cell.banker_pair, "player_pair": cell.player_pair, "natural": cell.natural,
                "coup": cell.coup, "new": self.new_cell},
            "leading_ties": self.leading_ties,
            "big_eye_boy": _mark_json(derived["big_eye_boy"]),
            "small_road": _mark_json(derived["small_road"]),
            "cockroach_pig": _mark_json(derived["cockroach_pig"]),
            # A1's answers are shared between coups: the event has its own copy
            "ask_road": {"banker": dict(ask["banker"]), "player": dict(ask["player"])},
        }


def _mark_json(added: tuple[str, Place] | None) -> dict[str, Any] | None:
    """A derived road's mark as a road step's JSON gives it: its place, then its colour."""
    if added is None:
        return None
    colour, place = added
    return {"row": place.row, "col": place.col, "column": place.column, "index": place.index, "tail": place.tail,
            "colour": colour}


def _place_of(drawn: dict[str, Any]) -> Place:
    return Place(drawn["row"], drawn["col"], drawn["column"], drawn["index"], drawn["tail"])


def _appended(columns: tuple[tuple[Any, ...], ...], item: Any, new_column: bool) -> tuple[tuple[Any, ...], ...]:
    return columns + ((item,),) if new_column or not columns else columns[:-1] + (columns[-1] + (item,),)


def roads_after(before: Roads, step: dict[str, Any]) -> Roads:
    """The roads after one more coup, from what the table says that coup added (the `road` of
    its coup.result, RoadStep.to_json): a display applies it instead of laying out every road
    again. A step that does not follow `before` (another position) raises ValueError."""
    if step.get("position") != len(before.results) + 1:
        raise ValueError(f"road step {step.get('position')} does not follow {len(before.results)} results")
    outcome = _outcome(step["result"], bool(step["banker_pair"]), bool(step["player_pair"]), bool(step["natural"]))
    big, grid = before.big_road, before.big_road_grid
    drawn = step.get("big_road")
    if drawn is not None:
        place = _place_of(drawn)
        cell = Cell(drawn["winner"], drawn["coup"], drawn["ties"], drawn["ties_before"], drawn["banker_pair"],
                    drawn["player_pair"], drawn["natural"])
        if drawn["new"]:
            big, grid = _appended(big, cell, place.index == 0), grid + (place,)
        else:  # a tie counted on the last decision's cell (BR1)
            big = big[:-1] + (big[-1][:-1] + (cell,),)
    derived, derived_grids = {}, dict(before.derived_grids)
    for name, _ in DERIVED:
        columns, added = before.derived(name), step.get(name)
        if added is not None:
            place = _place_of(added)
            columns = _appended(columns, added["colour"], place.index == 0)
            derived_grids[name] = derived_grids[name] + (place,)
        derived[name] = columns
    return Roads(
        results=before.results + (outcome,),
        rows=before.rows,
        bead_plate=_appended(before.bead_plate, outcome, step["bead_plate"]["row"] == 0),
        leading_ties=int(step["leading_ties"]),
        big_road=big,
        big_road_grid=grid,
        ask_road={side: dict(marks) for side, marks in step["ask_road"].items()},
        derived_grids=derived_grids,
        **derived,
    )


def _ask_road(last: str | None, columns: int, *same: bool) -> dict[str, dict[str, str | None]]:
    """A1 for a big road of `columns` columns (5: five or more), its last cell won by `last` (None: no
    cell yet), where `same[j - 1]` says whether the column j before the last is as long as the last one
    (j = 1..3; False where there is no such column)."""
    # Lengths that compare as the real ones do (marks only compare them): the last column one cell long,
    # a column before it one cell where it is as long, two where not; the columns before those are never read.
    lengths = [0] * columns
    if columns:
        lengths[-1] = 1
        for j in range(1, min(columns, 4)):
            lengths[-1 - j] = 1 if same[j - 1] else 2
    out = {}
    for side, winner in (("banker", BANKER), ("player", PLAYER)):
        if last is None:
            column, row = 0, 0
        elif last == winner:
            column, row = len(lengths) - 1, lengths[-1]
        else:
            column, row = len(lengths), 0
        out[side] = {name: mark(lengths, column, row, k) for name, k in DERIVED}
    return out


# A1's answers by case (RoadBuilder.ask_road's key: the arguments of _ask_road), worked out once each: 81 at most.
_ASK_ROADS: dict[tuple[Any, ...], dict[str, dict[str, str | None]]] = {}


class RoadBuilder:
    """The roads of a shoe, one coup at a time. `add(result)` returns the
    RoadStep; `roads()` the whole Roads."""

    def __init__(self, rows: int = ROWS) -> None:
        self.rows = rows
        self._outcomes: list[Outcome] = []
        self._leading = 0
        self._columns: list[list[Cell]] = []
        self._lengths: list[int] = []
        self._big = GridCursor(rows)
        self._big_places: list[Place] = []
        self._derived: dict[str, list[list[str]]] = {name: [] for name, _ in DERIVED}
        self._derived_grid = {name: GridCursor(rows) for name, _ in DERIVED}
        self._derived_places: dict[str, list[Place]] = {name: [] for name, _ in DERIVED}
        # The same lists and cursors, road by road, in the order add() marks them.
        self._marking = tuple((name, k, self._derived[name], self._derived_grid[name], self._derived_places[name])
                              for name, k in DERIVED)

    @classmethod
    def from_results(cls, results: str | Iterable[Any], rows: int = ROWS) -> RoadBuilder:
        builder = cls(rows)
        for outcome in as_outcomes(results):
            builder.add(outcome)
        return builder

    def __len__(self) -> int:
        return len(self._outcomes)

    @property
    def results(self) -> tuple[Outcome, ...]:
        return tuple(self._outcomes)

    def add(self, result: Any) -> RoadStep:
        """One more coup: an Outcome, its notation ("Bbn") or a finished coup."""
        outcome = result if isinstance(result, Outcome) else as_outcomes([result])[0]
        self._outcomes.append(outcome)
        position = len(self._outcomes)
        col, row = divmod(position - 1, self.rows)
        bead = Place(row, col, col, row, False)
        derived: dict[str, tuple[str, Place] | None] = dict.fromkeys(_DERIVED_NAMES)
        columns, lengths, winner = self._columns, self._lengths, outcome.winner
        if winner == TIE:
            if not columns:  # BR2
                self._leading += 1
                place, cell = None, None
            else:  # BR1: counted on the last decision's cell
                last = columns[-1][-1]
                cell = Cell(last.winner, last.coup, last.ties + 1, last.ties_before, last.banker_pair,
                           last.player_pair, last.natural)
                columns[-1][-1] = cell
                place = self._big_places[-1]
            return RoadStep(position, outcome, bead, place, cell, False, self._leading, derived, self.ask_road())
        cell = Cell(winner, position, 0, 0 if columns else self._leading, outcome.banker_pair,
                   outcome.player_pair, outcome.natural)
        if columns and columns[-1][-1].winner == winner:  # BR3
            columns[-1].append(cell)
            lengths[-1] += 1
            place = self._big.extend()
        else:
            columns.append([cell])
            lengths.append(1)
            place = self._big.new_column()
        self._big_places.append(place)
        column, row = len(lengths) - 1, lengths[-1] - 1
        for name, k, runs_, grid, places in self._marking:
            colour = mark(lengths, column, row, k)  # reads only earlier, finished columns
            if colour is None:
                continue
            if runs_ and runs_[-1][-1] == colour:  # D6
                runs_[-1].append(colour)
                drawn = grid.extend()
            else:
                runs_.append([colour])
                drawn = grid.new_column()
            places.append(drawn)
            derived[name] = (colour, drawn)
        return RoadStep(position, outcome, bead, place, cell, True, self._leading, derived, self.ask_road())

    def ask_road(self) -> dict[str, dict[str, str | None]]:
        """A1 in O(1): the column lengths are kept, not recounted. Each mark the next coup would add
        compares the last column's length with that of the column k = 1, 2 or 3 before it (D1: the
        two columns before a new one; D2-D4: the column k back with the row the cell would take, the
        last column's length). So the answer depends only on the last winner, the number of columns
        (five or more alike) and those three equalities: worked out once per case and shared: do not
        change it."""
        lengths = self._lengths
        n = len(lengths)
        if not n:
            key: tuple[Any, ...] = (None, 0, False, False, False)
        else:
            length = lengths[-1]
            key = (self._columns[-1][-1].winner, n if n < 5 else 5, n > 1 and lengths[-2] == length,
                   n > 2 and lengths[-3] == length, n > 3 and lengths[-4] == length)
        known = _ASK_ROADS.get(key)
        if known is None:
            known = _ASK_ROADS[key] = _ask_road(*key)
        return known

    def pop(self) -> Outcome:
        """Take the last result back (a coup voided after its result): the roads
        are built again from the others, O(n) for this rare case."""
        if not self._outcomes:
            raise IndexError("no result to take back")
        *keep, last = self._outcomes
        fresh = RoadBuilder.from_results(keep, self.rows)
        for slot in ("_outcomes", "_leading", "_columns", "_lengths", "_big", "_big_places", "_derived",
                     "_derived_grid", "_derived_places", "_marking"):
            setattr(self, slot, getattr(fresh, slot))
        return last

    def roads(self) -> Roads:
        """Every road so far."""
        outcomes = tuple(self._outcomes)
        return Roads(
            results=outcomes,
            rows=self.rows,
            bead_plate=bead_plate(outcomes, self.rows),
            leading_ties=self._leading,
            big_road=tuple(tuple(col) for col in self._columns),
            big_road_grid=tuple(self._big_places),
            ask_road=self.ask_road(),
            derived_grids={name: tuple(self._derived_places[name]) for name, _ in DERIVED},
            **{name: tuple(tuple(col) for col in runs_) for name, runs_ in self._derived.items()},
        )

    def to_json(self) -> dict[str, Any]:
        """The whole roads' JSON (as `roads --json` without the tally), e.g. for a snapshot."""
        return self.roads().to_json()


def results_text(outcomes: Iterable[Outcome]) -> str:
    """Outcomes in the text notation, e.g. "BbnPpT"."""
    return "".join(str(o) for o in as_outcomes(outcomes))
