"""A card-reading shuffler's order, as pure functions: commitment, alignment, shuffle quality.

Three parts, no I/O and no clock:

- **Commitment.** `commit(order, salt)` is a salted SHA-256 of the order,
  published when the shoe opens; `reveal_matches(commitment, order, salt)`
  checks it against the order and salt revealed when the shoe closes. The salt
  (32 random bytes, drawn by the shell) keeps the order from being found by
  trying candidate orders against the commitment.
- **Alignment.** The dealer cuts the shuffled shoe, so the cards come out of
  the dealing shoe as a rotation of the order. `Tracker` finds the cut offset
  from the first cards dealt (the exposed burn card and those after it), as
  soon as exactly one offset fits them, then checks each card against the next
  in the order and names what went wrong: a card substituted, inserted,
  removed, or two out of order, with the position and the card expected.
- **Shuffle quality.** `longest_surviving_run(previous_dealt, order)` is the
  longest run of cards that left the previous shoe together and lie together,
  in the same order, in the new one (a slug, the basis of shuffle tracking).
  `weak_run_threshold(decks)` is the run length from which a shuffle is
  called weak: in a truly random permutation a run that long happens at most
  once in 1,000 shoes (benchmarks/shuffle_threshold.py measures it).

Cards are texts in dealer notation ("TD"); an order is a sequence of them,
position 0 being the first card out of the shoe before any cut.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from firmware_protocol.messages import card_byte, card_of_byte

COMMITMENT_DOMAIN = b"shoed shuffle commitment 1\x00"
SALT_BYTES = 32

# Cards at most looked at to find the cut: beyond this the order repeats itself
# so much that no offset can be told apart (never seen with a shuffled shoe).
ALIGN_MAX = 16


# ----- commitment ---------------------------------------------------------------------------------------------


def order_bytes(order: Sequence[str]) -> bytes:
    """The order as its wire card bytes (firmware_protocol SPEC.md §5.15), position 0 first."""
    return bytes(card_byte(card) for card in order)


def commit(order: Sequence[str], salt: bytes) -> str:
    """SHA-256 of (domain, salt length, salt, card bytes), as 64 hex digits."""
    if not isinstance(salt, (bytes, bytearray)) or len(salt) < 16:
        raise ValueError("a commitment needs a salt of at least 16 random bytes")
    digest = hashlib.sha256(COMMITMENT_DOMAIN + bytes((len(salt),)) + bytes(salt) + order_bytes(order))
    return digest.hexdigest()


def reveal_matches(commitment: str, order: Sequence[str], salt: bytes) -> bool:
    """True when the revealed order and salt give the published commitment."""
    try:
        return hmac.compare_digest(commit(order, salt), commitment)
    except (ValueError, TypeError):
        return False


# ----- sealing: the order in the journal -----------------------------------------------------------------------

KEY_BYTES = 32  # AES-256
NONCE_BYTES = 12


def seal_cards(key: bytes, cards: Sequence[str], context: str) -> str:
    """Cards encrypted with AES-256-GCM under `key`, bound to `context` (authenticated, not encrypted), as hex
    of nonce and ciphertext. The nonce is synthetic, HMAC-SHA256(key, context, cards) cut to 12 bytes: the same
    cards in the same context always seal alike (a replay reproduces the record byte for byte), and two
    different plaintexts never share a nonce."""
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    plain = order_bytes(cards)
    aad = context.encode()
    nonce = hmac.new(key, b"shoed order nonce\x00" + aad + b"\x00" + plain, hashlib.sha256).digest()[:NONCE_BYTES]
    return (nonce + AESGCM(_key(key)).encrypt(nonce, plain, aad)).hex()


def unseal_cards(key: bytes, sealed: str, context: str) -> list[str]:
    """The cards `seal_cards` sealed; ValueError when the key, the context or a byte is not the one sealed."""
    from cryptography.exceptions import InvalidTag
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    try:
        raw = bytes.fromhex(sealed)
        plain = AESGCM(_key(key)).decrypt(raw[:NONCE_BYTES], raw[NONCE_BYTES:], context.encode())
    except (InvalidTag, TypeError, ValueError):
        raise ValueError(f"the sealed order of {context} does not open with this key") from None
    return [card_of_byte(b) for b in plain]


def chunk_context(boot: object, shuffle: object, position: object) -> str:
    """What a sealed chunk of the order is bound to: the shuffler's session, the shuffle, the position."""
    return f"order chunk boot {boot} shuffle {shuffle} position {position}"


def _key(key: bytes) -> bytes:
    if not isinstance(key, (bytes, bytearray)) or len(key) != KEY_BYTES:
        raise ValueError(f"an order key is {KEY_BYTES} bytes")
    return bytes(key)


def read_key(text: bytes) -> bytes:
    """An order key file's content: 64 hex digits, with whitespace (a final newline) around them and nothing
    else; ValueError in one line otherwise, or for a key of one byte repeated (all zeros, say), which no
    random draw gives."""
    stripped = text.strip()
    if re.fullmatch(rb"[0-9a-fA-F]{%d}" % (2 * KEY_BYTES), stripped) is None:
        raise ValueError(f"an order key file holds {2 * KEY_BYTES} hex digits and nothing else "
                         "(e.g. from: openssl rand -hex 32)")
    key = bytes.fromhex(stripped.decode("ascii"))
    if len(set(key)) == 1:
        raise ValueError(f"the key is one byte repeated ({key[:1].hex()}), not a random one: "
                         "make it with openssl rand -hex 32")
    return key


def subkey(key: bytes, purpose: str) -> bytes:
    """A key of its own for one use of the order key (HMAC-SHA256 of the purpose under it): the MACs and
    the commitment's salt below never use the key that seals."""
    return hmac.new(_key(key), b"shoed order subkey\x00" + purpose.encode(), hashlib.sha256).digest()


def evidence(key: bytes, raw: bytes) -> str:
    """A keyed hash (HMAC-SHA256 under the evidence subkey) of bytes that may hold cards of the order: it can be
    matched against a capture of the line by whoever holds the key, and tells a journal reader nothing."""
    return hmac.new(subkey(key, "evidence"), bytes(raw), hashlib.sha256).hexdigest()


def digest_mac(key: bytes, digest: str) -> str:
    """The shuffler's SHA-256 of the order (64 hex digits) under the digest subkey: what the journal keeps of
    it, so the digest itself tests no guessed order."""
    return hmac.new(subkey(key, "digest"), str(digest).encode(), hashlib.sha256).hexdigest()


def sealed_detail(key: bytes, kind: str, detail: dict[str, Any]) -> dict[str, Any]:
    """A shuffler report's detail as the table takes it (the shuffler driver seals every report so): an order
    chunk's cards sealed under the order key, its count beside them; a completed shuffle's digest as a keyed
    hash (`digest_hmac`). Any other report's detail as it is."""
    if kind == "shuffle_completed":
        detail = dict(detail)
        if "digest" in detail:
            detail["digest_hmac"] = digest_mac(key, str(detail.pop("digest")))
        return detail
    if kind == "order_chunk":
        detail = dict(detail)
        cards = detail.pop("cards")
        detail["count"] = len(cards)
        detail["sealed"] = seal_cards(key, cards, chunk_context(detail.get("boot"), detail.get("shuffle"),
                                                                detail.get("position")))
        return detail
    return detail


def commitment_salt(key: bytes, nonce: str) -> bytes:
    """A commitment's salt: HMAC-SHA256 of the journaled random nonce under the salt subkey. Only the key's
    holder can work it out (the nonce alone tests no guessed order); it is published with the reveal."""
    return hmac.new(subkey(key, "commitment salt"), str(nonce).encode(), hashlib.sha256).digest()


# ----- alignment ----------------------------------------------------------------------------------------------

SUBSTITUTED = "substituted"  # another card came out in place of the expected one
INSERTED = "inserted"  # a card that is not in the order came out between two that are
REMOVED = "removed"  # the expected card never came out: the next one did
OUT_OF_ORDER = "out_of_order"  # the expected card and the one after it came out swapped
UNEXPLAINED = "unexplained"  # none of the above fits the cards that followed
MISMATCH_KINDS = (SUBSTITUTED, INSERTED, REMOVED, OUT_OF_ORDER, UNEXPLAINED)


@dataclass(frozen=True)
class Mismatch:
    """A dealt card that is not the next in the order.

    `position` is the dealt card's number in the shoe (0 = the first card out)
    and `order_position` where the order expected it; `expected` the card due,
    `got` the card that came. `kind` is one of MISMATCH_KINDS; it is `None`
    when first reported, and set in the follow-up report once the next card
    tells which it was.
    """

    position: int
    order_position: int
    expected: str
    got: str
    kind: str | None = None


@dataclass(frozen=True)
class Check:
    """What one dealt card told: `ok` when it was the card due.

    `aligned` is set on the card that made the cut offset certain, `offset`
    then holds it. `mismatch` is a new finding about this card; `resolved` the
    classification of an earlier finding that this card settled.
    """

    ok: bool
    aligned: bool = False
    offset: int | None = None
    mismatch: Mismatch | None = None
    resolved: Mismatch | None = None
    unaligned: bool = False  # no cut offset fits the cards dealt so far


class Tracker:
    """Checks the cards coming out of a shoe against the shuffled order.

    Feed every card out of the shoe, burns included, with `dealt(card)`; a
    card that could not be read is `unknown()`. Until the cut offset is found
    cards are collected; each then is checked on its own.
    """

    def __init__(self, order: Sequence[str], offset: int | None = None) -> None:
        if not order:
            raise ValueError("an empty order cannot be tracked")
        self.order = tuple(order)
        self.size = len(self.order)
        self.offset = offset  # the order position of the first card out, once known
        self.dealt_count = 0  # cards out of the shoe so far
        self.next = 0 if offset is None else offset  # order position due next, once aligned (not reduced mod size)
        self._prefix: list[str | None] = []  # cards out before alignment
        self._candidates: list[int] = list(range(self.size))
        self._open: Mismatch | None = None  # a mismatch waiting for the next card
        self.lost = False  # alignment could not be recovered after a mismatch

    @property
    def aligned(self) -> bool:
        return self.offset is not None

    def at(self, order_position: int) -> str:
        return self.order[order_position % self.size]

    def expected(self) -> str | None:
        """The card due next, once aligned (the identity a plain shoe's card takes)."""
        return self.at(self.next) if self.aligned and not self.lost else None

    def dealt(self, card: str) -> Check:
        position = self.dealt_count
        self.dealt_count += 1
        if not self.aligned:
            return self._align(card)
        if self.lost:
            return Check(ok=False)
        if self._open is not None:
            return self._resolve(card, position)
        if card == self.at(self.next):
            self.next += 1
            return Check(ok=True)
        self._open = Mismatch(position, self.next % self.size, self.at(self.next), card)
        return Check(ok=False, mismatch=self._open)

    def unknown(self) -> str | None:
        """A card came out that could not be read: it takes the place due. Returns that card when aligned."""
        self.dealt_count += 1
        if not self.aligned:
            self._prefix.append(None)  # any card fits this place: the candidates stay
            return None
        if self.lost or self._open is not None:
            return None
        card = self.at(self.next)
        self.next += 1
        return card

    def returned(self, card: str) -> int | None:
        """The last card out, `card`, was put back into the shoe (the pit's return_card): it comes out again as
        the next card, and its place is free again. Returns that place (from 0), or None where the last card
        out was not `card` as the check took it (a card not read, one that opened a mismatch the next card has
        not resolved yet, or the check lost): then nothing is undone, and its coming out again is checked as
        any card."""
        if self.dealt_count == 0 or self.lost:
            return None
        position = self.dealt_count - 1
        if not self.aligned:
            if self._prefix[-1] != card:
                return None
            self._prefix.pop()
            self._candidates = [c for c in range(self.size)
                                if all(p is None or self.at(c + i) == p for i, p in enumerate(self._prefix))]
        elif self._open is not None:
            if (self._open.position, self._open.got) != (position, card):
                return None
            self._open = None
        elif self.at(self.next - 1) != card:
            return None
        else:
            self.next -= 1
        self.dealt_count -= 1
        return position

    def identify(self, position: int, card: str) -> Check:
        """The card at `position` out of the shoe (from 0), known only after it came out as `unknown()`:
        a plain shoe's card that a camera saw, or that the dealer entered. Before alignment it narrows the
        cut like a card read; after, it is checked against the order at its place (the places of a shoe
        whose cards all came as `unknown()`: each took the one due)."""
        if not 0 <= position < self.dealt_count:
            raise ValueError(f"no card {position + 1} has come out of the shoe yet")
        if self.lost:
            return Check(ok=False)
        if self.offset is None:
            if self._prefix[position] not in (None, card):
                self.lost = True
                return Check(ok=False, unaligned=True)
            self._prefix[position] = card
            return self._narrow(position, card) or Check(ok=True)
        expected = self.dealt_card(position)
        if card == expected:
            return Check(ok=True)
        return Check(ok=False, mismatch=Mismatch(position, (self.offset + position) % self.size, expected, card))

    def dealt_card(self, position: int) -> str:
        """The order's card at a place counted from the first card out of the shoe, once aligned."""
        if self.offset is None:
            raise ValueError("the cut is not known yet")
        return self.at(self.offset + position)

    # -- internals

    def _align(self, card: str) -> Check:
        self._prefix.append(card)
        found = self._narrow(len(self._prefix) - 1, card)
        if found is not None:
            return found
        if len(self._prefix) >= ALIGN_MAX:
            return Check(ok=False, unaligned=True)
        return Check(ok=True)

    def _narrow(self, index: int, card: str) -> Check | None:
        """Keep the cut offsets at which `card` is the `index`th card out; a Check once none or one is left."""
        self._candidates = [c for c in self._candidates if self.at(c + index) == card]
        if not self._candidates:
            return Check(ok=False, unaligned=True)
        if len(self._candidates) == 1:
            self.offset = self._candidates[0]
            self.next = self.offset + len(self._prefix)
            return Check(ok=True, aligned=True, offset=self.offset)
        return None

    def _resolve(self, card: str, position: int) -> Check:
        first = self._open
        assert first is not None, "a mismatch is resolved only while one is open"
        self._open = None
        due = first.order_position  # position (mod size) of the card that was expected
        base = self.next  # unreduced position of that card
        kind = UNEXPLAINED
        if first.got == self.at(base + 1):
            if card == self.at(base):
                kind, self.next = OUT_OF_ORDER, base + 2
            elif card == self.at(base + 2):
                kind, self.next = REMOVED, base + 3
        elif card == self.at(base + 1):
            kind, self.next = SUBSTITUTED, base + 2
        elif card == self.at(base):
            kind, self.next = INSERTED, base + 1
        resolved = Mismatch(first.position, due, first.expected, first.got, kind)
        if kind == UNEXPLAINED:
            self.lost = True
        return Check(ok=kind != UNEXPLAINED, resolved=resolved)


def find_offsets(order: Sequence[str], dealt: Sequence[str]) -> list[int]:
    """Every cut offset at which the order, read cyclically, starts with `dealt`."""
    size = len(order)
    return [c for c in range(size) if all(order[(c + i) % size] == card for i, card in enumerate(dealt))]


# ----- shuffle quality ----------------------------------------------------------------------------------------

# Longest surviving run from which a shuffle is weak, by decks in the shoe: in a truly random
# permutation the longest run is at least this long in at most 1 shoe in 1,000
# (benchmarks/shuffle_threshold.py, seeded Monte-Carlo, prints the distribution).
WEAK_RUN = {1: 4, 2: 5, 4: 5, 6: 5, 8: 5}
FALSE_ALARM_RATE = 0.001


def weak_run_threshold(decks: int) -> int:
    """The shortest run that marks a weak shuffle for a shoe of `decks` decks."""
    known = sorted(WEAK_RUN)
    for size in known:
        if decks <= size:
            return WEAK_RUN[size]
    return WEAK_RUN[known[-1]]


@dataclass(frozen=True)
class Run:
    """The longest surviving run: `length` cards, from `previous` in the previous shoe's dealt order and from
    `position` in the new order."""

    length: int
    previous: int
    position: int
    cards: tuple[str, ...]


def longest_surviving_run(previous: Sequence[str], order: Sequence[str]) -> Run:
    """The longest run of consecutive cards of `previous` (the last shoe as dealt) that lies, consecutive and
    in the same order, in `order` (the new shuffle, read cyclically since the dealer cuts it)."""
    prev = tuple(previous)
    new = tuple(order)
    if not prev or not new:
        return Run(0, 0, 0, ())
    cyclic = new + new[: len(prev) - 1] if len(new) > 1 else new
    best = Run(0, 0, 0, ())
    # Grow the run length while some run of that length is shared: grams of length n+1 shared
    # imply grams of length n shared, so the search stops at the first length with none.
    length = 1
    while length <= min(len(prev), len(new)):
        grams: dict[tuple[str, ...], int] = {}
        for i in range(len(prev) - length + 1):
            grams.setdefault(prev[i:i + length], i)
        found = None
        for j in range(len(new)):
            gram = cyclic[j:j + length]
            if len(gram) == length and gram in grams:
                found = (grams[gram], j, gram)
                break
        if found is None:
            break
        best = Run(length, found[0], found[1], found[2])
        length += 1
    return best


def is_weak(run: Run, decks: int) -> bool:
    return run.length >= weak_run_threshold(decks)
