"""A damaged journal and a full disk under the real daemon (table-game-standards items 13, 18, 19, 20).

| case | what the daemon does | checked here |
|---|---|---|
| torn last record (a crash mid-write) | cuts it off at start, keeps it as `<file>.torn-<offset>`, logs and journals the recovery, runs on | the shoe finishes; every card once, in order; verify and replay clean |
| corrupted record in the middle | refuses to start: exit 2, one line naming the record, `STATUS=ALARM` to systemd; nothing is repaired, nothing acknowledged, nothing published | the files are byte for byte unchanged; once surveillance has put the record back, the shoe resumes and no card was lost |
| one digit changed in the complete last record (after a kill -9) | not a torn write: refuses to start as above; the acknowledged card is not cut | files unchanged; verify names the record; put back, no card lost |
| a middle file deleted, files reordered, a byte flipped in the third file from the end, a FIFO named like a journal file; unkeyed, keyed or sealed | start-up proves the whole chain: refuses to start as above (a FIFO does not hang it) | files unchanged; verify and replay end too |
| the last file cut at a record boundary after a clean stop | refuses: the verified mark says more was there | files unchanged |
| a journal file replaced by a symbolic link to a copy elsewhere | refuses: the journal is kept only in its own files | nothing written through the link |
| sealed journal: last shoe file deleted, a card rewritten and re-sealed with the box's key, the journal replaced by another key's | `journal verify --verify-key` reports each; the daemon refuses the deleted file | verify exit 1 with the reason |
| disk full | the failed append is cut back; the shoe's gate is locked; `STATUS=ALARM`, exit 3; a restart on the still-full disk refuses with one line | a display's events are exactly the journal's; the shoe holds the card that could not be journaled; after space is freed the shoe resumes, every card once |

The shoe is the virtual shoe: in its own process for the first two, in this
process for the full disk (so that its gate and its unacknowledged queue can be
looked at). The full disk is a real 128 KiB tmpfs; without the privilege to
mount one the test is skipped and says so.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest

from harness.processes import Daemon, NotifyListener, Simulator, run_shoed
from harness.records import (
    Display,
    as_journaled,
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
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "not a file"
            for p in sorted(journal.iterdir())}


def test_torn_last_record_is_cut_logged_and_the_daemon_runs_on(base):
    with Simulator(base, seed=31, pace=0.005) as sim:
        with Daemon(base, "--source", sim.source) as daemon:
            daemon.wait_for(lambda line: (line.get("coup") or 0) >= 5, 30, "coup 5")
            daemon.stop(signal.SIGKILL)
        # A crash during a record's write leaves the first part of it, never acknowledged (the
        # shoe hears of a card only once its record is durable). Cutting a record the daemon wrote
        # whole could cut one the shoe was told of: which it is, the kill's timing decides.
        path = shoe_file(base / "journal")
        path.chmod(0o644)
        whole = path.read_bytes()
        if whole.endswith(b"\n"):  # the half of a record like the last stands for the next one
            last = whole[whole.rstrip(b"\n").rfind(b"\n") + 1:]
            start, data = len(whole), whole + last[: len(last) // 2]
        else:  # the kill came during a write: that record is torn already
            start, data = whole.rfind(b"\n") + 1, whole
        cut = len(data)
        path.write_bytes(data)
        with Daemon(base, "--source", sim.source) as daemon:
            note = daemon.wait_for(lambda line: line.get("event") == "journal recovery", 5, "the recovery")["note"]
            assert note["action"] == "truncated_torn_tail" and note["offset"] == start
            assert note["kept_as"] == f"{path.name}.torn-{start}"
            assert (base / "journal" / note["kept_as"]).read_bytes() == data[start:cut]
            assert sim.wait_done(120) == 0, sim.summary
            assert daemon.stop() == 0
    started = [e for e in journal_events(base / "journal") if e["kind"] == "table.started"]
    assert started[-1]["recovery"][0]["action"] == "truncated_torn_tail"
    assert started[-1]["clean"] is False
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
        assert len(message) == 1 and message[0].startswith("shoed: the journal is corrupt (")
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
    from shoed.table.audience import display_event
    from shoed.simulate import VirtualShoe

    journal = base / "journal"
    mount_small_tmpfs(journal, "128k")
    notify = NotifyListener(base / "notify")
    watching = threading.Event()  # the shoe deals once the display has the table's snapshot
    shoe = VirtualShoe(ruleset="punto-banco", protocol="native", seed=33, pace=0.0, link=str(base / "shoe"),
                       truth_file=str(base / "truth.jsonl"), ready=watching.is_set)
    shoe.start()
    daemon = display = None
    try:
        daemon = Daemon(base, "--source", f"native:{base / 'shoe'}", env=notify.env())
        display = Display(daemon)
        display.until(lambda _: display.snapshots, 10, "snapshot")
        watching.set()
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
        assert all(by_seq.get(e["seq"]) == as_journaled(e) for e in display.events), "every published event is journaled"
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
        assert all(by_seq.get(e["seq"]) == as_journaled(e) for e in display.events)
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
        assert refused.wait_exit(30) == 3  # as every full disk: the status and the log's exit_code agree
    assert [line["exit_code"] for line in refused.lines if line.get("event") == "stopped after a failure"] == [3]
    last = refused.lines[-1]["event"]
    assert last.startswith("shoed: the journal cannot be written (") and "No space left on device" in last
    assert "free space for" in last and not any("Traceback" in str(line.get("event")) for line in refused.lines)


def test_a_journal_on_a_read_only_file_system_is_refused_saying_so(base):
    # No permission helps there: the refusal says read-only, not a user's permission (chmod would do nothing).
    journal = base / "journal"
    mount_small_tmpfs(journal, "1m")
    subprocess.run(["mount", "-o", "remount,ro", str(journal)], check=True)
    with Daemon(base, "--source", f"native:{base / 'no-shoe'}", wait_ready=False) as refused:
        assert refused.wait_exit(30) == 2
    last = refused.lines[-1]["event"]
    assert last.startswith(f"shoed: journal_dir {journal}: it is on a read-only file system"), last


# -- torn is only a last line without its newline; the whole chain is proved at start ----------


def refused_with_one_line(base: Path, sim: Simulator, notify: NotifyListener, *extra: str) -> str:
    """Start the daemon on a damaged journal: it must refuse with exit 2, one line, STATUS=ALARM, no READY."""
    journal = base / "journal"
    before = digests(journal)
    with Daemon(base, "--source", sim.source, *extra, wait_ready=False, env=notify.env()) as refused:
        assert refused.wait_exit(30) == 2
    errors = [line["event"] for line in refused.lines if str(line.get("event")).startswith("shoed: ")]
    assert len(errors) == 1 and errors[0].startswith("shoed: the journal is corrupt ("), refused.lines[-5:]
    assert not any("Traceback" in str(line.get("event")) for line in refused.lines)
    assert any(m.startswith("STATUS=ALARM: the journal is corrupt") for m in notify.drain()), notify.messages
    assert not any(m.startswith("READY=1") for m in notify.messages)
    assert digests(journal) == before, "nothing was cut, repaired or written"
    assert not list(journal.glob("*.torn-*"))
    return errors[0]


def test_a_digit_changed_in_the_complete_last_record_is_corruption_and_is_never_cut(base):
    with Simulator(base, seed=34, pace=0.005) as sim, NotifyListener(base / "notify") as notify:
        with Daemon(base, "--source", sim.source) as daemon:
            daemon.wait_for(lambda line: (line.get("coup") or 0) >= 5, 30, "coup 5")
            daemon.stop(signal.SIGKILL)
        journal = base / "journal"
        path = shoe_file(journal)
        path.chmod(0o644)
        original = path.read_bytes()
        lines = original.splitlines(keepends=True)
        last = lines[-1]
        at = last.index(b'"seq":') + 6  # a digit of the last record's seq: the line stays complete JSON
        digit = last[at : at + 1]
        changed = last[:at] + (b"1" if digit != b"1" else b"2") + last[at + 1 :]
        path.write_bytes(b"".join(lines[:-1]) + changed)

        message = refused_with_one_line(base, sim, notify)
        assert f"{path.name} line {len(lines)}" in message and "hash does not match" in message
        report = verify_journal(journal)
        assert report["exit"] == 1 and report["first_bad"]["line"] == len(lines)

        path.write_bytes(original)  # surveillance puts it back: the card was never lost
        with Daemon(base, "--source", sim.source) as daemon:
            assert sim.wait_done(120) == 0, sim.summary
            assert daemon.stop() == 0
    every_card_once(sim.truth(), base / "journal")
    assert verify_journal(base / "journal")["exit"] == 0


MODES = ("unkeyed", "keyed", "sealed")


def mode_options(base: Path, mode: str) -> tuple[str, ...]:
    if mode == "keyed":
        return ("--config", str(base / "keyed.toml"))
    return ()


class DealtJournals:
    """Per mode, built on first use: a real daemon's journal of three shoes (four files: the
    table's, then one per shoe), with its config, keys and the simulator's truth; copied by each test."""

    def __init__(self, tmp_path_factory):
        self.factory = tmp_path_factory
        self.built: dict[str, Path] = {}

    def __getitem__(self, mode: str) -> Path:
        if mode not in self.built:
            self.built[mode] = self._build(mode)
        return self.built[mode]

    def _build(self, mode: str) -> Path:
        from harness.processes import remove_dir, short_dir

        base = short_dir()
        try:
            (base / "secret").write_bytes(b"a table secret kept off the journal\n")
            (base / "secret").chmod(0o600)  # a secret: the daemon refuses one others may read
            (base / "keyed.toml").write_text(f'journal_secret_file = "{base / "secret"}"\n')
            if mode == "sealed":
                run_shoed("keys", "journal", "--journal", str(base / "journal"), "--table", "t1",
                          "--verify-key", str(base / "verify.key"), check=True)
            with Simulator(base, seed=40, pace=0.0, shoes=3) as sim:
                with Daemon(base, "--source", sim.source, *mode_options(base, mode)) as daemon:
                    assert sim.wait_done(240) == 0
                    assert daemon.stop() == 0
            keep = self.factory.mktemp(mode) / "built"
            shutil.copytree(base, keep, symlinks=True,
                            ignore=shutil.ignore_patterns("shoe", "events", "snapshot", "commands"))
            return keep
        finally:
            remove_dir(base)


@pytest.fixture(scope="module")
def dealt_journals(tmp_path_factory):
    return DealtJournals(tmp_path_factory)


def from_built(built: Path, base: Path) -> None:
    for item in built.iterdir():
        if item.is_dir():
            shutil.copytree(item, base / item.name)
        else:
            shutil.copy2(item, base / item.name)
    (base / "keyed.toml").write_text(f'journal_secret_file = "{base / "secret"}"\n')


def verify_mode(base: Path, mode: str) -> subprocess.CompletedProcess:
    keys = {"keyed": ("--secret-file", str(base / "secret")), "sealed": ("--verify-key", str(base / "verify.key"))}
    return run_shoed("journal", "verify", str(base / "journal"), "--json", *keys.get(mode, ()), timeout=60)


DAMAGE = ("a middle file deleted", "two files swapped", "a byte flipped in the third file from the end",
          "a FIFO named like the next journal file")


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("damage", DAMAGE)
def test_start_up_proves_the_whole_chain(base, dealt_journals, mode, damage):
    from_built(dealt_journals[mode], base)
    journal = base / "journal"
    files = sorted(journal.glob("t1-*.jsonl"))
    assert len(files) == 4
    assert json.loads(verify_mode(base, mode).stdout)["ok"] is True
    for f in files:
        f.chmod(0o644)
    if damage == "a middle file deleted":
        files[1].unlink()
    elif damage == "two files swapped":
        a, b = files[1], files[2]
        tmp = journal / "swap"
        a.rename(tmp)
        b.rename(a)
        tmp.rename(b)
    elif damage.startswith("a byte flipped"):
        data = bytearray(files[-3].read_bytes())
        data[len(data) // 2] ^= 0x04
        files[-3].write_bytes(bytes(data))
    else:
        name = files[-1].name.split("-")
        os.mkfifo(journal / "-".join([name[0], f"{int(name[1]) + 1:06d}", *name[2:]]))
    with Simulator(base, seed=41, pace=0.005) as sim, NotifyListener(base / "notify") as notify:
        started = time.monotonic()
        refused_with_one_line(base, sim, notify, *mode_options(base, mode))
        assert time.monotonic() - started < 30
    done = verify_mode(base, mode)
    assert done.returncode == 1, done.stdout + done.stderr
    if "FIFO" in damage:
        assert "not a regular file" in json.loads(done.stdout)["first_bad"]["reason"]
        replayed = replay_journal(journal)
        assert replayed["exit"] != 0


def test_a_journal_file_replaced_by_a_link_to_a_copy_elsewhere_refuses_start(base, dealt_journals):
    """The last shoe file swapped for a symbolic link to an identical copy outside the journal
    directory (a tmpfs, another disk): the chain would verify, but the journal would be written
    wherever the link points. The daemon refuses, and writes nothing through the link."""
    from_built(dealt_journals["unkeyed"], base)
    path = shoe_file(base / "journal")
    elsewhere = base / "elsewhere.jsonl"
    shutil.copy2(path, elsewhere)
    copied = elsewhere.read_bytes()
    path.unlink()
    path.symlink_to(elsewhere)
    with Simulator(base, seed=43, pace=0.005) as sim, NotifyListener(base / "notify") as notify:
        message = refused_with_one_line(base, sim, notify)
    assert path.name in message and "symbolic link" in message
    assert path.is_symlink() and elsewhere.read_bytes() == copied


def test_the_last_file_cut_at_a_record_boundary_after_a_clean_stop_refuses_start(base, dealt_journals):
    from_built(dealt_journals["unkeyed"], base)
    path = shoe_file(base / "journal")
    path.chmod(0o644)
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[:-3]))  # three whole records gone: no torn line is left
    with Simulator(base, seed=42, pace=0.005) as sim, NotifyListener(base / "notify") as notify:
        message = refused_with_one_line(base, sim, notify)
    assert "acknowledged records were removed" in message


def test_a_sealed_journal_proves_against_whoever_holds_the_box_later(base, dealt_journals):
    from harness.records import reseal

    from_built(dealt_journals["sealed"], base)
    journal = base / "journal"
    done = verify_mode(base, "sealed")
    report = json.loads(done.stdout)
    assert done.returncode == 0 and report["sealed"] is True and report["ok"] is True
    assert not (journal / "verify.key").exists()
    replayed = run_shoed("replay", str(journal), "--json", "--verify-key", str(base / "verify.key"), timeout=120)
    assert replayed.returncode == 0 and json.loads(replayed.stdout)["identical"] is True, replayed.stderr
    files = sorted(journal.glob("t1-*.jsonl"))

    # The box's key now is that of the last file: a card of an earlier shoe rewritten and the
    # whole chain sealed again with it (the best whoever holds the box can do) does not verify.
    state = json.loads((journal / "t1.seal").read_text())
    assert state["epoch"] == 4
    box_key = bytes.fromhex(state["key"])
    copy = base / "copy"
    shutil.copytree(journal, copy)

    def change(name, record):
        if name == files[1].name and record["kind"] == "step":
            for event in record["events"]:
                if event.get("kind") == "card" and event.get("card") != "AH":
                    event["card"] = "AH"
        return record

    reseal(copy, change, secret=box_key)
    for path in copy.glob("t1-*.jsonl"):  # sealed headers again, as the box seals them
        text = path.read_bytes().replace(b'"alg":"hmac-sha256"', b'"alg":"fss-hmac-sha256"')
        path.write_bytes(text)
    forged = run_shoed("journal", "verify", str(copy), "--json", "--verify-key", str(base / "verify.key"))
    assert forged.returncode == 1 and json.loads(forged.stdout)["first_bad"]["file"].endswith(files[0].name)

    # The last shoe file deleted: the sealing key cannot go back, so it shows.
    files[-1].chmod(0o644)
    files[-1].unlink()
    done = verify_mode(base, "sealed")
    assert done.returncode == 1 and "removed" in json.loads(done.stdout)["first_bad"]["reason"]
    with Simulator(base, seed=43, pace=0.005) as sim, NotifyListener(base / "notify") as notify:
        message = refused_with_one_line(base, sim, notify)
    assert "shoe files were removed" in message

    # Another table's (another key's) journal put in its place.
    other = dealt_journals["unkeyed"] / "journal"
    done = run_shoed("journal", "verify", str(other), "--json", "--verify-key", str(base / "verify.key"))
    assert done.returncode == 1 and "not keyed" in json.loads(done.stdout)["first_bad"]["reason"]
