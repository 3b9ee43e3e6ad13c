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


# The keys each bet takes: what `shoed.rules.coup.settle` reads for it. A key a bet does not use
# is refused, so that a payout that is written is never one that is silently not paid.
_SIDE_BET_KEYS = ("pays", "on_tie", "commission")
_BET_KEYS = {
    "player": _SIDE_BET_KEYS,
    "banker": (*_SIDE_BET_KEYS, "banker_six_pays"),
    "active_player": _SIDE_BET_KEYS,
    "active_banker": (*_SIDE_BET_KEYS, "banker_six_pays"),
    "tie": ("pays",),
    "player_pair": ("pays",),
    "banker_pair": ("pays",),
}
CARDS_PER_DECK = 52


def _fraction(value: object, where: str) -> Fraction:
    """A payout: a TOML string such as "1/20", or a number."""
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise RulesetError(f"{where}: {value!r} is not a number or fraction")
    try:
        return Fraction(str(value))
    except (ValueError, ZeroDivisionError, OverflowError) as exc:
        raise RulesetError(f"{where}: {value!r} is not a number or fraction") from exc


def _table(value: object, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise RulesetError(f"{where}: a table of keys, not {value!r}")
    return value


def _text(value: object, where: str) -> str:
    if not isinstance(value, str):
        raise RulesetError(f"{where}: a string, not {value!r}")
    return value


def _whole(value: object, where: str, least: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        raise RulesetError(f"{where}: a whole number, {least} or more, not {value!r}")
    return value


def _flag(value: object, where: str) -> bool:
    if not isinstance(value, bool):
        raise RulesetError(f"{where}: true or false (a TOML boolean, unquoted), not {value!r}")
    return value


def _parse_grid_row(text: object, length: int, where: str) -> str:
    if not isinstance(text, str):
        raise RulesetError(f"{where}: expected a string of {length} letters of D, S, C, got {text!r}")
    letters = "".join(text.split())
    if len(letters) != length or any(ch not in ACTIONS for ch in letters):
        raise RulesetError(f"{where}: expected {length} letters of D, S, C, got {text!r}")
    return letters


def _natural(value: object, where: str) -> frozenset[int]:
    """The two-card totals that end the coup at once: whole numbers 0..9, 8 and 9 among them (the
    tableau has rows for the totals 0..7 only)."""
    if not isinstance(value, list) or any(isinstance(v, bool) or not isinstance(v, int) for v in value):
        raise RulesetError(f"{where}: a list of two-card totals (whole numbers 0..9), not {value!r}")
    totals = frozenset(value)
    if not totals <= set(range(10)) or not {8, 9} <= totals:
        raise RulesetError(f"{where}: two-card totals of 0..9, 8 and 9 among them (the tableau has rows "
                           f"for 0..7 only), not {value!r}")
    return totals


def _bet(bet_name: str, spec: object, where: str) -> Bet:
    spec = _table(spec, where)
    keys = _BET_KEYS[bet_name]
    for key in spec:
        if key not in keys:
            raise RulesetError(f"{where}: {key!r} is not a key of this bet; it takes {', '.join(keys)}")
    if "pays" not in spec:
        raise RulesetError(f"{where}: missing 'pays'")
    pays = _fraction(spec["pays"], f"{where}.pays")
    if pays <= 0:
        raise RulesetError(f"{where}.pays: a win pays more than 0, not {spec['pays']!r}")
    on_tie = _fraction(spec.get("on_tie", 0), f"{where}.on_tie")
    if on_tie < -1:
        raise RulesetError(f"{where}.on_tie: a tie takes the stake at most (-1), not {spec['on_tie']!r}")
    banker_six_pays = None
    if "banker_six_pays" in spec:
        banker_six_pays = _fraction(spec["banker_six_pays"], f"{where}.banker_six_pays")
        if banker_six_pays < 0:
            raise RulesetError(f"{where}.banker_six_pays: a win pays 0 or more, not {spec['banker_six_pays']!r}")
    commission = _fraction(spec.get("commission", 0), f"{where}.commission")
    if not 0 <= commission < 1:
        raise RulesetError(f"{where}.commission: a share of the win, 0 or more and less than 1 "
                           f"(1/20 is 5%), not {spec['commission']!r}")
    return Bet(name=bet_name, pays=pays, on_tie=on_tie, banker_six_pays=banker_six_pays, commission=commission)


def ruleset_from_dict(data: dict[str, Any], origin: str = "<data>") -> Ruleset:
    """Build a Ruleset from parsed TOML: every key of the wrong type or out of its range, and
    anything missing, is a RulesetError of one line that names the file and the key."""
    data = _table(data, origin)
    for key in ("name", "tableau", "bets"):
        if key not in data:
            raise RulesetError(f"{origin}: missing {key!r}")
    name = _text(data["name"], f"{origin}: name")
    if not name.strip():
        raise RulesetError(f"{origin}: name: a ruleset has a name, not {name!r}")
    title = _text(data.get("title", name), f"{origin}: title")
    source = _text(data.get("source", ""), f"{origin}: source")
    document = _text(data.get("document", ""), f"{origin}: document")
    notes = data.get("notes", [])
    if not isinstance(notes, list) or not all(isinstance(n, str) for n in notes):
        raise RulesetError(f"{origin}: notes: a list of strings, not {notes!r}")
    natural = _natural(data.get("natural", [8, 9]), f"{origin}: natural")

    tableau = _table(data["tableau"], f"{origin}: tableau")
    if "player" not in tableau:
        raise RulesetError(f"{origin}: missing 'tableau.player'")
    player_rule = _parse_grid_row(tableau["player"], 8, f"{origin}: tableau.player")
    if "banker" not in tableau:
        raise RulesetError(f"{origin}: missing 'tableau.banker'")
    banker_table = _table(tableau["banker"], f"{origin}: tableau.banker")
    banker_rows = []
    for total in range(8):
        if str(total) not in banker_table:
            raise RulesetError(f"{origin}: missing 'tableau.banker.{total}'")
        banker_rows.append(_parse_grid_row(banker_table[str(total)], 11, f"{origin}: tableau.banker.{total}"))
    banker_rule = tuple(banker_rows)

    bets = {}
    for bet_name, spec in _table(data["bets"], f"{origin}: bets").items():
        if bet_name not in BET_NAMES:
            raise RulesetError(f"{origin}: unknown bet {bet_name!r}; known: {', '.join(BET_NAMES)}")
        bets[bet_name] = _bet(bet_name, spec, f"{origin}: bets.{bet_name}")

    shoe = _table(data.get("shoe", {}), f"{origin}: shoe")
    decks = _whole(shoe.get("decks", 8), f"{origin}: shoe.decks", 1)
    min_decks = _whole(shoe.get("min_decks", decks), f"{origin}: shoe.min_decks", 1)
    max_decks = _whole(shoe.get("max_decks", decks), f"{origin}: shoe.max_decks", 1)
    cut_min = _whole(shoe.get("cut_card_min_from_end", 0), f"{origin}: shoe.cut_card_min_from_end", 0)
    cut_default = _whole(shoe.get("cut_card_default_from_end", 14), f"{origin}: shoe.cut_card_default_from_end", 0)
    burn = shoe.get("burn", "first-card")
    if burn not in ("first-card", "none"):
        raise RulesetError(f"{origin}: shoe.burn must be 'first-card' or 'none'")
    last_coup = shoe.get("last_coup", "current")
    if last_coup not in ("current", "one-more"):
        raise RulesetError(f"{origin}: shoe.last_coup must be 'current' or 'one-more'")
    if not min_decks <= decks <= max_decks:
        raise RulesetError(f"{origin}: shoe.decks must lie between min_decks and max_decks")
    if cut_default < cut_min:
        raise RulesetError(f"{origin}: the cut card's default lies closer to the end than its minimum")
    if cut_default >= min_decks * CARDS_PER_DECK:
        raise RulesetError(f"{origin}: shoe.cut_card_default_from_end: {cut_default} cards from the end lies "
                           f"outside a shoe of {min_decks} decks ({min_decks * CARDS_PER_DECK} cards)")

    misdeal = _table(data.get("misdeal", {}), f"{origin}: misdeal")
    royal = _table(data.get("royal", {}), f"{origin}: royal")
    if not {"player", "banker", "tie"} <= set(bets) and not {"active_player", "active_banker"} <= set(bets):
        raise RulesetError(f"{origin}: a ruleset offers at least player, banker and tie")
    return Ruleset(
        name=name,
        title=title,
        source=source,
        document=document,
        decks=decks,
        min_decks=min_decks,
        max_decks=max_decks,
        natural=natural,
        player_rule=player_rule,
        banker_rule=banker_rule,
        bets=bets,
        burn=burn,
        cut_card_min_from_end=cut_min,
        cut_card_default_from_end=cut_default,
        last_coup=last_coup,
        misdeal_correction=_flag(misdeal.get("correction", True), f"{origin}: misdeal.correction"),
        rotation=_flag(royal.get("rotation", False), f"{origin}: royal.rotation"),
        notes=tuple(notes),
    )


def _builtin_dir() -> Traversable:
    return resources.files("shoed.rules") / "rulesets"


def builtin_names() -> list[str]:
    return sorted(p.name[: -len(".toml")] for p in _builtin_dir().iterdir() if p.name.endswith(".toml"))


def load_ruleset(name_or_path: str | Path) -> Ruleset:
    """Load a built-in ruleset by name, or any ruleset file by path."""
    text = str(name_or_path)
    if text.endswith(".toml") or "/" in text:
        from shoed.files import read_regular, what_is_at

        path = Path(text)
        try:
            kind = what_is_at(path)
        except OSError as exc:  # a folder on the way this user may not enter
            raise RulesetError(f"ruleset {path}: cannot read it ({exc.strerror or exc})") from None
        if kind != "file":
            raise RulesetError(f"no ruleset file at {path}")
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
