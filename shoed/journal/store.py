"""The journal writer: one append-only, hash-chained, fsync'd JSON Lines file per shoe.

This is the shell around `shoed.journal.chain`: it owns the files, the file
descriptors and fsync. A record is on disk (written, flushed and fsync'd)
before `append` returns, so the daemon may then acknowledge the card to the
shoe and publish its events (table-game-standards.md items 13 and 19).

On opening, the journal proves its table's whole chain and recovers: a torn
tail (only a last line without its newline, left by a crash in the middle of
a write, never acknowledged) is cut off and kept beside the file as evidence;
any complete line that fails its hash or link, a missing, reordered, altered
or non-regular file raises JournalLocked and nothing is changed (item 20). An
acknowledged record is never cut. The finished files are proved quickly by the
sealed "verified up to" mark (`<table>.verified`: each finished file's size
and SHA-256, and the current file's offset and head), authenticated with the
journal's key; files the mark does not cover are proved record by record.
A write or fsync error raises JournalError, leaves the file as it was before
the failed append, and ends this Journal: the caller stops the table.
"""

from __future__ import annotations

import errno
import fcntl
import hashlib
import itertools
import json
import os
import stat
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Self

from shoed import files
from shoed.files import NotRegular, fsync_folder, why_not_writable  # noqa: F401  (NotRegular: for the journal's readers)
from shoed.journal import chain as ch
from shoed.journal.seal import BLANK_SLOT, SEAL_FILE_BYTES, SLOT_BYTES, Keys, SealError, SealState, parse_seal_file

MARK_KIND = "shoed-journal-mark"


def mark_name(table: str) -> str:
    """The sealed "verified up to" mark of a table's journal, beside its files."""
    return f"{table}.verified"


def seal_name(table: str) -> str:
    """The forward-secure sealing state of a table's journal, beside its files."""
    return f"{table}.seal"


# The most a journal file (a mark, a seal) is read to: about 250 shoes' files (a shoe's is about
# 0.5 MB). A larger one (a hole made in a file, a file grown by another hand) is refused, never
# read into the memory of the table's box.
JOURNAL_FILE_MAX = 128 * 1024 * 1024


def read_regular(path: str | os.PathLike) -> bytes:
    """The bytes of a journal file, a mark or a seal (shoed.files.read_regular): a FIFO or device
    named like a journal file cannot hang the reader, nor a file past JOURNAL_FILE_MAX fill its memory
    (NotRegular, TooLarge: both OSErrors)."""
    return files.read_regular(path, JOURNAL_FILE_MAX,
                              not_regular="not a regular file (a FIFO or device named like a journal file)")


def unreadable(exc: OSError) -> str:
    """Why a journal file is not read (NotRegular, TooLarge), in words."""
    if isinstance(exc, files.TooLarge):
        return f"{exc.strerror}: no journal file is (a file grown or holed by another hand?)"
    return exc.strerror or str(exc)


class SecretFileError(ValueError):
    """The journal's secret file cannot be used: one line saying why."""


# The least a journal secret the daemon keys new records with holds (after surrounding whitespace
# is removed): an HMAC key of fewer bytes, or of one byte repeated, is guessed, not kept.
SECRET_MIN_BYTES = 32


def secret_problem(secret: bytes) -> str | None:
    """What makes a secret too weak to key a journal's new records, in words (None: nothing)."""
    if len(secret) < SECRET_MIN_BYTES:
        return f"holds {len(secret)} bytes"
    if len(set(secret)) == 1:
        return f"holds one byte repeated ({secret[:1]!r})"
    return None


def read_secret_file(path: str | os.PathLike, *, strong: bool = False) -> bytes:
    """The journal's HMAC secret from its file: the file's bytes with surrounding whitespace
    removed. One reader for the daemon, its configuration check and the command line.
    strong: the secret the daemon keys new records with (the configuration check, run at every
    start): at least SECRET_MIN_BYTES, not one byte repeated. A reader of a journal keyed
    earlier takes the secret it was keyed with."""
    try:
        secret = files.read_regular(path, files.KEY_FILE_MAX).strip()
    except OSError as exc:
        raise SecretFileError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    if not secret:
        raise SecretFileError(f"{path} is empty: put the journal's secret in it")
    problem = secret_problem(secret) if strong else None
    if problem is not None:
        raise SecretFileError(f"{path} {problem}: the journal's secret is at least {SECRET_MIN_BYTES} random "
                              "bytes (e.g. `openssl rand -hex 32 > FILE`, 64 hex digits)")
    return secret


def mark_mac(body: dict, key: bytes | None) -> str:
    return ch.digest(ch.canonical({k: v for k, v in body.items() if k != "mac"}), key)


def _count(value: object) -> bool:
    return type(value) is int and value >= 0


def mark_fault(mark: dict) -> str | None:
    """What in a verified mark is not of the form the journal writes (None: nothing). An unkeyed
    journal's mark is only a digest anyone can make again: its values are checked before use."""
    for name in ("file_seq", "offset", "jseq"):
        if not _count(mark.get(name)):
            return f"its {name} is {mark.get(name)!r}, not a count"
    if not isinstance(mark.get("file"), str) or not isinstance(mark.get("hash"), str):
        return "its file or hash is not text"
    if mark.get("epoch") is not None and not _count(mark.get("epoch")):
        return f"its epoch is {mark.get('epoch')!r}"
    files = mark.get("files")
    if not isinstance(files, list):
        return "its files are not a list"
    for entry in files:
        if not (isinstance(entry, list) and len(entry) in (5, 6) and _count(entry[0]) and isinstance(entry[1], str)
                and _count(entry[2]) and isinstance(entry[3], str) and isinstance(entry[4], str)
                and (len(entry) == 5 or (isinstance(entry[5], list) and len(entry[5]) == 3
                                         and all(_count(x) for x in entry[5])))):
            return f"a finished file's entry {str(entry)[:80]} is not of the form written"
    return None


def verified_as(entry: list, name: str, data: bytes) -> bool:
    """Whether a finished file (its name and bytes) is the one a verified mark's entry lists: its name, size
    and SHA-256."""
    return entry[1] == name and entry[2] == len(data) and entry[3] == hashlib.sha256(data).hexdigest()


class JournalError(Exception):
    """The journal cannot take records: the table must stop. Never retried."""


@dataclass(frozen=True, slots=True)
class BadRecord:
    """Where a journal stops being intact."""

    file: str
    line: int
    jseq: int | None
    reason: str
    offset: int = 0

    def to_json(self) -> dict:
        return {"file": self.file, "line": self.line, "jseq": self.jseq, "reason": self.reason, "offset": self.offset}

    def __str__(self) -> str:
        return f"{self.file} line {self.line} (jseq {self.jseq}): {self.reason}"


class JournalLocked(JournalError):
    """Corruption in the middle of the journal: the table locks with an alarm
    until someone who may clear it has looked. Nothing was changed on disk."""

    def __init__(self, bad: BadRecord):
        super().__init__(f"journal locked: {bad}")
        self.bad = bad


@dataclass(frozen=True, slots=True)
class RecoveryNote:
    """Something recovery did on opening, for the caller to log and journal."""

    # "truncated_torn_tail", "removed_unfinished_file", "chain_anchored", "mark_not_updated",
    # "mark_missing" or "verified_files_gone"
    action: str
    file: str
    detail: str
    offset: int | None = None  # where the torn tail began
    line: int | None = None
    removed_bytes: int = 0
    removed_sha256: str | None = None
    kept_as: str | None = None  # the file holding what was cut off

    def to_json(self) -> dict:
        return {
            "action": self.action,
            "file": self.file,
            "detail": self.detail,
            "offset": self.offset,
            "line": self.line,
            "removed_bytes": self.removed_bytes,
            "removed_sha256": self.removed_sha256,
            "kept_as": self.kept_as,
        }


class FileOps:
    """The two system calls whose failure the journal must survive.

    Tests pass a subclass that fails them (an fsync error cannot be caused on
    demand on a real disk without privileges the test suite does not have).
    """

    def write(self, fd: int, data: memoryview) -> int:
        return os.write(fd, data)

    def fsync(self, fd: int) -> None:
        os.fsync(fd)

    def pwrite(self, fd: int, data: memoryview, offset: int) -> int:
        """A write in place (the sealing state's slots)."""
        return os.pwrite(fd, data, offset)

    def fdatasync(self, fd: int) -> None:
        os.fdatasync(fd)


def _write_all(ops: FileOps, fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        n = ops.write(fd, view)
        if n <= 0:  # a regular file never does this; do not spin if one does
            raise OSError(errno.EIO, f"write returned {n}")
        view = view[n:]


def _utc_now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True, slots=True)
class _ShoeFile:
    """The file records are appended to: its descriptor (open for appending), path and shoe."""

    fd: int
    path: Path
    shoe: str


class Journal:
    """The journal of one table in one directory.

    Journal(directory, table_id, secret=None) opens (creating the directory
    if needed), takes an exclusive lock on it, and recovers the latest file;
    see `recovery` for what it did. It raises JournalLocked when the journal
    is corrupt in the middle. Call open_shoe() to start a file, then append().
    """

    def __init__(
        self,
        directory: str | os.PathLike,
        table_id: str,
        secret: bytes | None = None,
        *,
        clock: Callable[[], datetime] = _utc_now,
        ops: FileOps | None = None,
    ):
        if not isinstance(table_id, str) or not ch.TABLE_RE.fullmatch(table_id):
            raise ValueError(
                f"table id {table_id!r}: letters, digits, '_', '.', '-' (up to 64), not starting with a sign"
            )
        if secret is not None and (not isinstance(secret, bytes) or not secret):
            raise ValueError("the secret is non-empty bytes, or None for an unkeyed journal")
        self.directory = Path(directory)
        self.table = table_id
        self._secret = secret
        self._clock = clock
        self._ops = ops or FileOps()
        self._mutex = threading.Lock()
        self._file: _ShoeFile | None = None  # none until the first shoe's file (an empty journal)
        self._closed = False
        # Descriptors opened ahead (see _hold_spare): the next shoe's file, the mark's and the
        # sealing state's next copies, and the current file for reading back.
        self._held: dict[str, int] = {}
        self._file_seq = 0
        self._jseq = 0
        self._head = ch.GENESIS
        self._offset = 0
        self._failed: str | None = None
        self._state: SealState | None = None  # the forward-secure sealing state, if the journal has one
        self._seal_fd: int | None = None  # its file, open for writing in place (never replaced)
        self._seal_slot = 0  # the slot of that file holding the current state
        self._finished: list[list] = []  # per finished file: [file_seq, name, size, sha256, last hash]
        self.recovery: list[RecoveryNote] = []
        try:
            if not self.directory.is_dir():
                self.directory.mkdir(parents=True)
                fsync_folder(self.directory.parent)  # the new directory's own entry is durable too
            self._dirfd: int = os.open(self.directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        except OSError as exc:
            raise JournalError(f"cannot open the journal directory {self.directory}: {exc}") from exc
        try:
            fcntl.flock(self._dirfd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self.close()
            raise JournalError(f"{self.directory} is in use by another journal writer") from None
        if not os.access(self.directory, os.W_OK | os.X_OK):  # else the table stops at the next shoe's file
            self.close()
            raise JournalError(f"cannot write in the journal directory {self.directory}: "
                               f"{why_not_writable(self.directory)} (each shoe's file, the verified mark and a "
                               "spare for a full disk are made there)")
        try:
            self._load_seal()
            self._recover()
            self._hold_spare()
        except OSError as exc:
            self.close()
            raise JournalError(f"recovering the journal in {self.directory} failed: {exc}") from exc
        except BaseException:
            self.close()
            raise

    # -- state ---------------------------------------------------------

    @property
    def head(self) -> str:
        """The hash of the last record written: publish it, so that the chain
        cannot be rewritten wholesale unnoticed."""
        return self._head

    @property
    def path(self) -> Path | None:
        return self._file.path if self._file is not None else None

    @property
    def shoe(self) -> str | None:
        return self._file.shoe if self._file is not None else None

    @property
    def jseq(self) -> int:
        """The jseq of the last record written in the current file (0 if none)."""
        return self._jseq

    @property
    def file_seq(self) -> int:
        return self._file_seq

    @property
    def keyed(self) -> bool:
        return self._secret is not None

    @property
    def sealed(self) -> bool:
        """Forward-secure: the key evolves with every file and the old one is erased."""
        return self._state is not None

    @property
    def keys(self) -> Keys:
        """What this box can check its own files with (the current epoch and later, if sealed)."""
        if self._state is not None:
            return Keys(sealing=self._state)
        return Keys(secret=self._secret)

    def close(self) -> None:
        with self._mutex:
            if self._closed:
                return
            if self._file is not None:
                if self._failed is None:
                    try:  # what was written is verified up to here: a later cut below it is caught
                        self._write_mark(self._finished, self._file.path.name, self._file_seq, self._offset,
                                         self._head, self._jseq, self._secret, self._file_seq if self._state else None)
                    except OSError:
                        pass  # the mark kept is still true, only shorter
                os.close(self._file.fd)
            for fd in self._held.values():
                os.close(fd)
            self._held.clear()
            if self._seal_fd is not None:
                os.close(self._seal_fd)
                self._seal_fd = None
            os.close(self._dirfd)  # releases the lock
            self._closed = True

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- writing -------------------------------------------------------

    def open_shoe(self, shoe_id: str, first: Iterable[dict] = ()) -> Path:
        """Start the file of a new shoe; its header chains to the current head. The records
        `first` (the table's checkpoint) are written with the header, in the one write that
        gives the file its name: a shoe file is never seen without them."""
        if not isinstance(shoe_id, str) or not shoe_id:
            raise ch.RecordError("a shoe id is a non-empty string")
        with self._mutex:
            self._usable()
            opened = self._clock().astimezone(UTC)
            seq = self._file_seq + 1
            name = ch.file_name(self.table, seq, opened, shoe_id)
            state = self._state.advanced(seq) if self._state is not None else None
            key = state.key if state is not None else self._secret
            head = ch.header(
                table=self.table,
                shoe=shoe_id,
                file_seq=seq,
                prev_file=self._file.path.name if self._file is not None else None,
                opened_utc=opened.isoformat().replace("+00:00", "Z"),
                keyed=self.keyed,
                key_id=state.key_id if state is not None else None,
            )
            sealed, line = ch.seal(head, 1, self._head, key)
            lines, jseq = [line], 1
            for record in first:
                jseq += 1
                sealed, more = ch.seal(record, jseq, sealed["hash"], key)  # RecordError before anything is written
                lines.append(more)
            line = b"".join(lines)
            final = self.directory / name
            # Written whole under a temporary name, then renamed: a file with
            # this table's name always starts with a complete header.
            tmp = self.directory / f".{name}.tmp"
            fd = None
            try:
                if final.exists():
                    raise FileExistsError(errno.EEXIST, "journal file exists", str(final))
                new_fd = self._open_spare(line, final)
                if new_fd is None:
                    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o644)
                    _write_all(self._ops, fd, line)
                    self._ops.fsync(fd)
                    os.close(fd)
                    fd = None
                    os.rename(tmp, final)
                    self._ops.fsync(self._dirfd)
                    new_fd = os.open(final, os.O_WRONLY | os.O_APPEND | os.O_CLOEXEC)
                finished = list(self._finished)
                if self._file is not None:
                    try:
                        os.chmod(self._file.path, 0o444)  # a finished shoe is read-only from now on
                    except OSError:
                        pass
                    data = self._read_current(self._file.path)
                    finished.append(self._finished_entry(self._file_seq, self._file.path, data, self._head))
                # The mark first (sealed with the new key), then the new key is written over the old
                # one: a crash between them leaves a state the next start can still prove.
                self._write_mark(finished, final.name, seq, len(line), sealed["hash"], jseq, key, seq if state else None)
                if state is not None:
                    self._write_seal(state)
            except OSError as exc:
                if fd is not None:
                    os.close(fd)
                try:
                    tmp.unlink(missing_ok=True)
                except OSError:
                    pass
                self._failed = f"opening {name} failed: {exc}"
                raise JournalError(self._failed) from exc
            old = self._file
            self._finished = finished
            if state is not None:
                self._state, self._secret = state, state.key
            self._file = _ShoeFile(new_fd, final, shoe_id)
            self._file_seq, self._jseq, self._head, self._offset = seq, jseq, sealed["hash"], len(line)
            if old is not None:
                os.close(old.fd)
            self._hold_spare()
            return final

    def _hold_spare(self) -> None:
        """Open, now, every descriptor the next shoe's start needs: the unnamed files (O_TMPFILE)
        its journal file and the verified mark will be written to, and the current file for
        reading back (the sealing state's own file is held open from the start). The journal
        holds them, so a flood of network connections that takes every free descriptor cannot
        stop the next shoe's file from opening."""
        if self._closed:
            return
        for what in ("file", "mark"):
            if what not in self._held and hasattr(os, "O_TMPFILE"):
                try:
                    self._held[what] = os.open(self.directory, os.O_TMPFILE | os.O_WRONLY | os.O_CLOEXEC, 0o644)
                except OSError:  # a file system without O_TMPFILE, or no descriptor free now: the old way then
                    pass
        if "read" not in self._held and self._file is not None:
            try:
                self._held["read"] = os.open(self._file.path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
            except OSError:
                pass

    def _read_current(self, path: Path) -> bytes:
        """The current file's bytes (at `path`), through the descriptor held for it when there is one."""
        fd = self._held.pop("read", None)
        if fd is None:
            return read_regular(path)
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise NotRegular(errno.EINVAL, "not a regular file", str(path))
            chunks, offset = [], 0
            while chunk := os.pread(fd, 1 << 20, offset):
                chunks.append(chunk)
                offset += len(chunk)
            return b"".join(chunks)
        finally:
            os.close(fd)

    def _link_held(self, what: str, data: bytes, name: str, mode: int) -> bool:
        """Write `data` into the held unnamed file `what` and give it the name `name` (never over
        a file). False when none is held: the caller opens one the ordinary way."""
        fd = self._held.pop(what, None)
        if fd is None:
            return False
        try:
            _write_all(self._ops, fd, data)
            self._ops.fsync(fd)
            os.fchmod(fd, mode)
            # linkat(AT_SYMLINK_FOLLOW) names the unnamed file; EEXIST: never over a file. (The
            # directory descriptor makes Python call linkat, not link, which would not follow.)
            os.link(f"/proc/self/fd/{fd}", name, dst_dir_fd=self._dirfd, follow_symlinks=True)
        finally:
            os.close(fd)
        return True

    def _open_spare(self, line: bytes, final: Path) -> int | None:
        """Write the header (and first records) into the held file and give it its name; its descriptor (for
        appending) or None when no file is held. OSError as for any write of the journal."""
        fd = self._held.pop("file", None)
        if fd is None:
            return None
        try:
            _write_all(self._ops, fd, line)
            self._ops.fsync(fd)
            os.link(f"/proc/self/fd/{fd}", final.name, dst_dir_fd=self._dirfd, follow_symlinks=True)
            self._ops.fsync(self._dirfd)
            fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) | os.O_APPEND)
        except BaseException:
            os.close(fd)
            raise
        return fd

    def append(self, record: dict) -> dict:
        """Write one record durably; return it as written (with jseq, prev, hash)."""
        return self.append_many([record])[0]

    def append_many(self, records: Iterable[dict]) -> list[dict]:
        """Write several records with one write and one fsync (a reading and its
        events): all are durable when this returns, or none was acknowledged."""
        with self._mutex:
            self._usable()
            file = self._file
            if file is None:
                raise JournalError("no shoe file is open: call open_shoe() first")
            sealed, lines = [], []
            jseq, prev = self._jseq, self._head
            for record in records:
                jseq += 1
                rec, line = ch.seal(record, jseq, prev, self._secret)  # RecordError before anything is written
                prev = rec["hash"]
                sealed.append(rec)
                lines.append(line)
            if not sealed:
                return []
            data = b"".join(lines)
            self._write(file, data)
            self._jseq, self._head = jseq, prev
            self._offset += len(data)
            return sealed

    def _usable(self) -> None:
        if self._closed:
            raise JournalError("the journal is closed")
        if self._failed is not None:
            raise JournalError(f"the journal failed earlier and takes no more records: {self._failed}")

    def _write(self, file: _ShoeFile, data: bytes) -> None:
        fd, good = file.fd, self._offset
        try:
            _write_all(self._ops, fd, data)
            self._ops.fsync(fd)
        except OSError as exc:
            # Put the file back as it was before this append: no half record
            # is left, and nothing the caller was told failed stays behind.
            # After a failed fsync the page cache cannot be trusted either, so
            # the journal takes no more records (fsync errors are not retried).
            what = f"write to {file.path.name} failed: {exc}"
            try:
                os.ftruncate(fd, good)
                os.fsync(fd)
            except OSError as again:
                what += f"; cutting back to {good} bytes failed too ({again}): recovery will on the next start"
            self._failed = what
            raise JournalError(what) from exc

    # -- recovery ------------------------------------------------------

    def _own_files(self) -> list[tuple[ch.FileName, Path]]:
        files = []
        for entry in os.scandir(self.directory):
            parsed = ch.parse_file_name(entry.name)
            if parsed is not None and parsed.table == self.table:
                files.append((parsed, Path(entry.path)))
        files.sort(key=lambda f: f[0].file_seq)
        for (a, pa), (b, pb) in itertools.pairwise(files):
            if a.file_seq == b.file_seq:
                raise JournalLocked(BadRecord(pb.name, 1, 1, f"two files numbered {b.file_seq}: {pa.name}"))
            if b.file_seq != a.file_seq + 1:
                raise JournalLocked(
                    BadRecord(pb.name, 1, 1, f"file {b.file_seq} follows file {a.file_seq}: a file is missing")
                )
        return files

    # -- the sealing state and the mark --------------------------------

    def _load_seal(self) -> None:
        """Open the sealing state's file for writing in place and read it. What a crash left in it
        is put right now: the slot of an older epoch (the crash fell between the two writes of a
        key moving on) or a torn slot is overwritten with spaces, and a file of format 1 (one line)
        is rewritten in the two-slot form, in the same file."""
        path = self.directory / seal_name(self.table)
        try:
            if not stat.S_ISREG(os.lstat(path).st_mode) and not os.path.islink(path):  # never opened to write
                raise NotRegular(errno.EINVAL, "not a regular file (a FIFO or device named like a journal file)",
                                 str(path))
            fd = os.open(path, os.O_RDWR | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
        except FileNotFoundError:
            return
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise JournalError(f"{path} is a symbolic link: the sealing state is kept only in its own file") \
                    from None
            raise
        self._seal_fd = fd
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise NotRegular(errno.EINVAL, "not a regular file (a FIFO or device named like a journal file)",
                             str(path))
        if self._secret is not None:
            raise JournalError(f"{path} makes the journal forward-secure: a static secret cannot be used with it")
        if stat.S_IMODE(st.st_mode) != 0o600:
            os.fchmod(fd, 0o600)  # a key: its owner's alone
        data = os.pread(fd, SEAL_FILE_BYTES + 1, 0)
        try:
            found = parse_seal_file(data, str(path))
        except SealError as exc:
            raise JournalError(str(exc)) from None
        self._state = found.state
        if found.slot is None:  # format 1: its line is overwritten by the blank slot 0
            self._seal_slot = 0
            self._write_seal(found.state)
        else:
            self._seal_slot = found.slot
            if found.stale:
                self._seal_write(BLANK_SLOT, 1 - found.slot)

    def _seal_write(self, data: bytes, slot: int) -> None:
        """One slot of the sealing state written in place, and on the disk before this returns."""
        fd = self._seal_fd
        assert fd is not None and len(data) == SLOT_BYTES
        view, offset = memoryview(data), slot * SLOT_BYTES
        while view:
            n = self._ops.pwrite(fd, view, offset)
            if n <= 0:
                raise OSError(errno.EIO, f"pwrite returned {n}")
            view, offset = view[n:], offset + n
        self._ops.fdatasync(fd)

    def _write_seal(self, state: SealState) -> None:
        # The new key into the slot not holding the current one, on the disk; then the old key
        # overwritten with spaces, in the same blocks of the same file (never a new file: the
        # blocks a replaced file leaves behind keep its key).
        new = 1 - self._seal_slot
        self._seal_write(state.slot(), new)
        self._seal_write(BLANK_SLOT, self._seal_slot)
        self._seal_slot = new

    def _replace(self, name: str, data: bytes, mode: int, held: str | None = None) -> None:
        path, tmp = self.directory / name, self.directory / f".{name}.tmp"
        tmp.unlink(missing_ok=True)
        if held is None or not self._link_held(held, data, tmp.name, mode):
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, mode)
            try:
                _write_all(self._ops, fd, data)
                self._ops.fsync(fd)
            finally:
                os.close(fd)
        os.replace(tmp, path)
        self._ops.fsync(self._dirfd)

    @staticmethod
    def _finished_entry(file_seq: int, path: Path, data: bytes, last_hash: str) -> list:
        """What the mark keeps of a finished file: number, name, size, SHA-256, last hash, and its
        inode, mtime and ctime (a write to the file, even one putting back its times, moves ctime)."""
        st = os.lstat(path)
        return [file_seq, path.name, len(data), hashlib.sha256(data).hexdigest(), last_hash,
                [st.st_ino, st.st_mtime_ns, st.st_ctime_ns]]

    @staticmethod
    def _unchanged(entry: list, path: Path) -> bool:
        """The file is the one the mark verified, not written since (no need to read it)."""
        try:
            st = os.lstat(path)
        except OSError:
            return False
        return (stat.S_ISREG(st.st_mode) and len(entry) > 5 and entry[1] == path.name and entry[2] == st.st_size
                and entry[5] == [st.st_ino, st.st_mtime_ns, st.st_ctime_ns])

    def _write_mark(self, finished, file, file_seq, offset, head, jseq, key, epoch) -> None:
        body = {
            "kind": MARK_KIND, "format": 1, "table": self.table, "files": finished, "file": file,
            "file_seq": file_seq, "offset": offset, "hash": head, "jseq": jseq, "epoch": epoch,
        }
        body["mac"] = mark_mac(body, key)
        # The canonical form (keys sorted, compact): a long journal's mark is written in a few ms.
        self._replace(mark_name(self.table), ch.canonical(body) + b"\n", 0o644, held="mark")

    def _read_mark(self) -> tuple[dict | None, JournalLocked | None]:
        """The mark, or (None, why it cannot be trusted): raised once the files are proved,
        so that a wrong key is named as such first."""
        try:
            return self._check_mark(), None
        except JournalLocked as exc:
            return None, exc

    def _check_mark(self) -> dict | None:
        path = self.directory / mark_name(self.table)
        try:
            mark = json.loads(read_regular(path))
        except FileNotFoundError:
            return None
        except (ValueError, UnicodeDecodeError, RecursionError):
            raise JournalLocked(BadRecord(path.name, 0, None, "the verified mark is not readable")) from None
        if not isinstance(mark, dict) or mark.get("kind") != MARK_KIND or mark.get("table") != self.table:
            raise JournalLocked(BadRecord(path.name, 0, None, "not this table's verified mark"))
        epoch = mark.get("epoch")
        if self._state is not None:
            try:
                key = self._state.advanced(epoch).key if isinstance(epoch, int) and epoch >= self._state.epoch else None
            except SealError as exc:
                raise JournalLocked(BadRecord(path.name, 0, None, f"the verified mark is not authentic ({exc})")) \
                    from None
            if key is None:
                raise JournalLocked(BadRecord(path.name, 0, None, f"the verified mark (epoch {epoch!r}) is older "
                                              f"than the sealing key (epoch {self._state.epoch})"))
        else:
            key = self._secret
        if not isinstance(mark.get("mac"), str) or mark_mac(mark, key) != mark["mac"]:
            raise JournalLocked(BadRecord(path.name, 0, None, "the verified mark is not authentic (altered, "
                                          "or written with another key)"))
        fault = mark_fault(mark)
        if fault is not None:
            raise JournalLocked(BadRecord(path.name, 0, None, f"the verified mark is not of the form written: {fault}"))
        return mark

    # -- recovery ------------------------------------------------------

    def _recover(self) -> None:
        prefix = f".{self.table}-"
        for found in os.scandir(self.directory):
            # A crash inside open_shoe(): the header never got its name, so the
            # file was never part of the journal.
            if found.name.startswith(prefix) and found.name.endswith(".jsonl.tmp"):
                os.unlink(found.path)
                self.recovery.append(
                    RecoveryNote("removed_unfinished_file", found.name, "a shoe file whose opening did not finish")
                )
        files = self._own_files()
        for _, path in files:
            if path.is_symlink():  # the journal's durability and evidence would be wherever the link points
                raise JournalLocked(BadRecord(path.name, 0, None, "a symbolic link, not a file of the journal "
                                              "directory: the journal is kept only in its own files"))
        last_seq = files[-1][0].file_seq if files else 0
        if self._state is not None:
            if self._state.epoch > last_seq:
                where = files[-1][1].name if files else str(self.directory)
                raise JournalLocked(BadRecord(where, 0, None, f"the sealing key is at epoch {self._state.epoch} but "
                                              f"the journal ends with file {last_seq}: shoe files were removed"))
        mark, mark_fault = self._read_mark()
        if mark is not None and files and mark.get("file_seq", 0) > last_seq:
            raise JournalLocked(BadRecord(str(mark.get("file")), 0, None, "verified earlier but missing: "
                                          f"the journal ends with file {last_seq}"))
        if mark is not None and not files and mark.get("file_seq", 0) > 0:
            raise JournalLocked(BadRecord(str(mark.get("file")), 0, None, "verified earlier; the journal is gone"))
        if not files:
            if mark_fault is not None:
                raise mark_fault
            return
        if mark is None and mark_fault is None:
            # Every start and every shoe's file writes it: without one, records cut from the end
            # of the current file since the last start cannot be ruled out here (the witness can).
            self.recovery.append(RecoveryNote("mark_missing", mark_name(self.table), "the verified mark was not "
                                              "there: every file proved record by record; a cut from the end "
                                              "since the last start cannot be ruled out on the box"))
        keys = self.keys
        covered = {entry[0]: entry for entry in (mark or {}).get("files", [])}
        gone = sorted(n for n in covered if n < files[0][0].file_seq)
        if gone:
            # Taken away from the front (archived by a retention policy, or removed): said in the
            # journal itself, since the mark written now no longer lists them.
            self.recovery.append(RecoveryNote("verified_files_gone", covered[gone[0]][1],
                                              f"{len(gone)} finished file(s) the verified mark listed are not here "
                                              f"(files {gone[0]} to {gone[-1]}: archived, or removed)"))
        start = None
        previous = None
        self._finished = []
        for name, path in files[:-1]:
            entry = covered.get(name.file_seq)
            if entry is not None and self._unchanged(entry, path):
                self._finished.append(entry)
                start, previous = entry[4], (path.name, name.file_seq)
                continue
            data = self._read(path)
            if entry is not None:  # touched since: its bytes must still be those verified
                if not verified_as(entry, path.name, data):
                    self._prove_finished(name, path, data, start, previous, keys)  # names the record, if it can
                    raise JournalLocked(BadRecord(path.name, 0, None, f"not the file verified as number "
                                                  f"{name.file_seq} ({entry[1]}, {entry[2]} bytes)"))
                last_hash = entry[4]
            else:
                last_hash = self._prove_finished(name, path, data, start, previous, keys)
            self._finished.append(self._finished_entry(name.file_seq, path, data, last_hash))
            start, previous = last_hash, (path.name, name.file_seq)
        if files[0][0].file_seq > 1:
            self.recovery.append(RecoveryNote("chain_anchored", files[0][1].name,
                                              f"files before {files[0][0].file_seq} are not here; the chain is "
                                              "taken from what the oldest file kept chains to"))
        name, path = files[-1]
        data = self._read(path)
        first: dict | None = None
        last: dict | None = None
        bad: ch.Bad | None = None
        for item in ch.chain(data, prev=start, secret=keys):
            if isinstance(item, ch.Bad):
                bad = item
                break
            if first is None:
                first = item
                reason = ch.check_header(item, name=name, previous=previous)
                if reason is not None:
                    raise JournalLocked(BadRecord(path.name, 1, 1, reason))
            last = item
        good_end = len(data)
        if mark is not None and mark.get("file_seq") == name.file_seq and mark.get("file") != path.name:
            raise JournalLocked(BadRecord(path.name, 0, None, f"not the file verified as number {name.file_seq} "
                                          f"({mark.get('file')})"))
        verified_to = mark.get("offset", 0) if mark is not None and mark.get("file") == path.name else 0
        if bad is not None:
            # Torn is only a last line without its newline: a crash in the middle of a write,
            # never acknowledged. A complete line that fails its hash or link is corruption,
            # and so is anything before what was verified: the table locks, nothing is cut.
            torn = ch.torn_tail(data, bad, verified_to)
            if not torn:
                key = ch.header_key(first, keys)[0] if first is not None else None
                later = ch.intact_after(data, bad.offset, key)
                why = bad.reason + (f"; line {later} after it is intact" if later else "")
                raise JournalLocked(BadRecord(path.name, bad.line, bad.jseq, why, bad.offset))
            good_end = bad.offset
        if first is None or last is None:  # a file without an intact header was raised as Bad above
            raise JournalLocked(BadRecord(path.name, 1, 1, "no intact header"))
        if good_end < verified_to:
            raise JournalLocked(BadRecord(path.name, last["jseq"] + 1, last["jseq"] + 1,
                                          f"the file ends at byte {good_end}; {verified_to} bytes of it were "
                                          "verified earlier: acknowledged records were removed", good_end))
        if mark_fault is not None:
            raise mark_fault
        if self._state is not None:
            if self._state.epoch < last_seq:  # a crash after the file opened, before the key moved on
                self._state = self._state.advanced(last_seq)
                self._write_seal(self._state)
            self._secret = self._state.key
        if bad is not None:
            self._cut_tail(path, data, bad)
        self._file_seq, self._jseq, self._head, self._offset = name.file_seq, last["jseq"], last["hash"], good_end
        try:
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CLOEXEC)
        except OSError as exc:
            raise JournalError(f"cannot open {path.name} for appending: {exc}") from exc
        self._file = _ShoeFile(fd, path, first["shoe"])
        try:
            self._write_mark(self._finished, path.name, name.file_seq, good_end, self._head, self._jseq,
                             self._secret, name.file_seq if self._state is not None else None)
        except OSError as exc:  # e.g. a full disk: the mark kept is still true, only shorter
            self.recovery.append(RecoveryNote("mark_not_updated", mark_name(self.table), str(exc)))

    def _read(self, path: Path) -> bytes:
        try:
            return read_regular(path)
        except (NotRegular, files.TooLarge) as exc:
            raise JournalLocked(BadRecord(path.name, 0, None, unreadable(exc))) from None

    def _prove_finished(self, name, path, data, start, previous, keys) -> str:
        """Prove a finished file the mark does not cover, record by record; its last hash.
        A sealed file of an earlier epoch can only be checked for its links and form here
        (its key is erased): the verification key, off the box, checks its hashes."""
        last: dict | None = None
        for item in ch.chain(data, prev=start, secret=keys, links_if_keyed=self._state is not None):
            if isinstance(item, ch.Bad):
                raise JournalLocked(BadRecord(path.name, item.line, item.jseq, item.reason, item.offset))
            if last is None:
                reason = ch.check_header(item, name=name, previous=previous)
                if reason is not None:
                    raise JournalLocked(BadRecord(path.name, 1, 1, reason))
            last = item
        if last is None:  # chain() yields a Bad for a file without records
            raise JournalLocked(BadRecord(path.name, 1, 1, "empty file: no header"))
        return str(last["hash"])

    def _cut_tail(self, path: Path, data: bytes, bad: ch.Bad) -> None:
        tail = data[bad.offset :]
        # The evidence is durable before the journal is cut. A tail torn at the same offset before (the
        # first record after a restart torn again) keeps its own file: never overwritten, never refused.
        number = 1
        while True:
            kept = self.directory / (f"{path.name}.torn-{bad.offset}" + (f"-{number}" if number > 1 else ""))
            try:
                fd = os.open(kept, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o444)
                break
            except FileExistsError:
                number += 1
        try:
            _write_all(FileOps(), fd, tail)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.fsync(self._dirfd)
        fd = os.open(path, os.O_WRONLY | os.O_CLOEXEC)
        try:
            os.ftruncate(fd, bad.offset)
            os.fsync(fd)
        finally:
            os.close(fd)
        self.recovery.append(
            RecoveryNote(
                "truncated_torn_tail",
                path.name,
                f"torn last record cut off: {bad.reason}",
                offset=bad.offset,
                line=bad.line,
                removed_bytes=len(tail),
                removed_sha256=hashlib.sha256(tail).hexdigest(),
                kept_as=kept.name,
            )
        )
