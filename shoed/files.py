"""Writing a file a command was told to write (a report, a scoreboard picture): whole or not at all;
and flushing a folder's entries (`fsync_folder`), which the journal and the key files need too.

A reader of the file (a browser, a surveillance archive) never sees half of it: the data goes to
a temporary file beside it, is flushed to the disk, and is renamed over it. Renaming over a path
that is no regular file would replace the node itself, so a pipe, a terminal or a device
(`--html /dev/stdout`) is written into as a stream, and a symbolic link to a file is followed
(the file it names is replaced, the link kept).
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path


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
    target = Path(os.path.realpath(path))
    tmp = target.with_name(f".{target.name}.tmp-{os.getpid()}")
    try:
        with open(tmp, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
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
