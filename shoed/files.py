"""Reading a file shoed was given (`read_regular`: a key, a secret, a journal file) without ever
waiting on it; writing a file a command was told to write (a report, a scoreboard picture): whole
or not at all; and flushing a folder's entries (`fsync_folder`), which the journal and the key
files need too.

A path given as a file may name a FIFO, a device or a folder, by mistake or by a hostile hand:
opening a FIFO waits for a writer for ever, and a device such as /dev/zero never ends. So a file
is opened without blocking, refused unless it is a regular file, and read to a limit.

A reader of the file (a browser, a surveillance archive) never sees half of it: the data goes to
a temporary file beside it (a new file under a random name, never one found there), is flushed to
the disk, and is renamed over it. Renaming over a path
that is no regular file would replace the node itself, so a pipe, a terminal or a device
(`--html /dev/stdout`) is written into as a stream, and a symbolic link to a file is followed
(the file it names is replaced, the link kept).
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO


KEY_FILE_MAX = 64 * 1024  # a key or secret file: a few hundred bytes, with comments
NOT_REGULAR = "not a regular file (a FIFO, a device or a folder)"


class NotRegular(OSError):
    """A path given as a file that is not a regular file (a FIFO, a device, a folder)."""


class TooLarge(OSError):
    """A file larger than what it may hold."""


@contextlib.contextmanager
def open_regular(path: str | os.PathLike,
                 not_regular: str = NOT_REGULAR) -> Iterator[BinaryIO]:
    """The regular file at `path` open for reading (module docstring): NotRegular with `not_regular`
    as its message for anything else, OSError as the system gives it. Opened without blocking and
    checked first, so a FIFO never stalls the reader."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise NotRegular(errno.EINVAL, not_regular, str(path))
        with os.fdopen(fd, "rb", closefd=False) as f:
            yield f
    finally:
        os.close(fd)


def read_regular(path: str | os.PathLike, limit: int | None = None,
                 not_regular: str = NOT_REGULAR) -> bytes:
    """The bytes of the regular file at `path` (`open_regular`); TooLarge past `limit` bytes."""
    with open_regular(path, not_regular) as f:
        data = f.read() if limit is None else f.read(limit + 1)
    if limit is not None and len(data) > limit:
        raise TooLarge(errno.EFBIG, f"larger than {limit:,} bytes", str(path))
    return data


def what_is_at(path: str | os.PathLike) -> str | None:
    """What is at `path`, through any link: "file" (a regular file), "folder", "other" (a FIFO, a
    device, a socket), or None where nothing is (no such entry, a part of the path that is no
    folder, a loop of links, a path no file can have: a NUL in it). What keeps the answer from
    being known, a folder on the way this user may not enter above all, is the OSError as the
    system gives it, for the caller to report in one line naming the path (Path.is_file() and its
    kin raise it too, from wherever they are asked)."""
    try:
        mode = os.stat(path).st_mode
    except OSError as exc:
        if exc.errno in (errno.ENOENT, errno.ENOTDIR, errno.ELOOP):
            return None
        raise
    except ValueError:
        return None
    if stat.S_ISREG(mode):
        return "file"
    return "folder" if stat.S_ISDIR(mode) else "other"


def is_stream(path: str | os.PathLike) -> bool:
    """Whether `path` is an existing pipe, terminal or device: written into as a stream (there is no
    file there to replace or to keep from being overwritten)."""
    try:
        mode = os.stat(path).st_mode  # through any link
    except OSError:
        return False
    return not stat.S_ISREG(mode) and not stat.S_ISDIR(mode)


def write_whole(path: str | os.PathLike, data: bytes) -> None:
    """`data` into the file at `path`, whole or not at all (module docstring); OSError as the
    system gives it (no folder, no room, no permission)."""
    path = Path(path)
    try:
        mode = os.stat(path).st_mode  # through any link
    except FileNotFoundError:
        mode = None
    if mode is not None and stat.S_ISDIR(mode):
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(path))
    if mode is not None and not stat.S_ISREG(mode):
        with open(path, "wb") as stream:
            stream.write(data)
        return
    replace_whole(Path(os.path.realpath(path)), data)


def replace_whole(target: str | os.PathLike, data: bytes, mode: int | None = None) -> None:
    """`data` into a new file renamed over `target` (a link there is replaced, never followed), whole
    or not at all: the new file is created beside it under a random name that nothing may already
    hold (O_EXCL, O_NOFOLLOW), so a file or a link planted there is never written through. `mode`:
    the file's exact mode whatever the umask; None, 0o666 less the umask, as `open` makes a file."""
    target = Path(target)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    for _ in range(100):
        tmp = target.with_name(f".{target.name}.{secrets.token_hex(8)}.tmp")
        try:
            fd = os.open(tmp, flags, 0o666 if mode is None else 0o600)
            break
        except FileExistsError:
            continue
    else:
        raise FileExistsError(errno.EEXIST, "no free temporary name", str(target.parent))
    try:
        try:
            if mode is not None:
                os.fchmod(fd, mode)
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, target)
    except OSError:
        tmp.unlink(missing_ok=True)
        raise
    fsync_folder(target.parent)


def fsync_folder(path: str | os.PathLike) -> None:
    """Flush a folder's entries to the disk: a file created, renamed or linked in it survives a
    power cut only once its folder is flushed too."""
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def why_not_writable(path: str | os.PathLike[str]) -> str:
    """Why this process may not write into the directory `path`: its file system is mounted read-only
    (no permission helps), or the user this runs as lacks the permission."""
    try:
        if os.statvfs(path).f_flag & os.ST_RDONLY:
            return "it is on a read-only file system (mounted ro: remount it read-write)"
    except OSError:
        pass
    return f"it is not writable by the user this runs as (uid {os.geteuid()})"
