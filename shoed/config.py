"""The daemon's configuration: a TOML file, options on the command line, and the built-in default.

With no file the daemon runs the embedded default, which needs no hardware:
a virtual shoe on a pseudo-terminal read through the `native` serial driver,
the `punto-banco` ruleset, events published on loopback.
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path

DEFAULT_EVENTS = "tcp://127.0.0.1:5556"
DEFAULT_SNAPSHOT = "tcp://127.0.0.1:5557"
DEFAULT_COMMANDS = "tcp://127.0.0.1:5558"


class ConfigError(ValueError):
    """A configuration that cannot be used; the message says what to fix."""


@dataclass(frozen=True)
class Source:
    driver: str  # "native", "native-usb", "beetek", "camera", or "virtual" (the built-in virtual shoe)
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
    # The surveillance audience (shoed.audience): every event, CURVE-authenticated, keys on the allow-list.
    # None: no surveillance endpoints; `events` and `snapshot` serve the display audience either way.
    surveillance_events: str | None = None
    surveillance_snapshot: str | None = None
    display_reveal: str = "dealt"  # when a hand's card is faced: "dealt", or "result" (squeezed games)
    sources: tuple[Source, ...] = (Source("virtual"),)
    auto_confirm: bool | None = None  # None: on for shoes without buttons (beetek)
    live_odds: bool = True
    sim_pace: float = 1.5
    sim_seed: int | None = None
    sim_shoes: int = 0  # 0: deal shoes for ever
    embedded_default: bool = True

    @property
    def virtual(self) -> bool:
        return any(s.driver == "virtual" for s in self.sources)


def load_config(path: str | os.PathLike | None) -> Config:
    if path is None:
        return Config()
    p = Path(path)
    if not p.is_file():
        raise ConfigError(f"no configuration file at {p}")
    try:
        data = tomllib.loads(p.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{p}: {exc}") from None
    return config_from_dict(data, str(p))


def config_from_dict(data: dict, origin: str = "<config>") -> Config:
    known = {
        "table", "ruleset", "decks", "journal_dir", "key_dir", "journal_secret_file", "auto_confirm",
        "live_odds", "publish", "sources", "simulator",
    }
    unknown = set(data) - known
    if unknown:
        raise ConfigError(f"{origin}: unknown setting(s) {', '.join(sorted(unknown))}")
    pub = data.get("publish", {})
    sim = data.get("simulator", {})
    sources = []
    for i, s in enumerate(data.get("sources", [{"driver": "virtual"}])):
        if not isinstance(s, dict) or "driver" not in s:
            raise ConfigError(f"{origin}: sources[{i}] needs a driver")
        options = {k: v for k, v in s.items() if k not in ("driver", "url")}
        sources.append(Source(str(s["driver"]), str(s.get("url", "")), options))
    if not sources:
        raise ConfigError(f"{origin}: at least one source is needed")
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
            display_reveal=_reveal(pub.get("display_reveal", "dealt"), origin),
            sources=tuple(sources),
            auto_confirm=data.get("auto_confirm"),
            live_odds=bool(data.get("live_odds", True)),
            sim_pace=float(sim.get("pace", 1.5)),
            sim_seed=sim.get("seed"),
            sim_shoes=int(sim.get("shoes", 0)),
            embedded_default=False,
        )
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"{origin}: {exc}") from None


def _reveal(value, origin: str) -> str:
    from shoed.audience import REVEALS

    if value not in REVEALS:
        raise ConfigError(f"{origin}: publish.display_reveal is one of {', '.join(REVEALS)}, not {value!r}")
    return value


def with_options(config: Config, **options) -> Config:
    """Command-line options override the file (None means: not given)."""
    given = {k: v for k, v in options.items() if v is not None}
    return replace(config, **given)
