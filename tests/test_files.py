"""`shoed.files.write_whole`: a report or a scoreboard picture written whole or not at all, on
real files, pipes, links and devices; `read_regular`: a file shoed was given read without ever
waiting on it.

Renaming a temporary file over a path that is no regular file would replace the node itself
(`--html /dev/stdout` run as root turned /dev/stdout into a file): a pipe, a terminal or a device
is written into as a stream, a link to a file followed."""

from __future__ import annotations

import os
import stat
import threading

import pytest

from shoed.files import NotRegular, TooLarge, read_regular, write_whole


def test_a_file_is_replaced_whole_and_no_temporary_file_is_left(tmp_path):
    path = tmp_path / "report.html"
    path.write_text("the old report")
    write_whole(path, b"<html>the new report</html>")
    assert path.read_bytes() == b"<html>the new report</html>"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.html"]


@pytest.mark.timeout(30)
def test_a_pipe_is_written_into_and_stays_a_pipe(tmp_path):
    pipe = tmp_path / "report.html"
    os.mkfifo(pipe)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(pipe.read_bytes()))
    reader.start()
    write_whole(pipe, b"<html>through the pipe</html>")
    reader.join(timeout=20)
    assert got == [b"<html>through the pipe</html>"]
    assert stat.S_ISFIFO(os.lstat(pipe).st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.html"]


def test_a_link_to_a_file_is_followed_and_kept(tmp_path):
    (tmp_path / "archive").mkdir()
    target = tmp_path / "archive" / "shoe-42.html"
    target.write_text("old")
    link = tmp_path / "latest.html"
    link.symlink_to(target)
    write_whole(link, b"new")
    assert link.is_symlink() and target.read_bytes() == b"new"
    assert sorted(p.name for p in (tmp_path / "archive").iterdir()) == ["shoe-42.html"]


def test_a_device_that_takes_no_bytes_is_an_error_and_stays_a_device():
    with pytest.raises(OSError) as caught:
        write_whole("/dev/full", b"x" * 100_000)
    assert caught.value.errno == 28  # ENOSPC
    assert stat.S_ISCHR(os.stat("/dev/full").st_mode)


def test_a_folder_is_an_error(tmp_path):
    with pytest.raises(IsADirectoryError):
        write_whole(tmp_path, b"x")


@pytest.mark.timeout(30)
@pytest.mark.parametrize("kind", ["fifo", "device", "folder"])
def test_what_is_no_regular_file_is_refused_at_once(tmp_path, kind):
    path = tmp_path / "given.key"
    if kind == "fifo":
        os.mkfifo(path)  # no writer: a plain open would wait for one for ever
    elif kind == "device":
        path.symlink_to("/dev/zero")  # never ends
    else:
        path.mkdir()
    with pytest.raises(NotRegular, match="not a regular file"):
        read_regular(path, 1024)


def test_a_file_is_read_to_its_limit(tmp_path):
    path = tmp_path / "secret"
    path.write_bytes(b"x" * 1024)
    assert read_regular(path, 1024) == b"x" * 1024
    path.write_bytes(b"x" * 1025)
    with pytest.raises(TooLarge, match="larger than 1,024 bytes"):
        read_regular(path, 1024)
    with pytest.raises(FileNotFoundError):
        read_regular(tmp_path / "missing", 1024)


@pytest.mark.timeout(30)
def test_a_fifo_named_like_a_journal_file_stalls_neither_the_catch_up_nor_the_witness(tmp_path):
    """The daemon's catch-up thread reads where each journal file starts, and `journal verify
    --witness` each file's header: a FIFO in the journal directory is passed over, never waited on."""
    from shoed.daemon.loop import _checkpoint_seq
    from shoed.witness.compare import _header

    fifo = tmp_path / "t1-000002-20261203T000000Z-20261203T000000-1.jsonl"
    os.mkfifo(fifo)
    assert _checkpoint_seq(fifo) == -1
    assert _header(fifo) is None
