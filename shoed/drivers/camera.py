"""The `camera` source: a camera over the shoe's exit, as a driver.

It wraps `shoed.vision.source.CameraSource` (OpenCV, imported only here) and
runs it in a thread of its own, so neither opening the camera nor recognising
cards ever delays the shoe's frames in the daemon's loop: `open` checks the
options and loads the card reader's model (a model file that cannot be used is
a DriverError, one line), then starts the thread, which opens the camera; a
camera that cannot be opened (missing, refused, a stream that never answers,
a pipe) is reported lost, with the reason, and tried again with back-off.
`poll` hands over what the thread has read. A
card the camera could not identify is an `unreadable` reading with the reason,
never a guess. URL: a device index (`0`), a device node (`/dev/video0`), a
video file, a folder of images, or an rtsp:// or http:// stream. Options:
`realtime` (pace files at their frame rate, default true for files so a
recorded deal plays as it was dealt), `roi` ([x, y, width, height]: the
region where a card comes to rest under the camera) and `colour_camera` (true:
the camera is a colour camera, so a black card in a view with no colour in it,
on grey cloth, is read and not refused as a monochrome camera's; default
false: the empty view's cloth tells). A frame the reader cannot take (a `roi`
that does not fit it) reports the camera lost, with the reason; it is tried
again with back-off (0.2 s, doubling to 5 s) and restored when its frames read
(a camera reopened is restored only once a frame is read from it).
"""

from __future__ import annotations

import queue
import threading
import time
from typing import TYPE_CHECKING, Any

from shoed.backoff import Backoff
from shoed.drivers.base import Driver, DriverError, Reading

if TYPE_CHECKING:
    from shoed.vision.source import CameraSource


BACKOFF_FIRST, BACKOFF_MAX = 0.2, 5.0  # seconds between tries of a camera whose frames failed


class CameraDriver(Driver):
    name = "camera"

    def __init__(self, url: str, **options) -> None:
        super().__init__(url, **options)
        self._queue: queue.Queue[Reading] = queue.Queue()
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._camera: CameraSource | None = None
        self._connected: bool | None = None

    def open(self) -> None:
        """Check the options, load the card reader's model and start the camera's thread, which
        opens the camera: opening never waits on the camera here (a stream that accepts and says
        nothing holds its open for seconds, a pipe for ever), so the daemon's loop never does."""
        from shoed.vision.model import ModelError
        from shoed.vision.recognize import Recognizer
        from shoed.vision.source import CameraSource
        from shoed.vision.watch import WatchConfig

        if self._thread is not None:
            return
        roi = self.options.get("roi")
        colour_camera = self.options.get("colour_camera", False)
        if not isinstance(colour_camera, bool):
            raise DriverError(f"camera {self.url}: colour_camera is true or false, not {colour_camera!r}")
        try:
            box = None
            if roi:
                x, y, width, height = (int(v) for v in roi)
                box = (x, y, width, height)
            config = WatchConfig(roi=box, colour_camera=colour_camera)
        except (TypeError, ValueError) as exc:
            raise DriverError(f"camera {self.url}: roi is [x, y, width, height] in pixels ({exc})") from None
        try:
            recognizer = Recognizer()
        except ModelError as exc:
            raise DriverError(f"camera {self.url}: {exc}") from None
        self._camera = CameraSource(self.url, config, recognizer, realtime=bool(self.options.get("realtime", True)))
        self._stop = threading.Event()  # the thread's own: one left held in an open by close() stops when it returns
        self._connected = None
        self._thread = threading.Thread(target=self._run, args=(self._camera, self._stop), name=f"camera {self.url}",
                                        daemon=True)
        self._thread.start()

    def _link(self, state: str, text: str | None = None) -> None:
        self._queue.put(Reading(kind="link", source=self.source, raw=b"", offset=0, mono_ns=time.monotonic_ns(),
                                utc_ns=time.time_ns(), link=state, text=text))

    def _lost(self, text: str) -> None:
        if self._connected is not False:
            self._link("lost", text)
        self._connected = False

    def _run(self, camera: CameraSource, stop: threading.Event) -> None:
        """The camera's thread: it alone opens, reads and releases the camera."""
        try:
            self._watch(camera, stop)
        finally:
            camera.close()

    def _watch(self, camera: CameraSource, stop: threading.Event) -> None:
        backoff = Backoff(BACKOFF_FIRST, BACKOFF_MAX)
        opened = False
        while not stop.is_set():
            if not opened:
                try:
                    camera.open()
                except Exception as exc:  # noqa: BLE001 - the thread reports, the daemon decides
                    # a camera, video or stream that cannot be opened (CameraError: missing, refused, a
                    # pipe), or a fault of OpenCV's: the camera is lost, tried again with back-off
                    self._lost(f"cannot open the camera: {exc}")
                    if stop.wait(backoff.failed()):
                        return
                    continue
                if stop.is_set():
                    return  # closed while the camera was being opened
                opened = True
                if self._connected is None:  # the first open; after a failed one, restored with a frame read
                    self._link("connected")
                    self._connected = True
            try:
                reads = camera.poll(0.05)
            except Exception as exc:  # noqa: BLE001 - the thread reports, the daemon decides
                # a frame the reader cannot take (a region of interest that no longer fits it, or a
                # fault): the camera is lost, and tried again with back-off until its frames read
                self._lost(f"camera failed: {exc}")
                if stop.wait(backoff.failed()):
                    return
                continue
            if stop.is_set():
                return
            backoff.succeeded()
            for read in reads:
                utc = time.time_ns() - (time.monotonic_ns() - read.mono_ns)
                common: dict[str, Any] = dict(source=self.source, raw=b"", offset=read.frame_index,
                                              mono_ns=read.mono_ns, utc_ns=utc, confidence=float(read.confidence))
                if read.card:
                    self._queue.put(Reading(kind="card", card=read.card, **common))
                else:
                    self._queue.put(Reading(kind="unreadable", code=read.reason, text=read.reason, **common))
            if camera.connected and self._connected is not True:  # frames read again
                self._connected = True
                self._link("restored")
            elif camera.lost and self._connected is not False:
                self._lost("the camera sends no frames")
            if camera.finished:
                return  # a file or folder played to its end: the camera saw all it will see

    def poll(self, timeout: float) -> list[Reading]:
        out: list[Reading] = []
        try:
            out.append(self._queue.get(timeout=max(0.0, timeout)) if timeout > 0 else self._queue.get_nowait())
            while True:
                out.append(self._queue.get_nowait())
        except queue.Empty:
            pass
        return out

    def close(self) -> None:
        """Stop the camera's thread, which releases the camera; a thread held in an open or a read
        that does not return within 5 s releases it when that returns."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(5)
            self._thread = None
        self._camera = None
