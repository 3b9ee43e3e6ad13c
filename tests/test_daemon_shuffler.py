"""The real daemon with the virtual shuffler and the virtual shoe on real ptys: a whole shuffled shoe dealt,
kill -9 in the middle of it, the order recovered from the sealed journal, every card checked against it,
the commitment checked at the close, and the order nowhere in the journal in plain text before then."""

from __future__ import annotations

import json
import os
import re
import time
from collections import Counter

import pytest

from firmware_protocol.messages import order_digest
from shoed.rules.shuffle import reveal_matches
from harness.processes import Daemon, Simulator, run_shoed
from tests.test_daemon_restart import records_of


def order_key(base):
    """The key of the shuffled order: 64 hex digits in a file outside the journal directory."""
    key = base / "order.key"
    key.write_text(os.urandom(32).hex() + "\n")
    os.chmod(key, 0o600)  # a secret: the daemon refuses one others may read
    return key


def shuffled_table(base, key, seed: int, faults: str | None = None, shoes: int = 1, fault_shoe: int = 1,
                   sim_args: tuple[str, ...] = (), shoe: bool = True, more_sources: str = ""):
    """The virtual shoe and the virtual shuffler (both ptys up before the daemon starts, the shoe run with
    `sim_args` too), and the daemon's configuration reading both (`shoe=False`: the shuffler without the
    shoe, at a table whose shoe reads no card), then `more_sources`."""
    options = ["--shuffler-faults", faults, "--shuffler-fault-shoe", str(fault_shoe)] if faults else []
    sim = Simulator(base, *sim_args, "--shuffler", "--shuffler-link", str(base / "shuffler"), *options, seed=seed,
                    pace=0.01, shoes=shoes)
    assert sim.proc.stdout.readline().strip() == str(base / "shuffler")  # the second line: the shuffler is up
    config = base / "shoed.toml"
    shuffler = f'[[sources]]\ndriver = "shuffler"\nurl = "{base / "shuffler"}"\norder_key_file = "{key}"\n'
    reader = f'[[sources]]\ndriver = "native"\nurl = "{sim.link}"\n\n' if shoe else ""
    config.write_text(reader + shuffler + (f"\n{more_sources}" if more_sources else ""))
    return sim, config


def journal_text(journal) -> str:
    return "\n".join(p.read_text() for p in sorted(journal.glob("*.jsonl")))


def wait_in_journal(journal, text: str, deadline: float, times: int = 1) -> None:
    """Wait until `text` is in the journal `times` times, or the monotonic `deadline` has passed."""
    while journal_text(journal).count(text) < times and time.monotonic() < deadline:
        time.sleep(0.05)


def events_until(base, text: str, timeout: float, linger: float = 0.0, **table) -> list[dict]:
    """Run the daemon at a shuffled table until `text` is in its journal (then `linger` seconds more); its events."""
    key = order_key(base)
    sim, config = shuffled_table(base, key, **table)
    journal = base / "journal"
    try:
        daemon = Daemon(base, "--config", str(config), journal=journal)
        deadline = time.monotonic() + timeout
        wait_in_journal(journal, text, deadline)
        time.sleep(linger)
        daemon.stop()
    finally:
        sim.stop()
    return [e for r in records_of(journal) if r["kind"] == "step" for e in r["events"]]


def test_a_shuffled_shoe_survives_kill_9_and_its_reveal_matches_the_commitment(base):
    key = order_key(base)
    sim, config = shuffled_table(base, key, seed=9)
    journal = base / "journal"
    try:
        daemon = Daemon(base, "--config", str(config), journal=journal)
        deadline = time.monotonic() + 60
        wait_in_journal(journal, '"coup.result"', deadline, times=8)
        assert journal_text(journal).count('"coup.result"') >= 8, "the shoe was not dealt"
        daemon.kill()  # mid-shoe
        daemon = Daemon(base, "--config", str(config), journal=journal)
        assert sim.wait_done(90) == 0
        time.sleep(0.3)
        daemon.stop()
    finally:
        sim.stop()
    records = records_of(journal)
    events = [e for r in records if r["kind"] == "step" for e in r["events"]]
    alarms = {e["alarm"] for e in events if e["kind"] == "alarm" and e.get("active")}
    assert not alarms & {"sequence_mismatch", "shoe_unverified", "shuffle_order_invalid", "deck_incomplete",
                         "integrity"}, alarms
    # The shuffler is no reader of the table's: the shoe alone deals, with its own buttons.
    powers = [r["input"] for r in records if r["kind"] == "step" and r["input"].get("kind") == "power"
              and r["input"].get("state") == "on"]
    assert len(powers) == 2 and all(p["sources"] == p["mode_told"] == [f"native:{sim.link}"] for p in powers)
    assert not any(e["kind"] in ("device.primary", "device.fallback") for e in events)
    opened = next(e for e in events if e["kind"] == "shoe.opened")
    closed = next(e for e in events if e["kind"] == "shoe.closed")
    reveal = closed["reveal"]
    assert reveal_matches(opened["commitment"], reveal["order"], bytes.fromhex(reveal["salt"]))
    dealt = [e["card"] for e in events if e["kind"] in ("card", "shoe.burn") and e.get("card")]
    order = reveal["order"]
    assert len(dealt) > 250
    assert any((order[i:] + order[:i])[: len(dealt)] == dealt for i in range(len(order)))
    verified = run_shoed("journal", "verify", str(journal), "--json", check=True)
    assert json.loads(verified.stdout)["commitments"] == {"checked": 1, "mismatched": []}
    # Replay equals record, with the order key; without it the sealed order cannot be opened.
    replayed = run_shoed("replay", str(journal), "--order-key-file", str(key), "--json", "--jobs", "1")
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr
    for jobs in ("1", "2"):  # reported as differences, never a traceback
        unopened = run_shoed("replay", str(journal), "--json", "--jobs", jobs)
        assert unopened.returncode == 1 and "Traceback" not in unopened.stderr, unopened.stderr[-800:]
        report = json.loads(unopened.stdout)
        assert report["identical"] is False and report["differences"] and report["corrupt"] is None
        assert "replay with --order-key-file" in unopened.stderr  # what to do about it, said once
    # Before the close, no record holds a run of the order in plain text.
    closing = next(i for i, r in enumerate(records) if r["kind"] == "step"
                   and any(e["kind"] == "shoe.closed" for e in r["events"]))
    earlier = json.dumps(records[:closing])
    for start in range(0, len(order) - 6, 50):
        assert json.dumps(order[start:start + 6])[1:-1] not in earlier
    # Nor anything that tests a guessed order: the commitment's salt (the inputs hold a nonce the key turns
    # into it), the shuffler's plain digest of the order (anywhere), a plain hash of a frame.
    assert reveal["salt"] not in earlier and '"salt"' not in earlier
    whole = journal_text(journal)
    assert order_digest(order) not in whole and "raw_sha256" not in whole and '"digest_hmac"' in whole


def test_a_shuffler_configured_with_the_native_driver_gives_no_order_to_the_journal(base):
    """The order is sealed only by the shuffler driver: a shuffler configured as `native` (no order key) has
    its messages refused as a type that device does not send, said in the journal without their bytes."""
    key = order_key(base)
    sim, config = shuffled_table(base, key, seed=9)
    text = config.read_text()
    config.write_text(text.replace('driver = "shuffler"', 'driver = "native"').replace(f'order_key_file = "{key}"\n', ""))
    assert "order_key_file" not in config.read_text()
    journal = base / "journal"
    try:
        daemon = Daemon(base, "--config", str(config), journal=journal)
        deadline = time.monotonic() + 30
        wait_in_journal(journal, "order_chunk", deadline)
        time.sleep(0.5)
        daemon.stop()
    finally:
        sim.stop()
    records = records_of(journal)
    inputs = [r["input"] for r in records if r["kind"] == "step"]
    assert not any(i.get("kind") in ("shuffle_started", "order_chunk", "shuffle_completed") for i in inputs)
    refused = [i for i in inputs if i.get("kind") == "warning" and "card-reading shuffler" in str(i.get("text"))]
    assert refused and all(not i.get("raw") for i in refused), refused
    assert any("order_chunk" in i["text"] for i in refused) and all('driver = "shuffler"' in i["text"] for i in refused)
    assert '"shuffler"' not in json.dumps([r.get("state", {}).get("shuffler") for r in records])


@pytest.mark.parametrize("source, words", [
    ('driver = "native"\nurl = "/dev/x"\norder_key_file = "{key}"\n', "order_key_file is the shuffler driver's"),
    ('driver = "native-usb"\nurl = "usb://1d50:6150"\norder_key_file = "{key}"\n', "driver = \"shuffler\""),
])
def test_config_check_refuses_a_shufflers_option_on_another_driver(base, source, words):
    key = order_key(base)
    config = base / "shoed.toml"
    config.write_text(f'journal_dir = "{base / "journal"}"\nkey_dir = "{base / "keys"}"\n[[sources]]\n'
                      + source.format(key=key))
    proc = run_shoed("config", "check", str(config))
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and words in proc.stderr, proc.stderr


@pytest.mark.parametrize("content, words", [
    ("password" * 4, "64 hex digits"),  # 32 characters of text were taken as 32 raw bytes
    ("0" * 64 + "\n", "one byte repeated (00)"),
    ("ab" * 32 + "\n", "one byte repeated (ab)"),
    (os.urandom(16).hex(), "64 hex digits"),  # openssl rand -hex 16: 128 bits
    (os.urandom(32).hex() + "zz\n", "64 hex digits"),
])
def test_a_weak_or_malformed_order_key_is_refused_in_one_line_naming_the_file(base, content, words):
    key = base / "order.key"
    key.write_text(content)
    os.chmod(key, 0o600)
    config = base / "shoed.toml"
    config.write_text(f'journal_dir = "{base / "journal"}"\nkey_dir = "{base / "keys"}"\n[[sources]]\n'
                      f'driver = "shuffler"\nurl = "/dev/x"\norder_key_file = "{key}"\n')
    proc = run_shoed("config", "check", str(config))
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
    assert f"order key file {key}" in proc.stderr and words in proc.stderr, proc.stderr
    key.write_text(" " + os.urandom(32).hex() + "\n")  # what openssl rand -hex 32 writes (spaces around are fine)
    assert run_shoed("config", "check", str(config)).returncode == 0


CARD_TEXT = re.compile(r"""["']([A2-9TJQK][CDHS])["']""")


def mentioned(item) -> Counter:
    """The cards an event, a snapshot or a display's state (its repr) names."""
    return Counter(CARD_TEXT.findall(item if isinstance(item, str) else json.dumps(item)))


def test_subscribers_a_catch_up_client_and_a_display_never_see_a_card_before_it_is_dealt(base):
    from shoed.display.state import fold
    from shoed.net.client import TableClient

    key = order_key(base)
    sim, config = shuffled_table(base, key, seed=10)
    daemon = Daemon(base, "--config", str(config))
    early, late = TableClient(daemon.events, daemon.snapshot, "t1"), None
    seen_early, seen_late = [], []
    try:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline and not any(e.get("kind") == "shoe.closed" for e in seen_early):
            seen_early += early.poll(0.05)
            if late is None and sum(e.get("kind") == "coup.result" for e in seen_early) >= 10:
                late = TableClient(daemon.events, daemon.snapshot, "t1")  # joins mid-shoe: snapshot, then events
            if late is not None:
                seen_late += late.poll(0.0)
        seen_late += late.poll(0.5)
    finally:
        early.close()
        if late is not None:
            late.close()
        daemon.stop()
        sim.stop()
    closed_at = next(e["seq"] for e in seen_early if e.get("kind") == "shoe.closed")
    dealt_by_seq: dict[int, Counter] = {}
    dealt: Counter = Counter()
    for event in seen_early:
        if event.get("kind") in ("card", "shoe.burn") and event.get("card"):
            dealt[event["card"]] += 1
        dealt_by_seq[event["seq"]] = Counter(dealt)
    assert sum(dealt.values()) > 250
    for item in seen_early + seen_late:
        seq = item["seq"]
        if seq >= closed_at or item["kind"] == "snapshot":
            continue  # the reveal: the order is public once the shoe is closed
        # An event names a card no more often than it has come out of the shoe by then.
        assert not mentioned(item) - dealt_by_seq[seq], (item.get("kind"), seq)
    # A snapshot and a display repeat dealt cards (coups, roads): each card they name has come out.
    snapshot = next(item for item in seen_late if item["kind"] == "snapshot")
    assert snapshot["seq"] < closed_at and set(mentioned(snapshot)) <= set(dealt_by_seq[snapshot["seq"]])
    assert 0 < sum(dealt_by_seq[snapshot["seq"]].values()) < sum(dealt.values())  # it joined mid-shoe
    shown = fold(item for item in seen_late if item["seq"] < closed_at)
    assert mentioned(repr(shown)) and set(mentioned(repr(shown))) <= set(dealt_by_seq[shown.seq])
    opened = next(e for e in seen_early if e.get("kind") == "shoe.opened")
    assert opened["commitment"] and not any(e.get("alarm") == "sequence_mismatch" for e in seen_early)


@pytest.mark.parametrize("fault", ["switch-card", "remove-card", "insert-card", "swap-cards"])
def test_a_shoe_tampered_at_the_table_is_caught_at_the_exact_card_and_the_coup_held(base, fault):
    """The alarm names the card's place, the card due and the card that came; the coup is held (the gate
    locks, the shoe stops) for the pit's void. What kind of tampering it was is told by the
    card after it, once dealing goes on (tests/test_table_shuffler.py)."""
    from shoed.simulate.shuffler import ShufflerFaults, shuffle_run

    seed = 11
    (shoe,) = shuffle_run(seed, decks=6, shoes=1, faults=ShufflerFaults(frozenset({fault}))).shoes
    _, position, card = shoe.tamper
    order = shoe.order[shoe.cut:] + shoe.order[: shoe.cut]
    # A second after the alarm: time for cards that should not come.
    events = events_until(base, '"sequence_mismatch"', 120, linger=1.0, seed=seed, faults=fault)
    found, *later = [e for e in events if e["kind"] == "alarm" and e["alarm"] == "sequence_mismatch"]
    assert found["position"] == position and found["expected"] == order[position]
    kind = {"switch-card": "substituted", "remove-card": "removed", "insert-card": "inserted",
            "swap-cards": "out_of_order"}[fault]
    # A card already past the gate when it locked tells the kind at once.
    assert [(e["position"], e["mismatch"]) for e in later] in ([], [(position, kind)])
    assert found["got"] == (order[position + 1] if fault == "remove-card" else card)
    if fault == "swap-cards":
        assert found["got"] == order[position + 1] != found["expected"]  # the next card came first
    held = [e for e in events if e["kind"] == "misdeal" and e["misdeal"]["kind"] == "sequence_mismatch"]
    assert held and held[0]["seq"] >= found["seq"] - 1
    # Held: no coup confirmed after it, and the shoe stops (only cards already past the gate when the
    # daemon locked it still come: a few on a loaded host).
    assert not any(e["kind"] == "coup.confirmed" and e["seq"] > found["seq"] for e in events)
    assert not any(e["kind"] in ("shoe.finished", "shoe.closed") for e in events)


def test_a_weak_shuffle_is_flagged_when_its_shoe_goes_in(base):
    events = events_until(base, '"weak_shuffle"', 120, seed=12, faults="weak-shuffle", shoes=2, fault_shoe=2)
    (weak,) = [e for e in events if e["kind"] == "alarm" and e["alarm"] == "weak_shuffle"]
    opened = [e for e in events if e["kind"] == "shoe.opened"]
    assert len(opened) == 2 and weak["seq"] > opened[1]["seq"] and weak["run"]["length"] >= 5


@pytest.mark.parametrize("fault", ["missing-card", "foreign-card"])
def test_an_incomplete_shoe_waits_for_an_authorised_open_then_is_dealt_and_checked(base, fault):
    """A deck with a card missing (or one of another design) names the deck and the card; the shoe put in is
    not opened until the `open_shoe` command, journaled with the key that sent it; then its cards are
    checked against the order as usual (30 coups of it)."""
    from shoed.net.commands import send_command
    from shoed.net.curve import ClientCurve
    from shoed.simulate.shuffler import ShufflerFaults, shuffle_run
    from tests.test_simulate_follows import dealer_keys

    seed = 13
    (shoe,) = shuffle_run(seed, decks=6, shoes=1, faults=ShufflerFaults(frozenset({fault}))).shoes
    ((deck, card),) = shoe.missing or shoe.foreign
    key = order_key(base)
    (base / "dealer").mkdir()
    dealer_keys(base)
    sim, config = shuffled_table(base, key, seed=seed, faults=fault)
    journal = base / "journal"
    try:
        daemon = Daemon(base, "--config", str(config), journal=journal)
        deadline = time.monotonic() + 60
        wait_in_journal(journal, '"shoe_unverified"', deadline)
        time.sleep(0.5)  # the shoe stays shut: no card is dealt
        assert '"shoe.opened"' not in journal_text(journal)
        keys = ClientCurve.from_files(base / "dealer" / "dealer.key_secret", base / "keys" / "server.key")
        reply = send_command(daemon.commands, "open_shoe", {}, keys, timeout=10)
        assert reply["ok"], reply
        wait_in_journal(journal, '"coup.result"', deadline + 60, times=30)
        daemon.stop()
    finally:
        sim.stop()
    records = records_of(journal)
    events = [e for r in records if r["kind"] == "step" for e in r["events"]]
    (incomplete,) = [e for e in events if e["kind"] == "alarm" and e["alarm"] == "deck_incomplete"]
    assert incomplete["deck"] == deck and incomplete[fault.split("-")[0]] == [card] and card in incomplete["text"]
    refused, cleared = [e for e in events if e["kind"] == "alarm" and e["alarm"] == "shoe_unverified"]
    assert refused["active"] and not cleared["active"] and cleared["by"] == "dealer"
    opening = next(r for r in records if r["kind"] == "step" and any(e["kind"] == "shoe.opened" for e in r["events"]))
    assert opening["input"]["cmd"] == "open_shoe" and opening["input"]["client"] == "dealer"
    opened = next(e for e in events if e["kind"] == "shoe.opened")
    assert refused["seq"] < opened["seq"] and opened["commitment"]
    # Dealt and checked against the order (the foreign card is in it: the shuffler read it), card by card.
    assert not any(e["kind"] == "alarm" and e["alarm"] == "sequence_mismatch" for e in events)
    assert sum(e["kind"] == "coup.result" for e in events) >= 30


@pytest.mark.parametrize("fault", ["jam", "lose-link"])
def test_a_jam_and_a_link_lost_mid_order_leave_the_shuffle_whole(base, fault):
    events = events_until(base, '"shoe.opened"', 90, linger=0.5, seed=14, faults=fault)
    (completed,) = [e for e in events if e["kind"] == "shuffle.completed"]
    assert completed["verified"] and completed["cards"] == 6 * 52 and completed["problems"] == []
    chunks = [e for e in events if e["kind"] == "shuffle.chunk"]
    assert [c["position"] for c in chunks] == sorted({c["position"] for c in chunks})  # none lost, none twice
    alarms = [(e["alarm"], e["active"]) for e in events if e["kind"] == "alarm"]
    if fault == "jam":
        assert ("shuffler_jam", True) in alarms and ("shuffler_jam", False) in alarms
    else:
        assert any(e["kind"] == "device.lost" and e["source"].startswith("shuffler:") for e in events)
    assert not any(name in ("shuffle_order_invalid", "shoe_unverified") for name, _ in alarms)


@pytest.mark.parametrize("fault", ["switch-card", "remove-card", "insert-card", "swap-cards"])
def test_the_card_after_tells_what_was_done_to_the_shoe_and_the_pits_void_lets_the_table_go_on(base, fault):
    """The coup held at the card that is not the order's; the card after it (already past the gate, or
    once the pit has voided the coup and confirmed) tells the kind of tampering at the same place
    (`mismatch`), and the next coup opens."""
    from shoed.net.commands import send_command
    from shoed.net.curve import ClientCurve
    from shoed.simulate.shuffler import ShufflerFaults, shuffle_run
    from tests.test_simulate_follows import dealer_keys

    seed = 11
    (shoe,) = shuffle_run(seed, decks=6, shoes=1, faults=ShufflerFaults(frozenset({fault}))).shoes
    position = shoe.tamper[1]
    key = order_key(base)
    (base / "dealer").mkdir()
    dealer_keys(base, role="pit")
    sim, config = shuffled_table(base, key, seed=seed, faults=fault)
    journal = base / "journal"
    try:
        daemon = Daemon(base, "--config", str(config), journal=journal)
        deadline = time.monotonic() + 120
        wait_in_journal(journal, '"sequence_mismatch"', deadline)
        time.sleep(0.5)
        pit = ClientCurve.from_files(base / "dealer" / "dealer.key_secret", base / "keys" / "server.key")
        for cmd, args in (("void", {"reason": "card not in the shuffled order"}), ("confirm", {})):
            reply = send_command(daemon.commands, cmd, args, pit, timeout=10)
            assert reply["ok"], (cmd, reply)
        wait_in_journal(journal, '"mismatch"', deadline)
        time.sleep(0.3)
        daemon.stop()
    finally:
        sim.stop()
    events = [e for r in records_of(journal) if r["kind"] == "step" for e in r["events"]]
    found, told, *_ = [e for e in events if e["kind"] == "alarm" and e["alarm"] == "sequence_mismatch"]
    kind = {"switch-card": "substituted", "remove-card": "removed", "insert-card": "inserted",
            "swap-cards": "out_of_order"}[fault]
    assert found["position"] == told["position"] == position and told["mismatch"] == kind
    voided = next(e for e in events if e["kind"] == "coup.void")
    assert found["seq"] < voided["seq"] and voided["by"] == "dealer"
    assert any(e["kind"] == "coup.opened" and e["seq"] > voided["seq"] for e in events)
