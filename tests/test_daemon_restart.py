"""What the daemon owes after a stop at the worst moment: inputs it would have made itself
are made at the next start, journaled and published like any other, with `seq` unbroken."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import run_shoed
from harness.processes import Daemon
from harness.records import journal_records, reseal, write_journal

ODDS_FIELDS = ("cards_left", "probabilities", "player_expectation", "favourable")


def steps_after(records: list[dict], jseq: int, file_name: str) -> list[dict]:
    index = next(i for i, r in enumerate(records) if r["_file"] == file_name and r["jseq"] == jseq)
    return [r for r in records[index + 1:] if r["kind"] == "step"]


def records_of(directory: Path) -> list[dict]:
    out = []
    for path in sorted(directory.glob("*.jsonl")):
        for line in path.read_bytes().splitlines():
            out.append(json.loads(line) | {"_file": path.name})
    return out


def seqs(records: list[dict]) -> list[int]:
    return [e["seq"] for r in records if r["kind"] == "step" for e in r["events"]]


def start_and_stop(base: Path, journal: Path) -> None:
    # A shoe that is not there: the daemon starts, rebuilds, and waits for it.
    with Daemon(base, "--source", f"native:{base}/no-shoe", journal=journal) as daemon:
        daemon.wait_for(lambda line: line.get("event") == "ready", 30, "ready")
    assert daemon.proc.returncode == 0


def test_live_odds_cut_off_by_a_stop_come_at_the_next_start(base):
    journal = base / "journal"
    write_journal(journal, shoes=1, seed=3)
    last = sorted(journal.glob("*.jsonl"))[-1]
    lines = last.read_bytes().splitlines(keepends=True)
    parsed = [json.loads(line) for line in lines]
    # Stopped right after the 20th coup's result was journaled, before its odds were.
    results = [i for i, r in enumerate(parsed) if r["kind"] == "step"
               and any(e["kind"] == "coup.result" for e in r["events"])]
    cut = results[19]
    assert parsed[cut + 1]["input"]["kind"] == "odds"
    lost = parsed[cut + 1]["events"][0]
    last.chmod(0o644)
    last.write_bytes(b"".join(lines[: cut + 1]))
    (journal / "t1.verified").unlink()  # such a stop (a crash) leaves no verified mark beyond the cut

    start_and_stop(base, journal)
    records = records_of(journal)
    after = steps_after(records, parsed[cut]["jseq"], last.name)
    assert [r["input"]["kind"] for r in after[:2]] == ["power", "odds"]
    again = after[1]["events"][0]
    assert again["kind"] == "shoe.odds" and {k: again[k] for k in ODDS_FIELDS} == {k: lost[k] for k in ODDS_FIELDS}
    numbers = seqs(records)
    assert numbers == list(range(numbers[0], numbers[0] + len(numbers)))
    assert run_shoed("journal", "verify", str(journal)).returncode == 0
    assert json.loads(run_shoed("replay", str(journal), "--json").stdout)["identical"] is True


def test_a_start_that_finds_the_replay_different_locks_the_table_on_the_record(base):
    journal = base / "journal"
    write_journal(journal, shoes=1, seed=4, odds=False)
    last = sorted(journal.glob("*.jsonl"))[-1].name
    done, seen = [], []

    def change(name, record):
        if name == last:
            seen.append(record)  # called in order: this record's jseq is len(seen)
            if not done and record["kind"] == "step" and record["events"] and record["events"][0]["kind"] == "card":
                record["events"][0]["card"] = "KS" if record["events"][0]["card"] != "KS" else "QS"
                done.append(len(seen))
        return record

    reseal(journal, change)
    end = journal_records(journal)[-1]["jseq"]
    start_and_stop(base, journal)
    records = records_of(journal)
    after = steps_after(records, end, last)
    assert [r["input"]["kind"] for r in after[:2]] == ["power", "integrity"]
    alarm = after[1]["events"][0]
    assert alarm["kind"] == "alarm" and alarm["alarm"] == "integrity" and alarm["active"] is True
    assert f"differs at jseq {done[0]}:" in alarm["text"]
    numbers = seqs(records)
    assert numbers == list(range(numbers[0], numbers[0] + len(numbers)))  # journaled, so no gap


def test_a_start_with_another_auto_confirm_journals_it_with_the_power_on(base):
    """The configured auto_confirm reaches the controller through the journaled power-on input
    (not behind the journal's back): the file's checkpoint said off, the restart says on, and a
    replay of the journal learns it where the live table did."""
    journal = base / "journal"
    write_journal(journal, shoes=1, seed=5)
    last = sorted(journal.glob("*.jsonl"))[-1]
    checkpoint = next(r for r in records_of(journal) if r["_file"] == last.name and r["kind"] == "checkpoint")
    assert checkpoint["auto_confirm"] is False
    config = base / "auto.toml"
    config.write_text("auto_confirm = true\n")
    with Daemon(base, "--source", f"native:{base}/no-shoe", "--config", str(config), journal=journal) as daemon:
        daemon.wait_for(lambda line: line.get("event") == "ready", 30, "ready")
    assert daemon.proc.returncode == 0
    powers = [r["input"] for r in records_of(journal) if r["kind"] == "step" and r["input"]["kind"] == "power"]
    assert powers[-2]["state"] == "on" and powers[-2]["auto_confirm"] is True  # then the stop's power off
    replay = run_shoed("replay", str(journal), "--json")
    assert replay.returncode == 0 and json.loads(replay.stdout)["identical"] is True


def test_a_shoe_opened_just_before_a_stop_gets_its_file_at_the_next_start(base):
    # The step that opened the second shoe is on record in the first shoe's file; the daemon stopped
    # (a crash, a full disk) before the second shoe's file was opened. The next start opens it, with
    # the table's checkpoint, and the table carries on: seq unbroken, the journal verifies and replays.
    journal = base / "journal"
    write_journal(journal, shoes=2, seed=6, odds=False, stop_before_file=2)
    before = sorted(p.name for p in journal.glob("*.jsonl"))
    last = records_of(journal)[-1]
    opened = [e for e in last["events"] if e["kind"] == "shoe.opened"]
    assert opened, "the journal ends with the step that opened the shoe"
    start_and_stop(base, journal)
    files = sorted(journal.glob("*.jsonl"))
    assert [p.name for p in files[:-1]] == before
    new = [json.loads(line) for line in files[-1].read_bytes().splitlines()]
    assert new[0]["kind"] == "journal_file" and new[0]["shoe"] == opened[0]["shoe"]
    assert new[1]["kind"] == "checkpoint" and new[1]["jseq"] == 2
    assert new[1]["state"]["seq"] == last["events"][-1]["seq"]  # the table as the step left it
    numbers = seqs(records_of(journal))
    assert numbers == list(range(numbers[0], numbers[0] + len(numbers)))
    assert run_shoed("journal", "verify", str(journal)).returncode == 0
    replayed = run_shoed("replay", str(journal), "--jobs", "1")
    assert replayed.returncode == 0, replayed.stdout[-2000:] + replayed.stderr[-2000:]


def test_a_shoe_file_without_its_checkpoint_keeps_the_table_locked(base):
    # Every file after the first starts with the table's checkpoint, written with its header. A current
    # file without one (its records cut away above the verified mark) cannot give the table back:
    # the start is refused in one line, nothing written, and the replay names the file.
    from shoed.journal import Journal
    from shoed.journal.replay import NO_CHECKPOINT

    journal = base / "journal"
    write_journal(journal, shoes=1, seed=6, odds=False)
    with Journal(journal, "t1") as opened:
        opened.open_shoe("20231114-9")
    before = {p.name: p.read_bytes() for p in journal.glob("*.jsonl")}
    with Daemon(base, "--source", f"native:{base}/no-shoe", journal=journal, wait_ready=False) as daemon:
        code = daemon.wait_exit(30)
    assert code == 2, daemon.lines[-10:]
    errors = [line["event"] for line in daemon.lines if str(line.get("event", "")).startswith("shoed: ")]
    assert len(errors) == 1 and "has no checkpoint after its header" in errors[0], daemon.lines[-10:]
    assert {p.name: p.read_bytes() for p in journal.glob("*.jsonl")} == before, "nothing written"
    replayed = run_shoed("replay", str(journal), "--jobs", "1", "--json")
    assert replayed.returncode == 1
    assert NO_CHECKPOINT in replayed.stdout


def test_a_start_configured_with_another_ruleset_adopts_it_between_shoes(base):
    # The journal's table ran punto-banco with its shoe closed; the daemon starts configured for
    # macau-statutory with 6 decks: the table runs those from now, in a file whose checkpoint names them
    # (a replay learns them there), seq unbroken.
    journal = base / "journal"
    write_journal(journal, shoes=1, seed=7, odds=False)
    before = records_of(journal)
    assert {r["ruleset"] for r in before if r["kind"] == "checkpoint"} == {"punto-banco"}
    with Daemon(base, "--source", f"native:{base}/no-shoe", "--ruleset", "macau-statutory", "--decks", "6",
                journal=journal) as daemon:
        daemon.wait_for(lambda line: line.get("event") == "ready", 30, "ready")
        adopted = daemon.wait_for(lambda line: "runs the configured ruleset" in str(line.get("event")), 5, "adopted")
    assert daemon.proc.returncode == 0
    assert adopted["journal_ruleset"] == "punto-banco" and adopted["ruleset"] == "macau-statutory"
    records = records_of(journal)
    last_file = records[-1]["_file"]
    checkpoint = next(r for r in records if r["_file"] == last_file and r["kind"] == "checkpoint")
    assert (checkpoint["ruleset"], checkpoint["decks"]) == ("macau-statutory", 6)
    assert [r["input"]["kind"] for r in records if r["_file"] == last_file and r["kind"] == "step"][0] == "power"
    numbers = seqs(records)
    assert numbers == list(range(numbers[0], numbers[0] + len(numbers)))
    assert run_shoed("journal", "verify", str(journal)).returncode == 0
    replay = run_shoed("replay", str(journal), "--json")
    assert replay.returncode == 0 and json.loads(replay.stdout)["identical"] is True


def test_a_ruleset_configured_while_a_shoe_is_open_is_adopted_when_it_closes(tmp_path):
    # The table keeps the journal's rules for the shoe in play, and takes the configured ones at its close.
    import collections
    import types

    from shoed.daemon.loop import TableLoop
    from shoed.journal import Journal
    from shoed.rules.ruleset import load_ruleset
    from shoed.table import TableController
    from shoed.table.replay import checkpoint_record

    old, new = load_ruleset("punto-banco"), load_ruleset("macau-statutory")
    journal = Journal(tmp_path, "t1")
    table = TableController("t1", old, old.decks)
    journal.open_shoe("table", first=[checkpoint_record(table)])
    loop = TableLoop(types.SimpleNamespace(live_odds=False), None, None, journal, table, None,  # type: ignore[arg-type]
                     types.SimpleNamespace(publishers=[]), collections.deque(maxlen=10), lambda rc: None)
    clock = iter(range(1, 100))

    def handle(kind, **fields):
        n = next(clock)
        return loop.handle({"kind": kind, "mono_ns": n * 10**9, "utc_ns": 1_790_000_000 * 10**9 + n * 10**9,
                            **fields})

    handle("power", state="on", clean=True, sources=["shoe"])
    handle("shoe_inserted", source="shoe")
    loop.configured = (new, 6)
    handle("card", card="5S", mode="game", source="shoe")  # the shoe in play keeps its rules
    assert loop.controller.ruleset.name == "punto-banco" and loop.configured is not None
    handle("shoe_removed", source="shoe")
    handle("shoe_inserted", source="shoe")
    assert (loop.controller.ruleset.name, loop.controller.decks, loop.controller.shoe.decks) == \
        ("macau-statutory", 6, 6)
    journal.close()
    checkpoints = [json.loads(line) for path in sorted(tmp_path.glob("*.jsonl"))
                   for line in path.read_bytes().splitlines() if b'"kind":"checkpoint"' in line]
    assert [(c["ruleset"], c["decks"]) for c in checkpoints][-1] == ("macau-statutory", 6)
    replay = run_shoed("replay", str(tmp_path), "--json")
    assert replay.returncode == 0 and json.loads(replay.stdout)["identical"] is True
