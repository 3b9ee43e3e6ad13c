"""A damaged journal and a full disk under the real daemon (table-game-standards items 13, 18, 19, 20).

| case | what the daemon does | checked here |
|---|---|---|
| torn last record (a crash mid-write) | cuts it off at start, keeps it as `<file>.torn-<offset>`, logs and journals the recovery, runs on | the shoe finishes; every card once, in order; verify and replay clean |
| corrupted record in the middle | refuses to start: exit 2, one line naming the record, `STATUS=ALARM` to systemd; nothing is repaired, nothing acknowledged, nothing published | the files are byte for byte unchanged; once surveillance has put the record back, the shoe resumes and no card was lost |
| disk full | the failed append is cut back; the shoe's gate is locked; `STATUS=ALARM`, exit 3; a restart on the still-full disk refuses with one line | a display's events are exactly the journal's; the shoe holds the card that could not be journaled; after space is freed the shoe resumes, every card once |

The shoe is the virtual shoe: in its own process for the first two, in this
process for the full disk (so that its gate and its unacknowledged queue can be
looked at). The full disk is a real 128 KiB tmpfs; without the privilege to
mount one the test is skipped and says so.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import time
from pathlib import Path

import pytest

from tests.daemon_runner import Daemon, NotifyListener, Simulator
from tests.reliability.harness import (
    Display,
    draw_order,
    journal_events,
    journal_inputs,
    replay_journal,
    truth_cards,
    verify_journal,
)


@pytest.fixture
def base(base):
    """The short directory of tests/conftest.py, its journal unmounted first if a test mounted a tmpfs there."""
    yield base
    subprocess.run(["umount", "-l", str(base / "journal")], capture_output=True, check=False)


def every_card_once(truth: list[dict], journal: Path) -> None:
    inputs = journal_inputs(journal)
    events = journal_events(journal)
    assert [i["card"] for i in inputs if i["kind"] == "card"] == truth_cards(truth)
    dealt = [c for e in events if e["kind"] == "coup.result" for c in draw_order(e)]
    assert dealt == truth_cards(truth, ("player", "banker"))
    closed = [e for e in events if e["kind"] == "shoe.closed"]
    assert closed and all(e["reconciliation"]["balanced"] for e in closed)


def shoe_file(journal: Path) -> Path:
    return sorted(journal.glob("t1-*.jsonl"))[-1]


def digests(journal: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(journal.iterdir())}


def test_torn_last_record_is_cut_logged_and_the_daemon_runs_on(base):
    with Simulator(base, seed=31, pace=0.005) as sim:
        with Daemon(base, "--source", sim.source) as daemon:
            daemon.wait_for(lambda line: (line.get("coup") or 0) >= 5, 30, "coup 5")
            assert daemon.stop() == 0
        # The last record (the stop) is cut in the middle, as a crash during its write leaves it.
        path = shoe_file(base / "journal")
        path.chmod(0o644)
        data = path.read_bytes()
        start = data.rstrip(b"\n").rfind(b"\n") + 1
        cut = start + (len(data) - start) // 2
        path.write_bytes(data[:cut])
        with Daemon(base, "--source", sim.source) as daemon:
            note = daemon.wait_for(lambda line: line.get("event") == "journal recovery", 5, "the recovery")["note"]
            assert note["action"] == "truncated_torn_tail" and note["offset"] == start
            assert note["kept_as"] == f"{path.name}.torn-{start}"
            assert (base / "journal" / note["kept_as"]).read_bytes() == data[start:cut]
            assert sim.wait_done(120) == 0, sim.summary
            assert daemon.stop() == 0
    started = [e for e in journal_events(base / "journal") if e["kind"] == "table.started"]
    assert started[-1]["recovery"][0]["action"] == "truncated_torn_tail"
    assert started[-1]["clean"] is False  # the record of the clean stop is what was lost
    every_card_once(sim.truth(), base / "journal")
    assert verify_journal(base / "journal")["exit"] == 0
    assert replay_journal(base / "journal")["identical"] is True


def test_corrupted_middle_record_keeps_the_table_locked_until_surveillance_has_looked(base):
    with Simulator(base, seed=32, pace=0.005) as sim, NotifyListener(base / "notify") as notify:
        with Daemon(base, "--source", sim.source) as daemon:
            daemon.wait_for(lambda line: (line.get("coup") or 0) >= 5, 30, "coup 5")
            assert daemon.stop() == 0
        journal = base / "journal"
        path = shoe_file(journal)
        path.chmod(0o644)
        original = path.read_bytes()
        lines = original.split(b"\n")
        victim = 10  # line 11 of the shoe's file: a card of the first coups
        offset = sum(len(x) + 1 for x in lines[:victim]) + len(lines[victim]) // 2
        damaged = bytearray(original)
        damaged[offset] ^= 0x01
        path.write_bytes(bytes(damaged))
        before = digests(journal)

        with Daemon(base, "--source", sim.source, wait_ready=False, env=notify.env()) as refused:
            assert refused.wait_exit(30) == 2
        message = [line["event"] for line in refused.lines if "corrupt" in str(line.get("event"))]
        assert len(message) == 1 and message[0].startswith("shoed: the journal is corrupt in the middle")
        assert f"{path.name} line {victim + 1}" in message[0] and "shoed journal verify" in message[0]
        assert any(m.startswith("STATUS=ALARM") for m in notify.drain()), notify.messages
        assert not any(m.startswith("READY=1") for m in notify.messages)
        assert digests(journal) == before, "nothing was repaired or written"
        report = verify_journal(journal)
        assert report["exit"] == 1 and report["first_bad"]["line"] == victim + 1

        # Surveillance compares with its copy and puts the record back; the table resumes.
        path.write_bytes(original)
        with Daemon(base, "--source", sim.source) as daemon:
            assert sim.wait_done(120) == 0, sim.summary
            assert daemon.stop() == 0
    every_card_once(sim.truth(), base / "journal")
    assert verify_journal(base / "journal")["exit"] == 0


def mount_small_tmpfs(path: Path, size: str) -> None:
    path.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)],
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here ({done.stderr.strip()}): the disk-full case needs root")


def test_disk_full_locks_the_gate_raises_the_alarm_and_publishes_nothing_unjournaled(base):
    from shoed.audience import display_event
    from shoed.simulate import VirtualShoe

    journal = base / "journal"
    mount_small_tmpfs(journal, "128k")
    notify = NotifyListener(base / "notify")
    shoe = VirtualShoe(ruleset="punto-banco", protocol="native", seed=33, pace=0.0, link=str(base / "shoe"),
                       truth_file=str(base / "truth.jsonl"))
    shoe.start()
    daemon = display = None
    try:
        daemon = Daemon(base, "--source", f"native:{base / 'shoe'}", env=notify.env())
        display = Display(daemon)
        deadline = time.monotonic() + 60
        while daemon.proc.poll() is None:
            assert time.monotonic() < deadline, "the disk never filled"
            display.poll(0.05)
        assert daemon.wait_exit(10) == 3
        display.poll(0.3)
        critical = [line for line in daemon.lines if line.get("level") == "critical"]
        assert critical and "journal write failed: the gate is locked" in critical[0]["event"]
        assert "No space left on device" in critical[0]["error"]
        assert any(m.startswith("STATUS=ALARM: journal write failed") for m in notify.drain()), notify.messages
        # The shoe's gate was locked before the daemon stopped; what could not be journaled
        # was not acknowledged, so the shoe still holds it.
        time.sleep(0.3)
        assert shoe.firmware.gate_locked is True
        journaled = journal_events(journal)
        assert display.events, "the display saw the shoe dealt until the disk filled"
        last_seen = display.events[-1]["seq"]
        by_seq = {e["seq"]: display_event(e) for e in journaled}  # as the display audience sees it
        assert all(by_seq.get(e["seq"]) == e for e in display.events), "every published event is journaled"
        assert last_seen == max(by_seq), "the last journaled event was published; nothing after it"
        taken = [i["card"] for i in journal_inputs(journal) if i["kind"] == "card"]
        sent = truth_cards([e.to_json() for e in shoe.truth])
        assert taken == sent[: len(taken)], "what was journaled is what the shoe sent, in order"
        assert not any(e["kind"] == "shoe.closed" for e in journaled), "the disk filled mid-shoe"
        assert verify_journal(journal)["exit"] == 0, "the failed append left no half record"

        # Restarted on the still-full disk, the daemon journals its start if that still fits and
        # stops again at the first record that does not (exit 3), or refuses at once (exit 2):
        # either way with one line, the gate locked, and nothing published that is not journaled.
        with Daemon(base, "--source", f"native:{base / 'shoe'}", wait_ready=False) as again:
            assert again.wait_exit(30) in (2, 3)
        assert not any("Traceback" in str(line.get("event")) for line in again.lines), again.lines[-5:]
        display.poll(0.3)
        by_seq = {e["seq"]: display_event(e) for e in journal_events(journal)}
        assert all(by_seq.get(e["seq"]) == e for e in display.events)
        assert shoe.firmware.gate_locked is True

        # Space is freed: the table resumes, the shoe delivers what it held, and no card was lost.
        subprocess.run(["mount", "-o", "remount,size=8m", str(journal)], check=True, capture_output=True)
        daemon = Daemon(base, "--source", f"native:{base / 'shoe'}")
        assert shoe.wait_done(120), "the shoe finished"
        assert daemon.stop() == 0
    finally:
        if display is not None:
            display.close()
        if daemon is not None:
            daemon.stop()
        shoe.stop()
        notify.close()
    every_card_once([e.to_json() for e in shoe.truth], journal)
    assert verify_journal(journal)["exit"] == 0


def test_a_full_disk_at_the_first_start_is_refused_with_one_line(base):
    journal = base / "journal"
    mount_small_tmpfs(journal, "64k")
    fd = os.open(journal / "filler", os.O_WRONLY | os.O_CREAT)  # every byte of the filesystem taken
    try:
        for size in (65536, 4096, 512, 64, 1):
            try:
                while os.write(fd, b"x" * size):
                    pass
            except OSError:
                pass
    finally:
        os.close(fd)
    with Daemon(base, "--source", f"native:{base / 'no-shoe'}", wait_ready=False) as refused:
        assert refused.wait_exit(30) == 2
    last = refused.lines[-1]["event"]
    assert last.startswith("shoed: the journal cannot be written (") and "No space left on device" in last
    assert "free space for" in last and not any("Traceback" in str(line.get("event")) for line in refused.lines)
