"""Noticing each card as it is dealt through a camera's region of interest.

The camera over the shoe's exit sees the same empty patch of table most of the
time; a card slides in, lies still for a moment, and leaves before the next.
`CardWatcher` follows that with a cheap test per frame (the region shrunk to a
thumbnail, compared in grey with the empty background and with the previous
frame) and runs the full identification only once per card, when it has lain
still for a few frames. So a card is reported once, however long it lies
there, and the next one only after the region was empty again. Another card
found where the card reported lies, the region never seen empty between them
(swept off and the next put down within fewer than `empty_frames` frames), is
reported as a card not read, reason `card_replaced`: which cards were dealt
the camera cannot tell, and it never passes one over in silence.

States: empty -> arriving (something differs from the background) -> present
(it lay still and was identified) -> empty (the region matched the background
for a few frames). While empty, the background follows slow changes of light.

A camera that goes over to frames of other proportions (another resolution,
no `roi` set) starts afresh, its first such frame the empty table; with a
`roi` that no longer fits the frames, the frame is refused with one line.

A thing that lies still but is not card-shaped (a hand resting in view) is not
reported; the watcher looks again when the scene changes, and if it stays
(light switched on, a chip left lying) it becomes the new empty background
after `relearn_frames`. A card that is found
but cannot be read is tried on a few more still frames, then reported as
unreadable (card None, with the reason).

The region's mean colour when last seen empty (the cloth) is kept too: where
the card's print as bright as the cloth has another colour (green felt beside
black print), the camera sees colour, and a card whose own picture shows none
(a black card filling the region) is read (recognize.scene_shows_colour); else
such a picture is refused, as a monochrome camera's would be, unless the
camera is known to be a colour camera (`WatchConfig.colour_camera`: on grey
cloth a colour camera's black card fills the region with no colour in view);
even so, a frame whose channels are one (a grey frame, or a camera's
monochrome night mode) shows no colour.

Deterministic: frames and their timestamps come in as data; no clock, no I/O.
"""

from __future__ import annotations

from typing import Any
from dataclasses import dataclass

import cv2
import numpy as np

from shoed.vision.recognize import Identification, Recognizer, scene_shows_colour

EMPTY, ARRIVING, PRESENT = "empty", "arriving", "present"
# The reason of a CameraRead for a card found where another was reported, with the region never seen
# empty between them: a card dealt without the camera seeing it come, or put down over the last.
CARD_REPLACED = "card_replaced"


@dataclass(frozen=True)
class WatchConfig:
    """Tuning of the change detection. Defaults suit 25-60 fps cameras."""

    roi: tuple[int, int, int, int] | None = None  # x, y, width, height in frame pixels; None: the whole frame
    thumb_side: int = 96  # the region is compared as a thumbnail this wide (long side)
    pixel_change: int = 28  # grey-level difference that makes a thumbnail pixel "changed"
    present_share: float = 0.12  # share of changed pixels (against the background) meaning "something is there"
    still_share: float = 0.01  # at most this share changed since the previous frame counts as "still"
    still_frames: int = 4  # frames in a row still before the card is read
    empty_frames: int = 3  # frames in a row like the background before the region counts as empty
    background_rate: float = 0.05  # how fast the empty background follows the light
    read_attempts: int = 3  # still frames tried before a found card is reported unreadable
    relearn_frames: int = 90  # still frames without a card after which the view is the new empty background
    colour_camera: bool = False  # the camera is a colour camera: a card in a picture with no colour in view is read

    def __post_init__(self) -> None:
        if self.roi is not None:
            if len(self.roi) != 4 or any(int(v) != v for v in self.roi) or self.roi[2] <= 0 or self.roi[3] <= 0:
                raise ValueError(f"roi is x,y,width,height in pixels with a positive size, not {self.roi!r}")
        if min(self.still_frames, self.empty_frames, self.read_attempts, self.relearn_frames) < 1:
            raise ValueError("still_frames, empty_frames, read_attempts and relearn_frames are at least 1")


@dataclass(frozen=True)
class CameraRead:
    """One card dealt, as the camera read it: `card` ("TD") or None with `reason`."""

    card: str | None
    confidence: float
    reason: str | None
    frame_index: int  # the frame the card was read from
    mono_ns: int  # that frame's timestamp (monotonic clock of the reader)
    corners: list[list[float]] | None = None  # the card in frame pixels

    def to_json(self) -> dict:
        out: dict[str, Any] = {"card": self.card, "confidence": round(float(self.confidence), 4), "frame_index": self.frame_index,
               "mono_ns": self.mono_ns}
        if self.reason is not None:
            out["reason"] = self.reason
        if self.corners is not None:
            out["corners"] = self.corners
        return out


class CardWatcher:
    """Feed it frames in order; it answers a CameraRead per card dealt."""

    def __init__(self, config: WatchConfig | None = None, recognizer: Recognizer | None = None):
        self.config = config or WatchConfig()
        self.recognizer = recognizer or Recognizer()
        self.state = EMPTY
        self.frames = 0
        self.identifications = 0  # full identifications run (the expensive part)
        self._background: np.ndarray | None = None
        self._previous: np.ndarray | None = None
        self._still = 0
        self._empty = 0
        self._attempts = 0
        self._last_failure: Identification | None = None
        self._need_motion = False  # after "no card found": wait for the scene to move before looking again
        self._idle = 0  # still frames since "no card found", or away from the card as read
        self._settled: np.ndarray | None = None  # the thumbnail when the card was read
        self._reported: str | None = None  # the card reported for what lies there (None: reported unreadable)
        # The region's mean colour (BGR) when last seen empty (the cloth, just before the card came):
        # a card filling the region with no colour in it (a black card) is read where the cloth's
        # colour shows that the camera sees colour. Set with the background, from the first frame.
        self._cloth = np.zeros(3)

    def region(self, frame: np.ndarray) -> np.ndarray:
        roi = self.config.roi
        if roi is None:
            return frame
        x, y, w, h = roi
        fh, fw = frame.shape[:2]
        if x < 0 or y < 0 or x + w > fw or y + h > fh:
            raise ValueError(f"roi {roi} does not fit in a {fw}x{fh} frame")
        return frame[y : y + h, x : x + w]

    def _thumb(self, region: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The region as a grey thumbnail (blurred a little) to compare frames by, and its mean colour."""
        h, w = region.shape[:2]
        f = self.config.thumb_side / max(h, w)
        size = (max(8, round(w * f)), max(8, round(h * f)))
        # shrink in two steps: a cheap decimation, then an area average (a 720p frame costs well under 1 ms)
        step = max(1, int(1 / f) // 2)
        small = region[::step, ::step] if step > 1 else region
        small = cv2.resize(small, size, interpolation=cv2.INTER_AREA)
        grey = cv2.cvtColor(small, cv2.COLOR_BGR2GRAY) if small.ndim == 3 else small
        return cv2.GaussianBlur(grey, (3, 3), 0).astype(np.int16), np.array(cv2.mean(small)[:3])

    def feed(self, frame: np.ndarray, frame_index: int, mono_ns: int) -> list[CameraRead]:
        """Take the next frame; answer the cards it completes (zero or one)."""
        cfg = self.config
        self.frames += 1
        region = self.region(frame)
        thumb, colour = self._thumb(region)
        if self._background is None or self._background.shape != thumb.shape:
            # the first frame, or the camera's frames changed their proportions (it went over to
            # another resolution): what is in view now is the empty table, as at the start
            self._empty_view(thumb, colour)
            self._previous = thumb
            self.state, self._still, self._empty, self._idle, self._need_motion = EMPTY, 0, 0, 0, False
            return []
        changed = float(np.mean(np.abs(thumb - self._background) > cfg.pixel_change))
        moving = float(np.mean(np.abs(thumb - self._previous) > cfg.pixel_change))
        self._previous = thumb
        out: list[CameraRead] = []
        occupied = changed >= cfg.present_share
        vacant = changed < cfg.present_share * 0.5
        if self.state == EMPTY:
            if occupied:
                self.state, self._still, self._attempts, self._last_failure = ARRIVING, 0, 0, None
                self._need_motion = False
            else:
                cv2.accumulateWeighted(thumb.astype(np.float32), self._background, cfg.background_rate)
                self._cloth = colour  # the last empty view's: a camera turned monochrome shows at once
                return out
        if self.state == ARRIVING:
            if vacant:
                self._empty += 1
                if self._empty >= cfg.empty_frames:
                    out += self._give_up(frame_index, mono_ns)
                    self.state, self._empty = EMPTY, 0
                return out
            self._empty = 0
            if moving > cfg.still_share:
                self._need_motion = False
                self._idle = 0
            if self._need_motion:
                # Still, and no card in it: after a while this is the table now (the
                # light changed, a chip was left lying), not something arriving.
                self._idle += 1
                if self._idle >= cfg.relearn_frames:
                    self._empty_view(thumb, colour)
                    self.state, self._idle, self._need_motion = EMPTY, 0, False
                return out
            self._still = self._still + 1 if moving <= cfg.still_share else 0
            if self._still >= cfg.still_frames:
                read = self._identify(region, frame_index, mono_ns)
                if read is not None:
                    out.append(read)
                    self.state, self._idle, self._settled, self._reported = PRESENT, 0, thumb, read.card
            return out
        # PRESENT: wait for the region to be empty again
        if vacant:
            self._empty += 1
            if self._empty >= cfg.empty_frames:
                self.state, self._empty, self._idle = EMPTY, 0, 0
            return out
        self._empty = 0
        # Still, but not as it was when the card was read: did the card leave
        # under a changed light (the old background will never match again)?
        # Look once; no card means this is the table now. The card reported,
        # moved, is not reported again: a card is reported once, and the next
        # only after the region was empty. Another card read there came in
        # over the last, or within fewer empty frames than tell the region
        # empty: which cards were dealt the camera cannot say, so it reports
        # a card it could not read (CARD_REPLACED), never the new one as dealt.
        away = float(np.mean(np.abs(thumb - self._settled) > cfg.pixel_change)) >= cfg.present_share
        self._idle = self._idle + 1 if (away and moving <= cfg.still_share) else 0
        if self._idle >= cfg.still_frames:
            self._idle = 0
            self.identifications += 1
            told = self.config.colour_camera and not monochrome(region)
            result = self.recognizer.identify(region, colour=told or scene_shows_colour(self._cloth, region))
            if result.reason == "no card found":
                self._empty_view(thumb, colour)
                self.state = EMPTY
            else:
                self._settled = thumb
                if result.card is not None and result.card != self._reported:
                    out.append(CameraRead(None, result.confidence, CARD_REPLACED, frame_index, mono_ns,
                                          self._to_frame(result.corners)))
                    self._reported = result.card
        return out

    def _empty_view(self, thumb: np.ndarray, colour: np.ndarray) -> None:
        """This frame's region (its thumbnail and mean colour) is the empty table from now on."""
        self._background = thumb.astype(np.float32)
        self._cloth = colour

    def _identify(self, region: np.ndarray, frame_index: int, mono_ns: int) -> CameraRead | None:
        self.identifications += 1
        told = self.config.colour_camera and not monochrome(region)
        sees_colour = told or scene_shows_colour(self._cloth, region)
        result = self.recognizer.identify(region, colour=sees_colour)
        corners = self._to_frame(result.corners)
        if result.card is not None:
            return CameraRead(result.card, result.confidence, None, frame_index, mono_ns, corners)
        if result.reason == "no card found":
            self._still = 0  # not a card (yet): look again once the scene has moved and settled
            self._need_motion, self._idle = True, 0
            return None
        self._attempts += 1
        self._last_failure = result
        if self._attempts >= self.config.read_attempts:
            return CameraRead(None, result.confidence, result.reason, frame_index, mono_ns, corners)
        self._still = self.config.still_frames - 1  # try the next still frame
        return None

    def _give_up(self, frame_index: int, mono_ns: int) -> list[CameraRead]:
        """The region emptied before a good read: report what was seen, if a card was."""
        if self._last_failure is None:
            return []
        f = self._last_failure
        self._last_failure = None
        return [CameraRead(None, f.confidence, f.reason, frame_index, mono_ns, self._to_frame(f.corners))]

    def _to_frame(self, corners):
        if corners is None or self.config.roi is None:
            return corners
        x, y = self.config.roi[:2]
        return [[round(cx + x, 1), round(cy + y, 1)] for cx, cy in corners]


def monochrome(region: np.ndarray) -> bool:
    """Whether a frame is a monochrome camera's for sure: one channel, or three that are the same
    (a colour camera's sensor gives its three channels apart, down to their noise, where a camera in
    its monochrome night mode gives one level three times)."""
    if region.ndim == 2 or region.shape[2] < 3:
        return True
    return bool(np.array_equal(region[..., 0], region[..., 1]) and np.array_equal(region[..., 1], region[..., 2]))

