"""The table display in a terminal: a DisplayState drawn as one rich renderable.

`render(state)` is a pure function: the same state gives the same screen, so
the tests draw it on a recording console and read the text back. Roads are
drawn newest on the right; when the terminal is narrower than a road, its
oldest columns scroll off the left (as on a table's scoreboard) and the
panel's title says how many are hidden. Colour is never the only sign: Banker
and Player are letters, red and blue marks of the derived roads are filled
and hollow circles.
"""

from __future__ import annotations

from rich.console import Console, ConsoleOptions, Group, RenderResult
from rich.measure import Measurement
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from shoed.display.state import CONNECTING, LIVE, RECONNECTING, CoupView, DisplayState
from shoed.net.wire import one_line
from shoed.rules.roads import DERIVED, ROWS
from shoed.rules.stats import tally

BANKER_STYLE = "bold bright_white on red3"
PLAYER_STYLE = "bold bright_white on blue3"
TIE_STYLE = "bold black on green3"
WINNER_STYLE = {"B": BANKER_STYLE, "P": PLAYER_STYLE, "T": TIE_STYLE}
SIDE_NAME = {"banker": "Banker", "player": "Player", "tie": "Tie"}
MARK = {"R": ("\u25cf", "bold red"), "B": ("\u25cb", "bold bright_blue")}  # red filled, blue hollow
SUITS = {"S": ("\u2660", ""), "H": ("\u2665", "red"), "D": ("\u2666", "red"), "C": ("\u2663", "")}
BET_ORDER = ("banker", "player", "tie", "player_pair", "banker_pair")
ROAD_TITLES = {"big_eye_boy": "Big eye boy", "small_road": "Small road", "cockroach_pig": "Cockroach pig"}


def card_text(card: str) -> Text:
    """A card as the dealer says it: 10♦, K♠ (red suits in red)."""
    rank, suit = card[:-1], card[-1:]
    symbol, style = SUITS.get(suit, (suit, ""))
    return Text(("10" if rank == "T" else rank) + symbol, style=style)


class Grid:
    """Cells on a grid of `rows` rows, newest column on the right; the oldest
    columns that do not fit the width given scroll off the left."""

    def __init__(self, cells: dict[tuple[int, int], Text], rows: int, cell_width: int, min_cols: int = 6) -> None:
        self.cells = cells
        self.rows = rows
        self.cell_width = cell_width
        self.cols = max((c for _, c in cells), default=-1) + 1
        self.min_cols = min_cols

    def hidden(self, width: int) -> int:
        return max(0, self.cols - max(1, width // self.cell_width))

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        widest = max(self.cols, self.min_cols) * self.cell_width
        return Measurement(min(widest, self.min_cols * self.cell_width), widest)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        first = self.hidden(options.max_width)
        # An empty board is drawn to the width given, as the table's scoreboard is.
        last = max(self.cols, first + max(1, options.max_width // self.cell_width))
        blank = "\u00b7".ljust(self.cell_width)
        for row in range(self.rows):
            line = Text(no_wrap=True, overflow="crop")
            for col in range(first, last):
                cell = self.cells.get((row, col))
                if cell is None:
                    line.append(blank, style="grey30")
                else:
                    line.append_text(cell)
                    line.append(" " * max(0, self.cell_width - cell.cell_len))
            yield line


def _panel(body, title: str | Text, hidden: int = 0, width: int | None = None, **kw) -> Panel:
    """A panel; its title is Text, never markup (a title holds strings from the wire)."""
    title = Text(title) if isinstance(title, str) else title.copy()
    if hidden:
        long = f" (+{hidden} earlier)"
        fits = width is None or title.cell_len + len(long) + 6 <= width
        title.append(long if fits else f" (+{hidden})", style="dim")
    return Panel(body, title=title, title_align="left", padding=(0, 1), **kw)


class RoadPanel:
    """A road's panel whose title counts the columns scrolled off at the width it gets."""

    def __init__(self, grid: Grid, title: str | Text) -> None:
        self.grid, self.title = grid, title

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        inner = self.grid.__rich_measure__(console, options)
        return Measurement(inner.minimum + 4, inner.maximum + 4)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        hidden = self.grid.hidden(options.max_width - 4)  # borders and padding
        yield _panel(self.grid, self.title, hidden, options.max_width)


# ----- parts ----------------------------------------------------------------------
def header(state: DisplayState) -> Text:
    """The table, the link state and a lock first (never cut off a narrow screen), then the rest."""
    line = Text(no_wrap=True, overflow="ellipsis")
    line.append(f" Table {state.table} ", style="bold reverse")
    link = {
        LIVE: ("  \u25cf live", "bold green"),
        RECONNECTING: ("  \u25cc reconnecting\u2026", "bold yellow blink"),
        CONNECTING: ("  \u25cc connecting\u2026", "yellow"),
    }.get(state.connection, (f"  {state.connection}", "yellow"))
    if state.replay and state.connection == LIVE:
        link = ("  \u25cf replay of the journal", "bold magenta")  # never taken for the live table
    line.append(*link)
    if state.locked:
        line.append(f"  LOCKED: {state.locked}", style="bold white on red")
    parts = [state.ruleset or "ruleset ?", f"{state.decks} decks" if state.decks else None,
             f"shoe {state.shoe}" if state.shoe else "no shoe", state.phase,
             f"seq {state.seq}" if state.seq is not None else None]
    line.append("  " + " \u00b7 ".join(p for p in parts if p))
    if state.note:
        line.append(f"  ({state.note})", style="dim")
    return line


def waiting_of(state: DisplayState) -> tuple[str, str]:
    """(for, text): what the table waits for, told from the display's state (the names of
    shoed/table/waits.py; the table's own words are in its snapshot and `shoed command status`)."""
    if state.locked:
        return "unlock", "the pit to clear the lock"
    if state.phase in (None, "closed"):
        return "shoe", "a shoe to be put in"
    for misdeal_id, kind, correction in state.pending:
        if kind != "missing_card":
            return "correction", f"misdeal {misdeal_id} ({kind.replace('_', ' ')}) to be corrected: {correction}"
    for misdeal_id, _, correction in state.pending:
        return ("decision" if correction == "decide" else "card"), f"what misdeal {misdeal_id} waits for"
    if state.phase in ("burn_first", "burning"):
        return "burn", "the burn cards"
    if state.phase == "finished":
        return "close_shoe", "the shoe to be taken out: its last coup is over"
    coup = state.coup
    if coup is not None and coup.status == "dealing":
        return "card", f"the next card of coup {coup.number}"
    if coup is not None:
        return "confirm", f"the dealer's confirm of the {'void' if coup.status == 'void' else 'result'} of coup {coup.number}"
    return "card", "the first card of the next coup"


def wait_line(state: DisplayState) -> Text:
    what, text = waiting_of(state)
    stalled = any(name == "stalled" for name, _ in state.alarms)
    line = Text(no_wrap=True, overflow="ellipsis")
    line.append(f" waiting for {what}", style="bold white on red" if stalled else "bold")
    line.append(f": {text}")
    if state.wait_since:
        line.append(f"  since {state.wait_since[11:19]}", style="dim")
    return line


def _hand(name: str, cards: tuple[str, ...], total: int | None, style: str) -> Text:
    line = Text()
    line.append(f"{name:<7}", style=style)
    for card in cards:
        line.append(" ")
        line.append_text(card_text(card))
    if not cards:
        line.append(" \u2014", style="dim")
    if total is not None:
        line.append(f"   = {total}", style="bold")
    return line


def _outcome_line(coup: CoupView, last: bool) -> Text:
    if coup.status == "void":
        return Text(f"VOID: {coup.reason or 'void'}", style="bold white on red")
    if coup.status == "dealing":
        return Text("dealing\u2026" + ("  (last coup of the shoe)" if last else ""), style="italic")
    line = Text()
    winner = coup.winner or "?"
    if winner == "tie":
        line.append(f" TIE {coup.player_total} to {coup.banker_total} ", style=TIE_STYLE)
    else:
        high, low = ((coup.banker_total, coup.player_total) if winner == "banker"
                     else (coup.player_total, coup.banker_total))
        line.append(f" {SIDE_NAME.get(winner, winner).upper()} WINS {high} to {low} ",
                    style=WINNER_STYLE.get(winner[:1].upper(), "bold"))
    marks = [m for m, on in (("natural", coup.natural), ("player pair", coup.player_pair),
                             ("banker pair", coup.banker_pair)) if on]
    if marks:
        line.append("  " + ", ".join(marks), style="bold")
    return line


def _previous(coup: CoupView) -> Text:
    """The coup before the one being dealt, on one dim line: the winner, its total and cards first."""
    line = Text(f"coup {coup.number}: ", style="dim", no_wrap=True, overflow="ellipsis")
    if coup.status == "void":
        line.append("void", style="dim")
        return line
    hands = [("P", coup.player_total, coup.player_cards), ("B", coup.banker_total, coup.banker_cards)]
    if coup.winner == "banker":
        hands.reverse()
    said = "tie" if coup.winner == "tie" else f"{SIDE_NAME.get(coup.winner or '', '?')} wins"
    line.append(f"{said} {hands[0][1]} to {hands[1][1]}", style="dim")
    for letter, _, cards in hands:
        line.append(f"  {letter}", style="dim")
        for card in cards:
            line.append(" ")
            line.append_text(card_text(card))
    return line


def _on_show(state: DisplayState) -> CoupView | None:
    """The coup the panel shows: the one being dealt, or the last one finished (its result, winner
    first) until the next coup's first card."""
    coup = state.coup
    if coup is not None and coup.status == "dealing" and not (coup.player_cards or coup.banker_cards) \
            and state.last is not None:
        return state.last
    return coup or state.last


def coup_panel(state: DisplayState) -> Panel:
    coup = _on_show(state)
    if coup is None:
        return _panel(Text("no coup yet", style="dim"), "Coup")
    last_of_shoe = coup.number is not None and coup.number == state.last_coup
    hands = [_hand("Player", coup.player_cards, coup.player_total, "bold bright_blue"),
             _hand("Banker", coup.banker_cards, coup.banker_total, "bold red")]
    outcome = _outcome_line(coup, last_of_shoe)
    # A finished coup says its winner first; a coup being dealt, its hands.
    lines = hands + [outcome] if coup.status == "dealing" else [outcome] + hands
    last = state.last
    if coup.status == "dealing" and last is not None and last.number != coup.number:
        lines.append(_previous(last))
    nxt = state.coup
    if nxt is not None and nxt is not coup and nxt.status == "dealing":
        lines.append(Text(f"coup {nxt.number} opens with its first card", style="dim"))
    title = f"Coup {coup.number}" if coup.number is not None else "Coup"
    if last_of_shoe:
        title += " (last of the shoe)"
    return _panel(Group(*lines), title)


def stats_panel(state: DisplayState) -> Panel:
    counts = tally(state.results)
    decisions = counts.banker + counts.player or 1
    grid = Table.grid(padding=(0, 1))
    grid.add_column(no_wrap=True)
    grid.add_column(justify="right", no_wrap=True)
    grid.add_column(no_wrap=True)
    # Cells are Text, never markup: some hold what the wire said.
    grid.add_row(Text("Banker", style="bold red"), Text(str(counts.banker)),
                 Text(f"{100 * counts.banker / decisions:.0f}%"))
    grid.add_row(Text("Player", style="bold bright_blue"), Text(str(counts.player)),
                 Text(f"{100 * counts.player / decisions:.0f}%"))
    grid.add_row(Text("Tie", style="bold green"), Text(str(counts.tie)), Text(""))
    grid.add_row(Text("Pairs"), Text(f"B {counts.banker_pairs}"), Text(f"P {counts.player_pairs}"))
    grid.add_row(Text("Naturals"), Text(str(counts.naturals)), Text(""))
    grid.add_row(Text("Results"), Text(str(counts.coups)), Text(f"voids {len(state.voids)}"))
    grid.add_row(Text("Cards left"), Text("?" if state.cards_left is None else str(state.cards_left)), Text(""))
    if state.cut_card:
        grid.add_row(Text("Cut card", style="bold"), Text(""), Text(f"last coup {state.last_coup}"))
    return _panel(grid, "Statistics")


def odds_panel(state: DisplayState) -> Panel:
    odds = state.odds
    if not odds:
        # Only the surveillance audience gets them (shoed.table.audience): a display never will.
        return _panel(Text("none yet: sent after each coup, to the surveillance endpoints only "
                           "(shoed watch ENDPOINT --key FILE)", style="dim"), "Odds")
    probabilities = odds.get("probabilities") or {}
    expectation = odds.get("player_expectation") or {}
    favourable = set(odds.get("favourable") or ())
    bets = [b for b in BET_ORDER if b in probabilities or b in expectation]
    bets += sorted((set(probabilities) | set(expectation)) - set(bets))
    table = Table(box=None, padding=(0, 1), show_edge=False, header_style="bold")
    table.add_column("bet", no_wrap=True)
    table.add_column("wins", justify="right")
    table.add_column("player exp.", justify="right")
    for bet in bets:
        p, e = probabilities.get(bet), expectation.get(bet)
        good = bet in favourable
        table.add_row(
            Text(("\u2605 " if good else "  ") + bet.replace("_", " ")),
            Text("" if p is None else f"{100 * p:.2f}%"),
            Text("" if e is None else f"{100 * e:+.3f}%"),
            style="bold black on yellow" if good else None,
        )
    title = Text(f"Odds ({odds.get('cards_left', '?')} cards)")
    if state.odds_local:
        title.append(" computed here", style="dim")
    return _panel(table, title)


def bead_grid(state: DisplayState) -> Grid:
    cells: dict[tuple[int, int], Text] = {}
    rows = state.roads.rows
    for i, outcome in enumerate(state.results):
        text = Text(outcome.winner, style=WINNER_STYLE.get(outcome.winner, "bold"))
        marks = str(outcome)[1:]
        if marks:
            text.append(marks, style="bold yellow")
        cells[(i % rows, i // rows)] = text
    return Grid(cells, rows, 4)


def big_road_grid(state: DisplayState) -> Grid:
    road = state.roads
    cells: dict[tuple[int, int], Text] = {}
    for place in road.big_road_grid:
        cell = road.big_road[place.column][place.index]
        text = Text(cell.winner, style=WINNER_STYLE.get(cell.winner, "bold"))
        if cell.ties:
            text.append(str(cell.ties) if cell.ties < 10 else "+", style="bold green")
        cells[(place.row, place.col)] = text
    return Grid(cells, road.rows, 3, min_cols=12)


def derived_grid(state: DisplayState, name: str) -> Grid:
    road = state.roads
    columns = road.derived(name)
    cells = {}
    for place in road.grid(name):
        symbol, style = MARK.get(columns[place.column][place.index], ("?", "bold"))
        cells[(place.row, place.col)] = Text(symbol, style=style)
    return Grid(cells, road.rows, 2, min_cols=8)


def ask_panel(state: DisplayState) -> Panel:
    lines = []
    for side in ("banker", "player"):
        line = Text(f"if {SIDE_NAME[side]}:", style="bold red" if side == "banker" else "bold bright_blue")
        for name, _ in DERIVED:
            colour = state.roads.ask_road[side][name]
            symbol, style = MARK.get(colour, ("?", "bold")) if colour else ("-", "dim")
            line.append(" ")
            line.append(symbol, style=style)
        lines.append(line)
    lines.append(Text("eye, small, cockroach", style="dim"))
    lines.append(Text.assemble(("\u25cf", "bold red"), " red  ", ("\u25cb", "bold bright_blue"), " blue"))
    return _panel(Group(*lines), "Ask road")


def _named(name: str, text: str) -> str:
    """An alarm's name and its text; the name alone where the text is only the name again (the
    display audience gets no alarm text: shoed.table.audience). Both as one printable line: a text
    from the wire (a shoe's alarm) must not drive the terminal (rich passes ESC through)."""
    name, text = one_line(str(name)), one_line(str(text))
    return name if text in ("", name) else f"{name}: {text}"


def alarm_lines(state: DisplayState) -> list[Text]:
    """Held alarms first, then open misdeals, the last notices, the links not connected and the
    count of malformed messages dropped."""
    lines = []
    for name, text in state.alarms:
        lines.append(Text(f"\u26a0 {_named(name, text)}", style="bold white on red"))
    for misdeal_id, kind, correction in state.pending:
        lines.append(Text(f"misdeal {misdeal_id}: {kind.replace('_', ' ')} \u2014 {correction}", style="bold yellow"))
    for coup, name, text in state.notices:
        where = f"coup {coup}: " if coup is not None else ""
        lines.append(Text(f"{where}{_named(name, text)}", style="yellow"))
    for source, link in state.devices:
        if link not in ("connected", "restored"):
            lines.append(Text(one_line(f"shoe {source}: {link}"), style="bold yellow"))
    if state.fallback:
        lines.append(Text(f"shoe {state.fallback}: fallback", style="bold yellow"))
    dropped = state.dropped + state.wire_dropped
    if dropped:  # from the table's endpoints: not the table's own (shoed.display.state.checked)
        why = f" (last: {state.dropped_why})" if state.dropped_why else ""
        lines.append(Text(f"{dropped} malformed message{'' if dropped == 1 else 's'} dropped{why}", style="yellow"))
    return lines


def alarms_panel(state: DisplayState, lines: list[Text] | None = None) -> Panel:
    lines = alarm_lines(state) if lines is None else lines
    if not lines:
        lines = [Text("no alarm", style="green")]
    style = "red" if state.alarms or state.locked else ("yellow" if state.pending else "")
    return _panel(Group(*lines), "Alarms", border_style=style or "none")


def stats_line(state: DisplayState) -> Text:
    """The statistics on one line (the compact screen)."""
    counts = tally(state.results)
    line = Text(no_wrap=True, overflow="ellipsis")
    line.append(f" Banker {counts.banker}", style="bold red")
    line.append(f"  Player {counts.player}", style="bold bright_blue")
    line.append(f"  Tie {counts.tie}", style="bold green")
    line.append(f"  \u00b7 pairs B {counts.banker_pairs} P {counts.player_pairs} \u00b7 results {counts.coups}"
                f" \u00b7 voids {len(state.voids)} \u00b7 cards left "
                f"{'?' if state.cards_left is None else state.cards_left}")
    if state.cut_card:
        line.append(f" \u00b7 cut card: last coup {state.last_coup}", style="bold")
    return line


WIDE = 110  # columns from which the panels sit three and four abreast
TALL = 40  # rows from which the whole display fits; on a shorter screen (80x24) the compact one


class TableDisplay:
    """The whole display of one table, laid out for the width it is given."""

    def __init__(self, state: DisplayState) -> None:
        self.state = state

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        if options.height is not None and options.height < TALL:
            yield from self.compact(console, options)
            return
        state, wide = self.state, options.max_width >= WIDE
        yield header(state)
        yield wait_line(state)
        if wide:
            yield _row((coup_panel(state), 4), (stats_panel(state), 3), (odds_panel(state), 4))
        else:
            yield coup_panel(state)
            yield _row((stats_panel(state), 1), (odds_panel(state), 1))
        road = state.roads
        big_title = "Big road"
        if road.leading_ties:
            big_title += f" ({road.leading_ties} ties before the first decision)"
        bead = RoadPanel(bead_grid(state), "Bead plate")
        big = RoadPanel(big_road_grid(state), big_title)
        derived = [RoadPanel(derived_grid(state, name), ROAD_TITLES[name]) for name, _ in DERIVED]
        if wide:
            yield _row((bead, 2), (big, 3))
            yield _row(*((panel, 3) for panel in derived), (ask_panel(state), 2))
        else:
            yield bead
            yield big
            yield _row(*((panel, 1) for panel in derived))
            yield ask_panel(state)
        yield alarms_panel(state)


    def compact(self, console: Console, options: ConsoleOptions) -> RenderResult:
        """A screen of fewer than TALL rows (80x24): the link state, the wait and the alarms always;
        then the coup, the statistics on one line, and the bead plate and big road as rows remain."""
        state = self.state
        height = options.height if options.height is not None else console.height
        room = height - 2  # the header and the wait line
        alarms = alarm_lines(state)
        for line in alarms:  # one row each: a long text ends in an ellipsis rather than push the rest down
            line.no_wrap, line.overflow = True, "ellipsis"
        coup = coup_panel(state)
        coup_rows = len(console.render_lines(coup, options.update(height=None)))
        if len(alarms) + 2 > room - coup_rows - 1:  # keep the coup and the statistics: the alarms get the rest
            keep = max(1, room - coup_rows - 1 - 2 - 1)
            if keep < len(alarms):
                alarms = alarms[:keep] + [Text(f"(+{len(alarms) - keep} more)", style="bold yellow")]
        yield header(state)
        yield wait_line(state)
        used = 2
        if alarms:
            yield alarms_panel(state, alarms)
            used += len(alarms) + 2
        if used + coup_rows <= height:
            yield coup
            used += coup_rows
        if used < height:
            yield stats_line(state)
            used += 1
        road_rows = state.roads.rows + 2
        if used + road_rows <= height:
            big_title = "Big road"
            yield _row((RoadPanel(bead_grid(state), "Bead plate"), 2), (RoadPanel(big_road_grid(state), big_title), 3))


def _row(*cells) -> Table:
    row = Table.grid(expand=True, padding=(0, 1))
    for _, ratio in cells:
        row.add_column(ratio=ratio)
    row.add_row(*(cell for cell, _ in cells))
    return row


def render(state: DisplayState) -> TableDisplay:
    """The whole display of one table (a rich renderable)."""
    return TableDisplay(state)


def screen_text(state: DisplayState, width: int = 120) -> str:
    """The display as plain text at `width` columns (tests, logs, `shoed watch --once`)."""
    import io

    console = Console(record=True, width=width, file=io.StringIO(), color_system=None, legacy_windows=False)
    console.print(render(state))
    return console.export_text()


__all__ = ["ROWS", "Grid", "card_text", "render", "screen_text"]
