"""Opening the camera never holds the daemon's loop: the camera driver's `open` checks its options,
loads the card reader's model and starts the camera's thread, which opens the camera. A stream that
accepts and says nothing, or a pipe given as the camera, leaves `open` and `poll` prompt; a pipe is
refused at once (never opened: its open waits for a writer), reported as the camera lost on one line.
A model file that cannot be used is a DriverError (the daemon runs on with the shoe). A camera
reopened is restored only once a frame is read from it."""

from __future__ import annotations

import os
import socket
import threading
import time

import numpy as np
import pytest

from shoed.drivers import DriverError, driver_class

pytest.importorskip("cv2", reason="the camera driver needs OpenCV (installed with the test extra)")


def _readings_until(camera, seconds: float, done) -> list:
    readings: list = []
    end = time.monotonic() + seconds
    while time.monotonic() < end and not done(readings):
        readings += camera.poll(0.1)
    return readings


def _links(readings) -> list[tuple[str, str | None]]:
    return [(r.link, r.text) for r in readings if r.kind == "link"]


def test_a_pipe_as_the_camera_is_refused_at_once_and_never_opened(tmp_path):
    from shoed.vision.source import CameraError, CameraSource

    fifo = tmp_path / "camera"
    os.mkfifo(fifo)
    outcome: list = []

    def open_it() -> None:
        try:
            CameraSource(str(fifo)).open()
        except CameraError as exc:
            outcome.append(str(exc))

    thread = threading.Thread(target=open_it, daemon=True)
    thread.start()
    thread.join(10)
    try:
        assert not thread.is_alive(), "opening a pipe as the camera waits for a writer"
    finally:
        _release(fifo)
    assert outcome == [f"not a camera, video or folder but a pipe: {fifo}"]


def _release(fifo) -> None:
    """Let go a reader held in the pipe's open (a writer comes and goes)."""
    try:
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
    except OSError:
        pass


def test_the_driver_given_a_pipe_returns_at_once_and_reports_the_camera_lost(tmp_path):
    fifo = tmp_path / "camera"
    os.mkfifo(fifo)
    camera = driver_class("camera")(str(fifo))
    opening = threading.Thread(target=camera.open, daemon=True)  # the test's own guard: never held here
    try:
        opening.start()
        opening.join(2)
        assert not opening.is_alive(), "the driver's open waited on the pipe"
        start = time.monotonic()
        readings = _readings_until(camera, 10, lambda got: _links(got))
        assert time.monotonic() - start < 10
    finally:
        _release(fifo)
        opening.join(5)
        closing = time.monotonic()
        camera.close()
        assert time.monotonic() - closing < 2
    (link, text), = _links(readings)
    assert link == "lost" and "a pipe" in text and "\n" not in text


@pytest.fixture
def silent_server():
    """A TCP server that accepts every connection and never says a word."""
    server = socket.create_server(("127.0.0.1", 0))
    accepted: list[socket.socket] = []
    stop = threading.Event()

    def serve() -> None:
        server.settimeout(0.1)
        while not stop.is_set():
            try:
                accepted.append(server.accept()[0])
            except (TimeoutError, OSError):
                continue

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield server.getsockname()[1], accepted
    stop.set()
    thread.join(2)
    for connection in accepted:
        connection.close()
    server.close()


@pytest.mark.parametrize("scheme", ["rtsp", "http"])
def test_a_stream_that_accepts_and_says_nothing_never_holds_open_or_poll(silent_server, scheme):
    port, accepted = silent_server
    camera = driver_class("camera")(f"{scheme}://127.0.0.1:{port}/cam")
    try:
        start = time.monotonic()
        camera.open()
        assert time.monotonic() - start < 2, "open waited on the stream"
        end = time.monotonic() + 3
        while time.monotonic() < end:
            before = time.monotonic()
            readings = camera.poll(0.1)
            assert time.monotonic() - before < 1, "poll waited on the stream"
            assert not [r for r in readings if r.kind == "link" and r.link == "connected"]
        assert accepted, "the camera's thread connected to the stream"
    finally:
        for connection in accepted:  # the stream hangs up: the camera's open gives up
            connection.close()
        camera.close()


def test_a_model_file_that_cannot_be_used_is_a_driver_error_of_one_line(tmp_path, monkeypatch):
    from shoed.vision import recognize
    from shoed.vision.model import IndexModel

    broken = tmp_path / "index_model.npz"
    broken.write_bytes(b"PK\x03\x04 not a whole archive")
    monkeypatch.setattr(recognize, "default_model", lambda: IndexModel.load(str(broken)))
    camera = driver_class("camera")(str(tmp_path))
    with pytest.raises(DriverError) as caught:
        camera.open()
    message = str(caught.value)
    assert f"index model at {broken} is not usable" in message and "\n" not in message
    camera.close()


def test_a_camera_reopened_is_restored_only_once_a_frame_is_read(monkeypatch):
    """A live stream that stops sending is released and reopened: the reopening alone is no
    camera restored (a stream that opens and sends nothing would flap lost and restored); the
    first frame read after it is."""
    from shoed.vision import source as S

    frame = np.full((120, 160, 3), 90, np.uint8)
    sending = [1]  # frames the stream sends before it stops; None: it sends again, for good

    class Capture:
        """A live stream: the frames it sends, then reads that fail."""

        def __init__(self) -> None:
            self.opened = True

        def read(self):
            if sending[0] is None:
                return True, frame
            if sending[0]:
                sending[0] -= 1
                return True, frame
            time.sleep(0.05)  # a read that waits for a frame that does not come
            return False, None

        def get(self, prop):
            return {S.cv2.CAP_PROP_FRAME_WIDTH: 160, S.cv2.CAP_PROP_FRAME_HEIGHT: 120}.get(prop, 0.0)

        def release(self) -> None:
            self.opened = False

    opened: list[Capture] = []

    def open_capture(self):
        opened.append(Capture())
        return opened[-1], "stream"

    monkeypatch.setattr(S.CameraSource, "_open_capture", open_capture)
    monkeypatch.setattr(S, "REOPEN_FIRST", 0.2)  # the driver sees the camera lost between reopenings
    camera = driver_class("camera")("rtsp://camera.invalid/stream")
    try:
        camera.open()
        readings = _readings_until(camera, 10, lambda got: len(opened) >= 3)
        assert [link for link, _ in _links(readings)] == ["connected", "lost"], "reopened, no frame: not restored"
        sending[0] = None
        readings += _readings_until(camera, 10, lambda got: _links(got))
    finally:
        camera.close()
    assert [link for link, _ in _links(readings)] == ["connected", "lost", "restored"]
