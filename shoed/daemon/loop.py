"""The daemon: wires the shoe, the table controller, the journal and ZeroMQ.

One loop, one thread owns the table: it polls the shoe driver with a short
timeout, serves the command socket, and sends heartbeats. Snapshots and
catch-up are served by a thread of their own (shoed.net.catchup), so that no
client can hold up a card; the loop only hands it a snapshot when one is asked
for. Every input goes the same way:

    input -> controller -> journal (write + fsync) -> publish -> acknowledge to the shoe

so nothing is published or acknowledged that is not durably journaled
(table-game-standards.md items 13, 19). At start the state is rebuilt by
replaying the current shoe's journal file through the same controller; nothing
is published before that has passed (item 4), and READY goes to systemd only
then.
"""

from __future__ import annotations

import collections
import errno
import functools
import gc
import json
import os
import signal
import sys
import time
from pathlib import Path

from shoed.daemon import logs
from shoed.table import shuffle as shuffle_table
from shoed.table import events as ev
from shoed.daemon.clockwatch import STALL_LIMIT, ClockWatch
from shoed.daemon.config import Config, ConfigError
from shoed.daemon.config import check as check_config
from shoed.daemon.notify import Notifier
from shoed.daemon.virtual import DRIVER as VIRTUAL_DRIVER
from shoed.daemon.virtual import VirtualShoeError, VirtualShoeProcess
from shoed.table.replay import Replay, UnusableRecord, checkpoint_record, step_record
from shoed.table import StartShoeFile, TableController, WorkOutOdds

log = logs.get("shoed.daemon")

POLL_TIMEOUT = 0.005  # seconds the loop waits on the shoe before serving sockets
# Events kept in memory for catch-up (about 8 shoes; ~1 kB each); older ones come from the journal.
RECENT_EVENTS = 5_000
CATCHUP_SLICE = 0.0005  # seconds: the interpreter's switch interval once the catch-up thread runs
GATE_LOCK_GRACE = 0.5  # seconds the links stay up after a journal failure, for the gate lock to arrive


class DaemonError(Exception):
    """A start-up failure with a clear, one-line reason."""


def _raise_file_limit() -> None:
    """Take the hard limit of open files as the soft one (systemd's LimitNOFILE sets both): each
    network connection costs a descriptor, and the journal must never be the one left without."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or soft < hard:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard if hard != resource.RLIM_INFINITY else 1 << 20, hard))
        except (ValueError, OSError) as exc:
            log.warning("cannot raise the limit of open files", soft=soft, hard=hard, error=str(exc))


def _checkpoint_seq(path) -> int:
    """The seq a journal file starts from (its checkpoint, line 2); -1 when it cannot be read."""
    try:
        with open(path, "rb") as f:
            f.readline()
            return int(json.loads(f.readline())["state"]["seq"])
    except (OSError, ValueError, KeyError, TypeError, RecursionError):
        return -1


def input_from_reading(reading) -> dict:
    """A driver's Reading as a controller input (also what the journal keeps: raw bytes in hex)."""
    item = reading.to_json()
    item["kind"] = reading.kind
    return item


def _capabilities(source):
    """What a configured source's driver can do; the built-in virtual shoe is read through its driver."""
    from shoed.drivers import capabilities

    return capabilities(VIRTUAL_DRIVER if source.driver == "virtual" else source.driver)


class Daemon:
    def __init__(self, config: Config) -> None:
        self.config = config
        self.stopping = False
        self.exit_code = 0
        self.notifier = Notifier()
        self.virtual: VirtualShoeProcess | None = None
        self.drivers: list = []
        self.journal = None
        self._journal_secret: bytes | None = None  # read once at start (journal_secret_file)
        self.controller: TableController | None = None
        self.publisher = None  # the display audience's events (the `events` endpoint)
        self.publishers: list = []  # every audience's publisher: display, and surveillance where configured
        self.catchup = None  # snapshots and catch-up, on a thread of their own (shoed.net.catchup)
        self.commands = None
        self.curve = None
        self.context = None
        self.stream_contexts: list = []  # one per event stream (shoed.net.contexts)
        self.poller = None
        self.recent: collections.deque = collections.deque(maxlen=RECENT_EVENTS)
        self.closed_drivers: dict = {}  # driver -> monotonic time of the next open attempt
        self.open_tries: dict = {}
        # A coup ended: its live odds come when the loop is idle, or before the next input.
        self._odds_due: WorkOutOdds | None = None
        self.pending_inputs: list[dict] = []  # inputs the shell itself noticed (a shoe that would not open)
        self.gate_locked: bool | None = None
        self.last_watchdog = 0.0
        self.ready_at: float | None = None
        self.started_at = time.monotonic()
        # A loop not run for half the watchdog interval is recorded (the notifier pings at half already).
        self.clock = ClockWatch(stall_limit=self.notifier.watchdog_interval or STALL_LIMIT)
        self._powered_on = False  # the power-on input was journaled: a stop is journaled too
        self._last_stamp = (0, 0)  # (mono_ns, utc_ns) of the last input handled
        self._reload_due = False  # SIGHUP: read the allow-list again

    # ----- start --------------------------------------------------------
    def start(self) -> None:
        cfg = self.config
        # Everything that can be wrong with the configuration is found before anything is made.
        try:
            ruleset = check_config(cfg)
        except ConfigError as exc:
            raise DaemonError(str(exc)) from None
        decks = ruleset.decks
        if cfg.embedded_default:
            log.info(
                "embedded default configuration: virtual shoe on a pseudo-terminal read through the native "
                f"serial driver, {ruleset.name}, no hardware needed",
                table=cfg.table, ruleset=ruleset.name, events=cfg.events, snapshot=cfg.snapshot,
                commands=cfg.commands, journal=cfg.journal_dir,
            )
        logs.bind(table=cfg.table)
        _raise_file_limit()
        from shoed.journal import JournalError

        # What the loop imports later is imported now: reading a module takes a file descriptor,
        # and a flood of connections may have taken them all by then.
        import shoed.journal.reader  # noqa: F401
        import shoed.journal.recall  # noqa: F401
        import shoed.rules.odds  # noqa: F401

        self._open_journal()
        try:
            stopped_clean, odds_missing = self._rebuild(ruleset, decks)
            self._bind_sockets()
            self._open_sources()
            # Start-up record: power on, and whether the last stop was clean.
            self.handle({"kind": "power", "state": "on", "clean": stopped_clean,
                         "sources": self._reader_sources(), "auto_confirm": self._auto_confirm(),
                         "recovery": [n.to_json() for n in self.journal.recovery]})
            self._powered_on = True
            if self.config.live_odds:
                self._odds_due = odds_missing
            # What start-up found (an integrity lock, a shoe that would not open) is on record before
            # READY: a stop that comes at once must not leave it unjournaled.
            while self.pending_inputs:
                self.handle(self.pending_inputs.pop(0))
        except JournalError as exc:  # e.g. the disk is still full: nothing was acknowledged or published
            self.exit_code = 3
            raise DaemonError(f"the journal cannot be written ({exc}); the table stays stopped: "
                              f"free space for {self.config.journal_dir} and start again") from None
        # What start-up built (modules, rulesets, the rebuilt table) lives as long as the daemon: kept
        # out of the cyclic collector's sweeps, so that a full collection while dealing walks only
        # what dealing made (a full sweep of everything took ~15 ms, a card's whole budget many times).
        gc.collect()
        gc.freeze()
        self.ready_at = time.monotonic()
        self.notifier.ready(f"table {cfg.table} ready")
        log.info("ready", seconds=round(self.ready_at - self.started_at, 3), seq=self.controller.seq,
                 journal=str(self.journal.path))

    def _open_journal(self) -> None:
        from shoed.journal import Journal, JournalError, JournalLocked

        from shoed.journal import read_secret_file

        # Read once (the configuration check proved it usable): the journal and catch-up share it.
        secret = read_secret_file(self.config.journal_secret_file) if self.config.journal_secret_file else None
        self._journal_secret = secret
        try:
            self.journal = Journal(self.config.journal_dir, self.config.table, secret)
        except JournalLocked as exc:
            raise DaemonError(f"the journal is corrupt ({exc}); nothing was cut, the table stays locked: "
                              f"run `shoed journal verify {self.config.journal_dir}` and call surveillance") from None
        except JournalError as exc:
            raise DaemonError(f"cannot open the journal: {exc}") from None
        for note in self.journal.recovery:
            log.warning("journal recovery", note=note.to_json())

    def _rebuild(self, ruleset, decks: int) -> tuple[bool, WorkOutOdds | None]:
        """Replay the current file of the journal to rebuild the controller. What the journal's past
        tells: whether the last stop was clean, and the live odds its last coup is missing."""
        from shoed.journal import iter_records

        state = Replay(order_key=self.order_key)
        stopped_clean = True
        path = self.journal.path
        if path is not None:
            try:
                for record in iter_records(path, self.journal.keys):
                    state.feed(record, path.name)
            except UnusableRecord as exc:
                raise DaemonError(f"the journal is corrupt ({exc}); nothing was cut, the table stays locked: "
                                  f"run `shoed replay {self.config.journal_dir}` and call surveillance") from None
            stopped_clean = state.stopped_clean
        if state.controller is None:
            self.controller = TableController(self.config.table, ruleset, decks, auto_confirm=self._auto_confirm(),
                                              order_key=self.order_key)
            self.journal.open_shoe("table")
            self.journal.append(checkpoint_record(self.controller))
        else:
            self.controller = state.controller
            if state.controller.ruleset.name != ruleset.name:
                log.warning("the journal's table runs another ruleset; it stays until the shoe closes",
                            journal_ruleset=state.controller.ruleset.name, configured=ruleset.name)
            if state.differences:
                first = state.differences[0]
                # An input like any other: journaled and published after the power-on (seq runs on unbroken).
                self.pending_inputs.append({"kind": "integrity",
                                            "text": f"replay of {path.name} differs at jseq {first.jseq}: {first.reason}"})
            log.info("state rebuilt from the journal", file=path.name, steps=state.steps, seq=self.controller.seq,
                     coup=self.controller.coup_no or None)
        # A stop between a coup's record and its live odds record left the odds out: they come now.
        return stopped_clean, state.odds_due

    @functools.cached_property
    def order_key(self) -> bytes | None:
        """The key of a card-reading shuffler's sealed order: its source's order_key_file, kept outside the
        journal directory (DaemonError otherwise)."""
        from shoed.drivers import DriverError
        from shoed.drivers.shuffler import load_order_key

        for source in self.config.sources:
            if source.driver == "shuffler":
                path = source.options.get("order_key_file")
                if path and Path(self.config.journal_dir).resolve() in Path(path).resolve().parents:
                    raise DaemonError(f"the order key file {path} lies inside the journal directory: keep it apart")
                try:
                    return load_order_key(path)
                except DriverError as exc:
                    raise DaemonError(str(exc)) from None
        return None

    def _reader_sources(self) -> list[str]:
        """The sources whose cards are dealt, in priority order (a shuffler's reports are no reader's)."""
        # One driver for each configured source, in order.
        return [driver.source for source, driver in zip(self.config.sources, self.drivers, strict=True)
                if _capabilities(source).deals]

    def _auto_confirm(self) -> bool:
        if self.config.auto_confirm is not None:
            return bool(self.config.auto_confirm)
        return any(_capabilities(s).auto_confirm for s in self.config.sources)

    def _bind_sockets(self) -> None:
        import zmq

        from shoed.table import audience
        from shoed.net import contexts
        from shoed.net.catchup import CatchupServer, Endpoint
        from shoed.net.commands import CommandServer
        from shoed.net.curve import CurveError, ServerCurve
        from shoed.net.publisher import Publisher

        cfg = self.config
        # Commands and catch-up on the public context; each event stream on a context of its own
        # (shoed.net.contexts): a client's load on the first never stands in front of a card's event.
        self.context = contexts.public_context()
        self.stream_contexts = [contexts.stream_context() for _ in range(2 if cfg.surveillance_events else 1)]
        surveillance = bool(cfg.surveillance_events or cfg.surveillance_snapshot)
        if cfg.curve_commands or cfg.curve_publish or surveillance:
            self._ensure_keys(Path(cfg.key_dir))
            try:
                self.curve = ServerCurve.from_key_dir(cfg.key_dir, self.context)
            except CurveError as exc:
                raise DaemonError(str(exc)) from None
        pub_curve = self.curve if cfg.curve_publish else None
        display_event, display_snapshot = audience.for_audience(audience.DISPLAY, cfg.display_reveal)
        every_event, whole_snapshot = audience.for_audience(audience.SURVEILLANCE)
        endpoints = [Endpoint(cfg.snapshot, display_event, display_snapshot, pub_curve)]
        try:
            if pub_curve is not None:
                pub_curve.attach(self.stream_contexts[0])
            self.publisher = Publisher(self.stream_contexts[0], cfg.events, cfg.table, pub_curve, last_seq=self.controller.seq,
                                       journal_head=self.journal_position, view=display_event)
            self.publishers = [self.publisher]
            if cfg.surveillance_events:
                self.curve.attach(self.stream_contexts[1])
                self.publishers.append(Publisher(self.stream_contexts[1], cfg.surveillance_events, cfg.table, self.curve,
                                                 last_seq=self.controller.seq, journal_head=self.journal_position))
            if cfg.surveillance_snapshot:
                endpoints.append(Endpoint(cfg.surveillance_snapshot, every_event, whole_snapshot, self.curve))
            self.catchup = CatchupServer(self.context, endpoints, cfg.table, self.recent, self.journal_events)
            self.commands = CommandServer(self.context, cfg.commands, self.command,
                                          curve=self.curve if cfg.curve_commands else None,
                                          insecure=not cfg.curve_commands)
        except zmq.ZMQError as exc:
            raise DaemonError(f"cannot bind a ZeroMQ endpoint ({exc}); is another daemon using it? "
                              "Give other endpoints with --pub, --snapshot, --commands") from None
        contexts.lower_io_priority()
        self.poller = zmq.Poller()
        for sock in self.commands.sockets():
            self.poller.register(sock, zmq.POLLIN)
        # The catch-up thread takes the interpreter in short slices: a card waits at most this long for it.
        sys.setswitchinterval(CATCHUP_SLICE)
        self.catchup.start()

    def _ensure_keys(self, key_dir: Path) -> None:
        """First start: the server's key pair and an empty allow-list (shoed.net.keys)."""
        from shoed.net.keys import ensure_server_keys

        public = ensure_server_keys(key_dir, local_console=self.config.embedded_default)
        if public is not None:
            log.warning("made the server key pair; allow a client by copying its public .key into clients/",
                        key_dir=str(key_dir), server_public=public)

    def _open_sources(self) -> None:
        from shoed.drivers import DriverError, driver_class

        cfg = self.config
        for source in cfg.sources:
            if source.driver == "virtual":
                from shoed.simulate.resume import resume_state

                try:
                    self.virtual = VirtualShoeProcess.for_config(cfg, resume_state(self.controller))
                except VirtualShoeError as exc:
                    raise DaemonError(str(exc)) from None
                log.info("virtual shoe started", pty=self.virtual.path, link=self.virtual.link, pace=cfg.sim_pace)
                name, url, options = VIRTUAL_DRIVER, self.virtual.link, {}
            else:
                name, url, options = source.driver, source.url, source.options
            try:
                driver = driver_class(name)(url, **options)
            except (DriverError, TypeError, ValueError) as exc:
                raise DaemonError(f"source {name}:{url}: {exc}") from None
            self.drivers.append(driver)
            self.closed_drivers[driver] = 0.0
        self._open_pending()

    def _open_pending(self) -> None:
        """Open the sources that are not open yet. A shoe missing at start is not fatal:
        the table is told the link is lost and the daemon keeps trying, with back-off."""
        from shoed.drivers import DriverError

        now = time.monotonic()
        for driver, due in list(self.closed_drivers.items()):
            if now < due:
                continue
            try:
                driver.open()
            except DriverError as exc:
                tries = self.open_tries.get(driver, 0) + 1
                self.open_tries[driver] = tries
                self.closed_drivers[driver] = now + min(5.0, 0.2 * 2 ** tries)
                if tries == 1:
                    log.error("cannot open the shoe; retrying", source=driver.source, error=str(exc))
                    self.pending_inputs.append({"kind": "link", "link": "lost", "source": driver.source,
                                                "detail": {"error": str(exc)}})
                continue
            del self.closed_drivers[driver]
            resume = self.controller.resume_point(driver.source)
            if resume is not None:
                driver.set_last_seq(*resume)
            if self.open_tries.pop(driver, 0):
                log.info("shoe opened", source=driver.source)
            self.gate_locked = None  # tell the new link the gate's state

    # ----- the loop -------------------------------------------------------
    def run(self) -> int:
        def stop(signum, frame):
            self.stopping = True

        def reload(signum, frame):
            self._reload_due = True

        signal.signal(signal.SIGTERM, stop)
        signal.signal(signal.SIGINT, stop)
        signal.signal(signal.SIGHUP, reload)
        try:
            self.start()
            while not self.stopping:
                self.step()
        except DaemonError as exc:
            # A refused start is an alarm too: `systemctl status` shows why the table is down.
            self.notifier.status(f"ALARM: {exc}")
            self.exit_code = self.exit_code or 2
            log.error("start failed" if self.ready_at is None else "stopped on an error", error=str(exc))
            raise
        finally:
            self.shutdown()
        return self.exit_code

    def step(self) -> None:
        """One turn of the loop: the shoe, the sockets, the heartbeat, the watchdog."""
        from shoed.journal import JournalError

        if self.closed_drivers:
            self._open_pending()
        self.pending_inputs += self.clock.check(time.monotonic_ns(), time.time_ns())
        busy = bool(self.pending_inputs)
        while self.pending_inputs:
            try:
                self.handle(self.pending_inputs.pop(0))
            except JournalError as exc:
                self._journal_failed(exc)
                return
        for driver in self.drivers:
            if driver in self.closed_drivers:
                continue
            for reading in driver.poll(POLL_TIMEOUT if len(self.drivers) == 1 else POLL_TIMEOUT / len(self.drivers)):
                busy = True
                try:
                    self.handle(input_from_reading(reading))
                except JournalError as exc:
                    self._journal_failed(exc)
                    return
                driver.acknowledge(reading)
        for sock, _ in self.poller.poll(0):
            busy = True
            try:
                self.commands.handle(sock)
            except Exception:  # noqa: BLE001 - what a network peer sends must never stop the table
                log.exception("a request could not be served; the table runs on")
        if self._odds_due and not busy:
            try:
                self._live_odds()
            except JournalError as exc:
                self._journal_failed(exc)
                return
        self._tick()
        if self._reload_due:
            self._reload_keys()
        now = time.monotonic()
        if self.catchup.box.wanted(now, busy):  # a client asked for a snapshot: one, made here, handed over whole
            self.catchup.box.put(self.snapshot(), now)
        for publisher in self.publishers:
            publisher.maybe_heartbeat()  # takes the subscriptions waiting too
        self._update_gate()
        if self.notifier.watchdog_interval and now - self.last_watchdog >= self.notifier.watchdog_interval:
            self.notifier.watchdog()
            self.last_watchdog = now

    def handle(self, item: dict) -> dict | None:
        """Feed one input through the controller, journal it with its events, publish.

        After a coup the live odds are due. They are worked out when the loop has a turn
        with nothing to do, after the coup's card was acknowledged and its events were on
        their way, or else just before the next input: the journal holds them right after
        the coup either way. (Worked out at once, their millisecond of CPU held back the
        delivery of the coup's last card: its p99 doubled, see docs/test-labs.md.)"""
        kind = item.get("kind")
        if self._odds_due and kind != "odds":
            self._live_odds()
        item.setdefault("mono_ns", time.monotonic_ns())
        item.setdefault("utc_ns", time.time_ns())
        self._in_time_order(item)
        if shuffle_table.needs_salt(item, self.controller):
            item.setdefault("salt", os.urandom(32).hex())  # for the commitment to a shuffled shoe's order
        controller = self.controller
        # Between shoes, a card can open the next shoe itself (a shoe without buttons,
        # auto_confirm) and be dealt in the same step: that shoe's file then starts with
        # the table as it was before the card, and the card's step is its first.
        before = checkpoint_record(controller) if controller.between_shoes else None
        step = controller.feed(item)
        if before is not None and not controller.checkpointable:
            opened = next((e for e in step.effects if type(e) is StartShoeFile), None)
            if opened is not None and self.journal.shoe != opened.shoe_id:
                self.journal.open_shoe(opened.shoe_id)
                self.journal.append(before)
        self.journal.append(step_record(item, step.events))
        for typed, event in zip(step.typed, step.events):
            for publisher in self.publishers:
                publisher.publish(event)
            self.recent.append(event)
            if type(typed) is ev.ShoeOpened:
                logs.bind(shoe=typed.shoe)
            elif type(typed) is ev.CoupOpened:
                logs.bind(coup=typed.coup)
        for effect in step.effects:
            if type(effect) is StartShoeFile:
                # The shoe's journal file starts now, with a checkpoint.
                if self.journal.shoe != effect.shoe_id:
                    self.journal.open_shoe(effect.shoe_id)
                    self.journal.append(checkpoint_record(controller))
            elif type(effect) is WorkOutOdds and self.config.live_odds:
                self._odds_due = effect
        return step.reply

    def _reload_keys(self) -> None:
        """SIGHUP (`systemctl reload shoed`): the allow-list (KEY_DIR/clients) is read again
        between two turns of the loop, so no card waits. A bad key file keeps the old list."""
        from shoed.net.curve import CurveError

        self._reload_due = False
        if self.curve is None:
            log.info("reload: no CURVE keys in use, nothing to reload")
            return
        self.notifier.send("RELOADING=1")
        try:
            counts = self.curve.reload()
        except CurveError as exc:
            log.error("reload refused: the allow-list in force is kept", error=str(exc))
        else:
            log.info("allow-list reloaded", keys=counts)
        self.notifier.send("READY=1")

    def _in_time_order(self, item: dict) -> None:
        """Event times never go backwards in seq order: a reading stamped when the shoe's bytes
        arrived can be handled after a command or the live odds stamped later. Such an input
        takes the time of the one before; its own stays in `read_mono_ns` / `read_utc_ns`."""
        last_mono, last_utc = self._last_stamp
        if item["mono_ns"] < last_mono or item["utc_ns"] < last_utc:
            item["read_mono_ns"], item["read_utc_ns"] = item["mono_ns"], item["utc_ns"]
            item["mono_ns"], item["utc_ns"] = max(item["mono_ns"], last_mono), max(item["utc_ns"], last_utc)
        self._last_stamp = (item["mono_ns"], item["utc_ns"])

    def _tick(self) -> None:
        """A wait longer than `stall_after_s`: the controller is told the time (a `tick` input,
        journaled like any other), decides, and raises the `stalled` alarm; logged here."""
        after = self.config.stall_after_s
        if not after or not self.controller.stall_due(time.monotonic_ns(), int(after * 1e9)):
            return
        from shoed.journal import JournalError

        try:
            self.handle({"kind": "tick", "stall_after_s": after})
        except JournalError as exc:
            self._journal_failed(exc)
            return
        if "stalled" in self.controller.alarms:
            waiting = self.controller.waiting()
            log.warning("the table is stalled", waiting_for=waiting["for"], what=waiting["text"],
                        since=waiting["since"])

    def _live_odds(self) -> None:
        """Exact odds of the remaining shoe after every coup, fed back as an input."""
        from shoed.rules.odds import live_odds

        due, self._odds_due = self._odds_due, None
        if due is None:
            return
        try:
            odds = live_odds(due.ruleset, due.composition)
        except ValueError as exc:  # e.g. more cards seen than the shoe holds (a foreign card)
            log.warning("live odds not computed", error=str(exc))
            return
        if odds is not None:
            # Stamped with the time of the coup's last input: the odds are of that moment, and an
            # input read meanwhile (stamped when it was read) comes after them in time as in seq.
            mono, utc = self._last_stamp
            self.handle({"kind": "odds", "odds": odds, "mono_ns": mono, "utc_ns": utc})

    def command(self, command) -> dict:
        """A command from the console or the pit (a shoed.net.commands.Command), with the key that sent it."""
        from shoed.table.events import COMMANDS, DEFAULT_ROLE
        from shoed.journal import JournalError

        if COMMANDS[command.name].read_only:  # nothing changes: not a journal record, no fsync
            return {"ok": True, "status": self.controller.snapshot()}
        # The role decides what the command may do (TableController NEEDS_ROLE); an endpoint
        # without keys (a lab bench) has no roles: its senders are dealers.
        item = {"kind": "command", "cmd": command.name, "args": command.args,
                "client": command.client_name or command.client_key, "client_key": command.client_key,
                "peer": command.peer_address, "role": command.client_role or DEFAULT_ROLE}
        try:
            reply = self.handle(item)
        except JournalError as exc:
            self._journal_failed(exc)
            return {"ok": False, "error": "the journal cannot be written; the table is stopped"}
        return reply or {"ok": True}

    def _update_gate(self) -> None:
        locked = not self.controller.card_due
        if locked != self.gate_locked:
            for driver in self.drivers:
                if driver not in self.closed_drivers:
                    driver.set_gate(locked)
            self.gate_locked = locked

    def _journal_failed(self, exc: Exception) -> None:
        """The journal cannot be written (disk full, I/O error): nothing more is
        acknowledged or published; the gate is locked and the daemon stops."""
        log.critical("journal write failed: the gate is locked and the table stops", error=str(exc))
        open_drivers = [d for d in self.drivers if d not in self.closed_drivers]
        for driver in open_drivers:
            try:
                driver.set_gate(True)
            except Exception:  # noqa: BLE001 - stopping anyway
                pass
        # Keep the links up a moment so the lock gets there (a driver repeats it until the shoe
        # confirms, SPEC.md §10); what arrives meanwhile is not journaled, so not acknowledged:
        # the shoe keeps it.
        deadline = time.monotonic() + GATE_LOCK_GRACE
        while open_drivers and time.monotonic() < deadline:
            for driver in open_drivers:
                try:
                    driver.poll(0.02)
                except Exception:  # noqa: BLE001 - stopping anyway
                    pass
        self.notifier.status(f"ALARM: journal write failed: {exc}")
        # Exit 3 (systemd does not restart) is for a disk that cannot be written; descriptors taken
        # by a flood of connections are not the disk's fault: exit 1, and systemd starts the table again.
        cause = exc.__cause__
        self.exit_code = 1 if isinstance(cause, OSError) and cause.errno in (errno.EMFILE, errno.ENFILE) else 3
        self.stopping = True

    # ----- state for late joiners --------------------------------------------
    def snapshot(self) -> dict:
        snap = self.controller.snapshot()
        snap["journal_head"] = self.journal.head if self.journal else None
        snap["journal"] = self.journal_position()
        return snap

    def journal_position(self) -> dict | None:
        """The journal's chain head as published for a witness: file number, jseq and hash of the
        last record written (right after a step is journaled, the record holding its events)."""
        journal = self.journal
        if journal is None or not journal.file_seq:
            return None
        return {"file": journal.file_seq, "jseq": journal.jseq, "hash": journal.head}

    def journal_events(self, first: int, last: int):
        """Events with seq in [first, last] from the journal files that hold them, one at a time
        (the catch-up thread reads them so, a chunk between clients)."""
        from shoed.journal import iter_records
        from shoed.journal.reader import journal_files
        from shoed.journal.recall import events_of

        files = [path for chain in journal_files(self.config.journal_dir).tables
                 for path, name in chain if name is not None and name.table == self.config.table]
        # Each file opens with a checkpoint of the seq before it: start at the last file that begins
        # before `first`. Reading (and proving) the whole journal here stalled the loop: 8 s at 1,000 shoes.
        start = 0
        for i in range(len(files) - 1, -1, -1):
            if _checkpoint_seq(files[i]) < first:
                start = i
                break
        for path in files[start:]:
            for record in iter_records(path, self._journal_secret):
                if record.get("kind") != "step":
                    continue
                for event in events_of(record):
                    seq = event.get("seq", -1)
                    if seq > last:
                        return
                    if first <= seq:
                        yield event

    # ----- stop -------------------------------------------------------------
    def shutdown(self) -> None:
        self.notifier.stopping()
        if self._powered_on and self.exit_code == 0:
            try:
                self.handle({"kind": "power", "state": "off", "clean": True})
            except Exception as exc:  # noqa: BLE001 - a failing journal at stop is logged, nothing more
                log.error("could not journal the stop", error=str(exc))
        _close_each(*self.drivers)
        if self.virtual is not None:
            self.virtual.stop()
        _close_each(self.commands, self.catchup, *self.publishers)
        if self.curve is not None:
            self.curve.close()
        for context in (self.context, *self.stream_contexts):
            if context is not None:
                context.term()
        if self.journal is not None:
            self.journal.close()
        self.notifier.close()
        if self.exit_code:
            log.error("stopped after a failure", exit_code=self.exit_code)
        else:
            log.info("stopped", exit_code=0)


def _close_each(*parts) -> None:
    """Close every part there is at a stop; one that fails to close keeps none of the others open."""
    for part in parts:
        if part is not None:
            try:
                part.close()
            except Exception:  # noqa: BLE001
                pass
