"""The camera as a card source: frames in, one CameraRead per card dealt out.

`CameraSource` reads frames from anything OpenCV's VideoCapture opens (a device
index such as "0", a device node such as /dev/video0, a video file, an RTSP or
HTTP stream) or from a folder of still images taken in name order, and feeds
them to a `CardWatcher` (shoed.vision.watch), which notices each card and
identifies it once. Its interface is a shoe driver's: `open()`, `poll(timeout)`
answering a list of reads, `close()`; opening a missing device or file is a
`CameraError` with one clear line.

Live cameras that stop delivering frames are reopened with back-off (the
source reports `connected` False meanwhile, and True again only once a frame
has been read after the reopening, not when the capture merely opens); files
and folders end, after which `finished` is True and `poll` answers nothing
more. A path that is neither a regular file, a character device nor a folder
(a pipe, a socket) is refused before it is opened: a pipe's open would wait
for a writer for ever.
"""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Callable, Iterator
from typing import Any

import cv2
import numpy as np

from shoed.backoff import Backoff
from shoed.vision import picture
from shoed.vision.recognize import Recognizer
from shoed.vision.watch import CameraRead, CardWatcher, WatchConfig

IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".bmp", ".tif", ".tiff", ".webp")
STREAM_SCHEMES = ("rtsp://", "rtsps://", "http://", "https://", "udp://", "tcp://")
REOPEN_FIRST, REOPEN_MOST = 0.5, 10.0  # seconds between tries of a live camera that went away

__all__ = ["CameraError", "CameraRead", "CameraSource", "WatchConfig"]


class CameraError(Exception):
    """The camera, video or folder cannot be used: one clear line saying why."""


def _too_large(url: str, width: int, height: int) -> str:
    return (f"frames of {width} x {height} pixels from {url}: at most {picture.MAX_PIXELS // 1_000_000} million "
            f"are read (a camera over the shoe sends 1280 x 720 or less)")


class _Folder:
    """Still images in a folder, in name order, read like a video."""

    def __init__(self, path: str):
        names = sorted(n for n in os.listdir(path) if n.lower().endswith(IMAGE_SUFFIXES))
        if not names:
            raise CameraError(f"no images in folder {path} (looked for {', '.join(IMAGE_SUFFIXES)})")
        self.files = [os.path.join(path, n) for n in names]
        self.position = 0

    def read(self) -> tuple[bool, np.ndarray | None]:
        while self.position < len(self.files):
            path = self.files[self.position]
            self.position += 1
            try:
                return True, picture.read(path)
            except picture.PictureError:  # a file that is not a picture, or one too large to decode
                continue
        return False, None

    def release(self) -> None:
        pass


class CameraSource:
    """Cards dealt under a camera, one CameraRead each.

    `url`: "0" (or 0) for the first camera, /dev/video0, a video file, a folder
    of images, rtsp://... or http://.... `realtime` paces files at their frame
    rate (default: as fast as they decode). `clock` stamps frames (monotonic
    nanoseconds); tests may pass their own."""

    def __init__(
        self,
        url: str | int,
        config: WatchConfig | None = None,
        recognizer: Recognizer | None = None,
        realtime: bool = False,
        clock: Callable[[], int] = time.monotonic_ns,
        open_timeout: float = 10.0,
    ):
        self.url = str(url)
        self.config = config or WatchConfig()
        self.recognizer = recognizer
        self.realtime = realtime
        self.clock = clock
        self.open_timeout = open_timeout
        self.watcher: CardWatcher | None = None
        self.frame_index = -1
        self.finished = False
        self.connected = False
        self._capture: Any = None  # a cv2.VideoCapture, or the frames of a folder (_open_capture)
        self._kind = ""
        self._fps = 0.0
        self._failures = 0
        self._retry_at = 0.0
        self._backoff = Backoff(REOPEN_FIRST, REOPEN_MOST)
        self._started = 0.0

    @property
    def source(self) -> str:
        return f"camera:{self.url}"

    # ----- opening ---------------------------------------------------------

    def open(self) -> None:
        """Open the camera, file or folder; raise CameraError when it cannot be used."""
        if self.watcher is None:
            self.watcher = CardWatcher(self.config, self.recognizer or Recognizer())
        self._capture, self._kind = self._open_capture()
        if self._kind != "folder":  # a folder's pictures are sized one by one (picture.read)
            width, height = (int(self._capture.get(p)) for p in (cv2.CAP_PROP_FRAME_WIDTH, cv2.CAP_PROP_FRAME_HEIGHT))
            if not picture.fits(width, height):
                self.close()
                raise CameraError(_too_large(self.url, width, height))
        self.connected = True
        self.finished = False
        self._started = time.monotonic()
        fps = self._capture.get(cv2.CAP_PROP_FPS) if self._kind != "folder" else 0.0
        self._fps = fps if fps and fps > 0 else 0.0

    def _open_capture(self):
        url = self.url
        if url.isdigit():
            cap = cv2.VideoCapture(int(url))
            if not cap.isOpened():
                raise CameraError(f"no camera at device index {url}: is it plugged in (see v4l2-ctl --list-devices)?")
            return cap, "device"
        if url.startswith(STREAM_SCHEMES):
            ms = int(self.open_timeout * 1000)
            params = [cv2.CAP_PROP_OPEN_TIMEOUT_MSEC, ms, cv2.CAP_PROP_READ_TIMEOUT_MSEC, ms]
            cap = cv2.VideoCapture(url, cv2.CAP_ANY, params)
            if not cap.isOpened():
                raise CameraError(f"cannot open stream {url}: unreachable, refused or not a video stream")
            return cap, "stream"
        path = url.removeprefix("file://")
        try:
            mode = os.stat(path).st_mode  # never opened to be told: a pipe's open waits for a writer
        except FileNotFoundError:
            raise CameraError(f"no such camera, video or folder: {path}") from None
        except OSError as exc:
            raise CameraError(f"cannot use {path}: {exc.strerror or exc}") from None
        if stat.S_ISDIR(mode):
            return _Folder(path), "folder"
        if not (stat.S_ISREG(mode) or stat.S_ISCHR(mode)):
            raise CameraError(f"not a camera, video or folder but {picture.kind_of(mode)}: {path}")
        if not os.access(path, os.R_OK):
            raise CameraError(f"permission denied on {path}: add the daemon's user to group 'video' for cameras")
        live = path.startswith("/dev/")
        cap = cv2.VideoCapture(path, cv2.CAP_V4L2) if live else cv2.VideoCapture(path)
        if not cap.isOpened():
            what = "camera" if live else "video (or it is not a video OpenCV can decode)"
            raise CameraError(f"cannot open {what}: {path}")
        return cap, "device" if live else "file"

    @property
    def lost(self) -> bool:
        """A live camera whose frames failed: released, and reopened with back-off by `poll`."""
        return self.watcher is not None and self._capture is None and not self.finished

    def close(self) -> None:
        """Release the camera. Safe to call twice."""
        if self._capture is not None:
            self._capture.release()
            self._capture = None
        self.connected = False

    def __enter__(self) -> CameraSource:
        self.open()
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ----- reading ----------------------------------------------------------

    def poll(self, timeout: float) -> list[CameraRead]:
        """Read frames for at most about `timeout` seconds (a frame being read
        is finished first); answer as soon as a card has been read."""
        if self.watcher is None:
            raise CameraError("camera source not opened: call open() first")
        deadline = time.monotonic() + max(0.0, timeout)
        out: list[CameraRead] = []
        while not self.finished:
            if self._capture is None:
                if not self._reopen():
                    time.sleep(max(0.0, min(deadline - time.monotonic(), self._retry_at - time.monotonic(), 0.1)))
                    if time.monotonic() >= deadline:
                        break
                    continue
            ok, frame = self._capture.read()
            stamp = self.clock()
            if not ok or frame is None:
                self._on_failure()
            else:
                if not picture.fits(frame.shape[1], frame.shape[0]):  # a stream gone over to huge frames
                    raise CameraError(_too_large(self.url, frame.shape[1], frame.shape[0]))
                self._failures = 0
                self.connected = True  # after a reopening: restored once a frame is read
                self.frame_index += 1
                out += self.watcher.feed(frame, self.frame_index, stamp)
                if self.realtime and self._fps and self._kind in ("file", "folder"):
                    lag = self._started + (self.frame_index + 1) / self._fps - time.monotonic()
                    if lag > 0:
                        time.sleep(min(lag, max(0.0, deadline - time.monotonic())))
            if out or time.monotonic() >= deadline:
                break
        return out

    def reads(self, timeout: float = 1.0) -> Iterator[CameraRead]:
        """Every read until a file or folder ends (for live cameras: forever)."""
        while not self.finished:
            yield from self.poll(timeout)

    def _on_failure(self) -> None:
        if self._kind in ("file", "folder"):
            self.finished = True
            self.close()
            return
        self._failures += 1
        if self._failures >= 5:  # the camera went away: reopen it with back-off
            self.close()
            self._retry_at = time.monotonic() + self._backoff.failed()

    def _reopen(self) -> bool:
        if time.monotonic() < self._retry_at:
            return False
        try:
            self._capture, self._kind = self._open_capture()
        except CameraError:
            self._retry_at = time.monotonic() + self._backoff.failed()
            return False
        # `connected` stays False until a frame is read: a stream that opens and sends nothing
        # is not a camera restored
        self._failures = 0
        self._backoff.succeeded()
        return True
