"""`shoed watch`'s screen, read back from a recording console.

A real shoe (the daemon on the virtual shoe, tests/display/conftest.py) is
folded into the display state as a display received it, drawn by
`shoed.display.terminal.render` on rich's recording console, and the text on
the screen is checked against the events themselves: the coup number, the
cards and totals of the last coup, the winner, the counts, cards left, the
odds, the alarms, and the road letters and marks cell by cell (the roads
follow the rules numbered in shoed/rules/roads.py: BP bead plate, BR big
road, D derived roads).
"""

from __future__ import annotations

import io
import re

import pytest
from rich.console import Console

from shoed.display.state import apply, fold
from shoed.display.terminal import card_text, render
from shoed.rules.roads import DERIVED, roads
from shoed.table.results import results_from_events
from shoed.rules.stats import tally

WIDTH = 120
TITLES = {"big_eye_boy": "Big eye boy", "small_road": "Small road", "cockroach_pig": "Cockroach pig"}


def screen(state, width: int = WIDTH) -> str:
    console = Console(record=True, width=width, file=io.StringIO(), color_system=None)
    console.print(render(state))
    return console.export_text()


def panel(text: str, title: str) -> tuple[str, list[str]]:
    """(title line, inside lines) of the panel whose title starts with `title`."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        start = line.find("\u256d\u2500 " + title)
        if start < 0:
            continue
        end = line.index("\u256e", start)
        body = []
        for below in lines[i + 1:]:
            part = below[start:end + 1]
            if part.startswith("\u2570"):
                return line[start:end + 1], body
            body.append(part[2:-2])  # inside the border and its padding
    raise AssertionError(f"no panel {title!r} on the screen:\n{text}")


def hidden(title_line: str) -> int:
    found = re.search(r"\(\+(\d+)", title_line)
    return int(found.group(1)) if found else 0


def cells(line: str, width: int) -> list[str]:
    """A grid line's cells; empty cells show a dot, so blanks at the end are the panel's margin."""
    out = [line[i:i + width].strip() for i in range(0, len(line), width)]
    while out and not out[-1]:
        out.pop()
    return out


@pytest.fixture(scope="module")
def final(recorded_shoe):
    events = [i for i in recorded_shoe.early if i["kind"] != "snapshot"]
    state = apply(fold(recorded_shoe.early), {"kind": "watch.connection", "state": "live"})
    return events, state, screen(state)


def test_header_and_last_coup(final):
    events, state, text = final
    last = [e for e in events if e["kind"] in ("coup.result", "coup.void")][-1]
    assert f"Table {state.table}" in text.splitlines()[0] and "\u25cf live" in text.splitlines()[0]
    title, body = panel(text, f"Coup {last['coup']}")
    player = " ".join(card_text(c).plain for c in last["player_cards"])
    banker = " ".join(card_text(c).plain for c in last["banker_cards"])
    # A finished coup says its winner first, then the hands.
    assert re.fullmatch(rf"Player  {re.escape(player)}\s+= {last['player_total']}\s*", body[1])
    assert re.fullmatch(rf"Banker  {re.escape(banker)}\s+= {last['banker_total']}\s*", body[2])
    if last["winner"] == "tie":
        said = f"TIE {last['player_total']} to {last['banker_total']}"
    else:
        high, low = sorted((last["player_total"], last["banker_total"]), reverse=True)
        said = f"{last['winner'].upper()} WINS {high} to {low}"
    assert said in body[0]


def test_statistics_match_the_events(final):
    events, state, text = final
    counts = tally(results_from_events(events))
    voids = sum(e["kind"] == "coup.void" for e in events)
    closed = next(e for e in events if e["kind"] == "shoe.closed")["reconciliation"]
    _, body = panel(text, "Statistics")
    said = {m.group(1): m.group(2) for m in (re.match(r"(\w[\w ]*?)\s{2,}(.*\S)", line) for line in body) if m}
    assert said["Banker"].split()[0] == str(counts.banker)
    assert said["Player"].split()[0] == str(counts.player)
    assert said["Tie"] == str(counts.tie)
    assert said["Pairs"].split() == ["B", str(counts.banker_pairs), "P", str(counts.player_pairs)]
    assert said["Naturals"] == str(counts.naturals)
    assert said["Results"].split() == [str(counts.coups), "voids", str(voids)]
    assert said["Cards left"] == str(closed["capacity"] - closed["seen"])
    assert counts.coups + voids == closed["coups"] and counts.coups > 50


def test_bead_plate_cell_by_cell(final):
    # BP1, BP2: every coup in order, columns of six, each with its marks (b, p, n).
    events, state, text = final
    results = results_from_events(events)
    title, body = panel(text, "Bead plate")
    first = hidden(title)
    assert len(body) == 6
    for row, line in enumerate(body):
        shown = cells(line, 4)
        for col, cell in enumerate(shown):
            i = (first + col) * 6 + row
            assert cell == (str(results[i]) if i < len(results) else "\u00b7"), (row, col)
    assert first + len(cells(body[0], 4)) >= (len(results) + 5) // 6  # the newest column is on the screen


def test_big_road_cell_by_cell(final):
    # BR1-BR6: decisions only, ties as a digit on their cell, six rows with dragon tails.
    events, state, text = final
    road = roads(results_from_events(events))
    title, body = panel(text, "Big road")
    first = hidden(title)
    expected = {}
    for p in road.big_road_grid:
        cell = road.big_road[p.column][p.index]
        expected[(p.row, p.col)] = cell.winner + (str(cell.ties) if cell.ties else "")
    assert len(body) == 6
    for row, line in enumerate(body):
        for col, cell in enumerate(cells(line, 3)):
            assert cell == expected.get((row, first + col), "\u00b7"), (row, col)
    assert first + len(cells(body[0], 3)) > max(p.col for p in road.big_road_grid)


@pytest.mark.parametrize("name", [name for name, _ in DERIVED])
def test_derived_roads_cell_by_cell(final, name):
    # D1-D6: red marks filled, blue hollow, in colour runs on six rows.
    events, state, text = final
    road = roads(results_from_events(events))
    title, body = panel(text, TITLES[name])
    first = hidden(title)
    columns = road.derived(name)
    expected = {(p.row, p.col): {"R": "\u25cf", "B": "\u25cb"}[columns[p.column][p.index]] for p in road.grid(name)}
    for row, line in enumerate(body):
        for col, cell in enumerate(cells(line, 2)):
            assert cell == expected.get((row, first + col), "\u00b7"), (name, row, col)


def test_odds_and_alarms(final):
    events, state, text = final
    odds = [e for e in events if e["kind"] == "shoe.odds"][-1]
    title, body = panel(text, "Odds")
    assert f"({odds['cards_left']} cards)" in title
    for bet, p in odds["probabilities"].items():
        line = next(x for x in body if re.match(rf"\W*{bet.replace('_', ' ')}\s", x))
        assert f"{100 * p:.2f}%" in line
        assert line.lstrip().startswith("\u2605") == (bet in odds["favourable"])  # favourable bets starred
    alarms = [e for e in events if e["kind"] == "alarm" and e["alarm"] == "favourable_bet"]
    _, body = panel(text, "Alarms")
    if alarms and alarms[-1]["active"]:
        assert any(alarms[-1]["text"] in line for line in body)


def up_to_the_close(items):
    end = next(i for i, e in enumerate(items) if e["kind"] == "shoe.closed")
    return items[: end + 1]


def test_the_late_display_shows_the_same_screen(recorded_shoe, final):
    _, state, _ = final
    assert 0 < recorded_shoe.joined_at < len(state.results), "the late display joined mid-shoe"
    early = screen(fold(up_to_the_close(recorded_shoe.early)))
    late = screen(fold(up_to_the_close(recorded_shoe.late)))
    assert late == early


@pytest.mark.parametrize("width", [50, 80, 109, 110, 160, 240])
def test_every_width_keeps_the_coup_and_the_newest_columns(final, width):
    events, state, _ = final
    text = screen(state, width)
    assert all(len(line) <= width for line in text.splitlines())
    last = [e for e in events if e["kind"] == "coup.result"][-1]
    _, body = panel(text, f"Coup {last['coup']}")
    assert card_text(last["player_cards"][0]).plain in body[1]
    title, body = panel(text, "Big road")
    road = roads(results_from_events(events))
    newest = max(p.col for p in road.big_road_grid)
    assert hidden(title) + len(cells(body[0], 3)) > newest


def test_a_coup_being_dealt(recorded_shoe):
    # Cut the recording after the second card of coup 30: the coup is shown as it is dealt,
    # with the coup before it on one line.
    items = recorded_shoe.early
    cut = next(i for i, e in enumerate(items) if e.get("kind") == "card" and e.get("coup") == 30 and e.get("index") == 1)
    state = fold(items[: cut + 1])
    _, body = panel(screen(state), "Coup 30")
    cards = [e for e in items[: cut + 1] if e.get("kind") == "card" and e.get("coup") == 30]
    assert card_text(cards[0]["card"]).plain in body[0] and card_text(cards[1]["card"]).plain in body[1]
    assert body[2].startswith("dealing") and body[3].startswith("coup 29: ")


def test_roads_in_coup_results_match_the_roads(recorded_shoe):
    # When the table puts what each coup added to the roads into its coup.result
    # (shoed.rules.roads.RoadStep), that is what the whole roads say at that coup.
    events = [i for i in recorded_shoe.early if i["kind"] != "snapshot"]
    results = [e for e in events if e["kind"] == "coup.result"]
    if not any("road" in e for e in results):
        pytest.skip("this daemon's coup.result events carry no `road` yet")
    done = []
    for event in events:
        if event["kind"] == "shoe.opened":
            done = []
        if event["kind"] in ("coup.result", "coup.void"):
            done.append(event)
        if event["kind"] != "coup.result":
            continue
        whole = roads(results_from_events(done))
        step = event["road"]
        if step["big_road"] is not None:
            p = whole.big_road_grid[-1]
            assert (step["big_road"]["row"], step["big_road"]["col"]) == (p.row, p.col)
            assert step["big_road"]["ties"] == whole.big_road[-1][-1].ties
        assert step["ask_road"] == whole.ask_road


def test_an_alarm_without_its_text_is_shown_by_its_name_once():
    # The display audience gets an alarm's name and state, not its text (shoed.table.audience).
    from shoed.display.state import apply, initial
    from shoed.display.terminal import alarm_lines

    state = initial("t1")
    state = apply(state, {"kind": "alarm", "alarm": "stalled", "active": True, "seq": 1, "table": "t1"})
    state = apply(state, {"kind": "alarm", "alarm": "confirm_refused", "active": True, "seq": 2, "table": "t1"})
    state = apply(state, {"kind": "alarm", "alarm": "tamper", "active": True, "text": "lid opened", "seq": 3,
                          "table": "t1"})
    lines = [line.plain for line in alarm_lines(state)]
    assert "\u26a0 stalled" in lines and "\u26a0 tamper: lid opened" in lines
    assert "confirm_refused" in lines and not any("stalled: stalled" in line for line in lines)


def test_a_text_from_the_wire_cannot_drive_the_terminal():
    """A shoe's alarm text reaches surveillance's screen; rich passes ESC through, so an escape
    sequence in it (clear the screen, set the window title) would act on the terminal. It is shown
    as its escape, on one line."""
    from shoed.display.state import apply, initial
    from shoed.display.terminal import alarm_lines

    state = initial("t1")
    state = apply(state, {"kind": "alarm", "alarm": "shoe", "active": True, "text": "jam\x1b[2J\x1b]0;owned\x07\nline 2",
                          "seq": 1, "table": "t1"})
    console = Console(file=io.StringIO(), force_terminal=True, width=WIDTH)
    for line in alarm_lines(state):
        console.print(line)
    out = console.file.getvalue()
    assert "\x1b[2J" not in out and "\x1b]0;" not in out and "\\x1b[2J" in out
    assert any("jam" in line.plain and "line 2" in line.plain for line in alarm_lines(state))
