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

from shoed.table.audience import display_event

from harness.processes import Daemon, Simulator
from harness.records import (
    LONG,
    Display,
    card_identities,
    coup_outcomes,
    journal_events,
    journal_inputs,
    replay_journal,
    truth_cards,
    verify_journal,
)

SEED = 21


def shoes_closed(n: int):
    return lambda events: sum(1 for e in events if e["kind"] == "shoe.closed") >= n


def first_snapshot_is_empty(display: Display) -> None:
    state = display.snapshots[0]["state"]
    assert state["shoe"] is None and not state["coups"], "the display joined before the shoe: it sees all of it"


def start(base, shoes: int, pace: float) -> tuple[Daemon, Display, Simulator]:
    """The daemon first (its shoe not plugged in yet: it retries), then a display that
    has its snapshot, then the shoe: the display sees every event of the shoe."""
    daemon = Daemon(base, "--source", f"native:{base / 'shoe'}")
    display = Display(daemon, request_timeout=5.0)
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


def caught_up(display: Display, journal, timeout: float = 60) -> None:
    """Wait until the display has reached the journal's last event."""
    deadline = time.monotonic() + timeout
    while True:
        last = journal_events(journal)[-1]["seq"]
        display.poll(0.5)
        if display.client.last_seq == last:
            return
        assert time.monotonic() < deadline, f"the display is at {display.client.last_seq}, the journal at {last}"


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


@pytest.mark.timeout(1800 if LONG else 300)
def test_kill_9_at_random_moments_and_restart(base):
    kills = 100 if LONG else 5
    # The shoes must outlast the kills. A kill and restart take about 1 s, longer on a loaded machine,
    # and meanwhile the shoe deals on until its queue is full (about 60 messages): one shoe can end
    # within four such turns, two cannot within five.
    shoes = 6 if LONG else 2
    pace = 0.08 if LONG else 0.01
    reference = uninterrupted(base / "reference", shoes)

    rng = random.Random(SEED)
    run = base / "killed"
    run.mkdir()
    daemon, display, sim = start(run, shoes, pace)
    killed = 0
    try:
        while killed < kills and sim.proc.poll() is None:
            deadline = time.monotonic() + rng.uniform(0.02, 0.6)
            while time.monotonic() < deadline:
                display.poll(0.01)
            daemon.kill()
            killed += 1
            daemon = Daemon(run, "--source", sim.source)
            rebuilt = daemon.wait_for(lambda line: line.get("event") in ("state rebuilt from the journal", "ready"),
                                      10, "start-up")
            assert rebuilt.get("event") == "state rebuilt from the journal"
        assert sim.wait_done(120 * shoes) == 0
        caught_up(display, run / "journal")
        assert daemon.stop() == 0
    finally:
        daemon.stop()
        sim.stop()
        display.close()

    assert killed == kills, f"the shoes ended after {killed} kills; deal more slowly"
    # The journal holds exactly what an uninterrupted run produced.
    journaled = journal_events(run / "journal")
    assert coup_outcomes(journaled) == coup_outcomes(reference)
    # The display sees the cards as the display audience does (face-down burns withheld: shoed.table.audience).
    assert card_identities([display_event(e) for e in journaled]) == card_identities(reference)
    assert len(coup_outcomes(reference)) >= 50 * shoes
    # So does the display. A kill that lands while the daemon answers the display's catch-up
    # request leaves the display a fresh snapshot ("gap"), never a silent hole: rare, and
    # allowed only in the long run (seen once in 100 kills on a loaded machine).
    gaps = display.snapshots[1:]
    assert all(s["reason"] == "gap" for s in gaps) and (LONG or not gaps)
    seqs = [e["seq"] for e in display.events]
    if not gaps:
        assert seqs == list(range(seqs[0], seqs[0] + len(seqs))), "seq without gap or repeat across the restarts"
        assert coup_outcomes(display.events) == coup_outcomes(reference)
        assert card_identities(display.events) == card_identities(reference)
    else:
        assert seqs == sorted(set(seqs)), "in order, none twice"
        seen, expected = coup_outcomes(display.events), iter(coup_outcomes(reference))
        assert all(outcome in expected for outcome in seen), "what the display shows is right, in order"
        print(f"\n{len(gaps)} gap snapshot(s) in {kills} kills")
    # Each card the shoe sent was journaled once, in order.
    taken = [i["card"] for i in journal_inputs(run / "journal") if i["kind"] == "card"]
    assert taken == truth_cards(sim.truth())
    starts = [e for e in journal_events(run / "journal") if e["kind"] == "table.started"]
    assert len(starts) == kills + 1 and [e["clean"] for e in starts] == [True] + [False] * kills
    assert verify_journal(run / "journal")["exit"] == 0
    assert replay_journal(run / "journal")["identical"] is True
