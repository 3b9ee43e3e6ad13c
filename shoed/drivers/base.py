"""The one interface between the daemon and a card-reading shoe.

A driver turns what a shoe sends into `Reading`s, stamped on reception with
the monotonic clock and UTC, and carries the daemon's few commands back to the
shoe (acknowledge, gate). The daemon codes against `Driver` only; which shoe
sits behind it is a name in the registry (`shoed.drivers.open_driver`).

Guarantees every driver keeps:
- `poll(timeout)` returns within `timeout` seconds (plus the time to process
  what arrived), never blocks forever, and reconnects by itself after the shoe
  goes away, reporting `link` readings `lost` and `restored`.
- A card is never guessed: bytes that do not decode to one card intact become
  an `unreadable` reading or a `warning`, never a `card`.
- `acknowledge` is called by the daemon only after the reading is durably
  journaled; shoes that keep unacknowledged reads repeat them until then.
"""

from __future__ import annotations

import logging
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Self

from shoed.table.events import READING_KINDS as KINDS  # the schema's vocabulary

log = logging.getLogger(__name__)

MODES = ("game", "burn")
BUTTONS = (
    "confirm", "player_draw", "player_stand", "banker_draw", "banker_stand", "burn_start", "burn_end",
)
LINK_STATES = ("connected", "lost", "restored")


@dataclass(frozen=True)
class Reading:
    """One thing a shoe reported, in shoed's terms, stamped on reception."""

    kind: str  # one of KINDS
    source: str  # driver name and address, e.g. "native:/dev/ttyACM0", "beetek:/dev/ttyUSB0"
    raw: bytes  # the bytes as received (the frame or the ASCII token); b"" for link readings
    offset: int  # byte offset of raw in the link's stream since the driver opened (across reconnects)
    mono_ns: int  # time.monotonic_ns() at reception
    utc_ns: int  # time.time_ns() at reception
    card: str | None = None  # "TD" etc. for kind "card"
    mode: str = "game"  # "game" | "burn"
    confidence: float | None = None  # 0..1
    faced: bool = False
    button: str | None = None  # one of BUTTONS for kind "button"
    code: str | None = None  # alarm / warning / unreadable reason code
    text: str | None = None
    link: str | None = None  # kind "link": one of LINK_STATES
    shoe_seq: int | None = None  # native protocol seq; None for Bee-Tek
    detail: dict = field(default_factory=dict)  # e.g. hello: vendor, model, serial, firmware, version

    def __post_init__(self) -> None:
        # Readings are built by drivers only; a wrong kind or mode is a bug, caught here at once.
        if self.kind not in KINDS:
            raise ValueError(f"unknown reading kind {self.kind!r}")
        if self.mode not in MODES:
            raise ValueError(f"unknown mode {self.mode!r}")
        if self.kind == "card" and not self.card:
            raise ValueError("a card reading needs its card")

    def to_json(self) -> dict:
        """A JSON-ready dict: raw as hex; fields that are unset are left out."""
        out: dict = {
            "kind": self.kind,
            "source": self.source,
            "raw": self.raw.hex(),
            "offset": self.offset,
            "mono_ns": self.mono_ns,
            "utc_ns": self.utc_ns,
            "mode": self.mode,
        }
        for name in ("card", "confidence", "button", "code", "text", "link", "shoe_seq"):
            value = getattr(self, name)
            if value is not None:
                out[name] = value
        if self.faced:
            out["faced"] = True
        if self.detail:
            out["detail"] = dict(self.detail)
        return out

    @classmethod
    def from_json(cls, data: dict) -> Reading:
        """The inverse of `to_json` (the journal stores readings this way)."""
        return cls(
            kind=data["kind"],
            source=data["source"],
            raw=bytes.fromhex(data.get("raw", "")),
            offset=data["offset"],
            mono_ns=data["mono_ns"],
            utc_ns=data["utc_ns"],
            card=data.get("card"),
            mode=data.get("mode", "game"),
            confidence=data.get("confidence"),
            faced=data.get("faced", False),
            button=data.get("button"),
            code=data.get("code"),
            text=data.get("text"),
            link=data.get("link"),
            shoe_seq=data.get("shoe_seq"),
            detail=dict(data.get("detail", {})),
        )


@dataclass(frozen=True)
class Capabilities:
    """What a shoe can do, declared on its registry entry: the daemon asks this, never the driver's name."""

    reads_identities: bool = True  # reports each card's identity (a plain shoe only signals each draw)
    gate: bool = False  # a card gate the table can lock (`set_gate`)
    buttons: bool = False  # dealer buttons: confirm, burn start and end, the players' decisions
    sequenced: bool = False  # numbered frames, repeated until acknowledged (`set_last_seq` after a restart)
    fallback: bool = False  # only stands in for a shoe (a camera over its exit): never sets the deal's pace
    deals: bool = True  # its cards are dealt (a shoe, a camera); a card-reading shuffler only reports its shuffles
    signals_draws: bool = False  # a plain shoe on it may send `draw` readings: a card out, its identity the order's
    # Each card's `mode` (burn or game) is the shoe's own word: a game card while the burn is due is then the
    # misdeal burn_short. A driver that never says leaves it False: its cards keep the shoe's phase.
    tells_mode: bool = False

    @property
    def auto_confirm(self) -> bool:
        """A shoe without a confirm button: the first card opens the shoe and a card after a
        finished coup opens the next one (the pit's confirmation is the net)."""
        return self.deals and not self.buttons and not self.fallback

    def to_json(self) -> dict:
        return {"reads_identities": self.reads_identities, "gate": self.gate, "buttons": self.buttons,
                "sequenced": self.sequenced, "fallback": self.fallback, "auto_confirm": self.auto_confirm,
                "deals": self.deals, "signals_draws": self.signals_draws, "tells_mode": self.tells_mode}


class DriverError(Exception):
    """A shoe cannot be used: one clear line saying what to do about it."""


class Driver(ABC):
    """A card-reading shoe, as the daemon sees it."""

    name: str = ""  # registry name
    summary: str = ""  # one line for help texts (third-party drivers; shoed's own say it in the registry)
    capabilities: Capabilities | None = None  # third-party drivers declare theirs here
    # The options a `[[sources]]` entry may give a third-party driver besides `driver` and `url`, passed to
    # its constructor as keyword arguments; any other key is refused (shoed's own say theirs in the daemon's
    # configuration, `shoed.daemon.config.SOURCE_OPTIONS`).
    source_options: frozenset[str] = frozenset()

    def __init__(self, url: str, **options) -> None:
        self.url = url
        self.options = options
        self._said_once: set[str] = set()

    @property
    def source(self) -> str:
        return f"{self.name}:{self.url}"

    @abstractmethod
    def open(self) -> None:
        """Open the link; raise DriverError (missing node, permission denied, port busy)."""

    @abstractmethod
    def close(self) -> None:
        """Release the link. Safe to call twice."""

    @abstractmethod
    def poll(self, timeout: float) -> list[Reading]:
        """What the shoe reported, waiting at most `timeout` seconds for something."""

    def acknowledge(self, reading: Reading) -> None:
        """The reading is durably journaled; shoes that keep reads until then may drop it."""

    def set_gate(self, locked: bool) -> None:
        """Lock or unlock the card gate; a shoe without a gate logs this once and ignores it."""
        self._log_once("gate", "%s has no card gate: set_gate(%s) ignored", self.source, locked)

    def set_last_seq(self, seq: int | None, boot: int | None, raw: bytes | None = None) -> None:
        """Restore the duplicate filter after a daemon restart (`raw`: the bytes journaled under
        `seq`, to compare a repeat with); only shoes with sequence numbers use it."""

    def _log_once(self, key: str, message: str, *args) -> None:
        if key not in self._said_once:
            self._said_once.add(key)
            log.warning(message, *args)

    def __enter__(self) -> Self:
        self.open()
        return self

    def __exit__(self, *exc) -> None:
        self.close()
