"""A journal written by an earlier shoed replays identically after the checkpoint gained fields.

Found by benchmarks/bench_replay.py: a journal of 1,000 shoes written an hour
before the controller's checkpoint gained its failover fields (`priority`,
`active_source`, `ahead`, `behind`) replayed with "checkpoint differs from
the replayed state" at every shoe, although every event was identical.
Surveillance must be able to replay the journals of earlier versions
(table-game-standards items 2 and 18): a checkpoint is compared on the fields
it holds. A field it holds with another value is still a difference.
"""

from __future__ import annotations

from shoed.journal import Journal, iter_records
from shoed.table.replay import Replay, checkpoint_record, step_record
from shoed.rules.ruleset import load_ruleset
from shoed.simulate.dealer import DealSetup, deal
from shoed.table import StartShoeFile, TableController
from harness.records import controller_inputs


def write(directory, state_change) -> None:
    ruleset = load_ruleset("punto-banco")
    table = TableController("t1", ruleset, ruleset.decks)

    def checkpoint():
        record = checkpoint_record(table)
        state_change(record["state"])
        return record

    with Journal(directory, "t1") as journal:
        journal.open_shoe("table")
        journal.append(checkpoint())
        for item in controller_inputs(deal(DealSetup(ruleset, seed=9, shoes=2))):
            step = table.feed(item)
            journal.append(step_record(item, step.events))
            for effect in step.effects:
                if isinstance(effect, StartShoeFile):
                    journal.open_shoe(effect.shoe_id)
                    journal.append(checkpoint())


def replayed(directory) -> Replay:
    state = Replay()
    for record in iter_records(directory):
        state.feed(record, None)
    return state


def test_checkpoints_without_later_fields_replay_identically(tmp_path):
    newer = {"priority", "active_source", "ahead", "behind"}

    def as_written_before(state: dict) -> None:
        for key in newer:
            state.pop(key, None)

    write(tmp_path / "old", as_written_before)
    state = replayed(tmp_path / "old")
    assert state.steps > 500 and state.differences == []


def test_a_checkpoint_field_with_another_value_is_still_a_difference(tmp_path):
    def tampered(state: dict) -> None:
        if state.get("shoe"):
            state["misdeal_ids"] = 99

    write(tmp_path / "bad", tampered)
    differences = replayed(tmp_path / "bad").differences
    # The first shoe's checkpoint differs; the replay goes on from what it says, so the next agrees.
    assert [d.reason for d in differences] == ["checkpoint differs from the replayed state"]
    assert differences[0].recorded[0]["misdeal_ids"] == 99 and differences[0].replayed[0]["misdeal_ids"] == 0
