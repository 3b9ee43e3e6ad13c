"""Forward-secure sealing: a key that evolves with every shoe file, and the keys a reader holds.

Like journald's Forward Secure Sealing, but with a plain hash ratchet. `shoed
keys journal` draws a random 32-byte verification key V that goes to
surveillance and never stays on the box; the box gets only the sealing key of
epoch 0, K0 = HMAC(V, "epoch 0"). File number n of the journal is sealed with
Kn = HMAC(K(n-1), "next"): every record's `hash` is HMAC-SHA-256 under the key
of its file. When the box opens file n it derives Kn, writes it over the
sealing state and forgets K(n-1), so whoever takes the box later holds only
the key of the file being written and cannot re-seal anything older. The
holder of V derives every Kn and checks every file.

The sealing state (`<table>.seal` in the journal directory, mode 0600) holds
the current epoch and its key. Its epoch can only move forward: a box whose
state is at epoch n cannot produce the key of an earlier epoch, so a journal
whose last file is older than the state's epoch has lost files; `journal
verify --verify-key` reports that, as the daemon refuses to start on it.

The state file is one file, never replaced (a replaced file's old blocks keep
the old key on the disk): two slots of SLOT_BYTES, each in its own block. A
slot holds one state as a line of JSON with its own checksum (`sum`, SHA-256
of the rest), padded with spaces; an empty slot is all spaces. The key moves
on by writing the new state into the slot not holding the current one,
fdatasync, then overwriting the old slot with spaces, fdatasync. A reader
takes the intact slot with the highest epoch: a crash at any point leaves
one, and a torn slot fails its checksum. With one slot in use the file is
also one JSON document (the other slot is whitespace).

This module is pure (no I/O): `shoed.journal.store` keeps the state on disk.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from dataclasses import dataclass

ALG_FSS = "fss-hmac-sha256"
SEAL_KIND = "shoed-journal-seal"
KEY_BYTES = 32
# The highest epoch (a sealed journal's file number) a key is walked to: a shoe every ten minutes
# for nineteen years; from epoch 0 about 3 s of HMACs on the table's box.
EPOCH_MAX = 1_000_000


class SealError(ValueError):
    """A key or sealing-state file that cannot be used."""


def key_id(verify_key: bytes) -> str:
    """A short public name of a key pair, written in every sealed file's header."""
    return hashlib.sha256(b"shoed journal key id\0" + verify_key).hexdigest()[:16]


def first_key(verify_key: bytes) -> bytes:
    return hmac.new(verify_key, b"shoed journal epoch 0", hashlib.sha256).digest()


def next_key(key: bytes) -> bytes:
    return hmac.new(key, b"shoed journal next epoch", hashlib.sha256).digest()


def advance(key: bytes, epoch: int, to: int) -> bytes:
    """The key of epoch `to` from the key of `epoch` (to >= epoch)."""
    if not isinstance(to, int) or isinstance(to, bool) or not 0 <= to <= EPOCH_MAX:
        # Read from a file before anything in it is proved: never a walk of hours.
        raise SealError(f"epoch {to!r} is not a journal file's number (0 to {EPOCH_MAX})")
    if to < epoch:
        raise SealError(f"the key of epoch {to} cannot be derived from epoch {epoch}: it was erased")
    for _ in range(to - epoch):
        key = next_key(key)
    return key


class Ratchet:
    """Epoch keys from the verification key, walked forward and cached (files are read in order)."""

    def __init__(self, verify_key: bytes):
        self.verify_key = verify_key
        self.id = key_id(verify_key)
        self._epoch, self._key = 0, first_key(verify_key)

    def key(self, epoch: int) -> bytes:
        if epoch < self._epoch:
            self._epoch, self._key = 0, first_key(self.verify_key)
        self._key, self._epoch = advance(self._key, self._epoch, epoch), epoch
        return self._key


SEAL_FORMAT = 2  # the two-slot file; format 1 was one JSON line, replaced whole (read, and rewritten)
# One slot per block (4096 covers every block size up to it): a write torn on the disk spoils only
# the slot being written.
SLOT_BYTES = 4096
SEAL_FILE_BYTES = 2 * SLOT_BYTES
BLANK_SLOT = b" " * (SLOT_BYTES - 1) + b"\n"


def _slot_sum(body: dict) -> str:
    return hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def _checked(key_hex: object, epoch: object, kid: object) -> tuple[bytes, int, str]:
    try:
        key = bytes.fromhex(key_hex) if isinstance(key_hex, str) else b""
    except ValueError:
        key = b""
    if len(key) != KEY_BYTES:
        raise ValueError("its key is not 64 hex digits")
    if not isinstance(epoch, int) or isinstance(epoch, bool) or not 0 <= epoch <= EPOCH_MAX:
        raise ValueError(f"epoch {epoch!r} is not a journal file's number (0 to {EPOCH_MAX})")
    if not isinstance(kid, str):
        raise ValueError("its key id is not text")
    return key, epoch, kid


@dataclass(slots=True)
class SealState:
    """What the box holds: the current epoch and its key, and the key pair's id."""

    key_id: str
    epoch: int
    key: bytes

    def slot(self) -> bytes:
        """This state as one slot of the file: a JSON line with its checksum, padded to SLOT_BYTES."""
        body = {"kind": SEAL_KIND, "format": SEAL_FORMAT, "key_id": self.key_id, "epoch": self.epoch,
                "key": self.key.hex()}
        body["sum"] = _slot_sum(body)
        text = json.dumps(body, sort_keys=True, separators=(",", ":")).encode()
        return text + BLANK_SLOT[len(text):]

    def to_bytes(self) -> bytes:
        """A new sealing state file holding this state (in slot 0; slot 1 empty)."""
        return self.slot() + BLANK_SLOT

    @classmethod
    def from_bytes(cls, data: bytes, where: str) -> SealState:
        return parse_seal_file(data, where).state

    def advanced(self, to: int) -> SealState:
        return SealState(self.key_id, to, advance(self.key, self.epoch, to))


def read_slot(raw: bytes, where: str = "a sealing state") -> SealState | None:
    """The state in one slot, or None: empty, torn (its checksum fails), or not a slot. A slot whose
    checksum holds but whose values do not (written so by another hand) is a SealError."""
    if len(raw) != SLOT_BYTES or raw == BLANK_SLOT:
        return None
    end = raw.find(b" ")
    text = raw[:end] if end >= 0 else raw[:-1]
    if not text.startswith(b"{") or raw[len(text):] != BLANK_SLOT[len(text):]:
        return None
    try:
        body = json.loads(text)
        if not isinstance(body, dict) or body.get("kind") != SEAL_KIND or body.get("format") != SEAL_FORMAT:
            return None
        given = body.pop("sum", None)
        if not isinstance(given, str) or given != _slot_sum(body):
            return None
    except (ValueError, TypeError, UnicodeDecodeError, RecursionError):
        return None
    try:
        key, epoch, kid = _checked(body.get("key"), body.get("epoch"), body.get("key_id"))
    except ValueError as exc:
        raise SealError(f"{where} is not a journal sealing state ({exc})") from None
    return SealState(kid, epoch, key)


@dataclass(slots=True)
class SealFile:
    """A sealing state file as read: the state, the slot holding it (None: the one-line form of
    format 1, to be rewritten), and whether the other slot holds anything but spaces (an older
    state left by a crash between the two writes, or a torn write): to be overwritten."""

    state: SealState
    slot: int | None
    stale: bool


def parse_seal_file(data: bytes, where: str) -> SealFile:
    if len(data) > SEAL_FILE_BYTES:
        raise SealError(f"{where} is not a journal sealing state (longer than {SEAL_FILE_BYTES} bytes)")
    raws = [data[i * SLOT_BYTES:(i + 1) * SLOT_BYTES] for i in (0, 1)]
    slots = [read_slot(raw, where) for raw in raws]
    found = [(s.epoch, i, s) for i, s in enumerate(slots) if s is not None]
    if found:
        if len(found) == 2 and found[0][2].key_id != found[1][2].key_id:
            raise SealError(f"{where} is not a journal sealing state (its two slots are of two key pairs)")
        _, at, state = max(found, key=lambda f: (f[0], -f[1]))
        return SealFile(state, at, raws[1 - at] != BLANK_SLOT)
    if data.startswith(b"{"):  # format 1: one line, as written before (a conversion may have left more after it)
        try:
            body = json.loads(data.split(b"\n", 1)[0])
            if not isinstance(body, dict) or body.get("kind") != SEAL_KIND or body.get("format") != 1:
                raise ValueError("not a shoed sealing state")
            key, epoch, kid = _checked(body.get("key"), body.get("epoch"), body.get("key_id"))
            return SealFile(SealState(kid, epoch, key), None, True)
        except (ValueError, KeyError, TypeError, AttributeError, RecursionError, UnicodeDecodeError) as exc:
            raise SealError(f"{where} is not a journal sealing state ({exc})") from None
    raise SealError(f"{where} is not a journal sealing state (no intact slot)")


def read_verify_key(data: bytes, where: str) -> bytes:
    """A verification key file: 64 hex digits (a trailing newline allowed)."""
    try:
        key = bytes.fromhex(data.decode("ascii").strip())
    except (UnicodeDecodeError, ValueError):
        key = b""
    if len(key) != KEY_BYTES:
        raise SealError(f"{where} is not a journal verification key (64 hex digits)")
    return key


@dataclass(slots=True)
class Keys:
    """What a reader or the writer holds to check a journal's files.

    secret: the static HMAC secret of an "hmac-sha256" journal;
    verify_key: the verification key of a forward-secure ("fss-hmac-sha256") one;
    sealing: the box's own state (it checks only its current epoch and later ones).
    """

    secret: bytes | None = None
    verify_key: bytes | None = None
    sealing: SealState | None = None
    _ratchet: Ratchet | None = None

    def epoch_key(self, epoch: int) -> bytes | None:
        """The key of an epoch, or None where these keys cannot derive it."""
        if self.verify_key is not None:
            if self._ratchet is None:
                self._ratchet = Ratchet(self.verify_key)
            return self._ratchet.key(epoch)
        if self.sealing is not None and epoch >= self.sealing.epoch:
            return advance(self.sealing.key, self.sealing.epoch, epoch)
        return None

    @property
    def key_id(self) -> str | None:
        if self.verify_key is not None:
            return key_id(self.verify_key)
        return self.sealing.key_id if self.sealing is not None else None


def as_keys(value) -> Keys:
    """Keys, or a bare secret (bytes) or None as the older callers pass it."""
    return value if isinstance(value, Keys) else Keys(secret=value)
