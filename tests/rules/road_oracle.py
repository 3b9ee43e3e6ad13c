"""The roads laid out from all the results at once: the plainest reading of the rules, kept as the
tests' oracle for `shoed.rules.roads.RoadBuilder`, the one algorithm the product runs (one coup at
a time). Rule numbers (BR1-BR6, D1-D6, A1) are those of shoed/rules/roads.py's docstring."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from shoed.rules.roads import (
    BANKER,
    DERIVED,
    PLAYER,
    ROWS,
    TIE,
    Cell,
    Outcome,
    Place,
    Roads,
    as_outcomes,
    bead_plate,
    mark,
)


def big_road(results: Sequence[Outcome]) -> tuple[int, tuple[tuple[Cell, ...], ...]]:
    """BR1-BR4: (leading ties, logical columns of cells)."""
    leading = 0
    columns: list[list[dict[str, Any]]] = []
    last: dict[str, Any] | None = None
    for number, outcome in enumerate(results, 1):
        if outcome.winner == TIE:
            if last is None:
                leading += 1
            else:
                last["ties"] += 1
            continue
        last = {
            "winner": outcome.winner,
            "coup": number,
            "ties": 0,
            "ties_before": 0 if columns else leading,
            "banker_pair": outcome.banker_pair,
            "player_pair": outcome.player_pair,
            "natural": outcome.natural,
        }
        if columns and columns[-1][-1]["winner"] == outcome.winner:
            columns[-1].append(last)
        else:
            columns.append([last])
    return leading, tuple(tuple(Cell(**c) for c in col) for col in columns)


def layout(lengths: Sequence[int], rows: int = ROWS) -> tuple[Place, ...]:
    """BR6: place logical columns of the given lengths on a grid of `rows` rows,
    with dragon tails. Cells come out in road order."""
    if rows < 1:
        raise ValueError("a grid needs at least one row")
    taken: set[tuple[int, int]] = set()
    placed: list[Place] = []
    start = -1
    for column, length in enumerate(lengths):
        start += 1
        while (0, start) in taken:
            start += 1
        row, col, turned = 0, start, False
        for index in range(length):
            if index:
                if not turned and row + 1 < rows and (row + 1, col) not in taken:
                    row += 1
                else:
                    turned = True
                    col += 1
                    while (row, col) in taken:  # not reached by well-formed roads; never overlap
                        col += 1
            taken.add((row, col))
            placed.append(Place(row, col, column, index, col != start))
    return tuple(placed)


def runs(marks: Iterable[str]) -> tuple[tuple[str, ...], ...]:
    """D6: marks into columns of one colour."""
    columns: list[list[str]] = []
    for m in marks:
        if columns and columns[-1][-1] == m:
            columns[-1].append(m)
        else:
            columns.append([m])
    return tuple(tuple(col) for col in columns)


def derived_marks(columns: Sequence[Sequence[Any]], k: int) -> list[str]:
    """The derived road looking k columns back, as a flat sequence of marks."""
    lengths = [len(col) for col in columns]
    out = []
    for c, length in enumerate(lengths):
        for r in range(length):
            m = mark(lengths, c, r, k)
            if m is not None:
                out.append(m)
    return out


def next_position(columns: Sequence[Sequence[Cell]], winner: str) -> tuple[int, int]:
    """Where the next decision for `winner` would go in the big road (BR3)."""
    if not columns:
        return 0, 0
    if columns[-1][-1].winner == winner:
        return len(columns) - 1, len(columns[-1])
    return len(columns), 0


def ask_road(columns: Sequence[Sequence[Cell]]) -> dict[str, dict[str, str | None]]:
    """A1: each derived road's next mark if Banker, and if Player, won the next coup."""
    lengths = [len(col) for col in columns]
    out = {}
    for side, winner in (("banker", BANKER), ("player", PLAYER)):
        c, r = next_position(columns, winner)
        out[side] = {name: mark(lengths, c, r, k) for name, k in DERIVED}
    return out


def oracle_roads(results: str | Iterable[Any], rows: int = ROWS) -> Roads:
    """Every road from all the results at once."""
    outcomes = as_outcomes(results)
    leading, big = big_road(outcomes)
    derived = {name: runs(derived_marks(big, k)) for name, k in DERIVED}
    return Roads(
        results=outcomes,
        rows=rows,
        bead_plate=bead_plate(outcomes, rows),
        leading_ties=leading,
        big_road=big,
        big_road_grid=layout([len(col) for col in big], rows),
        ask_road=ask_road(big),
        derived_grids={name: layout([len(col) for col in columns], rows) for name, columns in derived.items()},
        **derived,
    )
