"""A journal whose chain is intact but whose record is not of the journal's form.

decision (shoed/table/replay.py `UnusableRecord`): an unkeyed journal can be sealed again by
whoever can write it, and a keyed one by whoever holds its secret; a record sealed that way can
hold anything (an input that is no object, a time that is text, a checkpoint without its
state). The hash chain holds, so only the replay meets it. `shoed replay` then stops at that
record and says so in one line (exit 1, `corrupt` naming it), never a traceback; the daemon
refuses to start on it as on a broken chain (exit 2, one line), never a crash that systemd
would restart in a loop.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from harness.records import reseal, write_journal


def _change_step(n: int, how):
    """A `change` for reseal: the n-th step record of the last shoe file, changed by `how`."""
    def change(name: str, record: dict) -> dict:
        if name.endswith("table.jsonl") or record.get("kind") != "step":
            return record
        change.steps += 1  # type: ignore[attr-defined]
        if change.steps == n:  # type: ignore[attr-defined]
            how(record)
        return record

    change.steps = 0  # type: ignore[attr-defined]
    return change


def _input_is_true(record):
    record["input"] = True


def _time_is_text(record):
    record["input"]["mono_ns"] = "x"


def _checkpoint_state_is_text(name: str, record: dict) -> dict:
    if not name.endswith("table.jsonl") and record.get("kind") == "checkpoint":
        record["state"] = "x"
    return record


def _time_beyond_the_platform(record):
    record["input"]["utc_ns"] = 10**30  # no time_t holds it: formatting it overflows


# Each a maker of the change that reseal applies (a step's change counts the steps it has seen).
def _checkpoint_decks_beyond_any_shoe(name: str, record: dict) -> dict:
    if not name.endswith("table.jsonl") and record.get("kind") == "checkpoint":
        record["decks"] = 10**30
    return record


CASES = {"an input that is no object": lambda: _change_step(40, _input_is_true),
         "a time that is text": lambda: _change_step(40, _time_is_text),
         "a time no clock can write": lambda: _change_step(40, _time_beyond_the_platform),
         "the shoe file's checkpoint without its state": lambda: _checkpoint_state_is_text,
         "a checkpoint naming more decks than any shoe holds": lambda: _checkpoint_decks_beyond_any_shoe}


@pytest.fixture(scope="module")
def dealt(tmp_path_factory):
    directory = tmp_path_factory.mktemp("dealt") / "journal"
    write_journal(directory, shoes=1, odds=False)
    return directory


def _copy(dealt, tmp_path):
    import shutil

    out = tmp_path / "journal"
    shutil.copytree(dealt, out)
    return out


def _shoed(*args, cwd):
    env = {**os.environ, "PYTHONPATH": os.getcwd()}
    return subprocess.run([sys.executable, "-m", "shoed", *args], capture_output=True, text=True, timeout=60,
                          cwd=cwd, env=env)


@pytest.mark.parametrize("case", list(CASES))
def test_replay_stops_at_the_record_in_one_line(dealt, tmp_path, case):
    journal = _copy(dealt, tmp_path)
    reseal(journal, CASES[case]())
    assert _shoed("journal", "verify", str(journal), cwd=tmp_path).returncode == 0  # the chain holds
    proc = _shoed("replay", str(journal), "--json", cwd=tmp_path)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr[-2000:]
    report = json.loads(proc.stdout)
    assert report["identical"] is False
    assert "a record the table cannot take" in json.dumps(report["corrupt"])


@pytest.mark.parametrize("case", list(CASES))
def test_the_daemon_refuses_to_start_on_it_with_one_line(dealt, tmp_path, case):
    journal = _copy(dealt, tmp_path)
    reseal(journal, CASES[case]())
    before = {p.name: p.read_bytes() for p in journal.iterdir()}
    proc = _shoed("run", "--journal", str(journal), "--source", f"native:{tmp_path / 'no-shoe'}",
                  "--pub", f"ipc://{tmp_path}/pub", "--snapshot", f"ipc://{tmp_path}/snap",
                  "--commands", f"ipc://{tmp_path}/cmd", cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr + proc.stdout
    errors = [line for line in proc.stderr.splitlines() if line.startswith("shoed: ")]
    assert len(errors) == 1 and "the journal is corrupt" in errors[0] and "cannot take" in errors[0], proc.stderr
    after = {p.name: p.read_bytes() for p in journal.iterdir() if p.suffix == ".jsonl"}
    assert after == {k: v for k, v in before.items() if k.endswith(".jsonl")}, "nothing cut or written"


def _reseal_bytes(journal, name: str, line_no: int, edit) -> None:
    """Edit one line's bytes (`edit(line) -> line`) and seal the chain again from there by bytes alone
    (json cannot read what is nested too deeply): the hash of a canonical line is over the line
    without its `"hash":"<hex>",` member (docs/journal.md)."""
    import hashlib
    import re

    for mark in journal.glob("*.verified"):
        mark.unlink()
    prev = "0" * 64
    for path in sorted(journal.glob("*.jsonl")):
        out = []
        for n, line in enumerate(path.read_bytes().splitlines(), 1):
            if path.name == name and n == line_no:
                line = edit(line)
            line = re.sub(rb'"prev":"[0-9a-f]{64}"', b'"prev":"' + prev.encode() + b'"', line, count=1)
            prev = hashlib.sha256(re.sub(rb'"hash":"[0-9a-f]{64}",', b"", line, count=1)).hexdigest()
            out.append(re.sub(rb'"hash":"[0-9a-f]{64}"', b'"hash":"' + prev.encode() + b'"', line, count=1) + b"\n")
        path.chmod(0o644)
        path.write_bytes(b"".join(out))


def test_a_record_nested_100000_deep_is_corruption_named_in_one_line_everywhere(dealt, tmp_path):
    """msgspec raises RecursionError (not a DecodeError) on it: verify, recall and replay were
    tracebacks, and the daemon's start an exit 1 that systemd restarts for ever."""
    journal = _copy(dealt, tmp_path)
    name = sorted(p.name for p in journal.glob("*.jsonl"))[-1]
    deep = b"[" * 100_000 + b"]" * 100_000
    _reseal_bytes(journal, name, 10, lambda line: line.replace(b'"input":{', b'"input":{"deep":' + deep + b",", 1))
    for args in (("journal", "verify", str(journal)), ("journal", "recall", str(journal)), ("replay", str(journal))):
        proc = _shoed(*args, cwd=tmp_path)
        assert proc.returncode == 1 and "Traceback" not in proc.stderr, (args, proc.stderr[-1500:])
        assert "nested too deeply" in proc.stdout + proc.stderr, (args, proc.stdout[-500:])
    proc = _shoed("run", "--journal", str(journal), "--source", f"native:{tmp_path / 'no-shoe'}",
                  "--pub", f"ipc://{tmp_path}/pub", "--snapshot", f"ipc://{tmp_path}/snap",
                  "--commands", f"ipc://{tmp_path}/cmd", cwd=tmp_path)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr[-1500:]
    errors = [line for line in proc.stderr.splitlines() if line.startswith("shoed: ")]
    assert len(errors) == 1 and "nested too deeply" in errors[0]
