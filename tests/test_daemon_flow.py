"""The real daemon's workflow end to end: strict configuration, failed starts that say what
failed, and a table that never waits silently (the `stalled` alarm and the `waiting` state).
"""

from __future__ import annotations

import json
import time

import pytest

from harness.processes import Daemon, Simulator, run_shoed

TYPOS = [
    ("[publish]\ncomands = 'ipc:///tmp/x'\n", "comands"),
    ("[publish]\ncurve_publsh = true\n", "curve_publsh"),
    ("[[sources]]\ndriver = 'native'\nurll = '/dev/shoe'\n", "urll"),
    ("[simulator]\npase = 1.0\n", "pase"),
    ("tabel = 't2'\n", "tabel"),
    ("[[sources]]\ndriver = 'nativ'\nurl = '/dev/shoe'\n", "nativ"),
]


def start(base, *args: str):
    return run_shoed("run", "--journal", str(base / "journal"), "--keys", str(base / "keys"),
                     "--pub", f"ipc://{base}/e", "--snapshot", f"ipc://{base}/s", "--commands", f"ipc://{base}/c",
                     *args, timeout=60)


@pytest.mark.parametrize("text, key", TYPOS, ids=[k for _, k in TYPOS])
def test_a_typo_in_any_section_is_an_error_naming_it_before_anything_is_made(base, text, key):
    path = base / "shoed.toml"
    path.write_text(text)
    checked = run_shoed("config", "check", str(path))
    assert checked.returncode == 2 and key in checked.stderr and len(checked.stderr.strip().splitlines()) == 1
    proc = start(base, "--config", str(path))
    assert proc.returncode == 2 and key in proc.stderr
    assert not (base / "journal").exists() and not (base / "keys").exists()


WRONG_TYPES = [
    ("decks = '8'\n", "decks must be a whole number from 1, not '8'"),
    ("decks = 8.0\n", "decks must be a whole number from 1, not 8.0"),
    ("table = 7\n", "table must be a non-empty string, not 7"),
    ("stall_after_s = '30'\n", "stall_after_s must be a number of seconds from 0 to 86400, not '30'"),
    ("live_odds = 1\n", "live_odds must be true or false, not 1"),
    ("[publish]\nevents = 5556\n", "[publish]: events must be a non-empty string, not 5556"),
    ("[simulator]\nshoes = '3'\n", "[simulator]: shoes must be a whole number from 0, not '3'"),
    ("[[sources]]\ndriver = 'native'\nurl = 5\n", "url must be a string without NUL, not 5"),
    ("[[sources]]\ndriver = 'native'\nurl = '/dev/x'\nbaudrate = 'fast'\n", "baudrate must be a whole number"),
    ("[[sources]]\ndriver = 'native'\nurl = '/dev/x'\nbaudrate = 100000000000000000000\n",
     "baudrate must be a whole number of baud from 1 to 12000000"),
    ("[[sources]]\ndriver = 'shuffler'\nurl = '/dev/x'\n", "the shuffler driver needs order_key_file"),
    # refused before the journal and the keys are made
    ("[[sources]]\ndriver = 'native-usb'\nurl = 'usb://zz'\n", "bad USB address 'usb://zz'"),
    ("[[sources]]\ndriver = 'native-usb'\nurl = '/dev/ttyACM0'\n", "bad USB address '/dev/ttyACM0'"),
    # A hostile file: one line each, never a traceback or an error of several lines.
    ('"a\\nb" = 1\n', "unknown setting(s) 'a\\nb'"),
    ('"a\\u001b[2J" = 1\n', "unknown setting(s) 'a\\x1b[2J'"),
    ("a = " + "[" * 5000 + "]" * 5000 + "\n", "nested too deeply"),
    ('journal_dir = "a\\u0000b"\n', "journal_dir must be a non-empty path without NUL"),
    ('[[sources]]\ndriver = "native"\nurl = "/dev/x\\u0000"\n', "url must be a string without NUL"),
    ("stall_after_s = 1e300\n", "stall_after_s must be a number of seconds from 0 to 86400, not 1e+300"),
    ("[[sources]]\ndriver = 'native'\nurl = '/dev/x'\nheartbeat = 1e300\n",
     "heartbeat must be a number of seconds above 0, at most 86400"),
    ("[simulator]\npace = 1e300\n", "pace must be a number of seconds from 0 to 86400"),
]


@pytest.mark.parametrize("text, words", WRONG_TYPES, ids=[w.split(" must")[0].encode("unicode_escape").decode()
                                                           for _, w in WRONG_TYPES])
def test_a_value_of_the_wrong_type_is_an_error_naming_it_before_anything_is_made(base, text, words):
    path = base / "shoed.toml"
    path.write_text(text)
    checked = run_shoed("config", "check", str(path))
    assert checked.returncode == 2 and words in checked.stderr, checked.stderr
    assert len(checked.stderr.strip().splitlines()) == 1
    proc = start(base, "--config", str(path))
    assert proc.returncode == 2 and words in proc.stderr, proc.stderr
    assert not (base / "journal").exists() and not (base / "keys").exists()


def test_config_check_prints_the_resolved_configuration(base):
    path = base / "shoed.toml"
    path.write_text("table = 't7'\nstall_after_s = 30\n[publish]\ncurve_publish = true\n"
                    "[[sources]]\ndriver = 'native'\nurl = '/dev/shoe-native'\nbaudrate = 115200\n")
    proc = run_shoed("config", "check", str(path))
    assert proc.returncode == 0, proc.stderr
    resolved = json.loads(proc.stdout)
    assert resolved["table"] == "t7" and resolved["stall_after_s"] == 30
    assert resolved["publish"]["curve_publish"] is True and resolved["publish"]["curve_commands"] is True
    assert resolved["sources"] == [{"driver": "native", "url": "/dev/shoe-native", "baudrate": 115200}]
    assert resolved["ruleset"] == "punto-banco" and resolved["journal_dir"] == "shoed-data/journal"


@pytest.mark.parametrize("text, decks, auto_confirm", [
    ("ruleset = 'macau-statutory'\n[[sources]]\ndriver = 'native'\nurl = '/dev/shoe-native'\n", 8, False),
    ("decks = 6\n[[sources]]\ndriver = 'beetek'\nurl = '/dev/shoe-beetek'\n", 6, True),  # no buttons
    ("auto_confirm = false\n[[sources]]\ndriver = 'beetek'\nurl = '/dev/shoe-beetek'\n", 6, False),
    ("[[sources]]\ndriver = 'virtual'\n", 6, False),  # read through the native driver
])
def test_config_check_fills_in_the_decks_and_auto_confirm_the_daemon_will_run_with(base, text, decks, auto_confirm):
    """Both were printed as null ("the ruleset's", "from the drivers"): the daemon's own choice is shown."""
    path = base / "shoed.toml"
    path.write_text(text)
    proc = run_shoed("config", "check", str(path))
    assert proc.returncode == 0, proc.stderr
    resolved = json.loads(proc.stdout)
    assert (resolved["decks"], resolved["auto_confirm"]) == (decks, auto_confirm)


def test_every_configuration_error_is_one_line_and_exit_2(base):
    secret = base / "secret"
    empty = base / "empty"
    empty.write_text("\n")
    notes = base / "notes.txt"
    notes.write_text("this is not a ruleset: [[[\n")
    cases = [
        (("--config", str(_file(base, f"journal_secret_file = '{secret}'\n"))), "secret"),
        (("--config", str(_file(base, f"journal_secret_file = '{empty}'\n"))), "empty"),
        (("--table", "t1.a"), "no dot"),
        (("--ruleset", str(notes)), "not a TOML ruleset"),
        (("--ruleset", "punto-bank"), "unknown ruleset"),
        (("--source", "sonar:/dev/x"), "unknown driver"),
        (("--decks", "0"), "decks, not 0"),
        (("--sim-pace", "-1"), "the virtual shoe's pace is 0"),
        (("--sim-shoes", "-2"), "deals 0 (shoe after shoe) or more shoes"),
        (("--config", str(_file(base, "[publish]\nsurveillance_snapshot = 'nonsense'\n"))),
         "surveillance_snapshot endpoint 'nonsense'"),
        (("--surveillance-pub", "127.0.0.1:5560"), "surveillance_events endpoint"),
    ]
    for args, words in cases:
        proc = start(base, *args)
        assert proc.returncode == 2, (args, proc.stderr)
        errors = [x for x in proc.stderr.splitlines() if x.startswith("shoed:")]
        assert len(errors) == 1 and words in errors[0], (args, proc.stderr)
        assert "Traceback" not in proc.stderr + proc.stdout
        assert not (base / "journal").exists() and not (base / "keys").exists()


@pytest.mark.parametrize("content, why", [(b"x\n", "holds 1 bytes"), (b"k" * 40 + b"\n", "one byte repeated")],
                         ids=["one-byte", "one-byte-repeated"])
def test_a_weak_journal_secret_is_refused_by_the_check_and_at_start(base, content, why):
    secret = base / "journal.secret"
    secret.write_bytes(content)
    secret.chmod(0o600)
    config = _file(base, f"journal_secret_file = '{secret}'\n")
    checked = run_shoed("config", "check", str(config))
    assert checked.returncode == 2 and len(checked.stderr.strip().splitlines()) == 1, checked.stderr
    assert str(secret) in checked.stderr and why in checked.stderr and "at least 32" in checked.stderr
    proc = start(base, "--config", str(config))
    errors = [x for x in proc.stderr.splitlines() if x.startswith("shoed:")]
    assert proc.returncode == 2 and len(errors) == 1 and str(secret) in errors[0] and why in errors[0], proc.stderr
    assert not (base / "journal").exists()


def _file(base, text: str):
    path = base / f"c{abs(hash(text))}.toml"
    path.write_text(text)
    return path


def log_lines(proc) -> list[dict]:
    out = []
    for raw in (proc.stdout + proc.stderr).splitlines():
        try:
            out.append(json.loads(raw))
        except ValueError:
            out.append({"event": raw})
    return out


def test_a_failed_start_logs_what_failed_never_a_clean_stop(base):
    proc = start(base, "--log-json", "--ruleset", "punto-bank")
    lines = log_lines(proc)
    assert proc.returncode == 2
    events = [x.get("event") for x in lines]
    assert "stopped" not in events and "start failed" in events
    assert not any("embedded default" in str(x.get("event")) for x in lines)  # never announced punto-banco
    with Daemon(base, "--sim-pace", "0.5", "--sim-seed", "2") as first:
        # A second daemon on the same endpoints and journal.
        proc = run_shoed("run", "--log-json", "--journal", str(first.journal), "--keys", str(first.keys),
                         "--pub", first.events, "--snapshot", first.snapshot, "--commands", first.commands)
        lines = log_lines(proc)
        assert proc.returncode != 0
        text = json.dumps(lines)
        assert "NoneType" not in text and '"exit_code": 0' not in text, text
        failed = [x for x in lines if x.get("event") in ("start failed", "stopped after a failure")]
        assert failed, text
        assert first.stop() == 0


def open_coup(d, keys, at_least: int) -> dict:
    from shoed.net.commands import send_command

    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        coup = send_command(d.commands, "status", {}, keys, timeout=5)["status"]["coup"]
        if coup and coup["number"] >= at_least and coup["state"] == "open" and coup["cards"] >= 1:
            return coup
        time.sleep(0.05)
    raise AssertionError("no coup open")


def test_a_void_leaves_the_table_waiting_for_a_confirm_and_a_long_wait_raises_stalled(base):
    from shoed.net.commands import send_command
    from shoed.net.curve import ClientCurve
    from tests.test_simulate_follows import dealer_keys

    (base / "dealer").mkdir()
    pit = dealer_keys(base, "pit")  # the pit's console key; this shoe's dealer does not follow the table
    with (Simulator(base, seed=3, pace=0.3) as sim,
          Daemon(base, "--source", sim.source, "--stall-after", "1") as d):
        console = ClientCurve.from_files(pit[1], pit[3])
        open_coup(d, console, 2)
        reply = send_command(d.commands, "void", {"reason": "card exposed"}, console, timeout=5)
        assert reply["ok"], reply
        line = d.wait_for(lambda x: x.get("event") == "the table is stalled", 15, "the stall")
        assert line["waiting_for"] == "confirm" and "void" in line["what"]
        status = send_command(d.commands, "status", {}, console, timeout=5)["status"]
        assert status["waiting"]["for"] == "confirm" and status["alarms"]["stalled"].startswith("waiting for")
        assert status["waiting"]["since"] is not None
        reply = send_command(d.commands, "confirm", {}, console, timeout=5)
        assert reply["ok"], reply
        status = send_command(d.commands, "status", {}, console, timeout=5)["status"]
        assert "stalled" not in status["alarms"]
        assert d.stop() == 0
    inputs = [json.loads(x)["input"] for f in sorted((base / "journal").glob("*.jsonl"))
              for x in f.read_text().splitlines() if '"step"' in x]
    ticks = [i for i in inputs if i["kind"] == "tick"]
    assert ticks and all(i["stall_after_s"] == 1 for i in ticks)


def test_the_embedded_virtual_dealer_follows_a_void_by_the_pit(base):
    from shoed.net.commands import send_command
    from shoed.net.curve import ClientCurve

    with Daemon(base, "--sim-pace", "0.2", "--sim-seed", "3", "--sim-shoes", "1", "--stall-after", "2") as d:
        console = ClientCurve.from_files(d.keys / "local-console.key_secret", d.keys / "server.key")
        voided = open_coup(d, console, 2)["number"]
        reply = send_command(d.commands, "void", {"reason": "card exposed"}, console, timeout=5)
        assert reply["ok"], reply
        open_coup(d, console, voided + 2)  # the dealer confirmed the void and dealt on
        status = send_command(d.commands, "status", {}, console, timeout=5)["status"]
        assert "stalled" not in status["alarms"] and status["pending_misdeals"] == []
        assert d.stop() == 0
    events = [e for r in (json.loads(x) for f in sorted((base / "journal").glob("*.jsonl"))
                          for x in f.read_text().splitlines()) if r.get("kind") == "step" for e in r["events"]]
    after = [e for e in events if e.get("coup") in (voided, voided + 1)]
    confirmed = [e for e in after if e["kind"] == "coup.confirmed" and e["coup"] == voided]
    assert confirmed and confirmed[0]["state"] == "void" and confirmed[0]["by"] == "local-console"
    assert not [e for e in after if e["kind"] == "misdeal"]


def test_sighup_reloads_the_allow_list_and_the_table_deals_on(base):
    import shutil
    import signal

    from shoed.net.commands import CommandTimeout, send_command
    from shoed.net.curve import ClientCurve, create_key_pair

    with Daemon(base, "--sim-pace", "0.1", "--sim-seed", "5", "--sim-shoes", "1") as d:
        pit = base / "pit"
        pit.mkdir()
        public, _, _ = create_key_pair(pit, "pit-console")
        keys = ClientCurve.from_files(pit / "pit-console.key_secret", d.keys / "server.key")
        with pytest.raises(CommandTimeout):
            send_command(d.commands, "status", {}, keys, timeout=1.0)
        shutil.copy(public, d.keys / "clients" / "pit-console.key")
        cards_before = _card_events(d)
        d.proc.send_signal(signal.SIGHUP)
        d.wait_for(lambda x: x.get("event") == "allow-list reloaded", 10, "the reload")
        reply = send_command(d.commands, "status", {}, keys, timeout=5)
        assert reply["ok"] is True and reply["status"]["table"] == "t1"
        deadline = time.monotonic() + 10
        while _card_events(d) <= cards_before + 3 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert _card_events(d) > cards_before + 3  # the daemon did not stop: cards kept coming
        assert d.stop() == 0
    verified = run_shoed("journal", "verify", str(base / "journal"))
    assert verified.returncode == 0, verified.stdout + verified.stderr


def _card_events(d) -> int:
    return sum(x.count('"kind": "card"') + x.count('"kind":"card"')
               for x in (f.read_text() for f in (d.journal).glob("*.jsonl")))


def test_the_embedded_demo_deals_a_house_ruleset_and_cleans_up_its_virtual_shoe(base):
    from pathlib import Path

    from shoed.net.commands import send_command
    from shoed.net.curve import ClientCurve

    with Daemon(base, "--sim-pace", "0.05", "--sim-seed", "4", "--sim-shoes", "1") as d:
        started = d.wait_for(lambda x: x.get("event") == "virtual shoe started", 10, "the virtual shoe")
        console = ClientCurve.from_files(d.keys / "local-console.key_secret", d.keys / "server.key")
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            status = send_command(d.commands, "status", {}, console, timeout=5)["status"]
            if len(status["coups"]) >= 3 and status["odds"]:
                break
            time.sleep(0.1)
        assert status["ruleset"] == "macau-statutory" and len(status["coups"]) >= 3
        assert status["odds"]["favourable"] == [] and "favourable_bet" not in status["alarms"]
        assert Path(started["link"]).parent.exists()
        assert d.stop() == 0
    assert not Path(started["link"]).parent.exists()


def test_a_key_removed_and_reloaded_is_refused_on_the_connection_it_already_has(base):
    """ZAP checks a key at the handshake only: a pit console that stays connected while its key is removed
    and the allow-list reloaded was still served (as a dealer, its role gone). Every request is checked
    against the list in force: it is refused at once, nothing is journaled from it, the others go on."""
    import shutil
    import signal

    import zmq

    from shoed.net import wire
    from shoed.net.commands import send_command
    from shoed.net.curve import ClientCurve, create_key_pair

    with Daemon(base, "--sim-pace", "0.1", "--sim-seed", "5", "--sim-shoes", "1") as d:
        pit = base / "pit"
        pit.mkdir()
        public, _, _ = create_key_pair(pit, "pit-console")
        shutil.copy(public, d.keys / "clients" / "pit-console.key")
        d.proc.send_signal(signal.SIGHUP)
        d.wait_for(lambda x: x.get("event") == "allow-list reloaded", 10, "the reload")
        keys = ClientCurve.from_files(pit / "pit-console.key_secret", d.keys / "server.key")
        ctx = zmq.Context()
        sock = ctx.socket(zmq.DEALER)
        sock.linger = 0
        keys.apply(sock)
        sock.connect(d.commands)

        def ask(cmd: str, args: dict, rid: int) -> dict:
            sock.send(wire.encode({"cmd": cmd, "args": args, "id": rid}))
            assert sock.poll(5000), f"no reply to {cmd}"
            return wire.decode(sock.recv())

        try:
            assert ask("status", {}, 1)["ok"] is True  # the connection is up and served
            (d.keys / "clients" / "pit-console.key").unlink()
            reloads = sum(1 for x in d.lines if x.get("event") == "allow-list reloaded")
            d.proc.send_signal(signal.SIGHUP)
            d.wait_for(lambda x: sum(1 for y in d.lines if y.get("event") == "allow-list reloaded") > reloads,
                       10, "the second reload")
            for rid, (cmd, args) in enumerate([("status", {}), ("confirm", {}), ("void", {"reason": "x"}),
                                               ("close_shoe", {})], start=2):
                reply = ask(cmd, args, rid)
                assert reply == {"ok": False, "id": rid,
                                 "error": "this key is not on the allow-list (removed); nothing was done"}, reply
        finally:
            sock.close(0)
            ctx.term()
        console = ClientCurve.from_files(d.keys / "local-console.key_secret", d.keys / "server.key")
        assert send_command(d.commands, "status", {}, console, timeout=5)["ok"] is True  # the others go on
        assert d.stop() == 0
    commands = [r["input"] for f in sorted((base / "journal").glob("*.jsonl"))
                for r in map(json.loads, f.read_text().splitlines())
                if r.get("kind") == "step" and r["input"].get("kind") == "command"]
    assert not [c for c in commands if c.get("client") in ("pit-console", keys.public_key.decode())]


def test_a_key_removed_and_reloaded_is_cut_off_the_event_stream_it_already_receives(base):
    """A surveillance subscriber keeps its connection to the event stream after its key is removed
    (ZAP checks a key at the handshake only). On the reload the daemon renews the CURVE-secured
    streams: every subscriber connects and is authenticated again, so the removed key hears
    nothing more while an allowed subscriber goes on receiving the table's events."""
    import signal

    import zmq

    from shoed.net import wire
    from shoed.net.curve import ClientCurve, create_key_pair, with_role

    stream = f"ipc://{base}/surveillance-events"
    with Daemon(base, "--sim-pace", "0.05", "--sim-seed", "6", "--surveillance-pub", stream) as d:
        officers = base / "officers"
        officers.mkdir()
        for name in ("leaving", "staying"):
            public, _, _ = create_key_pair(officers, name)
            (d.keys / "clients" / f"{name}.key").write_text(with_role(public.read_text(), "surveillance"))
        d.proc.send_signal(signal.SIGHUP)
        d.wait_for(lambda x: x.get("event") == "allow-list reloaded", 10, "the reload")
        ctx = zmq.Context()
        subs = {}
        try:
            for name in ("leaving", "staying"):
                sock = ctx.socket(zmq.SUB)
                sock.linger = 0
                ClientCurve.from_files(officers / f"{name}.key_secret", d.keys / "server.key").apply(sock)
                sock.setsockopt(zmq.SUBSCRIBE, b"")
                sock.connect(stream)
                subs[name] = sock

            def events(sock, seconds: float) -> list[dict]:
                out, deadline = [], time.monotonic() + seconds
                while (left := deadline - time.monotonic()) > 0:
                    if sock.poll(int(left * 1000) + 1):
                        _, payload = sock.recv_multipart()
                        event = wire.decode(payload)
                        if event["kind"] != "heartbeat":
                            out.append(event)
                return out

            assert events(subs["leaving"], 3) and events(subs["staying"], 1), "both hear the table"
            (d.keys / "clients" / "leaving.key").unlink()
            d.proc.send_signal(signal.SIGHUP)
            d.wait_for(lambda x: x.get("event") == "allow-list reloaded" and x.get("keys") == {"shoed": 2, "surveillance": 2},
                       10, "the second reload")
            events(subs["leaving"], 0.2)  # what was on its way before the renewal
            after = events(subs["staying"], 4)
            assert after, "an allowed subscriber connects again and hears the table"
            assert events(subs["leaving"], 0.5) == [], "the removed key hears nothing more"
            assert any(x.get("event") == "a key was removed: the event streams' subscribers connect again"
                       for x in d.lines)
        finally:
            for sock in subs.values():
                sock.close(0)
            ctx.term()
        assert d.stop() == 0


def test_the_dealers_status_is_the_table_as_its_displays_show_it(base):
    """`status` from a dealer's key (or an endpoint without keys) is the display audience's snapshot:
    no counts of the cards left by rank (they count the face-down burns), no odds; the pit and
    surveillance get the whole table."""
    from shoed.net.commands import send_command
    from shoed.net.curve import ClientCurve, create_key_pair, with_role
    from tests.test_simulate_follows import dealer_keys

    (base / "dealer").mkdir()
    dealer = dealer_keys(base, "dealer")
    public, _, _ = create_key_pair(base / "pit", "pit")
    (base / "keys" / "clients" / "pit.key").write_text(with_role(public.read_text(), "pit"))
    with (Simulator(base, seed=3, pace=0.05) as sim, Daemon(base, "--source", sim.source) as d):
        keys = {"dealer": ClientCurve.from_files(dealer[1], dealer[3]),
                "pit": ClientCurve.from_files(base / "pit" / "pit.key_secret", dealer[3])}
        open_coup(d, keys["pit"], 2)
        seen = {role: send_command(d.commands, "status", {}, key, timeout=5)["status"] for role, key in keys.items()}
        later = send_command(d.commands, "status", {}, keys["dealer"], timeout=5)["status"]  # the shoe deals on
        assert d.stop() == 0
    assert "remaining_by_rank" in seen["pit"]["shoe"]
    assert "remaining_by_rank" not in seen["dealer"]["shoe"] and seen["dealer"]["odds"] is None
    assert seen["dealer"]["shoe"]["burned"] == seen["pit"]["shoe"]["burned"] > 0
    # the same count of cards left in both views: the pit's, asked between two of the dealer's, lies between them
    assert seen["dealer"]["shoe"]["cards_left"] >= seen["pit"]["shoe"]["cards_left"] >= later["shoe"]["cards_left"]
