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


@dataclass(slots=True)
class SealState:
    """What the box holds: the current epoch and its key, and the key pair's id."""

    key_id: str
    epoch: int
    key: bytes

    def to_bytes(self) -> bytes:
        body = {"kind": SEAL_KIND, "format": 1, "key_id": self.key_id, "epoch": self.epoch, "key": self.key.hex()}
        return (json.dumps(body, sort_keys=True) + "\n").encode()

    @classmethod
    def from_bytes(cls, data: bytes, where: str) -> SealState:
        try:
            body = json.loads(data)
            if body.get("kind") != SEAL_KIND or body.get("format") != 1:
                raise ValueError("not a shoed sealing state")
            key = bytes.fromhex(body["key"])
            epoch = body["epoch"]
            if len(key) != KEY_BYTES or not isinstance(epoch, int) or isinstance(epoch, bool) \
                    or not 0 <= epoch <= EPOCH_MAX:
                raise ValueError("bad key or epoch")
            return cls(str(body["key_id"]), epoch, key)
        except (ValueError, KeyError, TypeError, AttributeError, RecursionError) as exc:
            raise SealError(f"{where} is not a journal sealing state ({exc})") from None

    def advanced(self, to: int) -> SealState:
        return SealState(self.key_id, to, advance(self.key, self.epoch, to))


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
