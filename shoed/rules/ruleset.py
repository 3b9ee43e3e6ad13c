"""Rulesets: the game's rules as data, loaded from TOML files.

Each ruleset file in `shoed/rules/rulesets/` follows one seed document and cites
it rule by rule. A casino adds its own game by writing one more file (or by
pointing `load_ruleset` at a path); nothing in the code names a casino.

The tableau is a grid of letters, read like the drawing tables printed on the
layouts: `D` the side draws, `S` it stands, `C` free choice (the active
player decides, as in Baccarat Royal).
"""

from __future__ import annotations

import functools
import tomllib
from dataclasses import dataclass, field
from fractions import Fraction
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any

DRAW, STAND, CHOICE = "D", "S", "C"
ACTIONS = (DRAW, STAND, CHOICE)
# Column of the banker grid used when the player took no third card.
NO_THIRD_CARD = 10

BET_NAMES = ("player", "banker", "tie", "player_pair", "banker_pair", "active_player", "active_banker")


RULESET_FILE_MAX = 1 << 20  # a ruleset file is a few kilobytes


class RulesetError(ValueError):
    """A ruleset that cannot be found or does not make sense."""


@dataclass(frozen=True)
class Bet:
    """One bet the table offers, with its payouts as exact fractions of the stake."""

    name: str
    pays: Fraction  # net win per unit staked
    on_tie: Fraction = Fraction(0)  # player/banker/active bets when the coup is a tie
    banker_six_pays: Fraction | None = None  # banker bet won with a total of 6
    commission: Fraction = Fraction(0)  # taken from banker winnings


@dataclass(frozen=True)
class Ruleset:
    name: str
    title: str
    source: str
    decks: int  # default deck count
    min_decks: int
    max_decks: int
    natural: frozenset[int]
    player_rule: str  # 8 letters, for the player's two-card totals 0..7
    banker_rule: tuple[str, ...]  # 8 rows (banker totals 0..7) of 11 letters (third card 0..9, none)
    bets: dict[str, Bet]
    burn: str  # "first-card" or "none"
    cut_card_min_from_end: int
    cut_card_default_from_end: int
    last_coup: str  # "current" (coup in progress is the last) or "one-more"
    misdeal_correction: bool  # deal errors are corrected at once where possible
    rotation: bool  # Baccarat Royal: active positions rotate after a loss
    notes: tuple[str, ...] = field(default=())
    document: str = ""  # the rule document in this repository (docs/rules/), by its readable name
    # What is worked out from these rules again and again (a coup's settlement:
    # shoed.rules.coup.settle; the coup before its first card: new_coup), kept with
    # them once worked out. Not part of the ruleset's value: not compared, not shown,
    # not copied by `with_decks`.
    memo: dict[Any, Any] = field(default_factory=dict, init=False, repr=False, compare=False)

    @property
    def fixed_tableau(self) -> bool:
        """True when no cell of the tableau is a free choice."""
        return CHOICE not in self.player_rule and not any(CHOICE in row for row in self.banker_rule)

    def player_action(self, total: int) -> str:
        """What the player does with a two-card total of 0..7."""
        return self.player_rule[total]

    def banker_action(self, total: int, player_third: int | None) -> str:
        """What the banker does with a two-card total of 0..7, given the value of
        the player's third card (None when the player stood)."""
        column = NO_THIRD_CARD if player_third is None else player_third
        return self.banker_rule[total][column]

    def summary(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "title": self.title,
            "source": self.source,
            "document": self.document,
            "decks": self.decks,
            "bets": sorted(self.bets),
            "fixed_tableau": self.fixed_tableau,
        }


def _fraction(value: object, where: str) -> Fraction:
    try:
        return Fraction(str(value))
    except (ValueError, ZeroDivisionError) as exc:
        raise RulesetError(f"{where}: {value!r} is not a number or fraction") from exc


def _parse_grid_row(text: str, length: int, where: str) -> str:
    letters = "".join(text.split())
    if len(letters) != length or any(ch not in ACTIONS for ch in letters):
        raise RulesetError(f"{where}: expected {length} letters of D, S, C, got {text!r}")
    return letters


def ruleset_from_dict(data: dict[str, Any], origin: str = "<data>") -> Ruleset:
    """Build a Ruleset from parsed TOML, with a clear error for anything missing."""
    try:
        name = data["name"]
        shoe = data.get("shoe", {})
        tableau = data["tableau"]
        player_rule = _parse_grid_row(tableau["player"], 8, f"{origin}: tableau.player")
        banker_table = tableau["banker"]
        banker_rule = tuple(
            _parse_grid_row(banker_table[str(total)], 11, f"{origin}: tableau.banker.{total}")
            for total in range(8)
        )
        bets = {}
        for bet_name, spec in data["bets"].items():
            if bet_name not in BET_NAMES:
                raise RulesetError(f"{origin}: unknown bet {bet_name!r}; known: {', '.join(BET_NAMES)}")
            where = f"{origin}: bets.{bet_name}"
            bets[bet_name] = Bet(
                name=bet_name,
                pays=_fraction(spec["pays"], where),
                on_tie=_fraction(spec.get("on_tie", 0), where),
                banker_six_pays=(
                    _fraction(spec["banker_six_pays"], where) if "banker_six_pays" in spec else None
                ),
                commission=_fraction(spec.get("commission", 0), where),
            )
        decks = int(shoe.get("decks", 8))
        ruleset = Ruleset(
            name=name,
            title=data.get("title", name),
            source=data.get("source", ""),
            document=str(data.get("document", "")),
            decks=decks,
            min_decks=int(shoe.get("min_decks", decks)),
            max_decks=int(shoe.get("max_decks", decks)),
            natural=frozenset(int(v) for v in data.get("natural", [8, 9])),
            player_rule=player_rule,
            banker_rule=banker_rule,
            bets=bets,
            burn=shoe.get("burn", "first-card"),
            cut_card_min_from_end=int(shoe.get("cut_card_min_from_end", 0)),
            cut_card_default_from_end=int(shoe.get("cut_card_default_from_end", 14)),
            last_coup=shoe.get("last_coup", "current"),
            misdeal_correction=bool(data.get("misdeal", {}).get("correction", True)),
            rotation=bool(data.get("royal", {}).get("rotation", False)),
            notes=tuple(data.get("notes", ())),
        )
    except KeyError as exc:
        raise RulesetError(f"{origin}: missing {exc.args[0]!r}") from exc
    if ruleset.burn not in ("first-card", "none"):
        raise RulesetError(f"{origin}: shoe.burn must be 'first-card' or 'none'")
    if ruleset.last_coup not in ("current", "one-more"):
        raise RulesetError(f"{origin}: shoe.last_coup must be 'current' or 'one-more'")
    if not ruleset.min_decks <= ruleset.decks <= ruleset.max_decks:
        raise RulesetError(f"{origin}: shoe.decks must lie between min_decks and max_decks")
    if ruleset.cut_card_default_from_end < ruleset.cut_card_min_from_end:
        raise RulesetError(f"{origin}: the cut card's default lies closer to the end than its minimum")
    if not {"player", "banker", "tie"} <= set(bets) and not {"active_player", "active_banker"} <= set(bets):
        raise RulesetError(f"{origin}: a ruleset offers at least player, banker and tie")
    return ruleset


def _builtin_dir() -> Traversable:
    return resources.files("shoed.rules") / "rulesets"


def builtin_names() -> list[str]:
    return sorted(p.name[: -len(".toml")] for p in _builtin_dir().iterdir() if p.name.endswith(".toml"))


def load_ruleset(name_or_path: str | Path) -> Ruleset:
    """Load a built-in ruleset by name, or any ruleset file by path."""
    text = str(name_or_path)
    if text.endswith(".toml") or "/" in text:
        path = Path(text)
        if not path.is_file():
            raise RulesetError(f"no ruleset file at {path}")
        from shoed.files import read_regular

        try:
            data = read_regular(path, limit=RULESET_FILE_MAX)
        except OSError as exc:
            raise RulesetError(f"ruleset {path}: cannot read it ({exc.strerror or exc})") from None
        try:
            table = tomllib.loads(data.decode("utf-8"))
        except (UnicodeDecodeError, tomllib.TOMLDecodeError, RecursionError) as exc:
            raise RulesetError(f"ruleset {path}: not a TOML ruleset file ({exc})") from None
        return ruleset_from_dict(table, str(path))
    return _builtin(text)


@functools.cache
def _builtin(name: str) -> Ruleset:
    """A built-in ruleset, read once: a replay builds a controller per shoe file, and a
    Ruleset is an immutable value (an error is not remembered: the cache keeps no exception)."""
    resource = _builtin_dir() / f"{name}.toml"
    if not resource.is_file():
        raise RulesetError(f"unknown ruleset {name!r}; known: {', '.join(builtin_names())}")
    return ruleset_from_dict(tomllib.loads(resource.read_text(encoding="utf-8")), f"{name}.toml")


def with_decks(ruleset: Ruleset, decks: int) -> Ruleset:
    """The same ruleset dealt from another number of decks, within what it allows."""
    from dataclasses import replace

    if not ruleset.min_decks <= decks <= ruleset.max_decks:
        raise RulesetError(
            f"{ruleset.name} is played with {ruleset.min_decks} to {ruleset.max_decks} decks, not {decks}"
        )
    if decks == ruleset.decks:
        return ruleset  # the same value: kept, with what it has worked out already
    return replace(ruleset, decks=decks)
