"""Pictures of a card filling the picture or on grey cloth, where a card lies in a picture, and the
error of a card's outline as found."""

from __future__ import annotations

import cv2
import numpy as np

from vision_lab import synth


def filling(label: str, box=(0.0, 0.0, 1.0, 1.0), height: int = 420, square: bool = False, turns: int = 0,
            seed: int = 3) -> np.ndarray:
    """A photograph of `label` on the table (1280 x 960, uncovered), the part `box` of its card
    flattened to fill a picture `height` px tall (vision_lab.synth.filling)."""
    shot = synth.photograph(label, np.random.default_rng(seed), size=(1280, 960), occlusion_p=0, tilt=0.1)
    return synth.filling(shot.image, shot.corners, box, height, square, turns)


def card_mask(shape, corners) -> np.ndarray:
    """Where the card lies in a picture of `shape`: 255 inside its outline (`corners`, in the
    picture's pixels), 0 elsewhere."""
    mask = np.zeros(shape[:2], np.uint8)
    cv2.fillConvexPoly(mask, np.round(np.asarray(corners, np.float64)).astype(np.int32), 255)
    return mask


def on_grey_cloth(label: str, seed: int) -> np.ndarray:
    """A phone's photograph (2016 x 1512) of `label`, 16-20% of the picture's width, on grey cloth
    with grey things lying on it: no colour in view but the card's own print."""
    shot = synth.photograph(label, np.random.default_rng(seed), size=(2016, 1512), size_frac=(0.16, 0.2),
                            occlusion_p=0, tilt=0.1, blur=1.0)
    grey = cv2.cvtColor(cv2.cvtColor(shot.image, cv2.COLOR_BGR2GRAY), cv2.COLOR_GRAY2BGR)
    return np.where(card_mask(shot.image.shape, shot.corners)[..., None] > 0, shot.image, grey)


def framed_tightly(label: str, cloth: tuple[int, int, int], camera: str = "colour", seed: int = 21):
    """A camera whose region frames tightly where the card comes to rest: the cloth while the
    region is empty, then the card filling it. `camera`: "colour"; "grey", a monochrome camera's
    frames; "toned", a monochrome camera's in a tint that bends with brightness (a tone curve of
    gamma 0.8, 1.0, 1.25 on blue, green, red)."""
    rng = np.random.default_rng(seed)
    shot = synth.photograph(label, rng, size=(1280, 960), occlusion_p=0, tilt=0.1)
    card = synth.filling(shot.image, shot.corners, (0.01, 0.01, 0.99, 0.99), 400, square=True)
    table = np.full(card.shape, cloth, np.uint8)
    frames = [table] * 6 + [card] * 8 + [table] * 6
    noisy = [cv2.add(f, rng.normal(0, 2, f.shape).round().astype(np.int16), dtype=cv2.CV_8U) for f in frames]
    if camera != "colour":
        noisy = [cv2.cvtColor(cv2.cvtColor(f, cv2.COLOR_BGR2GRAY), cv2.COLOR_GRAY2BGR) for f in noisy]
    if camera == "toned":
        level = np.arange(256) / 255.0
        curve = np.stack([level**0.8, level, level**1.25], axis=1)[:, None, :] * 255
        noisy = [cv2.LUT(f, curve.round().astype(np.uint8)) for f in noisy]
    return [(f, None) for f in noisy]


def corner_error(found, truth) -> float:
    """The largest distance, in pixels along x or y, between the four corners found and the true
    ones, taken in the order (of the four turns) that fits best: a card's corners may be named
    from any of its four sides."""
    found, truth = np.asarray(found, np.float64), np.asarray(truth, np.float64)
    return min(float(np.abs(np.roll(found, k, axis=0) - truth).max()) for k in range(4))


def drilled(label: str, cloth: tuple[int, int, int], seed: int, hole: float = 0.1,
            style: synth.CardStyle | None = None) -> np.ndarray:
    """A phone's photograph (1280 x 960) of `label` drilled through its middle, as casinos cancel the
    cards of a deck they retire: a hole `hole` of the card's width across at the face's centre,
    and plain `cloth` (BGR, with a felt's grain) around the card and seen through the hole."""
    turns = np.linspace(0, 2 * np.pi, 64, endpoint=False)
    rim = np.stack([synth.FACE_W / 2 + np.cos(turns) * hole * synth.FACE_W / 2,
                    synth.FACE_H / 2 + np.sin(turns) * hole * synth.FACE_W / 2], axis=1)
    return cut_away(label, cloth, seed, rim, style)


def clipped(label: str, cloth: tuple[int, int, int], seed: int, cut: float = 0.15,
            style: synth.CardStyle | None = None) -> np.ndarray:
    """As `drilled`, the card cancelled by a corner cut off instead (the `seed % 4`th corner,
    clockwise from the top left): `cut` of the card's width along each of its edges."""
    w, h, k = synth.FACE_W, synth.FACE_H, cut * synth.FACE_W
    corner = [[[0, 0], [k, 0], [0, k]], [[w, 0], [w - k, 0], [w, k]],
              [[w, h], [w - k, h], [w, h - k]], [[0, h], [k, h], [0, h - k]]][seed % 4]
    return cut_away(label, cloth, seed, np.array(corner, np.float64), style)


def cut_away(label: str, cloth: tuple[int, int, int], seed: int, gone: np.ndarray,
             style: synth.CardStyle | None = None) -> np.ndarray:
    """A phone's photograph (1280 x 960) of `label` on plain `cloth` (BGR, with a felt's grain),
    the polygon `gone` (in the face's pixels) cut out of the card, the cloth seen there."""
    rng = np.random.default_rng(seed)
    shot = synth.photograph(label, rng, style, size=(1280, 960), occlusion_p=0, tilt=0.2)
    to_picture = cv2.getPerspectiveTransform(
        np.float32([[0, 0], [synth.FACE_W, 0], [synth.FACE_W, synth.FACE_H], [0, synth.FACE_H]]),
        np.float32(shot.corners))
    gone = cv2.perspectiveTransform(gone[None].astype(np.float32), to_picture)[0]
    card = card_mask(shot.image.shape, shot.corners)
    cv2.fillPoly(card, [np.round(gone).astype(np.int32)], 0, cv2.LINE_AA)
    table = np.clip(np.asarray(cloth, np.float64) + rng.normal(0, 4, shot.image.shape), 0, 255).astype(np.uint8)
    inside = cv2.GaussianBlur(card.astype(np.float32) / 255.0, (0, 0), 0.8)[..., None]
    return (shot.image * inside + table * (1 - inside)).round().astype(np.uint8)
