"""A checkpoint names the table and the rules it deals under. Within a file none of them changes; at
the head of a file the table goes on, and its ruleset and decks may change (the daemon adopts a newly
configured ruleset between shoes, in a file of its own): `shoed replay` says where, and replays each
shoe under the rules its file names."""

from __future__ import annotations

import json
from pathlib import Path

from harness.records import controller_inputs, reseal
from shoed.journal import Journal, iter_records
from shoed.journal.replay import replay_journal
from shoed.rules.ruleset import load_ruleset
from shoed.simulate.dealer import DealSetup, deal
from shoed.table import StartShoeFile, TableController
from shoed.table.replay import Replay, checkpoint_record, step_record
from tests.conftest import run_shoed

T0 = 1_790_000_000_000_000_000


def write_journal(directory: Path, shoes: list[tuple[str, int]]) -> list[str]:
    """A journal as the daemon writes it: one shoe under each (ruleset, decks), a new file at each shoe,
    and a ruleset or decks other than the table's adopted between two shoes, in a file of its own.
    Returns the names of the files whose checkpoint set the rules."""
    first = load_ruleset(shoes[0][0])
    table = TableController("t1", first, shoes[0][1])
    set_in = []
    with Journal(directory, "t1") as journal:
        journal.open_shoe("table", first=[checkpoint_record(table)])
        set_in.append(journal.path.name)
        for n, (name, decks) in enumerate(shoes):
            if (name, decks) != (table.ruleset.name, table.decks):  # as TableLoop._adopt_configured
                table = TableController.from_checkpoint("t1", load_ruleset(name), decks, table.checkpoint())
                journal.open_shoe("table", first=[checkpoint_record(table)])
                set_in.append(journal.path.name)
            ruleset = table.ruleset
            for item in controller_inputs(deal(DealSetup(ruleset, seed=n + 1, shoes=1, decks=decks)),
                                          start_ns=T0 + n * 10**13):
                step = table.feed(item)
                journal.append(step_record(item, step.events))
                for effect in step.effects:
                    if isinstance(effect, StartShoeFile):
                        journal.open_shoe(effect.shoe_id, first=[checkpoint_record(table)])
            assert table.between_shoes
    return set_in


def one_pass(directory: Path) -> Replay:
    state = Replay()
    for record in iter_records(directory):
        state.feed(record)
    return state


def test_a_ruleset_adopted_between_shoes_replays_identically_and_is_named(tmp_path):
    directory = tmp_path / "j"
    set_in = write_journal(directory, [("punto-banco", 6), ("baccarat-royal", 8)])
    expected = [{"file": set_in[0], "table": "t1", "ruleset": "punto-banco", "decks": 6},
                {"file": set_in[1], "table": "t1", "ruleset": "baccarat-royal", "decks": 8}]
    for jobs in (1, 2):
        result = replay_journal(directory, jobs=jobs)
        assert result.identical and result.rulesets == expected
    state = one_pass(directory)  # one Replay over every file: the shoe after the seam under the rules it names
    assert not state.differences and (state.controller.ruleset.name, state.controller.decks) == ("baccarat-royal", 8)
    assert [r["ruleset"] for r in state.rulesets] == ["punto-banco", "baccarat-royal"]
    proc = run_shoed("replay", str(directory), "--json", "--jobs", "1")
    report = json.loads(proc.stdout)
    assert proc.returncode == 0 and report["identical"] and report["rulesets"] == expected
    proc = run_shoed("replay", str(directory), "--jobs", "1")
    assert proc.returncode == 0 and "every replayed event is identical" in proc.stdout
    assert (f"note: from {set_in[1]} table t1 deals under baccarat-royal, 8 decks (punto-banco, 6 decks before)"
            in proc.stdout)


def test_one_ruleset_throughout_is_named_once(tmp_path):
    directory = tmp_path / "j"
    set_in = write_journal(directory, [("punto-banco", 6), ("punto-banco", 6)])
    result = replay_journal(directory, jobs=2)
    assert result.identical and result.rulesets == [{"file": set_in[0], "table": "t1", "ruleset": "punto-banco",
                                                     "decks": 6}]
    assert "note:" not in run_shoed("replay", str(directory), "--jobs", "1").stdout


def test_a_file_that_names_another_table_is_a_difference(tmp_path):
    directory = tmp_path / "j"
    write_journal(directory, [("punto-banco", 6), ("punto-banco", 6)])
    files = sorted(p.name for p in directory.glob("*.jsonl"))
    seam = files[2]

    def other_table(file: str, record: dict) -> dict:
        return record | {"table": "t9"} if file == seam and record["kind"] == "checkpoint" else record

    reseal(directory, other_table)  # the chain intact: only the replay can tell
    for jobs in (1, 2):
        # The seam first; the file's events, replayed as the table it names, differ after it.
        first = replay_journal(directory, jobs=jobs).differences[0]
        assert (first.file, first.jseq, first.reason) == (seam, 2, "checkpoint names another table than the replayed table")
        assert first.recorded == [{"table": "t9"}] and first.replayed == [{"table": "t1"}]
    first = one_pass(directory).differences[0]
    assert (first.jseq, first.reason) == (2, "checkpoint names another table than the replayed table")


def test_a_checkpoint_within_a_file_naming_other_rules_is_a_difference(tmp_path):
    # The same state, under another table, ruleset and decks, in the middle of a file.
    directory = tmp_path / "j"
    punto, royal = load_ruleset("punto-banco"), load_ruleset("baccarat-royal")
    table = TableController("t1", punto, punto.decks)
    power = {"kind": "power", "state": "on", "clean": True, "mono_ns": 1, "utc_ns": T0}
    with Journal(directory, "t1") as journal:
        journal.open_shoe("table", first=[checkpoint_record(table)])
        journal.append(step_record(power, table.feed(dict(power)).events))
        journal.append(checkpoint_record(table) | {"ruleset": royal.name, "decks": 8, "table": "t9"})
    for jobs in (1, 2):
        (difference,) = replay_journal(directory, jobs=jobs).differences
        assert (difference.jseq, difference.reason) == (
            4, "checkpoint names another table, ruleset, decks than the replayed table")
        assert difference.replayed == [{"table": "t1", "ruleset": "punto-banco", "decks": 6}]
    for mid_file in ({"decks": 8}, {"ruleset": royal.name}):
        other = tmp_path / f"k{len(mid_file)}{next(iter(mid_file))}"
        table = TableController("t1", punto, punto.decks)
        with Journal(other, "t1") as journal:
            journal.open_shoe("table", first=[checkpoint_record(table)])
            journal.append(step_record(power, table.feed(dict(power)).events))
            journal.append(checkpoint_record(table) | mid_file)
        (difference,) = replay_journal(other).differences
        assert difference.reason == f"checkpoint names another {next(iter(mid_file))} than the replayed table"
    proc = run_shoed("replay", str(directory), "--json", "--jobs", "1")
    assert proc.returncode == 1 and not json.loads(proc.stdout)["identical"]
