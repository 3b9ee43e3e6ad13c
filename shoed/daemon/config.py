"""The daemon's configuration: a TOML file, options on the command line, and the built-in default.

With no file the daemon runs the embedded default, which needs no hardware:
a virtual shoe on a pseudo-terminal read through the `native` serial driver,
the `macau-statutory` ruleset (`EMBEDDED_RULESET`), events published on loopback.
"""

from __future__ import annotations

import math
import os
import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path

from shoed.files import why_not_writable

DEFAULT_EVENTS = "tcp://127.0.0.1:5556"
DEFAULT_SNAPSHOT = "tcp://127.0.0.1:5557"
DEFAULT_COMMANDS = "tcp://127.0.0.1:5558"


# The transports a ZeroMQ endpoint may name (zmq_bind(3)).
ENDPOINT_TRANSPORTS = frozenset({"tcp", "ipc", "inproc", "pgm", "epgm", "tipc", "vmci", "ws", "wss", "udp"})


class ConfigError(ValueError):
    """A configuration that cannot be used; the message says what to fix."""


@dataclass(frozen=True)
class Source:
    driver: str  # a registered driver's name (shoed.drivers.driver_names), or "virtual" (the built-in virtual shoe)
    url: str = ""
    options: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Config:
    table: str = "t1"
    ruleset: str = "punto-banco"
    decks: int | None = None
    journal_dir: str = "shoed-data/journal"
    key_dir: str = "shoed-data/keys"  # server.key(_secret) and clients/ (the allow-list)
    journal_secret_file: str | None = None
    events: str = DEFAULT_EVENTS
    snapshot: str = DEFAULT_SNAPSHOT
    commands: str = DEFAULT_COMMANDS
    curve_commands: bool = True  # the command endpoint always authenticates unless turned off for a lab
    curve_publish: bool = False  # PUB and snapshot require CURVE too
    # The surveillance audience (shoed.table.audience): every event, CURVE-authenticated, keys on the allow-list.
    # None: no surveillance endpoints; `events` and `snapshot` serve the display audience either way.
    surveillance_events: str | None = None
    surveillance_snapshot: str | None = None
    display_reveal: str = "dealt"  # when a hand's card is faced: "dealt", or "result" (squeezed games)
    sources: tuple[Source, ...] = (Source("virtual"),)
    auto_confirm: bool | None = None  # None: on for shoes without buttons (beetek)
    live_odds: bool = True
    stall_after_s: float = 120.0  # a wait longer than this raises the `stalled` alarm; 0: never
    sim_pace: float = 1.5
    sim_seed: int | None = None
    sim_shoes: int = 0  # 0: deal shoes for ever
    embedded_default: bool = True

    @property
    def virtual(self) -> bool:
        return any(s.driver == "virtual" for s in self.sources)


# Every key each section accepts; anything else is an error that names it (a typo in a security
# setting must never fall back silently to its default). docs/configuration.md documents each.
TOP_KEYS = frozenset({
    "table", "ruleset", "decks", "journal_dir", "key_dir", "journal_secret_file", "auto_confirm",
    "live_odds", "stall_after_s", "publish", "sources", "simulator",
})
PUBLISH_KEYS = frozenset({"events", "snapshot", "commands", "curve_commands", "curve_publish",
                          "surveillance_events", "surveillance_snapshot", "display_reveal"})
SIMULATOR_KEYS = frozenset({"pace", "seed", "shoes"})
_LINK_OPTIONS = frozenset({"baudrate", "backoff_initial", "backoff_max"})
_NATIVE_OPTIONS = _LINK_OPTIONS | {"heartbeat", "silence", "hello_repeat", "gate_repeat", "confidence_floor"}
# Driver -> the options a [[sources]] entry may give it besides `driver` and `url`. A third-party
# driver (the `shoed.drivers` entry-point group) names its own in `Driver.source_options`.
SOURCE_OPTIONS = {
    "native": _NATIVE_OPTIONS,
    "native-usb": _NATIVE_OPTIONS,
    "beetek": _LINK_OPTIONS,
    "camera": frozenset({"roi", "realtime", "colour_camera"}),
    "shuffler": _NATIVE_OPTIONS | {"order_key_file"},
    "virtual": frozenset(),
}


# The embedded default deals a ruleset whose bets all favour the house as dealt from a full
# shoe (5% commission on the banker), so the demo raises `favourable_bet` only when the cards
# left really favour a bet; punto-banco as written pays the banker 1:1 without commission,
# which favours the player from the first card (`--ruleset punto-banco` keeps it).
EMBEDDED_RULESET = "macau-statutory"


def source_options(driver: str, where: str) -> frozenset:
    """The options a source of `driver` may be given: shoed's own drivers' from SOURCE_OPTIONS, a
    third-party driver's from its class (`source_options`), which is loaded now so that a driver that
    cannot be loaded, or declares no capabilities, is refused before anything is made."""
    if driver in SOURCE_OPTIONS:
        return SOURCE_OPTIONS[driver]
    from shoed.drivers import DriverError, capabilities, driver_class, driver_names

    if driver not in driver_names():
        raise ConfigError(f"{where}: unknown driver {driver!r}; choose one of {', '.join([*driver_names(), 'virtual'])}")
    try:
        capabilities(driver)
        declared = driver_class(driver).source_options
    except DriverError as exc:
        raise ConfigError(f"{where}: {exc}") from None
    if not (isinstance(declared, frozenset | set | tuple | list) and all(isinstance(k, str) for k in declared)):
        raise ConfigError(f"{where}: the {driver} driver's source_options is not a set of option names")
    return frozenset(declared)


CONFIG_FILE_MAX = 1 << 20  # a configuration file is a few kilobytes


def load_config(path: str | os.PathLike | None) -> Config:
    if path is None:
        return Config()
    p = Path(path)
    from shoed.files import TooLarge, read_regular

    try:
        if not p.is_file():
            raise ConfigError(f"no configuration file at {p}")
        # Read to a bound: a file of hundreds of megabytes (a mistake, or a log written over it)
        # would take as much memory as the daemon is allowed, and restart it in a loop.
        data = tomllib.loads(read_regular(p, CONFIG_FILE_MAX).decode("utf-8"))
    except TooLarge:
        raise ConfigError(f"{p}: not a configuration file: larger than {CONFIG_FILE_MAX:,} bytes "
                          f"(a configuration is a few kilobytes)") from None
    except PermissionError:
        # e.g. /etc/shoed not readable by the daemon's user: say so, rather than a traceback and a restart loop
        raise ConfigError(f"cannot read the configuration file {p}: permission denied for the user this runs as "
                          f"(uid {os.geteuid()}); make it and its directory readable to that user's group") from None
    except OSError as exc:
        raise ConfigError(f"cannot read the configuration file {p}: {exc.strerror or exc}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{p}: not a TOML file ({_one_line(exc)})") from None
    except RecursionError:  # tomllib reads nested arrays by recursion: `a = [[[[...]]]]`
        raise ConfigError(f"{p}: not a TOML file (arrays or tables nested too deeply)") from None
    return config_from_dict(data, str(p))


def _one_line(exc: Exception) -> str:
    return " ".join(str(exc).split())


def _strict(section: dict, known: frozenset, where: str) -> None:
    unknown = sorted(set(section) - known)
    if unknown:  # a quoted TOML key may hold any character: each is named as its repr, on one line
        names = ", ".join(repr(k) if not k.isprintable() else k for k in unknown)
        raise ConfigError(f"{where}: unknown setting(s) {names} (known: {', '.join(sorted(known))})")


def _section(data: dict, name: str, origin: str) -> dict:
    section = data.get(name, {})
    if not isinstance(section, dict):
        raise ConfigError(f"{origin}: [{name}] must be a table of settings")
    return section


# The kind of every value, by section: a value of another kind is an error that names it, never
# converted (`decks = "8"` or `url = 5` is a mistake to show, not to guess at; 8.7 decks are not 8,
# a secret file of "" is not "no secret", nan seconds are not an alarm that never comes).


def _number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _whole(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


TEXT = ("a string", lambda v: isinstance(v, str))
NAME = ("a non-empty string", lambda v: isinstance(v, str) and v != "")
# A file or directory: no operating system takes a NUL in a path (open() raises ValueError on it).
PATH = ("a non-empty path without NUL", lambda v: isinstance(v, str) and v != "" and "\0" not in v)
URL = ("a string without NUL", lambda v: isinstance(v, str) and "\0" not in v)
FLAG = ("true or false", lambda v: isinstance(v, bool))
SEED = ("a whole number", lambda v: v is None or _whole(v))  # None: a new seed each run
COUNT = ("a whole number from 0", lambda v: _whole(v) and v >= 0)
POSITIVE = ("a whole number from 1", lambda v: _whole(v) and v >= 1)
MAX_BAUD = 12_000_000  # the fastest serial adapters; a larger number overflows the port's settings
BAUD = (f"a whole number of baud from 1 to {MAX_BAUD}", lambda v: _whole(v) and 1 <= v <= MAX_BAUD)
# Every time setting is at most a day: 1e300 seconds is no setting (it overflowed the loop's
# nanosecond arithmetic and stopped the daemon with a traceback).
MAX_SECONDS = 86_400
SECONDS = (f"a number of seconds above 0, at most {MAX_SECONDS}", lambda v: _number(v) and 0 < v <= MAX_SECONDS)
SECONDS_OR_ZERO = (f"a number of seconds from 0 to {MAX_SECONDS}", lambda v: _number(v) and 0 <= v <= MAX_SECONDS)
FRACTION = ("a number from 0 to 1", lambda v: _number(v) and 0 <= v <= 1)
ROI = ("[x, y, width, height]: whole numbers of pixels, x and y from 0, width and height from 1",
       lambda v: isinstance(v, list) and len(v) == 4 and all(_whole(n) for n in v)
       and min(v[:2]) >= 0 and min(v[2:]) >= 1)

TOP_TYPES = {"table": NAME, "ruleset": NAME, "decks": POSITIVE, "journal_dir": PATH, "key_dir": PATH,
             "journal_secret_file": PATH, "auto_confirm": FLAG, "live_odds": FLAG, "stall_after_s": SECONDS_OR_ZERO}
PUBLISH_TYPES = {"events": NAME, "snapshot": NAME, "commands": NAME, "curve_commands": FLAG,
                 "curve_publish": FLAG, "surveillance_events": NAME, "surveillance_snapshot": NAME,
                 "display_reveal": TEXT}
SIMULATOR_TYPES = {"pace": SECONDS_OR_ZERO, "seed": SEED, "shoes": COUNT}
SOURCE_TYPES = {"driver": TEXT, "url": URL, "baudrate": BAUD, "heartbeat": SECONDS, "silence": SECONDS,
                "hello_repeat": SECONDS, "gate_repeat": SECONDS, "backoff_initial": SECONDS, "backoff_max": SECONDS,
                "confidence_floor": FRACTION, "order_key_file": PATH, "realtime": FLAG, "roi": ROI,
                "colour_camera": FLAG}


def _typed(section: dict, types: dict, where: str) -> None:
    for key, value in section.items():
        kind = types.get(key)
        if kind is not None and not kind[1](value):
            raise ConfigError(f"{where}: {key} must be {kind[0]}, not {value!r}")


def config_from_dict(data: dict, origin: str = "<config>") -> Config:
    _strict(data, TOP_KEYS, origin)
    _typed(data, TOP_TYPES, origin)
    pub = _section(data, "publish", origin)
    _strict(pub, PUBLISH_KEYS, f"{origin} [publish]")
    _typed(pub, PUBLISH_TYPES, f"{origin} [publish]")
    sim = _section(data, "simulator", origin)
    _strict(sim, SIMULATOR_KEYS, f"{origin} [simulator]")
    _typed(sim, SIMULATOR_TYPES, f"{origin} [simulator]")
    entries = data.get("sources", [{"driver": "virtual"}])
    if not isinstance(entries, list):
        raise ConfigError(f"{origin}: sources must be a list of [[sources]] tables")
    sources = []
    for i, s in enumerate(entries):
        if not isinstance(s, dict) or "driver" not in s:
            raise ConfigError(f"{origin}: sources[{i}] needs a driver")
        driver = str(s["driver"])
        if driver != "shuffler" and "order_key_file" in s:
            raise ConfigError(_not_a_shuffler(f"{origin} sources[{i}] ({driver})"))
        known = source_options(driver, f"{origin}: sources[{i}]")
        _strict(s, known | {"driver", "url"}, f"{origin} sources[{i}] ({driver})")
        _typed(s, SOURCE_TYPES, f"{origin} sources[{i}] ({driver})")
        options = {k: v for k, v in s.items() if k not in ("driver", "url")}
        sources.append(Source(driver, str(s.get("url", "")), options))
    if not sources:
        raise ConfigError(f"{origin}: at least one source is needed")
    display_reveal = _reveal(pub.get("display_reveal", "dealt"), origin)
    try:
        return Config(
            table=str(data.get("table", "t1")),
            ruleset=str(data.get("ruleset", "punto-banco")),
            decks=int(data["decks"]) if "decks" in data else None,
            journal_dir=str(data.get("journal_dir", Config.journal_dir)),
            key_dir=str(data.get("key_dir", Config.key_dir)),
            journal_secret_file=data.get("journal_secret_file"),
            events=str(pub.get("events", DEFAULT_EVENTS)),
            snapshot=str(pub.get("snapshot", DEFAULT_SNAPSHOT)),
            commands=str(pub.get("commands", DEFAULT_COMMANDS)),
            curve_commands=bool(pub.get("curve_commands", True)),
            curve_publish=bool(pub.get("curve_publish", False)),
            surveillance_events=pub.get("surveillance_events"),
            surveillance_snapshot=pub.get("surveillance_snapshot"),
            display_reveal=display_reveal,
            sources=tuple(sources),
            auto_confirm=data.get("auto_confirm"),
            live_odds=data.get("live_odds", True),
            stall_after_s=float(data.get("stall_after_s", Config.stall_after_s)),
            sim_pace=float(sim.get("pace", 1.5)),
            sim_seed=int(sim["seed"]) if sim.get("seed") is not None else None,
            sim_shoes=int(sim.get("shoes", 0)),
            embedded_default=False,
        )
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"{origin}: {exc}") from None


def check(config: Config):
    """What must hold before the daemon creates anything (keys, journal directories): the
    table id, the ruleset and its decks, each source's driver, a source ahead of any that only
    stands in for a shoe (a fallback: the camera), the secret file. Returns the ruleset to run.
    Every failure is a ConfigError with a one-line message."""
    from shoed.net.wire import WireError, check_table_id
    from shoed.rules.ruleset import RulesetError, load_ruleset, with_decks

    try:
        check_table_id(config.table)
    except WireError as exc:
        raise ConfigError(str(exc)) from None
    try:
        ruleset = load_ruleset(config.ruleset)
        if config.decks is not None and config.decks != ruleset.decks:
            ruleset = with_decks(ruleset, config.decks)
    except RulesetError as exc:
        raise ConfigError(_one_line(exc)) from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError, OSError) as exc:
        raise ConfigError(f"ruleset {config.ruleset}: not a TOML ruleset file ({_one_line(exc)})") from None
    for i, source in enumerate(config.sources):
        source_options(source.driver, f"source {i + 1}")
        if source.driver != "virtual" and not source.url:
            raise ConfigError(f"source {i + 1} ({source.driver}): a url is needed")
        if source.driver == "native-usb" or (source.driver == "shuffler" and source.url.startswith("usb://")):
            from shoed.drivers import DriverError
            from shoed.drivers.native_usb import parse_usb_url

            try:
                parse_usb_url(source.url)
            except DriverError as exc:
                raise ConfigError(f"source {i + 1} ({source.driver}): {exc}") from None
        _check_backoff(source, i)
    first = config.sources[0]
    if source_capabilities(first).fallback:
        # sources are in priority order: a fallback first would deal while the shoe is healthy
        raise ConfigError(f"source 1 ({first.driver}) only stands in for a shoe that fails (a fallback reader): "
                          f"list the shoe's source before it, as sources are in priority order")
    for i, source in enumerate(config.sources):
        if source.driver == "shuffler":
            _check_order_key(source, config.journal_dir, i)
        elif "order_key_file" in source.options:
            raise ConfigError(_not_a_shuffler(f"source {i + 1} ({source.driver})"))
    keys = {str(s.options.get("order_key_file")) for s in config.sources if s.driver == "shuffler"}
    if len(keys) > 1:
        raise ConfigError("the shuffler sources name different order_key_file: the table opens its orders with "
                          "one key, give them the same file")
    if not math.isfinite(config.stall_after_s) or not 0 <= config.stall_after_s <= MAX_SECONDS:
        raise ConfigError(f"stall_after_s must be 0 (no stall alarm) or more seconds, at most {MAX_SECONDS}, "
                          f"not {config.stall_after_s}")
    if not math.isfinite(config.sim_pace) or not 0 <= config.sim_pace <= MAX_SECONDS:
        raise ConfigError(f"the virtual shoe's pace is 0 (flat out) or more seconds between cards, at most "
                          f"{MAX_SECONDS}, not {config.sim_pace}")
    if config.sim_shoes < 0:
        raise ConfigError(f"the virtual shoe deals 0 (shoe after shoe) or more shoes, not {config.sim_shoes}")
    for setting, endpoint in _endpoints(config):
        problem = endpoint_problem(endpoint)
        if problem is not None:
            raise ConfigError(f"{setting} endpoint {endpoint!r}: {problem}")
    _check_distinct_endpoints(config)
    _check_journal_dir(config.journal_dir)
    if config.journal_secret_file:
        from shoed.journal.store import SecretFileError, read_secret_file

        try:
            read_secret_file(config.journal_secret_file, strong=True)
        except SecretFileError as exc:
            raise ConfigError(f"journal_secret_file {exc}") from None
        _check_private("journal_secret_file", config.journal_secret_file)
    _check_key_dir(config)
    return ruleset


def _check_backoff(source: Source, i: int) -> None:
    """A reconnecting source's back-off as its driver will take it (the driver's own check, with the
    driver's defaults for what the source does not give), so `config check` refuses what `run` would."""
    if source.driver in SOURCE_OPTIONS:
        if "backoff_initial" not in SOURCE_OPTIONS[source.driver]:
            return
    else:  # a third-party driver: one built on the reconnecting driver takes its back-off
        from shoed.drivers import DriverError, driver_class
        from shoed.drivers.link import LinkDriver

        try:
            if not issubclass(driver_class(source.driver), LinkDriver):
                return
        except DriverError as exc:
            raise ConfigError(f"source {i + 1} ({source.driver}): {exc}") from None
    from shoed.drivers.link import BACKOFF_INITIAL, BACKOFF_MAX, backoff_problem

    problem = backoff_problem(source.options.get("backoff_initial", BACKOFF_INITIAL),
                              source.options.get("backoff_max", BACKOFF_MAX))
    if problem is not None:
        raise ConfigError(f"source {i + 1} ({source.driver}): {problem}")


def _check_can_be_dir(setting: str, path: Path) -> bool:
    """`path` is a directory, or can be made (its nearest existing ancestor is a directory this user
    may write into). Returns whether it exists already; a ConfigError names what is wrong."""
    if path.exists():
        if not path.is_dir():
            raise ConfigError(f"{setting} {path} is not a directory")
        return True
    parent = path.absolute().parent
    while not parent.exists():
        parent = parent.parent
    if not parent.is_dir():
        raise ConfigError(f"{setting} {path} cannot be made: {parent} is not a directory")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise ConfigError(f"{setting} {path} cannot be made in {parent}: {why_not_writable(parent)}")
    return False


def _check_journal_dir(journal_dir: str) -> None:
    """The journal directory is a directory this user may write into, or one that can be made."""
    path = Path(journal_dir)
    if _check_can_be_dir("journal_dir", path) and not os.access(path, os.W_OK | os.X_OK):
        raise ConfigError(f"journal_dir {path}: {why_not_writable(path)}")


def _check_private(setting: str, path: str) -> None:
    """A secret file that only its owner may read or write (as the server's secret key must be)."""
    from shoed.net.curve import private_file_problem

    problem = private_file_problem(path)
    if problem is not None:
        raise ConfigError(f"{setting}: {problem}")


def endpoint_problem(endpoint: str, bind: bool = True) -> str | None:
    """What is wrong with a ZeroMQ endpoint, in words, or None: TRANSPORT://ADDRESS with a transport
    ZeroMQ knows, and for tcp a port of 1 to 65535 (or, to bind, `*` or 0: one the system picks).
    The one check of every endpoint, the configuration's and the command line's."""
    scheme, sep, address = endpoint.partition("://")
    if not (sep and address and scheme in ENDPOINT_TRANSPORTS):
        return "write TRANSPORT://ADDRESS, e.g. tcp://127.0.0.1:5556 or ipc:///run/shoed/events"
    if scheme == "tcp":
        host, colon, port = address.rpartition(":")
        if not (colon and host):
            return "a tcp endpoint names a host and a port, e.g. tcp://127.0.0.1:5556"
        if bind and port == "*":
            return None
        if not (port.isascii() and port.isdigit()) or not (0 if bind else 1) <= int(port) <= 65535:
            return f"a tcp port is a number from 1 to 65535{' (or *)' if bind else ''}, not {port!r}"
    return None


def _endpoints(config: Config) -> list[tuple[str, str]]:
    """(setting, endpoint) of each endpoint the configuration names (the surveillance ones may be unset)."""
    named = (("events", config.events), ("snapshot", config.snapshot), ("commands", config.commands),
             ("surveillance_events", config.surveillance_events),
             ("surveillance_snapshot", config.surveillance_snapshot))
    return [(setting, endpoint) for setting, endpoint in named if endpoint is not None]


# A tcp host that binds every address at its port, and the loopback name's addresses.
_EVERY_ADDRESS = frozenset({"*", "0.0.0.0", "::"})
_LOCALHOST = ("127.0.0.1", "::1")


def _tcp_hosts(host: str) -> tuple[str, ...]:
    """The addresses a tcp endpoint's host binds, in one spelling each: `*` for every address,
    `localhost` as the loopback addresses, a numeric address in its canonical form; any other name
    (an interface, a host name) as written, in lower case."""
    import ipaddress

    import socket

    host = host.lower()
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    if host == "localhost":
        return _LOCALHOST
    try:
        address = ipaddress.ip_address(host)
        mapped = getattr(address, "ipv4_mapped", None)  # ::ffff:127.0.0.1 is 127.0.0.1
        host = str(mapped or address)
    except ValueError:
        try:  # the spellings the resolver takes for an IPv4 address as well: 127.1, 0177.0.0.1, 0x7f.1
            host = socket.inet_ntoa(socket.inet_aton(host))
        except OSError:
            pass
    return ("*",) if host in _EVERY_ADDRESS else (host,)


def endpoint_key(endpoint: str) -> str | None:
    """What two endpoints share when they name the same place; None for one the system picks
    (`tcp://127.0.0.1:*`, `ipc://*`), which is never the same twice. A tcp host is written one
    way (`localhost` as 127.0.0.1, `0.0.0.0` as `*`); `same_endpoint` also knows that `*` takes
    every address at its port."""
    scheme, _, address = endpoint.strip().partition("://")
    if address.endswith((":*", ":0")) or address == "*":
        return None
    if scheme == "ipc" and not address.startswith("@"):
        address = os.path.normpath(os.path.abspath(address))
    elif scheme == "tcp":
        host, colon, port = address.rpartition(":")
        if colon and host:
            address = f"{_tcp_hosts(host)[0]}:{port.lstrip('0') or '0'}"
    return f"{scheme}://{address}"


def same_endpoint(a: str, b: str) -> bool:
    """Whether two endpoints to bind take the same place: the same key (`endpoint_key`), or two tcp
    endpoints at one port whose hosts share an address (`*` shares every one, `localhost` 127.0.0.1
    and ::1)."""
    key_a, key_b = endpoint_key(a), endpoint_key(b)
    if key_a is None or key_b is None:
        return False
    if key_a == key_b:
        return True
    (scheme_a, _, address_a), (scheme_b, _, address_b) = (e.strip().partition("://") for e in (a, b))
    if not scheme_a == scheme_b == "tcp":
        return False
    host_a, _, port_a = address_a.rpartition(":")
    host_b, _, port_b = address_b.rpartition(":")
    if not (host_a and host_b and port_a.isdigit() and port_b.isdigit() and int(port_a) == int(port_b)):
        return False
    hosts_a, hosts_b = set(_tcp_hosts(host_a)), set(_tcp_hosts(host_b))
    return "*" in hosts_a or "*" in hosts_b or bool(hosts_a & hosts_b)


def _check_distinct_endpoints(config: Config) -> None:
    """No two settings name the same endpoint: ZeroMQ takes an ipc path over without a word (the
    second socket unlinks the first's), so one of the two would serve nothing; a tcp port is taken
    once per address (`*` takes every address: the daemon's second bind would fail after its keys
    and journal were made)."""
    named = _endpoints(config)
    for j, (setting, endpoint) in enumerate(named):
        for earlier, other in named[:j]:
            if not same_endpoint(other, endpoint):
                continue
            if endpoint_key(other) == endpoint_key(endpoint):
                raise ConfigError(f"{earlier} and {setting} name the same endpoint {endpoint!r}: give each its own")
            raise ConfigError(f"{earlier} ({other!r}) and {setting} ({endpoint!r}) take one tcp port on the same "
                              f"address (* takes every address, localhost 127.0.0.1 and ::1): give each its own")


def uses_keys(config: Config) -> bool:
    """Whether the daemon runs with CURVE keys (then it makes KEY_DIR's key pair on its first start)."""
    return bool(config.curve_commands or config.curve_publish or config.surveillance_events
                or config.surveillance_snapshot)


def _check_key_dir(config: Config) -> None:
    """What can be known of the keys without making any: KEY_DIR is a directory, or can be made;
    a server key pair there is private to its owner; an allow-list there can be read (every key
    file, their roles, no key twice, no one else may write it)."""
    if not uses_keys(config):
        return
    from shoed.net.curve import CurveError, load_allow_list, load_key_pair, load_roles

    key_dir = Path(config.key_dir)
    if not _check_can_be_dir("key_dir", key_dir):
        return
    try:
        if (key_dir / "server.key_secret").exists():
            load_key_pair(key_dir / "server.key_secret")
        clients = key_dir / "clients"
        if clients.exists() or clients.is_symlink():
            load_roles(clients, load_allow_list(clients))
        elif not os.access(key_dir, os.W_OK | os.X_OK):
            raise ConfigError(f"key_dir {key_dir}: its allow-list clients/ cannot be made: {key_dir} is not "
                              f"writable by the user this runs as (uid {os.geteuid()})")
    except CurveError as exc:
        raise ConfigError(f"key_dir: {_one_line(exc)}") from None
    except OSError as exc:
        raise ConfigError(f"key_dir {key_dir}: {exc.strerror or exc}") from None


def _not_a_shuffler(where: str) -> str:
    """A shuffler's option on another driver: that driver would take the order unsealed, so it is refused."""
    return (f"{where}: order_key_file is the shuffler driver's option; a card-reading shuffler is configured "
            "with driver = \"shuffler\" (no other driver seals its order)")


def _check_order_key(source: Source, journal_dir: str, i: int) -> None:
    """A shuffler's order key: given, readable, well formed, and outside the journal directory."""
    from shoed.drivers import DriverError
    from shoed.drivers.shuffler import load_order_key

    path = source.options.get("order_key_file")
    if path and Path(journal_dir).resolve() in Path(path).resolve().parents:
        raise ConfigError(f"source {i + 1} (shuffler): the order key file {path} lies inside the journal "
                          "directory: keep it apart")
    try:
        load_order_key(path)
    except DriverError as exc:
        raise ConfigError(f"source {i + 1} (shuffler): {exc}") from None
    _check_private(f"source {i + 1} (shuffler): order_key_file", str(path))


def source_capabilities(source: Source):
    """What a configured source's shoe can do; the built-in virtual shoe is read through its driver."""
    from shoed.daemon.virtual import DRIVER
    from shoed.drivers import capabilities

    return capabilities(DRIVER if source.driver == "virtual" else source.driver)


def auto_confirm(config: Config) -> bool:
    """Whether the table runs with auto_confirm: the setting, else on when a source's shoe has no buttons."""
    if config.auto_confirm is not None:
        return bool(config.auto_confirm)
    return any(source_capabilities(s).auto_confirm for s in config.sources)


def resolved(config: Config, ruleset=None) -> dict:
    """The configuration as the daemon will run it, in the file's own layout (`shoed config check`):
    with `ruleset` (what `check` returns), the deck count and auto_confirm as they will be."""
    out = {
        "table": config.table, "ruleset": config.ruleset,
        "decks": config.decks if config.decks is not None or ruleset is None else ruleset.decks,
        "journal_dir": config.journal_dir, "key_dir": config.key_dir,
        "journal_secret_file": config.journal_secret_file,
        "auto_confirm": config.auto_confirm if ruleset is None else auto_confirm(config),
        "live_odds": config.live_odds, "stall_after_s": config.stall_after_s,
        "publish": {"events": config.events, "snapshot": config.snapshot, "commands": config.commands,
                    "curve_commands": config.curve_commands, "curve_publish": config.curve_publish,
                    "surveillance_events": config.surveillance_events,
                    "surveillance_snapshot": config.surveillance_snapshot, "display_reveal": config.display_reveal},
        "sources": [{"driver": s.driver, **({"url": s.url} if s.url else {}), **s.options} for s in config.sources],
        "simulator": {"pace": config.sim_pace, "seed": config.sim_seed, "shoes": config.sim_shoes},
    }
    return out


def _reveal(value, origin: str) -> str:
    from shoed.table.audience import REVEALS

    if value not in REVEALS:
        raise ConfigError(f"{origin}: publish.display_reveal is one of {', '.join(REVEALS)}, not {value!r}")
    return value


def with_options(config: Config, **options) -> Config:
    """Command-line options override the file (None means: not given)."""
    given = {k: v for k, v in options.items() if v is not None}
    return replace(config, **given)
