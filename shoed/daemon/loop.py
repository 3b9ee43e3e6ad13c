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

`Daemon.start()` makes the parts in that order, each whole or not at all: the
journal and the controller rebuilt from it, the network side (`_Network`: the
publishers, catch-up, the command endpoint), the drivers side (`_Sources`);
then `TableLoop`, the running table that holds them all, whose `step()` is one
turn of the loop. A start that fails half-way closes what it had made.
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
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from shoed.backoff import Backoff
from shoed.daemon import logs
from shoed.table import shuffle as shuffle_table
from shoed.table import events as ev
from shoed.table import audience
from shoed.table.refusals import RefusedCommands
from shoed.daemon.clockwatch import STALL_LIMIT, STEP_LIMIT, ClockWatch
from shoed.daemon.config import Config, ConfigError, Source, auto_confirm, source_capabilities, uses_keys
from shoed.daemon.config import check as check_config
from shoed.daemon.notify import Notifier
from shoed.daemon.virtual import DRIVER as VIRTUAL_DRIVER
from shoed.daemon.virtual import VirtualShoeError, VirtualShoeProcess
from shoed.table.replay import Replay, UnusableRecord, checkpoint_record, step_record
from shoed.table import StartShoeFile, TableController, WorkOutOdds
from shoed.table.controller import BEHAVIOUR

if TYPE_CHECKING:
    import zmq

    from shoed.drivers.base import Capabilities, Driver, Reading
    from shoed.journal import Journal
    from shoed.net.catchup import CatchupServer
    from shoed.net.commands import Command, CommandServer
    from shoed.net.curve import ServerCurve
    from shoed.net.publisher import Publisher
    from shoed.rules.ruleset import Ruleset

log = logs.get("shoed.daemon")

POLL_TIMEOUT = 0.005  # seconds the loop waits on the shoe before serving sockets
# Events kept in memory for catch-up (about 8 shoes; ~1 kB each); older ones come from the journal.
RECENT_EVENTS = 5_000
CATCHUP_SLICE = 0.0005  # seconds: the interpreter's switch interval once the catch-up thread runs
GATE_LOCK_GRACE = 0.5  # seconds the links stay up after a journal failure, for the gate lock to arrive
OPEN_RETRY_FIRST, OPEN_RETRY_MOST = 0.2, 5.0  # seconds between tries of a source that would not open


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


def _no_core_dumps() -> None:
    """No core file of the daemon: its memory holds the keys (CURVE, the journal's secret or sealing
    key, a shuffler's order key) and a shuffled shoe's open order. systemd's LimitCORE=0 says the
    same; this holds wherever the daemon runs."""
    import resource

    try:
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    except (ValueError, OSError) as exc:
        log.warning("cannot turn core files off", error=str(exc))


def _checkpoint_seq(path: str | os.PathLike[str]) -> int:
    """The seq a journal file starts from (its checkpoint, line 2); -1 when it cannot be read."""
    from shoed.files import open_regular
    from shoed.journal.chain import HEAD_LINE_MAX

    try:
        with open_regular(path) as f:  # a FIFO named like a journal file must not stall the catch-up
            f.readline(HEAD_LINE_MAX)
            return int(json.loads(f.readline(HEAD_LINE_MAX))["state"]["seq"])
    except (OSError, ValueError, KeyError, TypeError, RecursionError):
        return -1


def input_from_reading(reading: Reading) -> dict[str, Any]:
    """A driver's Reading as a controller input (also what the journal keeps: raw bytes in hex)."""
    item = reading.to_json()
    item["kind"] = reading.kind
    return item


def _capabilities(source: Source) -> Capabilities:
    """What a configured source's driver can do; the built-in virtual shoe is read through its driver."""
    return source_capabilities(source)


def _ensure_keys(key_dir: Path, local_console: bool) -> None:
    """First start: the server's key pair and an empty allow-list (shoed.net.keys); then the keys
    and the allow-list are read as the network side will read them. DaemonError (one line) when
    they cannot be made or used."""
    from shoed.net.curve import CurveError, ServerCurve
    from shoed.net.keys import ensure_server_keys

    try:
        public = ensure_server_keys(key_dir, local_console=local_console)
        ServerCurve.from_key_dir(key_dir).close()  # reads and checks them; starts no authenticator
    except CurveError as exc:
        raise DaemonError(str(exc)) from None
    except OSError as exc:
        raise DaemonError(f"cannot make the keys in {key_dir}: {exc.strerror or exc}"
                          + (f": {exc.filename}" if exc.filename else "")) from None
    if public is not None:
        log.warning("made the server key pair; allow a client by copying its public .key into clients/",
                    key_dir=str(key_dir), server_public=public)


def journal_position(journal: Journal) -> dict[str, Any] | None:
    """The journal's chain head as published for a witness: file number, jseq and hash of the
    last record written (right after a step is journaled, the record holding its events)."""
    if not journal.file_seq:
        return None
    return {"file": journal.file_seq, "jseq": journal.jseq, "hash": journal.head}


class _Network:
    """The network side, bound whole by `bind()`: the public context (commands, catch-up) and one
    context per event stream (shoed.net.contexts), the CURVE keys where they are used, every
    audience's publisher (the display's first, surveillance's where configured), the snapshot and
    catch-up server on its thread, the command endpoint and the poller over its sockets."""

    def __init__(self, context: zmq.Context[Any], stream_contexts: list[zmq.Context[Any]], curve: ServerCurve | None,
                 publishers: list[Publisher], catchup: CatchupServer, commands: CommandServer,
                 poller: zmq.Poller) -> None:
        self.context = context
        self.stream_contexts = stream_contexts
        self.curve = curve
        self.publishers = publishers
        self.catchup = catchup
        self.commands = commands
        self.poller = poller

    @classmethod
    def bind(cls, cfg: Config, *, last_seq: int, journal_head: Callable[[], dict[str, Any] | None],
             recent: collections.deque[dict[str, Any]], journal_events: Callable[[int, int], Iterator[dict[str, Any]]],
             command: Callable[[Command], dict[str, Any] | None]) -> _Network:
        """Bind every endpoint of `cfg` and start the catch-up thread; DaemonError (with what was
        made closed again) when an endpoint cannot be bound or the keys cannot be used."""
        import zmq

        from shoed.net import contexts
        from shoed.net.catchup import CatchupServer, Endpoint
        from shoed.net.commands import CommandServer
        from shoed.net.curve import SURVEILLANCE_DOMAIN, CurveError, ServerCurve
        from shoed.net.publisher import Publisher

        # Commands and catch-up on the public context; each event stream on a context of its own
        # (shoed.net.contexts): a client's load on the first never stands in front of a card's event.
        context = contexts.public_context()
        stream_contexts = [contexts.stream_context() for _ in range(2 if cfg.surveillance_events else 1)]
        curve: ServerCurve | None = None
        publishers: list[Publisher] = []
        catchup: CatchupServer | None = None
        commands: CommandServer | None = None
        try:
            if uses_keys(cfg):  # the keys: made by Daemon.start
                try:
                    curve = ServerCurve.from_key_dir(cfg.key_dir, context)
                except CurveError as exc:
                    raise DaemonError(str(exc)) from None
            pub_curve = curve if cfg.curve_publish else None
            display_event, display_snapshot = audience.for_audience(audience.DISPLAY, cfg.display_reveal)
            every_event, whole_snapshot = audience.for_audience(audience.SURVEILLANCE)
            endpoints = [Endpoint(cfg.snapshot, display_event, display_snapshot, pub_curve)]
            try:
                if pub_curve is not None:
                    pub_curve.attach(stream_contexts[0])
                # The display stream carries no chain head: a record's hash lets a guess at a face-down
                # card be checked (shoed.table.audience.JOURNAL_FIELDS).
                publishers.append(Publisher(stream_contexts[0], cfg.events, cfg.table, pub_curve, last_seq=last_seq,
                                            view=display_event))
                if cfg.surveillance_events:
                    if curve is not None:  # (always: surveillance makes the keys)
                        curve.attach(stream_contexts[1])
                    # Surveillance's endpoints admit the keys of the pit and surveillance roles only.
                    publishers.append(Publisher(stream_contexts[1], cfg.surveillance_events, cfg.table, curve,
                                                curve_domain=SURVEILLANCE_DOMAIN, last_seq=last_seq,
                                                journal_head=journal_head))
                if cfg.surveillance_snapshot:
                    endpoints.append(Endpoint(cfg.surveillance_snapshot, every_event, whole_snapshot, curve,
                                              SURVEILLANCE_DOMAIN))
                catchup = CatchupServer(context, endpoints, cfg.table, recent, journal_events)
                commands = CommandServer(context, cfg.commands, command,
                                         curve=curve if cfg.curve_commands else None,
                                         insecure=not cfg.curve_commands)
            except zmq.ZMQError as exc:
                raise DaemonError(f"cannot bind a ZeroMQ endpoint ({exc}); is another daemon using it? "
                                  "Give other endpoints with --pub, --snapshot, --commands") from None
            contexts.lower_io_priority()
            poller = zmq.Poller()
            for sock in commands.sockets():
                poller.register(sock, zmq.POLLIN)
            # The catch-up thread takes the interpreter in short slices: a card waits at most this long for it.
            sys.setswitchinterval(CATCHUP_SLICE)
            catchup.start()
        except BaseException:
            _close_network(commands, catchup, publishers, curve, [context, *stream_contexts])
            raise
        return cls(context, stream_contexts, curve, publishers, catchup, commands, poller)

    def bound(self) -> dict[str, str]:
        """The displays' events and snapshot endpoints and the command endpoint as bound: a port 0
        (or *) in the configuration is the one the system chose."""
        return {"events": self.publishers[0].endpoint, "snapshot": self.catchup.endpoints[0],
                "commands": self.commands.endpoint}

    def close(self) -> None:
        _close_network(self.commands, self.catchup, self.publishers, self.curve, [self.context, *self.stream_contexts])


def _close_network(commands: CommandServer | None, catchup: CatchupServer | None, publishers: list[Publisher],
                   curve: ServerCurve | None, contexts: list[zmq.Context[Any]]) -> None:
    _close_each(commands, catchup, *publishers)
    if curve is not None:
        curve.close()
    for context in contexts:
        context.term()


class _Sources:
    """The drivers side, made whole by `make()`: one driver for each configured source, in order
    (the built-in virtual shoe's process with them, where one is configured), the drivers not
    open yet with when to try each again, and the gate's state as last sent to them."""

    def __init__(self, drivers: list[Driver], virtual: VirtualShoeProcess | None) -> None:
        self.drivers = drivers
        self.virtual = virtual
        self.closed: dict[Driver, float] = {driver: 0.0 for driver in drivers}  # -> monotonic time of the next try
        self.retries: dict[Driver, Backoff] = {}  # drivers that would not open, or failed: their back-off
        self.failed: set[Driver] = set()  # drivers that raised and were closed: the table is told when they are back
        self.told_up: set[Driver] = set()  # reopened, and the table told so: the driver's own "link up" is not news
        self.gate_locked: bool | None = None

    @classmethod
    def make(cls, cfg: Config, controller: TableController, bound: dict[str, str] | None = None) -> _Sources:
        """The drivers of `cfg`'s sources, none open yet (`open_pending` opens them); `bound`: the
        endpoints as bound, for the virtual dealer that follows the table."""
        from shoed.drivers import DriverError, build_driver

        drivers: list[Driver] = []
        virtual: VirtualShoeProcess | None = None
        try:
            for source in cfg.sources:
                if source.driver == "virtual":
                    from shoed.simulate.resume import resume_state

                    try:
                        virtual = VirtualShoeProcess.for_config(cfg, resume_state(controller), bound)
                    except VirtualShoeError as exc:
                        raise DaemonError(str(exc)) from None
                    log.info("virtual shoe started", pty=virtual.path, link=virtual.link, pace=cfg.sim_pace)
                    name, url, options = VIRTUAL_DRIVER, virtual.link, {}
                else:
                    name, url, options = source.driver, source.url, source.options
                try:
                    driver = build_driver(name, url, **options)
                except (DriverError, TypeError, ValueError) as exc:
                    raise DaemonError(f"source {name}:{url}: {exc}") from None
                drivers.append(driver)
        except BaseException:
            _close_each(*drivers)
            if virtual is not None:
                virtual.stop()
            raise
        return cls(drivers, virtual)

    def open_pending(self, controller: TableController) -> list[dict[str, Any]]:
        """Open the sources that are not open yet. A shoe missing at start is not fatal: the
        table is told the link is lost (the inputs returned) and the daemon keeps trying, with back-off."""
        from shoed.drivers import DriverError

        found: list[dict[str, Any]] = []
        now = time.monotonic()
        for driver, due in list(self.closed.items()):
            if now < due:
                continue
            try:
                driver.open()
            except DriverError as exc:
                backoff = self._backoff(driver)
                first = backoff.failures == 0
                self.closed[driver] = now + backoff.failed()
                if first:
                    log.error("cannot open the shoe; retrying", source=driver.source, error=str(exc))
                    found.append({"kind": "link", "link": "lost", "source": driver.source,
                                  "detail": {"error": str(exc)}})
                continue
            del self.closed[driver]
            if driver in self.failed:  # it raised; it may not report its own link, so the table is told
                self.failed.discard(driver)
                self.told_up.add(driver)
                found.append({"kind": "link", "link": "restored", "source": driver.source,
                              "detail": {"reopened": True}})
            resume = controller.resume_point(driver.source)
            if resume is not None:
                driver.set_last_seq(*resume)
            if driver in self.retries and self.retries.pop(driver).failures:
                log.info("shoe opened", source=driver.source)
            self.gate_locked = None  # tell the new link the gate's state
        return found

    def _backoff(self, driver: Driver) -> Backoff:
        backoff = self.retries.get(driver)
        if backoff is None:
            backoff = self.retries[driver] = Backoff(OPEN_RETRY_FIRST, OPEN_RETRY_MOST)
        return backoff

    def open_drivers(self) -> list[Driver]:
        return [driver for driver in self.drivers if driver not in self.closed]

    def _readers(self, cfg: Config) -> list[tuple[str, Capabilities]]:
        """The sources whose cards are dealt, with what each can do, in priority order (a shuffler's reports
        are no reader's). One driver for each configured source, in order."""
        return [(driver.source, capabilities) for source, driver in zip(cfg.sources, self.drivers, strict=True)
                if (capabilities := _capabilities(source)).deals]

    def reader_sources(self, cfg: Config) -> list[str]:
        """The sources whose cards are dealt, in priority order."""
        return [source for source, _ in self._readers(cfg)]

    def mode_told(self, cfg: Config) -> list[str]:
        """The readers whose cards' mode (burn or game) is the shoe's own word (`Capabilities.tells_mode`)."""
        return [source for source, capabilities in self._readers(cfg) if capabilities.tells_mode]

    def update_gate(self, locked: bool) -> list[dict[str, Any]]:
        """Tell the open drivers the gate's state when it changed; what a failing driver gives the table."""
        found: list[dict[str, Any]] = []
        if locked != self.gate_locked:
            for driver in self.open_drivers():
                try:
                    driver.set_gate(locked)
                except Exception as exc:  # noqa: BLE001 - a driver's fault must not stop the table
                    found.append(self.failed_driver(driver, exc))
            self.gate_locked = locked
        return found

    def failed_driver(self, driver: Driver, exc: Exception) -> dict[str, Any]:
        """A driver raised where the interface says it never does (a package's driver that does not
        reopen its own link, or a bug): the table runs on. The driver is closed and reopened with
        back-off as a shoe missing at start is, and the table is told when it is back; the input
        returned puts the link lost on record."""
        log.error("the shoe's driver failed: closing it and reopening it", source=driver.source,
                  error=f"{type(exc).__name__}: {exc}", exc_info=exc)
        _close_each(driver)
        self.failed.add(driver)
        backoff = self._backoff(driver)
        backoff.succeeded()  # it was open: the first try waits the least
        self.closed[driver] = time.monotonic() + backoff.failed()  # and a failed open is not reported again
        return {"kind": "link", "link": "lost", "source": driver.source,
                "detail": {"error": f"{type(exc).__name__}: {exc}"}}

    def is_news(self, driver: Driver, reading: Reading) -> bool:
        """False for a reopened driver's first report that its link is up: the table was told so
        when the driver opened again (`open_pending`), and one reopening is one record."""
        if driver not in self.told_up:
            return True
        self.told_up.discard(driver)
        return not (reading.kind == "link" and reading.link in ("connected", "restored"))

    def close(self) -> None:
        _close_each(*self.drivers)
        if self.virtual is not None:
            self.virtual.stop()


class TableLoop:
    """The running table, whole: the journal and the controller rebuilt from it, the drivers side
    and the network side. `step()` is one turn of the daemon's loop; every input goes through
    `handle()`. A journal that cannot be written calls `on_failure` with the exit code."""

    def __init__(self, config: Config, notifier: Notifier, clock: ClockWatch, journal: Journal,
                 controller: TableController, sources: _Sources, net: _Network,
                 recent: collections.deque[dict[str, Any]], on_failure: Callable[[int], None]) -> None:
        self.config = config
        self.notifier = notifier
        self.clock = clock
        self.journal = journal
        self.controller = controller
        self.sources = sources
        self.net = net
        self.recent = recent
        self.on_failure = on_failure
        # A coup ended: its live odds come when the loop is idle, or before the next input.
        self.odds_due: WorkOutOdds | None = None
        self.pending_inputs: list[dict[str, Any]] = []  # inputs the shell itself noticed (a shoe that would not open)
        self.last_watchdog = 0.0
        self.last_stamp = (0, 0)  # (mono_ns, utc_ns) of the last input handled
        self.reload_due = False  # SIGHUP: read the allow-list again
        self.refused = RefusedCommands()  # each key's refused commands: journaled one by one, then counted
        # The configured ruleset and decks where the journal's table runs others: adopted between two shoes.
        self.configured: tuple[Ruleset, int] | None = None

    def _adopt_configured(self) -> None:
        """The table takes the configured ruleset and decks once no shoe is open: its state as it is, under
        the new rules, in a journal file of its own whose checkpoint names them (a replay learns them there,
        as every file's replay starts from its checkpoint)."""
        assert self.configured is not None
        ruleset, decks = self.configured
        self.configured = None
        old = self.controller
        self.controller = new = TableController.from_checkpoint(
            old.table_id, ruleset, decks, old.checkpoint(), auto_confirm=old.auto_confirm, order_key=old.order_key)
        self.journal.open_shoe("table", first=[checkpoint_record(new)])
        log.warning("the table runs the configured ruleset from now, between two shoes",
                    ruleset=ruleset.name, decks=decks, journal_ruleset=old.ruleset.name, journal_decks=old.decks,
                    file=self.journal.path.name if self.journal.path else None)

    def step(self) -> None:
        """One turn of the loop: the shoe, the sockets, the heartbeat, the watchdog."""
        from shoed.journal import JournalError

        if self.sources.closed:
            self.pending_inputs += self.sources.open_pending(self.controller)
        self.pending_inputs += self.clock.check(time.monotonic_ns(), time.time_ns())
        busy = bool(self.pending_inputs)
        while self.pending_inputs:
            try:
                self.handle(self.pending_inputs.pop(0))
            except JournalError as exc:
                self._journal_failed(exc)
                return
        drivers = self.sources.drivers
        for driver in drivers:
            if driver in self.sources.closed:
                continue
            try:
                readings = driver.poll(POLL_TIMEOUT if len(drivers) == 1 else POLL_TIMEOUT / len(drivers))
            except Exception as exc:  # noqa: BLE001 - a driver's fault must not stop the table
                self.pending_inputs.append(self.sources.failed_driver(driver, exc))
                continue
            for reading in readings:
                busy = True
                if self.sources.is_news(driver, reading):
                    try:
                        self.handle(input_from_reading(reading))
                    except JournalError as exc:
                        self._journal_failed(exc)
                        return
                try:
                    driver.acknowledge(reading)
                except Exception as exc:  # noqa: BLE001 - journaled already: the shoe repeats it, or it is lost
                    self.pending_inputs.append(self.sources.failed_driver(driver, exc))
                    break
        for sock, _ in self.net.poller.poll(0):
            busy = True
            try:
                self.net.commands.handle(sock)
            except Exception:  # noqa: BLE001 - what a network peer sends must never stop the table
                log.exception("a request could not be served; the table runs on")
        if self.odds_due and not busy:
            try:
                self._live_odds()
            except JournalError as exc:
                self._journal_failed(exc)
                return
        self._tick()
        if self.refused.next_due is not None and not self.journal_refusals():
            return
        if self.reload_due:
            self._reload_keys()
        now = time.monotonic()
        box = self.net.catchup.box
        if box.wanted(now, busy):  # a client asked for a snapshot: one, made here, handed over whole
            box.put(self.snapshot(), now)
        for publisher in self.net.publishers:
            publisher.maybe_heartbeat()  # takes the subscriptions waiting too
        self.pending_inputs += self.sources.update_gate(not self.controller.card_due)
        if self.notifier.watchdog_interval and now - self.last_watchdog >= self.notifier.watchdog_interval:
            self.notifier.watchdog()
            self.last_watchdog = now

    def handle(self, item: dict[str, Any]) -> dict[str, Any] | None:
        """Feed one input through the controller, journal it with its events, publish.

        After a coup the live odds are due. They are worked out when the loop has a turn
        with nothing to do, after the coup's card was acknowledged and its events were on
        their way, or else just before the next input: the journal holds them right after
        the coup either way. (Worked out at once, their millisecond of CPU held back the
        delivery of the coup's last card: its p99 doubled, see docs/test-labs.md.)"""
        kind = item.get("kind")
        if self.odds_due and kind != "odds":
            self._live_odds()
        item.setdefault("mono_ns", time.monotonic_ns())
        item.setdefault("utc_ns", time.time_ns())
        self._in_time_order(item)
        if shuffle_table.needs_salt(item, self.controller):
            # The commitment's salt is worked out from this nonce with the order key: secret until the reveal.
            item.setdefault("salt_nonce", os.urandom(32).hex())
        if self.configured is not None and self.controller.between_shoes:
            self._adopt_configured()
        controller = self.controller
        journal = self.journal
        # Between shoes, a card can open the next shoe itself (a shoe without buttons,
        # auto_confirm) and be dealt in the same step: that shoe's file then starts with
        # the table as it was before the card, and the card's step is its first.
        before = checkpoint_record(controller) if controller.between_shoes else None
        step = controller.feed(item)
        reply = step.reply
        if kind == "command" and reply is not None and reply.get("ok") is False and not step.typed:
            # Refused: journaled one by one up to each key's budget, then counted (shoed.table.refusals).
            kept = self.refused.refused(item, str(reply.get("error")))
            if kept is None:
                return reply
            item = kept
        if before is not None and not controller.checkpointable:
            opened = next((e for e in step.effects if type(e) is StartShoeFile), None)
            if opened is not None and journal.shoe != opened.shoe_id:
                journal.open_shoe(opened.shoe_id, first=[before])
        journal.append(step_record(item, step.events))
        publishers = self.net.publishers
        for typed, event in zip(step.typed, step.events):
            for publisher in publishers:
                publisher.publish(event)
            self.recent.append(event)
            if type(typed) is ev.ShoeOpened:
                logs.bind(shoe=typed.shoe)
            elif type(typed) is ev.CoupOpened:
                logs.bind(coup=typed.coup)
        for effect in step.effects:
            if type(effect) is StartShoeFile:
                # The shoe's journal file starts now, with a checkpoint.
                if journal.shoe != effect.shoe_id:
                    journal.open_shoe(effect.shoe_id, first=[checkpoint_record(controller)])
            elif type(effect) is WorkOutOdds and self.config.live_odds:
                self.odds_due = effect
        return step.reply

    def journal_refusals(self, everything: bool = False, now: int | None = None) -> bool:
        """The counts of refused commands whose window ended by `now` (monotonic; all of them at a stop),
        each one input. False: the journal failed (the table stops)."""
        from shoed.journal import JournalError

        for summary in self.refused.due(time.monotonic_ns() if now is None else now, everything):
            try:
                self.handle(summary)
            except JournalError as exc:
                self._journal_failed(exc)
                return False
        return True

    def _reload_keys(self) -> None:
        """SIGHUP (`systemctl reload shoed`): the allow-list (KEY_DIR/clients) is read again
        between two turns of the loop, so no card waits. A bad key file keeps the old list."""
        from shoed.net.curve import CurveError

        self.reload_due = False
        curve = self.net.curve
        if curve is None:
            log.info("reload: no CURVE keys in use, nothing to reload")
            return
        self.notifier.send("RELOADING=1")
        before = curve.listed()
        try:
            counts = curve.reload()
        except CurveError as exc:
            log.error("reload refused: the allow-list in force is kept", error=str(exc))
        else:
            log.info("allow-list reloaded", keys=counts)
            after = curve.listed()
            if any(keys - after.get(domain, frozenset()) for domain, keys in before.items()):
                # A key removed: its connections to the event streams are cut by renewing them (the
                # command and catch-up endpoints check every request's key against the list in force).
                renewed = [p.endpoint for p in self.net.publishers if p.curve is not None and p.renew()]
                log.info("a key was removed: the event streams' subscribers connect again", endpoints=renewed)
        self.notifier.send("READY=1")

    def since_journal(self, last_utc_ns: int) -> None:
        """Start-up: event times go on from the journal's last input. A wall clock found behind it by more than
        a step (`clockwatch.STEP_LIMIT`: set back while the daemon was down) is said first, as a
        `table.clock_step` from that time, and followed from there; a smaller difference keeps the journal's
        time until the clock passes it (`_in_time_order`)."""
        if not last_utc_ns:
            return
        self.last_stamp = (0, last_utc_ns)  # no monotonic time carries across a restart (a new boot starts it again)
        now_utc = time.time_ns()
        if last_utc_ns - now_utc > STEP_LIMIT * 1e9:
            self.handle({"kind": "clock", "what": "step", "step_ns": now_utc - last_utc_ns,
                         "utc_before_ns": last_utc_ns, "utc_ns": now_utc})

    def _in_time_order(self, item: dict[str, Any]) -> None:
        """Event times never go backwards in seq order: a reading stamped when the shoe's bytes
        arrived can be handled after a command or the live odds stamped later. Such an input
        (stamped before the last) takes the time of the one before; its own stays in `read_mono_ns` /
        `read_utc_ns`. The wall clock stepped back is followed only from the `table.clock_step` that says
        so (the `clock` input: the new time from there on); a step too small to be one (under a second)
        or an input stamped before the step was seen keeps the time of the one before."""
        last_mono, last_utc = self.last_stamp
        mono, utc = item["mono_ns"], item["utc_ns"]
        stepped = item.get("kind") == "clock" and item.get("what") != "stall"
        if mono < last_mono or (utc < last_utc and not stepped):
            item["read_mono_ns"], item["read_utc_ns"] = mono, utc
            item["mono_ns"] = max(mono, last_mono)
            item["utc_ns"] = max(utc, last_utc)
        self.last_stamp = (item["mono_ns"], item["utc_ns"])

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

        due, self.odds_due = self.odds_due, None
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
            mono, utc = self.last_stamp
            self.handle({"kind": "odds", "odds": odds, "mono_ns": mono, "utc_ns": utc})

    def command(self, command: Command) -> dict[str, Any]:
        """A command from the console or the pit (a shoed.net.commands.Command), with the key that sent it."""
        from shoed.table.events import COMMANDS, DEFAULT_ROLE
        from shoed.journal import JournalError

        # The role decides what the command may do (TableController NEEDS_ROLE); an endpoint
        # without keys (a lab bench) has no roles: its senders are dealers.
        role = command.client_role or DEFAULT_ROLE
        if COMMANDS[command.name].read_only:  # nothing changes: not a journal record, no fsync
            # The dealer sees the table as its displays do (no face-down card, odds or alarm
            # detail: shoed.table.audience); the pit and surveillance see all of it.
            status = self.controller.snapshot()
            return {"ok": True, "status": status if role in ev.SEES_ALL else
                    audience.display_snapshot(status, self.config.display_reveal)}
        item = {"kind": "command", "cmd": command.name, "args": command.args,
                "client": command.client_name or command.client_key, "client_key": command.client_key,
                "peer": command.peer_address, "role": role}
        try:
            reply = self.handle(item)
        except JournalError as exc:
            self._journal_failed(exc)
            return {"ok": False, "error": "the journal cannot be written; the table is stopped"}
        return reply or {"ok": True}

    def _journal_failed(self, exc: Exception) -> None:
        """The journal cannot be written (disk full, I/O error): nothing more is
        acknowledged or published; the gate is locked and the daemon stops."""
        log.critical("journal write failed: the gate is locked and the table stops", error=str(exc))
        open_drivers = self.sources.open_drivers()
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
        self.on_failure(1 if isinstance(cause, OSError) and cause.errno in (errno.EMFILE, errno.ENFILE) else 3)

    # ----- state for late joiners --------------------------------------------
    def snapshot(self) -> dict[str, Any]:
        snap = self.controller.snapshot()
        snap["journal_head"] = self.journal.head
        snap["journal"] = journal_position(self.journal)
        return snap

    def close(self) -> None:
        """Close the parts at a stop: the drivers, the network, the journal (in that order)."""
        self.sources.close()
        self.net.close()
        self.journal.close()


class Daemon:
    """The table's daemon: `start()` makes the running table (`TableLoop`), `run()` turns its
    loop until a signal or a failure, `shutdown()` closes it."""

    def __init__(self, config: Config) -> None:
        self.config = config
        self.stopping = False
        self.exit_code = 0
        self.notifier = Notifier()
        self.table: TableLoop | None = None  # from start() on
        self._journal_secret: bytes | None = None  # read once at start (journal_secret_file)
        self.recent: collections.deque[dict[str, Any]] = collections.deque(maxlen=RECENT_EVENTS)
        self.ready_at: float | None = None
        self.started_at = time.monotonic()
        # A loop not run for half the watchdog interval is recorded (the notifier pings at half already).
        self.clock = ClockWatch(stall_limit=self.notifier.watchdog_interval or STALL_LIMIT)
        self._powered_on = False  # the power-on input was journaled: a stop is journaled too
        self._reload_due = False  # SIGHUP: read the allow-list again

    def _started(self) -> TableLoop:
        if self.table is None:
            raise DaemonError("the daemon has not started")
        return self.table

    @property
    def controller(self) -> TableController:
        return self._started().controller

    def _stop_with(self, exit_code: int) -> None:
        self.exit_code = exit_code
        self.stopping = True

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
        _no_core_dumps()
        from shoed.journal import JournalError

        # What the loop imports later is imported now: reading a module takes a file descriptor,
        # and a flood of connections may have taken them all by then.
        import shoed.journal.reader  # noqa: F401
        import shoed.journal.recall  # noqa: F401
        import shoed.rules.odds  # noqa: F401

        # The keys before the journal: a start refused for its keys leaves no journal behind.
        if uses_keys(cfg):
            _ensure_keys(Path(cfg.key_dir), cfg.embedded_default)
        journal = self._open_journal()
        try:
            try:
                controller, stopped_clean, odds_missing, found, configured = self._rebuild(journal, ruleset, decks)
                net = _Network.bind(cfg, last_seq=controller.seq,
                                    journal_head=functools.partial(journal_position, journal), recent=self.recent,
                                    journal_events=self.journal_events, command=self.command)
            except BaseException:
                journal.close()
                raise
            try:
                sources = _Sources.make(cfg, controller, net.bound())
            except BaseException:
                net.close()
                journal.close()
                raise
            table = self.table = TableLoop(cfg, self.notifier, self.clock, journal, controller, sources, net,
                                           self.recent, self._stop_with)
            table.configured = configured
            table.pending_inputs += found
            table.pending_inputs += sources.open_pending(controller)
            table.since_journal(controller.now_utc)
            # Start-up record: power on, and whether the last stop was clean.
            table.handle({"kind": "power", "state": "on", "clean": stopped_clean, "behaviour": BEHAVIOUR,
                          "sources": sources.reader_sources(cfg), "mode_told": sources.mode_told(cfg),
                          "auto_confirm": self._auto_confirm(),
                          "recovery": [n.to_json() for n in journal.recovery]})
            self._powered_on = True
            if self.config.live_odds:
                table.odds_due = odds_missing
            # What start-up found (an integrity lock, a shoe that would not open) is on record before
            # READY: a stop that comes at once must not leave it unjournaled.
            while table.pending_inputs:
                table.handle(table.pending_inputs.pop(0))
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
        log.info("ready", seconds=round(self.ready_at - self.started_at, 3), seq=table.controller.seq,
                 journal=str(journal.path))

    def _open_journal(self) -> Journal:
        from shoed.journal import Journal, JournalError, JournalLocked

        from shoed.journal import read_secret_file

        # Read once (the configuration check proved it usable): the journal and catch-up share it.
        secret = read_secret_file(self.config.journal_secret_file) if self.config.journal_secret_file else None
        self._journal_secret = secret
        try:
            journal = Journal(self.config.journal_dir, self.config.table, secret)
        except JournalLocked as exc:
            raise DaemonError(f"the journal is corrupt ({exc}); nothing was cut, the table stays locked: "
                              f"run `shoed journal verify {self.config.journal_dir}` and call surveillance") from None
        except JournalError as exc:
            raise DaemonError(f"cannot open the journal: {exc}") from None
        for note in journal.recovery:
            log.warning("journal recovery", note=note.to_json())
        return journal

    def _rebuild(self, journal: Journal, ruleset: Ruleset, decks: int
                 ) -> tuple[TableController, bool, WorkOutOdds | None, list[dict[str, Any]],
                            tuple[Ruleset, int] | None]:
        """Replay the current file of the journal to rebuild the controller. What the journal's past
        tells: whether the last stop was clean, the live odds its last coup is missing, the inputs it
        calls for (a replay that differs from the record), and the configured ruleset and decks where
        the journal's table runs others (the table adopts them once no shoe is open)."""
        from shoed.journal import iter_records

        state = Replay(order_key=self.order_key)
        configured: tuple[Ruleset, int] | None = None
        stopped_clean = True
        found: list[dict[str, Any]] = []
        path = journal.path
        if path is not None:
            try:
                for record in iter_records(path, journal.keys):
                    state.feed(record, path.name)
            except UnusableRecord as exc:
                raise DaemonError(f"the journal is corrupt ({exc}); nothing was cut, the table stays locked: "
                                  f"run `shoed replay {self.config.journal_dir}` and call surveillance") from None
            stopped_clean = state.stopped_clean
        if path is not None and state.controller is None and journal.file_seq > 1:
            # Every file after the first starts with the table's checkpoint, written with its header:
            # without one, the table's state (its seq, its locks, its shoe) cannot be rebuilt.
            raise DaemonError(f"the journal's current file {path.name} has no checkpoint after its header: the "
                              "table's state cannot be rebuilt; nothing was cut, the table stays locked: run "
                              f"`shoed journal verify {self.config.journal_dir}` and call surveillance")
        if state.controller is None or path is None:
            controller = TableController(self.config.table, ruleset, decks, auto_confirm=self._auto_confirm(),
                                         order_key=self.order_key)
            journal.open_shoe("table", first=[checkpoint_record(controller)])
        else:
            controller = state.controller
            if (controller.ruleset.name, controller.decks) != (ruleset.name, decks):
                configured = (ruleset, decks)  # adopted by the table once no shoe is open (TableLoop.configured)
                if not controller.between_shoes:
                    log.warning("the journal's table runs another ruleset or deck count; it stays until the shoe "
                                "closes", journal_ruleset=controller.ruleset.name, journal_decks=controller.decks,
                                configured=ruleset.name, configured_decks=decks)
            if state.differences:
                first = state.differences[0]
                # An input like any other: journaled and published after the power-on (seq runs on unbroken).
                found.append({"kind": "integrity",
                              "text": f"replay of {path.name} differs at jseq {first.jseq}: {first.reason}"})
            log.info("state rebuilt from the journal", file=path.name, steps=state.steps, seq=controller.seq,
                     coup=controller.coup_no or None)
            shoe = controller.shoe
            if shoe is not None and not controller.between_shoes and controller.checkpointable \
                    and journal.shoe != shoe.shoe_id:
                # The shoe was opened (its step is on record) and the daemon stopped before its file
                # was: a crash, or a disk that was full. The file is opened now, as it would have been.
                journal.open_shoe(shoe.shoe_id, first=[checkpoint_record(controller)])
                log.warning("the open shoe's journal file started at start-up", shoe=shoe.shoe_id,
                            file=journal.path.name if journal.path else None)
        # A stop between a coup's record and its live odds record left the odds out: they come now.
        return controller, stopped_clean, state.odds_due, found, configured

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

    def _auto_confirm(self) -> bool:
        return auto_confirm(self.config)

    # ----- the loop -------------------------------------------------------
    def run(self) -> int:
        def stop(signum: int, frame: object) -> None:
            self.stopping = True

        def reload(signum: int, frame: object) -> None:
            self._reload_due = True

        signal.signal(signal.SIGTERM, stop)
        signal.signal(signal.SIGINT, stop)
        signal.signal(signal.SIGHUP, reload)
        for other in (signal.SIGUSR1, signal.SIGUSR2):  # a log rotation's habit: never a stop without its record
            signal.signal(other, signal.SIG_IGN)
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
        table = self._started()
        if self._reload_due:  # SIGHUP came: this turn reads the allow-list again
            self._reload_due, table.reload_due = False, True
        table.step()

    def command(self, command: Command) -> dict[str, Any]:
        """A command from the console or the pit (a shoed.net.commands.Command), with the key that sent it."""
        return self._started().command(command)

    def journal_events(self, first: int, last: int) -> Iterator[dict[str, Any]]:
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
        table = self.table
        if table is not None:
            if self._powered_on and self.exit_code == 0:
                try:
                    table.journal_refusals(everything=True)
                    # A stall (or a clock step) that the stop came during is on record before the stop.
                    for item in self.clock.check(time.monotonic_ns(), time.time_ns()):
                        table.handle(item)
                    table.handle({"kind": "power", "state": "off", "clean": True})
                except Exception as exc:  # noqa: BLE001 - a failing journal at stop is logged, nothing more
                    log.error("could not journal the stop", error=str(exc))
            table.close()
        self.notifier.close()
        if self.exit_code:
            log.error("stopped after a failure", exit_code=self.exit_code)
        else:
            log.info("stopped", exit_code=0)


def _close_each(*parts: Any) -> None:
    """Close every part there is at a stop; one that fails to close keeps none of the others open."""
    for part in parts:
        if part is not None:
            try:
                part.close()
            except Exception:  # noqa: BLE001
                pass
