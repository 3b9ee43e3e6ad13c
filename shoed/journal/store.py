"""The journal writer: one append-only, hash-chained, fsync'd JSON Lines file per shoe.

This is the shell around `shoed.journal.chain`: it owns the files, the file
descriptors and fsync. A record is on disk (written, flushed and fsync'd)
before `append` returns, so the daemon may then acknowledge the card to the
shoe and publish its events (table-game-standards.md items 13 and 19).

On opening, the journal checks the latest file of its table (and the one
before it) and recovers: a torn tail, left by a crash in the middle of a
write, is cut off and kept beside the file as evidence; corruption in the
middle of the journal raises JournalLocked and nothing is repaired (item 20).
A write or fsync error raises JournalError, leaves the file as it was before
the failed append, and ends this Journal: the caller stops the table.
"""

from __future__ import annotations

import errno
import fcntl
import hashlib
import itertools
import os
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Self

from shoed.journal import chain as ch


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

    action: str  # "truncated_torn_tail", "removed_unfinished_file" or "chain_anchored"
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


def _write_all(ops: FileOps, fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        n = ops.write(fd, view)
        if n <= 0:  # a regular file never does this; do not spin if one does
            raise OSError(errno.EIO, f"write returned {n}")
        view = view[n:]


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _utc_now() -> datetime:
    return datetime.now(UTC)


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
        self._fd: int | None = None
        self._spare: int | None = None  # the next shoe's file, opened ahead (see _hold_spare)
        self._dirfd: int | None = None
        self._path: Path | None = None
        self._shoe: str | None = None
        self._file_seq = 0
        self._jseq = 0
        self._head = ch.GENESIS
        self._offset = 0
        self._failed: str | None = None
        self.recovery: list[RecoveryNote] = []
        try:
            if not self.directory.is_dir():
                self.directory.mkdir(parents=True)
                _fsync_dir(self.directory.parent)  # the new directory's own entry is durable too
            self._dirfd = os.open(self.directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        except OSError as exc:
            raise JournalError(f"cannot open the journal directory {self.directory}: {exc}") from exc
        try:
            fcntl.flock(self._dirfd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self.close()
            raise JournalError(f"{self.directory} is in use by another journal writer") from None
        try:
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
        return self._path

    @property
    def shoe(self) -> str | None:
        return self._shoe

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

    def close(self) -> None:
        with self._mutex:
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None
            if self._spare is not None:
                os.close(self._spare)
                self._spare = None
            if self._dirfd is not None:
                os.close(self._dirfd)  # releases the lock
                self._dirfd = None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- writing -------------------------------------------------------

    def open_shoe(self, shoe_id: str) -> Path:
        """Start the file of a new shoe; its header chains to the current head."""
        if not isinstance(shoe_id, str) or not shoe_id:
            raise ch.RecordError("a shoe id is a non-empty string")
        with self._mutex:
            self._usable(need_file=False)
            opened = self._clock().astimezone(UTC)
            seq = self._file_seq + 1
            name = ch.file_name(self.table, seq, opened, shoe_id)
            head = ch.header(
                table=self.table,
                shoe=shoe_id,
                file_seq=seq,
                prev_file=self._path.name if self._path else None,
                opened_utc=opened.isoformat().replace("+00:00", "Z"),
                keyed=self.keyed,
            )
            sealed, line = ch.seal(head, 1, self._head, self._secret)
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
            except OSError as exc:
                if fd is not None:
                    os.close(fd)
                try:
                    tmp.unlink(missing_ok=True)
                except OSError:
                    pass
                self._failed = f"opening {name} failed: {exc}"
                raise JournalError(self._failed) from exc
            old_fd, old_path = self._fd, self._path
            self._fd, self._path, self._shoe = new_fd, final, shoe_id
            self._file_seq, self._jseq, self._head, self._offset = seq, 1, sealed["hash"], len(line)
            if old_fd is not None:
                os.close(old_fd)
                try:
                    os.chmod(old_path, 0o444)  # a finished shoe is read-only from now on
                except OSError:
                    pass
            self._hold_spare()
            return final

    def _hold_spare(self) -> None:
        """Open, now, the unnamed file the next shoe will be written to (O_TMPFILE): the
        journal holds the descriptor it needs, so a flood of network connections that
        takes every free descriptor cannot stop the next shoe's file from opening."""
        if self._spare is not None or not hasattr(os, "O_TMPFILE") or self._dirfd is None:
            return
        try:
            self._spare = os.open(self.directory, os.O_TMPFILE | os.O_WRONLY | os.O_CLOEXEC, 0o644)
        except OSError:  # a file system without O_TMPFILE, or no descriptor free now: the old way then
            self._spare = None

    def _open_spare(self, line: bytes, final: Path) -> int | None:
        """Write the header into the held file and give it its name; its descriptor (for
        appending) or None when no file is held. OSError as for any write of the journal."""
        fd, self._spare = self._spare, None
        if fd is None:
            return None
        try:
            _write_all(self._ops, fd, line)
            self._ops.fsync(fd)
            # linkat(AT_SYMLINK_FOLLOW) names the unnamed file; EEXIST: never over a file. (The
            # directory descriptor makes Python call linkat, not link, which would not follow.)
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
            self._usable(need_file=True)
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
            self._write(data)
            self._jseq, self._head = jseq, prev
            self._offset += len(data)
            return sealed

    def _usable(self, need_file: bool) -> None:
        if self._dirfd is None:
            raise JournalError("the journal is closed")
        if self._failed is not None:
            raise JournalError(f"the journal failed earlier and takes no more records: {self._failed}")
        if need_file and self._fd is None:
            raise JournalError("no shoe file is open: call open_shoe() first")

    def _write(self, data: bytes) -> None:
        fd, good = self._fd, self._offset
        try:
            _write_all(self._ops, fd, data)
            self._ops.fsync(fd)
        except OSError as exc:
            # Put the file back as it was before this append: no half record
            # is left, and nothing the caller was told failed stays behind.
            # After a failed fsync the page cache cannot be trusted either, so
            # the journal takes no more records (fsync errors are not retried).
            what = f"write to {self._path.name} failed: {exc}"
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
        return files

    def _recover(self) -> None:
        prefix = f".{self.table}-"
        for entry in os.scandir(self.directory):
            # A crash inside open_shoe(): the header never got its name, so the
            # file was never part of the journal.
            if entry.name.startswith(prefix) and entry.name.endswith(".jsonl.tmp"):
                os.unlink(entry.path)
                self.recovery.append(
                    RecoveryNote("removed_unfinished_file", entry.name, "a shoe file whose opening did not finish")
                )
        files = self._own_files()
        if not files:
            return
        name, path = files[-1]
        previous = None
        start = None
        if len(files) > 1:
            pname, ppath = files[-2]
            start = self._last_hash(pname, ppath)
            previous = (ppath.name, pname.file_seq)
        data = path.read_bytes()
        first: dict | None = None
        last: dict | None = None
        bad: ch.Bad | None = None
        for item in ch.chain(data, prev=start, secret=self._secret):
            if isinstance(item, ch.Bad):
                bad = item
                break
            if first is None:
                first = item
                reason = ch.check_header(item, name=name, previous=previous)
                if reason is not None:
                    raise JournalLocked(BadRecord(path.name, 1, 1, reason))
                if previous is None and name.file_seq > 1:
                    self.recovery.append(
                        RecoveryNote(
                            "chain_anchored",
                            path.name,
                            f"files before {name.file_seq} are not here; the chain is taken from {item['prev']}",
                        )
                    )
            last = item
        good_end = len(data)
        if bad is not None:
            later = ch.intact_after(data, bad.offset, self._secret)
            # A torn write leaves a bad tail and nothing intact after it. The
            # header is never cut (open_shoe writes it whole), and a line that
            # is intact on its own but does not link was not torn.
            torn = bad.line > 1 and later is None and not self._self_intact(data, bad)
            if not torn:
                why = bad.reason + (f"; line {later} after it is intact" if later else "")
                raise JournalLocked(BadRecord(path.name, bad.line, bad.jseq, why, bad.offset))
            good_end = bad.offset
            self._cut_tail(path, data, bad)
        self._path, self._shoe = path, first["shoe"]
        self._file_seq, self._jseq, self._head, self._offset = name.file_seq, last["jseq"], last["hash"], good_end
        try:
            self._fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CLOEXEC)
        except OSError as exc:
            raise JournalError(f"cannot open {path.name} for appending: {exc}") from exc

    def _self_intact(self, data: bytes, bad: ch.Bad) -> bool:
        # A line that is intact on its own but does not link (a record
        # duplicated or moved) is no torn write: lock, do not cut it off.
        end = data.find(b"\n", bad.offset)
        if end < 0:
            return False
        _, reason = ch.check_line(data[bad.offset : end], self._secret, first=False)
        return reason is None

    def _last_hash(self, name: ch.FileName, path: Path) -> str:
        """The last hash of a finished file, which must be intact throughout."""
        last = None
        for item in ch.chain(path.read_bytes(), prev=None, secret=self._secret):
            if isinstance(item, ch.Bad):
                raise JournalLocked(BadRecord(path.name, item.line, item.jseq, item.reason, item.offset))
            if last is None:
                reason = ch.check_header(item, name=name, previous=None)
                if reason is not None:
                    raise JournalLocked(BadRecord(path.name, 1, 1, reason))
            last = item
        return last["hash"]

    def _cut_tail(self, path: Path, data: bytes, bad: ch.Bad) -> None:
        tail = data[bad.offset :]
        kept = self.directory / f"{path.name}.torn-{bad.offset}"
        # The evidence is durable before the journal is cut.
        fd = os.open(kept, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o444)
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
