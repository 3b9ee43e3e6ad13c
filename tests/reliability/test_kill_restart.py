"""kill -9 at random moments while a shoe is dealt, restarting each time.

table-game-standards items 4, 13 and 19: the daemon may die at any instant
(power cut, kernel OOM killer, a bug) and nothing may be lost or counted
twice. The virtual shoe runs in its own process and keeps what was not
acknowledged; the daemon is killed with SIGKILL (no clean-up at all) at
random moments and started again on the same journal. At the end:

- the journal verifies (`shoed journal verify`) and replays identically;
- a display that stayed connected throughout (subscribe, snapshot, catch-up
  from the journal across the restarts) holds exactly the coup results and
  card identities of an uninterrupted run of the same shoe (same seed);
- every card the shoe sent is in the journal once, in order.

CI kills 5 times over one shoe; SHOED_SOAK=1 kills 100 times over six shoes.
"""

from __future__ import annotations

import random
import time

import pytest

from tests.reliability.harness import (
    LONG,
    Daemon,
    Display,
    Simulator,
    card_identities,
    coup_outcomes,
    journal_events,
    journal_inputs,
    remove_dir,
    replay_journal,
    short_dir,
    truth_cards,
    verify_journal,
)

SEED = 21


@pytest.fixture
def base():
    path = short_dir()
    yield path
    remove_dir(path)


def shoes_closed(n: int):
    return lambda events: sum(1 for e in events if e["kind"] == "shoe.closed") >= n


def first_snapshot_is_empty(display: Display) -> None:
    state = display.snapshots[0]["state"]
    assert state["shoe"] is None and not state["coups"], "the display joined before the shoe: it sees all of it"


def start(base, shoes: int, pace: float) -> tuple[Daemon, Display, Simulator]:
    """The daemon first (its shoe not plugged in yet: it retries), then a display that
    has its snapshot, then the shoe: the display sees every event of the shoe."""
    daemon = Daemon(base, "--source", f"native:{base / 'shoe'}")
    display = Display(daemon)
    try:
        deadline = time.monotonic() + 10
        while not display.snapshots:
            assert time.monotonic() < deadline, "no snapshot from the daemon"
            display.poll(0.05)
        first_snapshot_is_empty(display)
        return daemon, display, Simulator(base, seed=SEED, pace=pace, shoes=shoes)
    except BaseException:
        daemon.stop()
        display.close()
        raise


def uninterrupted(base, shoes: int) -> list[dict]:
    """The events a display gathers from an uninterrupted run of the same shoes."""
    base.mkdir()
    daemon, display, sim = start(base, shoes, 0.0)
    try:
        display.until(shoes_closed(shoes), 60 * shoes, "end of the shoes")
        assert sim.wait_done(30) == 0
    finally:
        daemon.stop()
        sim.stop()
        display.close()
    return display.events


def test_kill_9_at_random_moments_and_restart(base):
    kills = 100 if LONG else 5
    shoes = 6 if LONG else 1
    pace = 0.02 if LONG else 0.01
    reference = uninterrupted(base / "reference", shoes)

    rng = random.Random(SEED)
    run = base / "killed"
    run.mkdir()
    daemon, display, sim = start(run, shoes, pace)
    killed = 0
    try:
        while killed < kills and not shoes_closed(shoes)(display.events):
            deadline = time.monotonic() + rng.uniform(0.02, 0.6)
            while time.monotonic() < deadline:
                display.poll(0.01)
            daemon.kill()
            killed += 1
            daemon = Daemon(run, "--source", sim.source)
            rebuilt = daemon.wait_for(lambda line: line.get("event") in ("state rebuilt from the journal", "ready"),
                                      10, "start-up")
            assert rebuilt.get("event") == "state rebuilt from the journal"
        display.until(shoes_closed(shoes), 120 * shoes, "end of the shoes")
        assert sim.wait_done(60) == 0
        assert daemon.stop() == 0
    finally:
        daemon.stop()
        sim.stop()
        display.close()

    assert killed == kills, f"the shoes ended after {killed} kills; deal more slowly"
    assert len(display.snapshots) == 1, "every missed event was caught up from the journal, never a new snapshot"
    seqs = [e["seq"] for e in display.events]
    assert seqs == list(range(seqs[0], seqs[0] + len(seqs))), "seq without gap or repeat across the restarts"
    assert coup_outcomes(display.events) == coup_outcomes(reference)
    assert card_identities(display.events) == card_identities(reference)
    assert len(coup_outcomes(reference)) >= 50 * shoes
    # Each card the shoe sent was journaled once, in order.
    taken = [i["card"] for i in journal_inputs(run / "journal") if i["kind"] == "card"]
    assert taken == truth_cards(sim.truth())
    starts = [e for e in journal_events(run / "journal") if e["kind"] == "table.started"]
    assert len(starts) == kills + 1 and [e["clean"] for e in starts] == [True] + [False] * kills
    assert verify_journal(run / "journal")["exit"] == 0
    assert replay_journal(run / "journal")["identical"] is True
