"""`shoed watch` on an 80x24 terminal: drawn by rich at 80 columns and 24 rows (as its full-screen
Live gives the display the terminal's height), no line wraps, the link state, the wait and every
held alarm are on screen, and a coup's result stays on screen, winner first, until the next
coup's first card (the table opens the next coup at once with the confirm, which took the result
off the screen within milliseconds).
"""

from __future__ import annotations

import io

from rich.console import Console

from shoed.display.state import apply, fold
from shoed.display.terminal import render

WIDTH, HEIGHT = 80, 24


def screen_rows(state, width: int = WIDTH, height: int = HEIGHT) -> list[str]:
    console = Console(width=width, height=height, file=io.StringIO(), color_system=None, legacy_windows=False)
    lines = console.render_lines(render(state), console.options.update(height=height), pad=False)
    return ["".join(segment.text for segment in line).rstrip() for line in lines]


def live(state):
    return apply(state, {"kind": "watch.connection", "state": "live"})


def cut_after(items, predicate) -> list[dict]:
    return items[: next(i for i, e in enumerate(items) if predicate(e)) + 1]


def alarm(seq: int, name: str, text: str) -> dict:
    return {"kind": "alarm", "alarm": name, "active": True, "text": text, "seq": seq, "coup": 30,
            "utc": "2026-01-01T10:00:00Z"}


def test_the_link_state_the_wait_and_every_held_alarm_fit_80_by_24(recorded_shoe):
    items = cut_after(recorded_shoe.early, lambda e: e.get("kind") == "card" and e.get("coup") == 30
                      and e.get("index") == 2)
    seq = items[-1]["seq"]
    held = [("stalled", "waiting for a card"), ("foreign_card", "9H seen 9 times in an 8-deck shoe"),
            ("favourable_bet", "favourable to the player: tie +0.5%"), ("tamper", "the shoe's lid was opened")]
    state = live(fold(items + [alarm(seq + 1 + i, name, text) for i, (name, text) in enumerate(held)]
                      + [{"kind": "misdeal", "seq": seq + 9, "coup": 30, "utc": "2026-01-01T10:00:01Z",
                          "misdeal": {"id": 7, "kind": "extra_card", "correctable": True, "correction": "burn"}}]))
    rows = screen_rows(state)
    assert len(rows) <= HEIGHT and all(len(row) <= WIDTH for row in rows), "\n".join(rows)
    assert rows[0].startswith(" Table t1") and "\u25cf live" in rows[0]
    assert rows[1].startswith(" waiting for correction: misdeal 7 (extra card)")
    text = "\n".join(rows)
    for name, said in held:
        assert any(f"{name}: {said}" in row for row in rows), (name, text)
    assert "misdeal 7: extra card \u2014 burn" in text
    assert "Coup 30" in text  # the coup itself still has its panel


def test_a_result_stays_on_screen_winner_first_until_the_next_coups_first_card(recorded_shoe):
    items = recorded_shoe.early
    results = [e for e in items if e.get("kind") == "coup.result" and e.get("winner") != "tie"]
    won = results[len(results) // 2]
    number = won["coup"]
    # The confirm opened the next coup at once: no card of it yet.
    state = live(fold(cut_after(items, lambda e: e.get("kind") == "coup.opened" and e.get("coup") == number + 1)))
    rows = screen_rows(state)
    text = "\n".join(rows)
    assert f"Coup {number}" in text and f"Coup {number + 1}" not in text, text
    banner = next(i for i, row in enumerate(rows) if "WINS" in row)
    high, low = sorted((won["player_total"], won["banker_total"]), reverse=True)
    assert f"{won['winner'].upper()} WINS {high} to {low}" in rows[banner]
    assert rows[banner + 1].lstrip("\u2502 ").startswith("Player") and f"coup {number + 1} opens" in text
    assert rows[1].startswith(" waiting for card")
    # Its first card: the new coup takes the panel, the last result one line below it, winner first.
    state = live(fold(cut_after(items, lambda e: e.get("kind") == "card" and e.get("coup") == number + 1)))
    text = "\n".join(screen_rows(state))
    side = "B" if won["winner"] == "banker" else "P"
    assert f"Coup {number + 1}" in text
    assert f"coup {number}: {won['winner'].capitalize()} wins {high} to {low}  {side} " in text, text
