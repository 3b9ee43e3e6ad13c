"""Journals built for the tests: real files in a temporary directory, real fsync."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from shoed.journal import Journal


def coup_result(shoe, coup, player, banker, player_total, banker_total, winner, natural=False):
    return {
        "kind": "coup_result",
        "shoe": shoe,
        "coup": coup,
        "player_cards": list(player),
        "banker_cards": list(banker),
        "player_total": player_total,
        "banker_total": banker_total,
        "winner": winner,
        "natural": natural,
        "player_pair": player[0][0] == player[1][0],
        "banker_pair": banker[0][0] == banker[1][0],
    }


class Clock:
    """UTC that moves one minute per reading, so file names differ."""

    def __init__(self):
        self.now = datetime(2024, 5, 1, 20, 0, tzinfo=UTC)

    def __call__(self):
        self.now += timedelta(minutes=1)
        return self.now


@pytest.fixture
def clock():
    return Clock()


@pytest.fixture
def coup():
    return coup_result


@pytest.fixture
def build(tmp_path, clock):
    """build(shoes=2, coups=3, secret=None, nested=True) -> directory: each coup
    journalled as a card reading and, with one fsync, the reading and its result."""

    def make(shoes=2, coups=3, secret=None, nested=True, directory=None, table="T1"):
        directory = directory or tmp_path / "journal"
        with Journal(directory, table, secret, clock=clock) as journal:
            for s in range(1, shoes + 1):
                shoe = f"S{s}"
                journal.open_shoe(shoe)
                for c in range(1, coups + 1):
                    result = coup_result(shoe, c, ["9H", "KS"], ["TD", "3C", "4H"], 9, 7, "player", natural=True)
                    journal.append({"kind": "reading", "shoe": shoe, "card": "9H", "seq": c})
                    if nested:
                        journal.append_many([{"kind": "reading", "card": "4H"}, {"kind": "event", "event": result}])
                    else:
                        journal.append_many([{"kind": "reading", "card": "4H"}, result])
        return directory

    return make
