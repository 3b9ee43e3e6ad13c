"""Scoreboard roads, checked against the rules written in shoed/rules/roads.py.

The games' rule documents (docs/rules/) do not describe scoreboards, so
the rules are the display conventions numbered in the roads module's
docstring (BP bead plate, BR big road, D derived roads, A ask road); every
table below cites the rule it checks. Expected roads are worked out by hand
from those rules, drawn as pictures where the layout is the point.
"""

from __future__ import annotations

import json
from itertools import pairwise

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shoed.rules.roads import (
    DERIVED,
    Outcome,
    ResultsError,
    as_outcomes,
    mark,
    parse_results,
    roads,
)
from tests.rules.road_oracle import layout, oracle_roads


def big(text: str) -> list[list[str]]:
    """The big road in short form: each cell its winner, followed by its tie count if any."""
    return [[c.winner + (str(c.ties) if c.ties else "") for c in col] for col in roads(text).big_road]


def picture(places, label, rows: int = 6) -> list[str]:
    """A drawn grid as text rows, '.' for an empty cell."""
    width = max((p.col for p in places), default=-1) + 1
    grid = [["."] * width for _ in range(rows)]
    for p in places:
        assert grid[p.row][p.col] == ".", f"two cells drawn at row {p.row}, col {p.col}"
        grid[p.row][p.col] = label(p)
    return ["".join(row).rstrip(".") for row in grid]


def big_picture(text: str, rows: int = 6) -> list[str]:
    road = roads(text, rows=rows)
    return picture(road.big_road_grid, lambda p: road.big_road[p.column][p.index].winner, rows)


def flat(columns) -> str:
    return "".join("".join(col) for col in columns)


# ---------------------------------------------------------------------------
# Notation (roads.py, "Results"): B, P, T, each with optional marks b, p, n.
@pytest.mark.parametrize(
    "text, expected",
    [
        ("BPTB", ["B", "P", "T", "B"]),
        ("", []),
        ("B P  T\n", ["B", "P", "T"]),
        ("Bb", ["Bb"]),
        ("Pp", ["Pp"]),
        ("Bn", ["Bn"]),
        ("Bnpb", ["Bbpn"]),  # marks in any order
        ("Tpb", ["Tbp"]),  # a tie can carry pairs
        ("BbnPpT", ["Bbn", "Pp", "T"]),
    ],
)
def test_notation(text, expected):
    assert [str(o) for o in parse_results(text)] == expected


@pytest.mark.parametrize(
    "text, says",
    [
        ("BXP", "unknown result 'X' at position 2"),
        ("bP", "mark 'b' at position 1 follows no result"),
        ("Bbb", "mark 'b' twice"),
        ("BPt", "unknown result 't' at position 3"),
        ("B,P", "unknown result ','"),
    ],
)
def test_notation_errors(text, says):
    with pytest.raises(ResultsError, match=says):
        parse_results(text)


def test_outcomes_from_letters_outcomes_and_text_agree():
    assert as_outcomes(["B", "Pp", Outcome("T")]) == parse_results("BPpT")
    with pytest.raises(ResultsError):
        as_outcomes(["BP"])
    with pytest.raises(ResultsError):
        Outcome("X")


# ---------------------------------------------------------------------------
# BP1, BP2: every coup, ties included, in columns of six, top to bottom.
@pytest.mark.parametrize(
    "text, columns",
    [
        ("", []),
        ("B", ["B"]),
        ("BPTBPT", ["BPTBPT"]),
        ("BPTBPTT", ["BPTBPT", "T"]),
        ("TTTTTTTTTTTTB", ["TTTTTT", "TTTTTT", "B"]),
    ],
)
def test_bead_plate_columns_of_six(text, columns):
    road = roads(text)
    assert ["".join(o.winner for o in col) for col in road.bead_plate] == columns


def test_bead_plate_keeps_marks_of_ties():
    # BR4: the tie coup's pairs appear in the bead plate only.
    road = roads("BTbp")
    assert road.bead_plate[0][1] == Outcome("T", banker_pair=True, player_pair=True)
    assert road.big_road[0][0].banker_pair is False


# ---------------------------------------------------------------------------
# BR1-BR3: ties are counted on the cell before them; a change of winner opens a column.
@pytest.mark.parametrize(
    "rule, text, leading, columns",
    [
        ("BR2 one tie at the start", "TB", 1, [["B"]]),
        ("BR2 several ties at the start", "TTTBP", 3, [["B"], ["P"]]),
        ("BR2 only ties so far", "TTT", 3, []),
        ("BR1 tie in the middle", "BTP", 0, [["B1"], ["P"]]),
        ("BR1 ties in a row", "BTTTP", 0, [["B3"], ["P"]]),
        ("BR1 tie at the end", "BPT", 0, [["B"], ["P1"]]),
        ("BR3 same winner after a tie: same column", "BTB", 0, [["B1", "B"]]),
        ("BR3 other winner after ties: new column", "BBTTPTP", 0, [["B", "B2"], ["P1", "P"]]),
        ("BR1+BR2 ties everywhere", "TTBTPTTBT", 2, [["B1"], ["P2"], ["B1"]]),
        ("BR5 columns longer than six", "B" * 9 + "P", 0, [["B"] * 9, ["P"]]),
    ],
)
def test_big_road_ties_and_columns(rule, text, leading, columns):
    road = roads(text)
    assert road.leading_ties == leading
    assert big(text) == columns


def test_leading_ties_shown_on_first_cell_only():
    # BR2: kept as leading_ties, repeated as ties_before on the first cell; never counted twice.
    road = roads("TTBTBP")
    first, second = road.big_road[0]
    assert (first.ties_before, first.ties, second.ties_before) == (2, 1, 0)
    total = road.leading_ties + sum(c.ties for col in road.big_road for c in col)
    assert total == 3


def test_big_road_cells_carry_their_own_marks():
    # BR4
    road = roads("BbnTpPpBn")
    b1, p1, b2 = road.big_road[0][0], road.big_road[1][0], road.big_road[2][0]
    assert (b1.banker_pair, b1.player_pair, b1.natural, b1.ties) == (True, False, True, 1)
    assert (p1.banker_pair, p1.player_pair, p1.natural) == (False, True, False)
    assert (b2.natural, b2.coup) == (True, 4)
    assert [b1.coup, p1.coup] == [1, 3]


# ---------------------------------------------------------------------------
# BR6: six rows, dragon tails, turns around occupied cells.
@pytest.mark.parametrize(
    "rule, text, drawn",
    [
        ("a column of six fits", "B" * 6, ["B", "B", "B", "B", "B", "B"]),
        ("seventh turns right on the bottom row", "B" * 7, ["B", "B", "B", "B", "B", "BB"]),
        (
            "long run: tail along the bottom row, next column starts beside the first",
            "B" * 9 + "PB",
            ["BPB", "B", "B", "B", "B", "BBBB"],
        ),
        (
            "next column stops above the tail without turning when it fits",
            "B" * 7 + "P" * 5,
            ["BP", "BP", "BP", "BP", "BP", "BB"],
        ),
        (
            "next column turns right above the tail",
            "B" * 7 + "P" * 7,
            ["BP", "BP", "BP", "BP", "BPPP", "BB"],
        ),
        (
            # Each tail runs under the next columns: they turn one row higher
            # each time, the sixth column turns at once on the top row, and the
            # seventh starts at the first free top cell.
            "stair of tails, start skips a taken top cell",
            "B" * 12 + "P" * 10 + "B" * 8 + "P" * 6 + "B" * 4 + "P" * 2 + "B",
            ["BPBPBPPB", "BPBPBBB", "BPBPPPP", "BPBBBBB", "BPPPPPP", "BBBBBBB"],
        ),
        (
            "ties do not take cells",
            "BTTTTTTTB",
            ["B", "B", "", "", "", ""],
        ),
    ],
)
def test_big_road_grid(rule, text, drawn):
    assert big_picture(text) == drawn


def test_big_road_grid_tail_flags():
    road = roads("B" * 8 + "P")
    tails = [(p.row, p.col) for p in road.big_road_grid if p.tail]
    assert tails == [(5, 1), (5, 2)]
    assert road.big_road_grid[-1].row == 0 and road.big_road_grid[-1].col == 1


@pytest.mark.parametrize(
    "rows, text, drawn",
    [
        (3, "BBBBPP", ["BP", "BP", "BB"]),
        (1, "BBPB", ["BBPB"]),  # one row: every column is all tail
    ],
)
def test_grid_of_other_heights(rows, text, drawn):
    assert big_picture(text, rows) == drawn


# ---------------------------------------------------------------------------
# D1-D4, one case per rule and road. The case is the last big-road cell; the
# comment gives the big road's column lengths.
CASES = [
    # road, rule, results, marks of the whole road
    ("big_eye_boy", "D1 equal", "BPB", "R"),  # 1 1 1: columns 2 and 1 equal
    ("big_eye_boy", "D1 unequal", "BBPB", "B"),  # 2 1 1: 1 != 2
    ("big_eye_boy", "D2 repeat", "BBPP", "R"),  # 2 2: column 1 has row 2
    ("big_eye_boy", "D3 just ended", "BPP", "B"),  # 1 2: column 1 ends on row 1
    ("big_eye_boy", "D4 long gone", "BPPP", "BR"),  # 1 3: column 1 shorter than row 3
    ("small_road", "D1 equal", "BPBP", "R"),  # 1 1 1 1: columns 3 and 1
    ("small_road", "D1 unequal", "BBPBP", "B"),  # 2 1 1 1
    ("small_road", "D2 repeat", "BBPBB", "R"),  # 2 1 2: column 1 has row 2
    ("small_road", "D3 just ended", "BPBB", "B"),  # 1 1 2
    ("small_road", "D4 long gone", "BPBBB", "BR"),  # 1 1 3
    ("cockroach_pig", "D1 equal", "BPBPB", "R"),  # 1 1 1 1 1: columns 4 and 1
    ("cockroach_pig", "D1 unequal", "BBPBPB", "B"),  # 2 1 1 1 1
    ("cockroach_pig", "D2 repeat", "BBPBPP", "R"),  # 2 1 1 2
    ("cockroach_pig", "D3 just ended", "BPBPP", "B"),  # 1 1 1 2
    ("cockroach_pig", "D4 long gone", "BPBPPP", "BR"),  # 1 1 1 3
]


@pytest.mark.parametrize("name, rule, text, marks", CASES)
def test_derived_rules(name, rule, text, marks):
    assert flat(roads(text).derived(name)) == marks


@pytest.mark.parametrize("name, rule, text, marks", CASES)
def test_ties_change_no_derived_road(name, rule, text, marks):
    # BR1: ties are not cells, so they add no mark and move nothing.
    assert flat(roads("TT" + "T".join(text) + "T").derived(name)) == marks


@pytest.mark.parametrize(
    "lengths, column, row, k, expected",
    [
        # D1: new column, compare c-1 and c-1-k.
        ([3, 3], 2, 0, 1, "R"),
        ([3, 4], 2, 0, 1, "B"),
        ([2, 5, 2], 3, 0, 2, "R"),
        ([2, 5, 3], 3, 0, 2, "B"),
        # D2, D3, D4 against column c-k: longer, exactly r, shorter.
        ([4, 9], 1, 3, 1, "R"),
        ([3, 9], 1, 3, 1, "B"),
        ([2, 9], 1, 3, 1, "R"),
        ([1, 9], 1, 3, 1, "R"),
        ([4, 1, 9], 2, 3, 2, "R"),
        ([3, 1, 9], 2, 3, 2, "B"),
        ([2, 1, 9], 2, 3, 2, "R"),
        # D5: no column of comparison, no mark.
        ([9], 0, 4, 1, None),
        ([1], 1, 0, 1, None),
        ([1, 2], 1, 1, 2, None),
        ([1, 1, 1], 3, 0, 3, None),
    ],
)
def test_mark_rule_table(lengths, column, row, k, expected):
    assert mark(lengths, column, row, k) == expected


# D5: the first mark comes from the 2nd cell of column k+1, or, if that column
# has one cell, the 1st cell of column k+2; nothing before.
@pytest.mark.parametrize(
    "name, before, cell",
    [
        ("big_eye_boy", "BBBBBBBBP", "P"),  # 2nd cell of column 2 (column 1 cells never count)
        ("big_eye_boy", "BP", "B"),  # column 2 has one cell: 1st cell of column 3
        ("small_road", "BPB", "B"),  # 2nd cell of column 3
        ("small_road", "BBBBPPPPB", "B"),  # the same, after long columns 1 and 2
        ("small_road", "BBPPB", "P"),  # 1st cell of column 4
        ("cockroach_pig", "BBBPPPBBBP", "P"),  # 2nd cell of column 4
        ("cockroach_pig", "BBPPBBP", "B"),  # 1st cell of column 5
    ],
)
def test_derived_starting_cell(name, before, cell):
    assert roads(before).derived(name) == ()
    assert len(flat(roads(before + cell).derived(name))) == 1


def test_derived_roads_laid_out_in_colour_runs():
    # D6, on the big eye boy of big-road columns 1 3 1 1 2 1 1 (cells as column, row from 0):
    # (1,1) D3 B, (1,2) D4 R, (2,0) D1 3!=1 B, (3,0) D1 1!=3 B, (4,0) D1 1=1 R,
    # (4,1) D3 B, (5,0) D1 2!=1 B, (6,0) D1 1!=2 B.
    road = roads("BPPPBPBBPB")
    assert flat(road.big_eye_boy) == "BRBBRBBB"
    assert road.big_eye_boy == (("B",), ("R",), ("B", "B"), ("R",), ("B", "B", "B"))
    assert picture(road.grid("big_eye_boy"), lambda p: road.big_eye_boy[p.column][p.index]) == [
        "BRBRB", "..B.B", "....B", "", "", ""
    ]


def test_derived_road_dragon_tail():
    # D6 + BR6: columns 2 10 give the big eye boy R (D2), B (D3), then seven R (D4),
    # whose seventh turns right on the bottom row.
    road = roads("BB" + "P" * 10)
    assert road.big_eye_boy == (("R",), ("B",), ("R",) * 7)
    drawn = picture(road.grid("big_eye_boy"), lambda p: road.big_eye_boy[p.column][p.index])
    assert drawn == ["RBR", "..R", "..R", "..R", "..R", "..RR"]


# ---------------------------------------------------------------------------
# A1: the ask road.
@pytest.mark.parametrize(
    "text, banker, player",
    [
        ("", (None, None, None), (None, None, None)),
        ("TT", (None, None, None), (None, None, None)),
        ("B", (None, None, None), (None, None, None)),
        # columns 1 1: Banker would open column 3, D1 1 == 1 red; Player would be
        # row 2 of column 2, D3 blue. Small road and cockroach pig: nothing to compare (D5).
        ("BP", ("R", None, None), ("B", None, None)),
        # columns 1 2: Banker D1 2 != 1 blue; Player row 3 of column 2, D4 red.
        ("BPP", ("B", None, None), ("R", None, None)),
        # columns 1 1 2: Banker row 3 of column 3, D4 against columns 2 and 1;
        # Player opens column 4, D1 2 != 1 against columns 2 and 1.
        ("BPBB", ("R", "R", None), ("B", "B", None)),
    ],
)
def test_ask_road_table(text, banker, player):
    ask = roads(text).ask_road
    names = [name for name, _ in DERIVED]
    assert tuple(ask["banker"][n] for n in names) == banker
    assert tuple(ask["player"][n] for n in names) == player


results_text = st.lists(
    st.tuples(st.sampled_from("BPT"), st.sampled_from(["", "b", "p", "n", "bp", "pn"])).map("".join),
    max_size=90,
).map("".join)


@settings(max_examples=300, deadline=None)
@given(results_text)
def test_ask_road_is_what_the_next_coup_would_mark(text):
    road = roads(text)
    for side, letter in (("banker", "B"), ("player", "P")):
        after = roads(text + letter)
        for name, _ in DERIVED:
            was, now = flat(road.derived(name)), flat(after.derived(name))
            assert now[: len(was)] == was  # a coup never rewrites a road
            expected = now[len(was):] or None
            assert road.ask_road[side][name] == expected
    assert roads(text + "T").big_eye_boy == road.big_eye_boy


@settings(max_examples=300, deadline=None)
@given(results_text, st.integers(1, 8))
def test_roads_hold_every_coup_once(text, rows):
    road = roads(text, rows=rows)
    outcomes = parse_results(text)
    # BP1: the bead plate is the results, in columns of `rows`.
    assert [o for col in road.bead_plate for o in col] == list(outcomes)
    assert all(len(col) == rows for col in road.bead_plate[:-1])
    # BR1-BR3: the big road is the decisions, one column per run, ties counted once.
    cells = [c for col in road.big_road for c in col]
    assert "".join(c.winner for c in cells) == "".join(o.winner for o in outcomes if o.winner != "T")
    assert all(col[0].winner != nxt[0].winner for col, nxt in pairwise(road.big_road))
    assert all(len({c.winner for c in col}) == 1 for col in road.big_road)
    assert road.leading_ties + sum(c.ties for c in cells) == sum(o.winner == "T" for o in outcomes)
    # BR6: every cell drawn once, inside the grid; each step down or right.
    grid = road.big_road_grid
    assert len(grid) == len(cells) == len({(p.row, p.col) for p in grid})
    assert all(0 <= p.row < rows for p in grid)
    for a, b in pairwise(grid):
        if a.column == b.column:
            assert (b.row, b.col) in ((a.row + 1, a.col), (a.row, a.col + 1))
        else:
            assert b.row == 0 and b.index == 0
    # D5: one mark per big-road cell from the starting cell on.
    lengths = [len(col) for col in road.big_road]
    for name, k in DERIVED:
        due = sum(mark(lengths, c, r, k) is not None for c, n in enumerate(lengths) for r in range(n))
        assert len(flat(road.derived(name))) == due


def test_a_grid_of_no_rows_is_refused():
    with pytest.raises(ValueError, match="at least one row"):
        roads("BP", rows=0)
    with pytest.raises(ValueError, match="at least one row"):
        layout([1], 0)


# ---------------------------------------------------------------------------
# JSON and the command line contract: `shoed roads --json RESULTS`.
def test_to_json_is_plain_json():
    road = roads("TBbnPpTBBBBBBBPP")
    data = json.loads(json.dumps(road.to_json()))
    assert data["leading_ties"] == 1
    assert data["big_road"][0][0] == {
        "winner": "B", "ties": 0, "ties_before": 1, "banker_pair": True, "player_pair": False,
        "natural": True, "coup": 2,
    }
    assert data["big_road"][1][0]["ties"] == 1
    assert data["bead_plate"][0] == ["T", "B", "P", "T", "B", "B"]
    assert data["bead_plate_marks"][0][2]["player_pair"] is True
    assert len(data["big_road_grid"]) == 11
    assert data["big_road_grid"][8] == {
        **data["big_road"][2][6], "row": 5, "col": 3, "column": 2, "index": 6, "tail": True,
    }
    for name, _ in DERIVED:
        assert data[name] == [list(col) for col in road.derived(name)]
        assert len(data[name + "_grid"]) == len(flat(road.derived(name)))
    assert set(data["ask_road"]) == {"banker", "player"}


def test_cli_json_contract(shoed_json):
    data = shoed_json("roads", "--json", "BPTB")
    assert [[{k: c[k] for k in ("winner", "ties")} for c in col] for col in data["big_road"]] == [
        [{"winner": "B", "ties": 0}],
        [{"winner": "P", "ties": 1}],
        [{"winner": "B", "ties": 0}],
    ]
    assert data["bead_plate"] == [["B", "P", "T", "B"]]
    assert data["big_eye_boy"] == [["R"]]
    assert data["small_road"] == [] and data["cockroach_pig"] == []
    assert data["ask_road"] == {
        "banker": {"big_eye_boy": "B", "small_road": "B", "cockroach_pig": None},
        "player": {"big_eye_boy": "R", "small_road": "R", "cockroach_pig": None},
    }
    assert [(p["row"], p["col"]) for p in data["big_road_grid"]] == [(0, 0), (0, 1), (0, 2)]
    assert data["tally"]["tie"] == 1


def test_cli_marks_and_text(shoed_json, shoed_cli):
    data = shoed_json("roads", "--json", "TBbn", "Pp")
    assert data["leading_ties"] == 1 and data["big_road"][0][0]["banker_pair"] is True
    proc = shoed_cli("roads", "B" * 8 + "PTP")
    assert proc.returncode == 0
    assert "Big road" in proc.stdout and "P1" in proc.stdout and "Ask road" in proc.stdout
    piped = shoed_cli("roads", "--json", "-", input="TTB Pb\n")
    assert json.loads(piped.stdout)["leading_ties"] == 2


def test_cli_bad_results_exit_2(shoed_cli):
    proc = shoed_cli("roads", "--json", "BPXB")
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and "unknown result 'X' at position 3" in proc.stderr


@pytest.mark.parametrize(("args", "stdin", "error"), [
    (("--rows", "10000000", "BPB"), None, "--rows must be 1 to 100, not 10000000"),
    (("--rows", "0", "BPB"), None, "--rows must be 1 to 100, not 0"),
    (("B" * 10_001,), None, "10,001 coups given: 10,000 at most"),
    (("--json", "-"), "BP" * 600_000, "the results on standard input go on past 1 MB"),
])
def test_cli_refuses_what_would_take_the_box_s_memory(shoed_cli, args, stdin, error):
    """A grid of ten million rows, a million coups, a stream of results that never ends: one line,
    exit 2, before anything is drawn (a text grid of 10,000,000 rows took 2.7 GB)."""
    proc = shoed_cli("roads", *args, input=stdin)
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr.count("\n") == 1 and error in proc.stderr


def test_cli_draws_the_most_rows_and_coups_it_takes(shoed_cli):
    proc = shoed_cli("roads", "--rows", "100", "BPT" * 3_333 + "B")
    assert proc.returncode == 0, proc.stderr
    assert "10000 coups" in proc.stdout


# ---------------------------------------------------------------------------
# Incremental roads (roads.py, "Incremental roads"): one coup at a time, the
# same roads as computing them from all the results, after every coup.
from shoed.rules.roads import (  # noqa: E402 - the incremental part's own imports, kept with its tests
    GridCursor,
    RoadBuilder,
)


@settings(max_examples=300, deadline=None)
@given(results_text, st.integers(1, 8))
def test_builder_equals_roads_after_every_coup(text, rows):
    builder = RoadBuilder(rows)
    outcomes = parse_results(text)
    for n, outcome in enumerate(outcomes, 1):
        step = builder.add(outcome)
        whole = oracle_roads(outcomes[:n], rows=rows)
        assert builder.roads() == whole
        assert step.position == n and step.outcome == outcome and step.ask_road == whole.ask_road
        # BP2: the coup's bead.
        assert (step.bead_plate.row, step.bead_plate.col) == ((n - 1) % rows, (n - 1) // rows)
        assert whole.bead_plate[step.bead_plate.col][step.bead_plate.row] == outcome
        # BR1-BR3, BR6: the cell added (or the cell a tie is counted on) and where it is drawn.
        if outcome.winner == "T" and not whole.big_road:
            assert step.big_road is None and step.cell is None and step.leading_ties == whole.leading_ties
        else:
            assert step.big_road == whole.big_road_grid[-1]
            assert step.cell == whole.big_road[-1][-1]
            assert step.new_cell == (outcome.winner != "T")
        # D5, D6: a mark only where the road gains one, drawn where the whole road draws it.
        before = oracle_roads(outcomes[: n - 1], rows=rows)
        for name, _ in DERIVED:
            added = step.derived[name]
            gained = flat(whole.derived(name))[len(flat(before.derived(name))):]
            if added is None:
                assert gained == ""
            else:
                assert gained == added[0]
                assert added[1] == whole.grid(name)[-1]
        assert json.loads(json.dumps(step.to_json()))["position"] == n


@settings(max_examples=100, deadline=None)
@given(results_text, st.integers(1, 8))
def test_grid_cursor_places_as_layout(text, rows):
    # BR6: drawn one cell at a time, the same places as laid out at once.
    lengths = [len(col) for col in roads(text).big_road]
    cursor, placed = GridCursor(rows), []
    for length in lengths:
        placed.append(cursor.new_column())
        placed.extend(cursor.extend() for _ in range(length - 1))
    assert tuple(placed) == layout(lengths, rows)


@settings(max_examples=100, deadline=None)
@given(results_text.filter(bool))
def test_builder_takes_back_the_last_result(text):
    # A coup voided after its result is not a result (its void leaves the roads as before it).
    builder = RoadBuilder.from_results(text)
    outcomes = parse_results(text)
    assert builder.pop() == outcomes[-1]
    assert builder.roads() == oracle_roads(outcomes[:-1])
    builder.add(outcomes[-1])
    assert builder.roads() == oracle_roads(outcomes)


def test_builder_step_json_for_a_tie_and_a_new_column():
    builder = RoadBuilder()
    tie = builder.add("T").to_json()
    assert tie["big_road"] is None and tie["leading_ties"] == 1 and tie["result"] == "T"
    first = builder.add("Bbn").to_json()
    assert first["big_road"] == {
        "row": 0, "col": 0, "column": 0, "index": 0, "tail": False, "winner": "B", "ties": 0, "ties_before": 1,
        "banker_pair": True, "player_pair": False, "natural": True, "coup": 2, "new": True,
    }
    assert first["bead_plate"] == {"row": 1, "col": 0}
    builder.add("P")
    on_p = builder.add("T").to_json()
    assert on_p["big_road"]["ties"] == 1 and on_p["big_road"]["new"] is False and on_p["big_road"]["col"] == 1
    step = builder.add("B").to_json()  # columns 1 1 1: big eye boy D1 red
    assert step["big_eye_boy"] == {"row": 0, "col": 0, "column": 0, "index": 0, "tail": False, "colour": "R"}
    assert step["small_road"] is None and step["cockroach_pig"] is None
    assert builder.to_json() == roads("TBbnPTB").to_json()


def test_builder_refuses_what_is_not_one_result():
    builder = RoadBuilder()
    with pytest.raises(ResultsError):
        builder.add("BP")
    with pytest.raises(ResultsError):
        builder.add("X")
    with pytest.raises(IndexError):
        builder.pop()
    assert len(builder) == 0
    with pytest.raises(ValueError):
        GridCursor(0)
    with pytest.raises(ValueError):
        GridCursor().extend()
