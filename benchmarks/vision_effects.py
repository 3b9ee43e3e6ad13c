"""A search for wrong cards under what real cameras and rooms add to a photograph and the
training pictures do not: a hard shadow across the card, a phone's sharpening halos, a dark
exposure with its noise lifted, a bright one with the paper clipped, a steep view, a wide lens's
curved lines, a hand's movement during the exposure.

The camera's one unforgivable answer is a wrong card. This script photographs every card of the
chosen ranks (all four suits) in every held-out lettering design (`vision_lab.hard_sets`) and in
every held-out deck design (`vision_lab.decks`) at a phone's resolution, then applies each effect
in `--effects` to a copy of the photograph, and counts per effect the pictures read right, refused
and read wrong (which must be 0), printing every wrong card with its picture's parameters. Cards a
design's index does not let shoed read (foreign court letters: `decks.to_refuse`) count as right
when refused. Every refusal's reason is tallied per effect (`mirrored` under `mirror`, `no_colour`
under `grey`), and the designs not read whole are listed per effect with their share read right;
with `--refusals`, every refusal of a card meant to be read is printed with its design and reason.

    .venv/bin/python benchmarks/vision_effects.py [--ranks A,2,...,K] [--effects shadow,glare+mosaic,...]
                                                  [--seed 9100] [--size 1280x960] [--keep DIR] [--scene]
                                                  [--colour-camera] [--refusals]

Effects:
- none: the photograph as it is (the baseline: each effect's right rate is read against it);
- shadow: a straight-edged shadow (a hand, the shoe) over part of the card: 35-65% darker;
- sharpen: an unsharp mask as phone cameras apply it (halos along every edge of the print);
- dark: a third of the light, then the sensor's noise and the brightness lifted back;
- bright: the light doubled: the paper clipped to white, pale print paler;
- steep: the picture seen obliquely (a homography of up to 30% foreshortening);
- lens: a wide lens's radial distortion left uncorrected (barrel, or for one picture in three
  pincushion): straight lines bow, the more the farther they lie from the middle; the picture's
  corners move inwards by 3-15% of the half-diagonal (barrel) or outwards by 1-5% (pincushion);
- motion: the camera moved during the exposure: a straight smear 0.5-1% of the picture's
  shorter side long (5-10 px at 1280 x 960), in any direction;
- defocus: the lens focused off the card (before or behind it): each point spread over a disk
  0.3-1% of the picture's shorter side across (3-10 px at 1280 x 960; a lens's blur is a disk,
  flat and hard-edged, not a Gaussian), then saved as a JPEG: the picture as many pixels as a
  sharp one, its print as soft as a smaller one's;
- mirror: the picture mirrored, left to right or top to bottom (a camera set to mirror its
  image, a phone's front camera, a view through a mirror): no card is printed mirrored, so the
  index's rank is no rank shoed knows, and every answer must be a refusal or the card itself
  (an ace or an eight mirrored is still itself);
- grey: the picture of a monochrome camera (or a camera's night mode), saved as a JPEG: red and
  black print differ in brightness only, so every answer must be a refusal (`no_colour`);
- tinted: a monochrome picture with a tint over it (a night mode's purple, an amber lamp over a
  monochrome sensor's picture), saved as a JPEG: no print is redder than the paper;
- fringe: a lens's lateral chromatic aberration: black print fringed red on one side, blue on
  the other;
- mosaic: a colour sensor's RGGB mosaic demosaiced bilinearly, as small cameras do, then a JPEG:
  colour zippers along fine black print;
- glare: a lamp's reflection in the card's gloss, an oval washed towards white;
- layout: a baccarat layout printed on the cloth under the card (card boxes whose lines run along
  the card's edges, an arc, the words and numbers of a layout) in gold or white;
- vignette: light falling off towards the picture's corners and across it (a lamp to one side);
- smudge: grey-brown dirt on the card, mostly near a corner index;
- hand: a dealer's finger reaching over the card, shaded, its tip on a corner index (partly
  covering it) or anywhere on the face, with its soft shadow beside it;
- bend: the card bowed (curled by the room's damp, lifted at a corner by the dealer's peek): its
  middle raised towards the camera, seen off-axis, so that its edges along the bend curve by
  2-6% of the card's height and the card is widened there by up to 2%, lit more on one side;
- cut: the card partly out of the frame: the picture cut along one side through the card;
- enlarge: the picture enlarged 2-5 times (a driver or viewer scaling a small camera's frames up);
- fill: the card filling the picture (a still cut to the card, a camera framing it tightly): the
  card's outline, 2.5% smaller to 2% larger than the card, flattened to the whole picture, as tall
  as the photograph; a card's proportions, or one picture in three squeezed to a square; one in two
  turned a quarter;
- zoom: a part of the card filling the picture, cut by all four edges (50-95% of its width and of
  its height, anywhere on it), flattened as `fill` flattens the card: the card's outline is not in
  view, so every answer must be a refusal or the card itself;
- shrink: the picture shrunk to 128 pixels on its long side (an area average): after `fill`, the
  frame of a small camera framing the card tightly, as the 128 x 128 frames are of a wider view;
- pale: the card on a pale surface instead of the cloth (a white desk, a sheet of paper, a light
  tablecloth, as a phone's photographs of a deck are often taken), its edge shown by little more
  than its shadow.

With `--colour-camera`, each picture is read as a camera source with `colour_camera = true` reads
it: known to be a colour camera's, so a black card in a picture that shows no colour is read (the
cost of `no_colour` on such pictures, against the answers without it), unless its three channels
are one (`watch.monochrome`: `grey`). `tinted` is no colour camera's picture: a night mode that
tints is the option's documented limit (docs/vision.md), and its wrong answers there are what the
option costs on a camera that has one.

With `--scene`, each picture is read as a camera's watcher reads the card that comes into its
view (`shoed.vision.watch`): beside the camera's empty view, here the photograph with the card's
place painted the table's mean colour under the same effects, whose colour beside the picture's
pixels as bright may show that the camera sees colour (`recognize.scene_shows_colour`: a black
card filling the picture is then read).

Effects joined by "+" are applied to one picture in turn, as a real camera adds several at once
(`--effects dark+glare,layout+steep+mosaic`); an effect that needs the card's place (layout,
smudge, hand, bend, cut, fill, zoom) comes before any that moves the card (steep, lens, mirror,
bend, cut, enlarge, fill, zoom, shrink).
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import sys  # noqa: E402
from collections import Counter  # noqa: E402
from pathlib import Path  # noqa: E402

import cv2  # noqa: E402
import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.append(str(ROOT))  # vision_lab lives beside shoed; a shoed on PYTHONPATH (another version) comes first

EFFECTS = ("none", "shadow", "sharpen", "dark", "bright", "steep", "lens", "motion", "defocus", "mirror", "grey",
           "tinted", "fringe", "mosaic", "glare", "layout", "vignette", "smudge", "hand", "bend", "cut", "enlarge",
           "fill", "zoom", "shrink", "pale", "night")
# effects that need to know where the card lies: they are given its corners (TL, TR, BR, BL of the face)
ON_THE_CARD = ("layout", "smudge", "hand", "bend", "cut", "fill", "zoom", "pale")
# effects that move the card in the picture: after one, its corners are no longer known
MOVING = ("steep", "lens", "mirror", "bend", "cut", "enlarge", "fill", "zoom", "shrink")
# a monochrome camera's picture (grey, or in one tint): what the room and the lens put into the light comes
# before it, since the camera renders all it sees in its one hue, a lamp's reflection and a finger included
MONOCHROME = ("grey", "tinted", "night")
# effects that put light or colour of their own into the scene the lens sees (a white reflection, dirt, a
# finger, a layout's gold print, a pale surface, a lens's colour fringes): none comes after MONOCHROME (a colour
# sensor's mosaic may: a colour camera in a tinted night mode demosaics its picture)
COLOURING = ("glare", "smudge", "hand", "layout", "pale", "fringe")
SHRUNK = 128  # the long side of a picture shrunk (shrink)


def combine(combo: str) -> list[str]:
    """The effects of `combo` ("glare+mosaic": glare, then the mosaic), checked: each is known,
    none that needs the card's corners comes after one that moves the card, and none that puts
    light or colour into the picture comes after a monochrome camera's rendering of it."""
    names = combo.split("+")
    for k, name in enumerate(names):
        if name not in EFFECTS:
            raise ValueError(f"no effect {name!r} (effects: {', '.join(EFFECTS)})")
        if name in ON_THE_CARD and any(before in MOVING for before in names[:k]):
            raise ValueError(f"{combo}: {name} needs the card where the photograph put it; put it first")
        if name in COLOURING and any(before in MONOCHROME for before in names[:k]):
            raise ValueError(f"{combo}: a monochrome camera renders {name} in its own hue too; put {name} first")
    return names


def card_seed(seed: int, i: int) -> int:
    """The seed of the ith card (of --ranks' cards, in order) of a search from `seed` (--seed): its
    photographs are drawn from it (hard_sets.held_out_shots)."""
    return seed + i * 101


def draws(seed: int, shot: int, effect: int) -> np.random.Generator:
    """What the `effect`th of --effects draws over the `shot`th photograph of the card whose seed
    is `seed` (card_seed)."""
    return np.random.default_rng(seed * 7 + shot * 13 + effect)


def apply_effects(names: list[str], img: np.ndarray, rng: np.random.Generator, corners: np.ndarray) -> np.ndarray:
    """The picture under each effect in turn (one generator drawn from by each)."""
    for name in names:
        img = globals()[name](img, rng, corners) if name in ON_THE_CARD else globals()[name](img, rng)
    return img


def without_card(img: np.ndarray, corners: np.ndarray) -> np.ndarray:
    """The photograph's table without the card: the card's place painted the mean colour of the rest."""
    mask = np.zeros(img.shape[:2], np.uint8)
    cv2.fillConvexPoly(mask, np.round(corners).astype(np.int32), 255)
    table = cv2.mean(img, cv2.bitwise_not(mask))[:3]
    out = img.copy()
    out[mask > 0] = np.round(table).astype(np.uint8)
    return out


def none(img: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """The photograph as it is: the baseline the other effects are measured against."""
    return img


def shadow(img: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A half-plane through a point near the middle darkened, its edge sharp (a point light)."""
    h, w = img.shape[:2]
    angle = rng.uniform(0, np.pi)
    cx, cy = w * rng.uniform(0.3, 0.7), h * rng.uniform(0.3, 0.7)
    ys, xs = np.mgrid[0:h, 0:w].astype(np.float32)
    side = (xs - cx) * np.float32(np.cos(angle)) + (ys - cy) * np.float32(np.sin(angle))
    edge = max(1.0, min(w, h) / 400 * rng.uniform(0.5, 3))  # a few pixels of penumbra
    dark = np.clip(side / edge + 0.5, 0, 1) * np.float32(rng.uniform(0.35, 0.65))
    return np.clip(img.astype(np.float32) * (1 - dark[..., None]), 0, 255).astype(np.uint8)


def sharpen(img: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    sigma = min(img.shape[:2]) / 1000 * rng.uniform(1.0, 2.5)
    amount = rng.uniform(0.6, 1.5)
    soft = cv2.GaussianBlur(img, (0, 0), sigma)
    return cv2.addWeighted(img, 1 + amount, soft, -amount, 0)


def dark(img: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    gain = rng.uniform(0.25, 0.4)
    low = img.astype(np.float32) * gain
    noise = rng.normal(0, rng.uniform(1.5, 3.0), img.shape[:2]).astype(np.float32)
    chroma = rng.normal(0, 1.0, img.shape).astype(np.float32)  # a dark picture's colour noise
    lifted = (low + noise[..., None] + chroma) / gain
    from vision_lab.hard_sets import jpeg

    return jpeg(np.clip(lifted, 0, 255).astype(np.uint8), int(rng.uniform(70, 90)))


def bright(img: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    return cv2.convertScaleAbs(img, alpha=rng.uniform(1.6, 2.2), beta=0)


def steep(img: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    h, w = img.shape[:2]
    squeeze = rng.uniform(0.15, 0.3)
    src = np.float32([[0, 0], [w, 0], [w, h], [0, h]])
    dst = src.copy()
    if rng.uniform() < 0.5:  # the far edge shorter: top or bottom
        k = 0 if rng.uniform() < 0.5 else 2
        dst[k][0] += w * squeeze / 2
        dst[k + 1][0] -= w * squeeze / 2
    else:  # left or right
        for k in ((0, 3) if rng.uniform() < 0.5 else (1, 2)):
            dst[k][1] += (h * squeeze / 2) * (1 if k in (0, 1) else -1)
    m = cv2.getPerspectiveTransform(src, dst)
    return cv2.warpPerspective(img, m, (w, h), borderMode=cv2.BORDER_REPLICATE)


def lens(img: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Radial distortion r -> r (1 + k r^2), r the distance from the middle over the half-diagonal:
    barrel (k of 0.03 to 0.15) or pincushion (k of -0.01 to -0.05)."""
    h, w = img.shape[:2]
    k = rng.uniform(0.03, 0.15) if rng.uniform() < 2 / 3 else -rng.uniform(0.01, 0.05)
    cx, cy = (w - 1) / 2, (h - 1) / 2
    half = float(np.hypot(cx, cy))
    ys, xs = np.mgrid[0:h, 0:w].astype(np.float32)
    dx, dy = (xs - cx) / half, (ys - cy) / half
    grow = 1 + np.float32(k) * (dx * dx + dy * dy)  # each pixel shows what lies farther out (barrel)
    return cv2.remap(img, cx + dx * grow * half, cy + dy * grow * half, cv2.INTER_LINEAR,
                     borderMode=cv2.BORDER_CONSTANT, borderValue=(40, 40, 40))


def motion(img: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A straight smear: the mean along a line 0.5-1% of the shorter side long, at any angle."""
    from vision_lab.hard_sets import smear

    n = max(3, int(round(min(img.shape[:2]) * rng.uniform(0.005, 0.01))))
    return smear(img, n, rng.uniform(0, 180))


def defocus(img: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """The lens out of focus: the picture convolved with a disk (the lens's aperture) of radius
    0.15-0.5% of the shorter side, then a JPEG at 80-95."""
    from vision_lab.hard_sets import jpeg

    r = min(img.shape[:2]) * rng.uniform(0.0015, 0.005)
    n = 2 * int(np.ceil(r)) + 1
    ys, xs = np.mgrid[0:n, 0:n].astype(np.float32) - np.float32(n // 2)
    disk = np.clip(np.float32(r + 0.5) - np.hypot(xs, ys), 0, 1)  # its edge antialiased
    return jpeg(cv2.filter2D(img, -1, disk / disk.sum()), int(rng.integers(80, 96)))


def mirror(img: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """The picture mirrored, left to right or top to bottom: a camera set to mirror its image
    (many webcams' default), a phone's front camera, a view through a mirror."""
    return cv2.flip(img, int(rng.integers(2)))


def grey(img: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """The picture as a monochrome camera gives it: one brightness a pixel, in three equal channels
    after a JPEG's round trip."""
    from vision_lab.hard_sets import monochrome

    return monochrome(img, (1.0, 1.0, 1.0), int(rng.integers(70, 95)))


def tinted(img: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A monochrome picture in one hue: each channel the brightness times a gain of 0.75-1.0."""
    from vision_lab.hard_sets import monochrome

    b, g, r = rng.uniform(0.75, 1.0, 3).astype(np.float32).tolist()
    return monochrome(img, (b, g, r), int(rng.integers(70, 95)))


def night(img: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A colour camera in its night mode, under infrared light: the scene's brightness alone, through the
    camera's colour gains of 1.0-1.35 a channel, and clipped as a sensor clips, so that its highlights (a
    lamp's reflection, the paper at its brightest) go white while the rest keeps the tint."""
    from vision_lab.hard_sets import monochrome

    b, g, r = rng.uniform(1.0, 1.35, 3).astype(np.float32).tolist()
    return monochrome(img, (b, g, r), int(rng.integers(70, 95)))


def fringe(img: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A lens's lateral chromatic aberration: red imaged larger than green and blue smaller (or the
    other way about), so that the print's edges are fringed red on one side and blue on the other,
    the more the farther from the middle: 0.5-2.5 px apart at the picture's corners for a picture
    of 480 px or less, in proportion for a larger one."""
    h, w = img.shape[:2]
    apart = rng.uniform(0.5, 2.5) * max(1.0, min(w, h) / 480) * (1 if rng.integers(2) else -1)
    k = apart / np.hypot(w / 2, h / 2)
    channels = list(cv2.split(img))
    for c, scale in ((0, 1 - k), (2, 1 + k)):
        m = cv2.getRotationMatrix2D(((w - 1) / 2, (h - 1) / 2), 0.0, scale)
        channels[c] = cv2.warpAffine(channels[c], m, (w, h), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    return cv2.merge(channels)


def mosaic(img: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A colour sensor's mosaic read as a small camera reads it: each pixel keeps one colour of
    an RGGB pattern, the other two interpolated from its neighbours (OpenCV's bilinear
    demosaicing: colour fringes and zippers along fine print), then saved as a JPEG."""
    from vision_lab.hard_sets import jpeg

    b, g, r = cv2.split(img)
    raw = np.empty(img.shape[:2], np.uint8)
    raw[0::2, 0::2] = r[0::2, 0::2]
    raw[0::2, 1::2] = g[0::2, 1::2]
    raw[1::2, 0::2] = g[1::2, 0::2]
    raw[1::2, 1::2] = b[1::2, 1::2]
    return jpeg(cv2.cvtColor(raw, cv2.COLOR_BayerBG2BGR), int(rng.integers(70, 95)))


def glare(img: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A lamp's reflection in the card's gloss: an oval 8-25% of the picture's shorter side across,
    somewhere in its middle 60%, washed towards white (60-100% at its centre, clipped there
    at the strongest), its edge soft."""
    h, w = img.shape[:2]
    side = min(w, h)
    cx, cy = rng.uniform(0.2, 0.8) * w, rng.uniform(0.2, 0.8) * h
    ax, ay = rng.uniform(0.04, 0.125, 2) * side
    turn = rng.uniform(0, np.pi)
    y, x = np.mgrid[0:h, 0:w].astype(np.float32)
    u = ((x - cx) * np.cos(turn) + (y - cy) * np.sin(turn)) / ax
    v = (-(x - cx) * np.sin(turn) + (y - cy) * np.cos(turn)) / ay
    wash = rng.uniform(0.6, 1.0) * np.exp(-(u * u + v * v) * 1.5)
    wash = np.minimum(1.0, wash * 1.3)[..., None]
    return np.clip(img * (1 - wash) + 255 * wash, 0, 255).astype(np.uint8)


def _card_mask(shape: tuple[int, ...], corners: np.ndarray) -> np.ndarray:
    mask = np.zeros(shape[:2], np.uint8)
    cv2.fillPoly(mask, [np.round(corners).astype(np.int32)], 255, cv2.LINE_AA)
    return mask


def layout(img: np.ndarray, rng: np.random.Generator, corners: np.ndarray) -> np.ndarray:
    """A baccarat layout printed on the cloth under the card: boxes of a card's proportions
    (one around the card, off its centre and turned a little, so that its lines run along the
    card's edges; two more beside it), an arc of a betting area, and the words and numbers of a
    layout (PLAYER, BANKER, TIE 8 TO 1, seat numbers), in gold or white lines 1-3 px wide (at
    480 px; in proportion for a larger picture)."""
    h, w = img.shape[:2]
    out = img.copy()
    scale = min(w, h) / 480
    colour = ((60, 175, 215), (215, 225, 230), (40, 200, 235))[int(rng.integers(3))]
    thick = max(1, int(round(rng.uniform(1, 3) * scale)))
    centre = corners.mean(axis=0)
    long = corners[3] - corners[0]  # down the card
    card_h = float(np.linalg.norm(long))
    angle = float(np.degrees(np.arctan2(long[0], -long[1])))
    for k in range(3):
        grow = rng.uniform(1.02, 1.3)
        box_h, box_w = card_h * grow, card_h * grow * 63 / 88
        offset = rng.normal(0, 0.06, 2) * card_h if k == 0 else (
            np.array([np.cos(np.radians(angle)), np.sin(np.radians(angle))]) * box_w * (1.15 * k) * rng.choice([-1, 1]))
        turn = angle + (rng.normal(0, 4) if k == 0 else rng.normal(0, 10))
        box = cv2.boxPoints(((float(centre[0] + offset[0]), float(centre[1] + offset[1])), (box_w, box_h), turn))
        cv2.polylines(out, [np.round(box).astype(np.int32)], True, colour, thick, cv2.LINE_AA)
    radius = int(card_h * rng.uniform(0.9, 2.0))
    at = (int(centre[0] + rng.normal(0, card_h)), int(centre[1] + rng.normal(0, card_h)))
    cv2.ellipse(out, at, (radius, int(radius * rng.uniform(0.5, 1.0))), float(rng.uniform(0, 180)),
                0, float(rng.uniform(60, 180)), colour, thick, cv2.LINE_AA)
    words = ["PLAYER", "BANKER", "TIE 8 TO 1", "PAYS 1 TO 1"] + [str(n) for n in range(1, 10)]
    for _ in range(int(rng.integers(2, 6))):
        text = words[int(rng.integers(len(words)))]
        at = (int(centre[0] + rng.normal(0, card_h * 0.8)), int(centre[1] + rng.normal(0, card_h * 0.8)))
        cv2.putText(out, text, at, (cv2.FONT_HERSHEY_SIMPLEX, cv2.FONT_HERSHEY_TRIPLEX)[int(rng.integers(2))],
                    card_h * rng.uniform(0.06, 0.25) / 22, colour, thick, cv2.LINE_AA)  # letters 6-25% of a card high
    alpha = _card_mask(img.shape, corners).astype(np.float32)[..., None] / 255  # the card lies over the print
    return np.round(img * alpha + out * (1 - alpha)).astype(np.uint8)


def vignette(img: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Light that falls off across the picture: towards its corners (a lens's vignetting, 25-55%
    darker at the far corner from a centre off the middle) and across it (a lamp to one side, up
    to 30% darker at the far edge), then saved as a JPEG."""
    from vision_lab.hard_sets import jpeg

    h, w = img.shape[:2]
    cx, cy = w * rng.uniform(0.3, 0.7), h * rng.uniform(0.3, 0.7)
    ys, xs = np.mgrid[0:h, 0:w].astype(np.float32)
    r2 = ((xs - cx) ** 2 + (ys - cy) ** 2) / max(cx, w - cx, 1) ** 2 / 2
    turn = rng.uniform(0, 2 * np.pi)
    along = ((xs - w / 2) * np.float32(np.cos(turn)) + (ys - h / 2) * np.float32(np.sin(turn))) / np.float32(
        np.hypot(w, h) / 2)
    gain = (1 - np.float32(rng.uniform(0.25, 0.55)) * np.minimum(r2, 1)) * (
        1 - np.float32(rng.uniform(0, 0.3)) * (along + 1) / 2)
    return jpeg(np.clip(img * gain[..., None], 0, 255).astype(np.uint8), int(rng.integers(75, 95)))


def smudge(img: np.ndarray, rng: np.random.Generator, corners: np.ndarray) -> np.ndarray:
    """Dirt on the card: one to four soft grey-brown smears (a thumb's grease, cloth dust), each
    4-12% of the card's height across, 10-45% darker at their middle, most near a corner index."""
    h, w = img.shape[:2]
    card_h = float(np.linalg.norm(corners[3] - corners[0]))
    dirt = np.zeros((h, w), np.float32)
    for _ in range(int(rng.integers(1, 5))):
        a, b = rng.uniform(0, 1, 2)
        if rng.uniform() < 0.6:  # near a corner: its index
            corner = corners[0] if rng.uniform() < 0.5 else corners[2]
            at = corner + (corners.mean(axis=0) - corner) * rng.uniform(0.1, 0.4)
        else:  # anywhere on the card (bilinear in its corners)
            at = (corners[0] * (1 - a) + corners[1] * a) * (1 - b) + (corners[3] * (1 - a) + corners[2] * a) * b
        axes = (max(1, int(card_h * rng.uniform(0.02, 0.06))), max(1, int(card_h * rng.uniform(0.02, 0.06))))
        blob = np.zeros((h, w), np.float32)
        cv2.ellipse(blob, (int(at[0]), int(at[1])), axes, float(rng.uniform(0, 180)), 0, 360, 1.0, -1, cv2.LINE_AA)
        blob = cv2.GaussianBlur(blob, (0, 0), max(axes) * 0.5)
        dirt = np.maximum(dirt, blob / max(float(blob.max()), 1e-6) * np.float32(rng.uniform(0.1, 0.45)))
    tint = np.array([0.8, 0.95, 1.0], np.float32)  # brown: blue darkened most
    dirt *= _card_mask(img.shape, corners).astype(np.float32) / 255
    return np.clip(img * (1 - dirt[..., None] * (2 - tint)), 0, 255).astype(np.uint8)


def hand(img: np.ndarray, rng: np.random.Generator, corners: np.ndarray) -> np.ndarray:
    """A dealer's finger over the card: a rounded finger 16-24% of the card's height wide (a
    finger's width to a card's), shaded as a cylinder lit from above, reaching in from beyond the
    card; its tip on or partly over a corner index (one picture in two: a thumb holding the card)
    or anywhere on the face, and a soft shadow cast beside it on the card and the cloth."""
    h, w = img.shape[:2]
    card_h = float(np.linalg.norm(corners[3] - corners[0]))
    centre = corners.mean(axis=0)
    if rng.uniform() < 0.5:  # at a corner index: the tip a little inside the card's corner
        corner = corners[0] if rng.uniform() < 0.5 else corners[2]
        tip = corner + (centre - corner) * rng.uniform(0.05, 0.3)
    else:  # anywhere on the face (bilinear in its corners)
        a, b = rng.uniform(0.2, 0.8, 2)
        tip = (corners[0] * (1 - a) + corners[1] * a) * (1 - b) + (corners[3] * (1 - a) + corners[2] * a) * b
    away = tip - centre
    heading = float(np.arctan2(away[1], away[0])) if np.hypot(*away) > 1 else rng.uniform(0, 2 * np.pi)
    heading += rng.normal(0, 0.7)  # the hand comes from beyond the nearer edge, more or less
    base = tip + np.array([np.cos(heading), np.sin(heading)]) * card_h * 1.5
    radius = card_h * rng.uniform(0.08, 0.12)
    ys, xs = np.mgrid[0:h, 0:w].astype(np.float32)

    def across(at: np.ndarray) -> np.ndarray:
        """Each pixel's distance from the finger's axis (the segment tip-base) in radii."""
        run = (base - at).astype(np.float32)
        t = np.clip(((xs - at[0]) * run[0] + (ys - at[1]) * run[1]) / float(run @ run), 0, 1)
        return np.hypot(xs - at[0] - t * run[0], ys - at[1] - t * run[1]) / np.float32(radius)

    light = np.array([rng.uniform(-0.3, 0.3), rng.uniform(-0.3, 0.3)]) * radius
    shade = cv2.GaussianBlur((across(tip + light * 2.5) < 1).astype(np.float32), (0, 0), radius * 0.4)
    out = img.astype(np.float32) * (1 - shade[..., None] * np.float32(rng.uniform(0.3, 0.5)))
    d = across(tip)
    cover = np.clip((1 - d) * np.float32(radius), 0, 1)[..., None]  # one pixel of soft edge
    skin = np.float32([rng.uniform(90, 150), rng.uniform(120, 170), rng.uniform(170, 230)])  # BGR
    lit = np.sqrt(np.clip(1 - d * d, 0, 1))[..., None] * np.float32(0.45) + np.float32(0.55)
    out = out * (1 - cover) + np.minimum(skin * lit * np.float32(1.1), 255) * cover
    return np.clip(out, 0, 255).astype(np.uint8)


def bend(img: np.ndarray, rng: np.random.Generator, corners: np.ndarray) -> np.ndarray:
    """A card bowed along its length or across its width, its middle raised towards the camera
    and seen off-axis: each point of the card moved across the bend's axis by g = 4 u (1 - u)
    times 2-6% of the card's height (u running 0 to 1 along the axis: the card's ends stay where
    they lie, its edges along the axis become arcs) and spread from the axis by up to 2% times g
    (its middle nearer the lens), the light falling 0-12% brighter on one side of the bow; the
    cloth beside it follows it less and less, and stays from 40% of the card's breadth off it."""
    tl, tr, br, bl = corners.astype(np.float32)
    card_h = float(np.linalg.norm(bl - tl))
    if rng.uniform() < 0.5:  # along the card's length: its long edges curve
        origin, end, side = (tl + tr) / 2, (bl + br) / 2, tr - tl
    else:  # across its width: its short edges curve
        origin, end, side = (tl + bl) / 2, (tr + br) / 2, bl - tl
    length = float(np.linalg.norm(end - origin))
    a = (end - origin) / np.float32(length)  # the bend's axis: from one end's middle to the other's
    n = np.float32([-a[1], a[0]]) * np.float32(np.sign(side @ np.float32([-a[1], a[0]])))  # across it
    h, w = img.shape[:2]
    ys, xs = np.mgrid[0:h, 0:w].astype(np.float32)
    along = (xs - origin[0]) * a[0] + (ys - origin[1]) * a[1]
    off = (xs - origin[0]) * n[0] + (ys - origin[1]) * n[1]
    u = np.clip(along / np.float32(length), 0, 1)
    half = float(np.linalg.norm(side)) / 2
    near = np.clip(1 - (np.abs(off) - np.float32(half * 1.3)) / np.float32(half * 0.5), 0, 1)  # far cloth stays
    g = 4 * u * (1 - u) * near
    shift = g * np.float32(card_h * rng.uniform(0.02, 0.06) * rng.choice((-1, 1)))
    grow = 1 + g * np.float32(rng.uniform(0, 0.02))
    source = (off - shift) / grow  # where each pixel's point lay across the axis before the bow
    map_x = origin[0] + along * a[0] + source * n[0]
    map_y = origin[1] + along * a[1] + source * n[1]
    out = cv2.remap(img, map_x, map_y, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    card = cv2.remap(_card_mask(img.shape, corners), map_x, map_y, cv2.INTER_LINEAR) / np.float32(255)
    light = 1 + card * (2 * u - 1) * g * np.float32(rng.uniform(-0.12, 0.12))
    return np.clip(out * light[..., None], 0, 255).astype(np.uint8)


def cut(img: np.ndarray, rng: np.random.Generator, corners: np.ndarray) -> np.ndarray:
    """The card partly out of the frame (a card sliding out of the camera's view, a camera aimed
    off the card): the picture cut along one side so that 10-50% of the card's extent across
    that side lies beyond it."""
    h, w = img.shape[:2]
    (x0, y0), (x1, y1) = corners.min(axis=0), corners.max(axis=0)
    f = rng.uniform(0.1, 0.5)
    side = int(rng.integers(4))
    if side == 0:
        return img[:, min(w - 1, int(x0 + f * (x1 - x0))):].copy()
    if side == 1:
        return img[:, :max(1, int(x1 - f * (x1 - x0)))].copy()
    if side == 2:
        return img[min(h - 1, int(y0 + f * (y1 - y0))):].copy()
    return img[:max(1, int(y1 - f * (y1 - y0)))].copy()


def enlarge(img: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """The picture enlarged 2-5 times, bilinearly or bicubically (a camera's driver, a capture
    card or a viewer that scales a small sensor's frames up): as many pixels as a larger picture,
    no more detail than the small one."""
    k = rng.uniform(2.0, 5.0)
    interpolation = (cv2.INTER_LINEAR, cv2.INTER_CUBIC)[int(rng.integers(2))]
    return cv2.resize(img, None, fx=k, fy=k, interpolation=interpolation)


def _flatten(img: np.ndarray, corners: np.ndarray, box: tuple[float, float, float, float],
             rng: np.random.Generator) -> np.ndarray:
    """The part `box` of the card (vision_lab.synth.filling) filling a picture as tall as `img`: the
    card's proportions, or one picture in three squeezed to a square; one in two turned a quarter."""
    from vision_lab import synth

    square, turns = rng.uniform() < 1 / 3, int(rng.choice((1, 3))) if rng.uniform() < 0.5 else 0
    return synth.filling(img, corners, box, img.shape[0], square, turns)


def fill(img: np.ndarray, rng: np.random.Generator, corners: np.ndarray) -> np.ndarray:
    """The card filling the picture: its outline, 2.5% smaller to 2% larger, flattened to the whole
    picture (a still cut to the card, a camera framing the card it looks at tightly)."""
    m = rng.uniform(-0.025, 0.02)
    return _flatten(img, corners, (-m, -m, 1 + m, 1 + m), rng)


def zoom(img: np.ndarray, rng: np.random.Generator, corners: np.ndarray) -> np.ndarray:
    """A part of the card filling the picture, cut by all four edges: 50-95% of its width and of
    its height, anywhere on it."""
    fx, fy = rng.uniform(0.5, 0.95, 2)
    x0, y0 = rng.uniform(0.0, 1 - fx), rng.uniform(0.0, 1 - fy)
    return _flatten(img, corners, (x0, y0, x0 + fx, y0 + fy), rng)


def shrink(img: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """The picture shrunk to SHRUNK pixels on its long side, by an area average (a small camera's frame)."""
    h, w = img.shape[:2]
    f = SHRUNK / max(h, w)
    if f >= 1:
        return img
    return cv2.resize(img, (max(1, round(w * f)), max(1, round(h * f))), interpolation=cv2.INTER_AREA)


def pale(img: np.ndarray, rng: np.random.Generator, corners: np.ndarray) -> np.ndarray:
    """The card on a pale surface (a white desk, a sheet of paper, a light tablecloth) instead
    of the cloth: grey levels 190-250, in the colour of the light on the card's paper, a little
    warmer or cooler (its own white: 3% a channel), lit unevenly across the picture
    (up to 20% darker at one side), with a fine grain; the card's shadow beside it, offset by
    0.5-3% of the card's height and blurred, 8-30% darker. The card's edge is then shown by
    little more than its shadow and the paper's slightly other white."""
    h, w = img.shape[:2]
    card_h = float(np.linalg.norm(corners[3] - corners[0]))
    level = rng.uniform(190, 250)
    alpha = _card_shape(img.shape, corners)
    paper = np.percentile(img[alpha > 0.99].reshape(-1, 3), 90, axis=0)
    tint = paper / max(float(paper.mean()), 1.0) * (1 + rng.normal(0, 0.03, 3))  # the card's light, its own white
    y, x = np.mgrid[0:h, 0:w].astype(np.float32)
    turn = rng.uniform(0, 2 * np.pi)
    across = ((x - w / 2) * np.cos(turn) + (y - h / 2) * np.sin(turn)) / max(w, h)
    light = 1 - rng.uniform(0, 0.2) * (across + 0.5)
    surface = level * light[..., None] * tint + rng.normal(0, rng.uniform(1, 4), (h, w, 1))
    offset = rng.normal(0, 1, 2)
    offset = offset / max(float(np.linalg.norm(offset)), 1e-6) * card_h * rng.uniform(0.005, 0.03)
    shade = _card_shape(img.shape, corners + np.float32(offset))
    soft = max(1, int(card_h * rng.uniform(0.005, 0.03)) * 2 + 1)
    shade = cv2.GaussianBlur(shade, (soft, soft), 0)
    surface = surface * (1 - rng.uniform(0.08, 0.3) * shade)[..., None]
    alpha = alpha[..., None]
    return np.clip(img * alpha + surface * (1 - alpha), 0, 255).astype(np.uint8)


def _card_shape(shape: tuple[int, ...], corners: np.ndarray) -> np.ndarray:
    """Where the card lies, 0-1 (float32): its outline with rounded corners (vision_lab.synth's
    largest radius), so that no cloth is left where a corner is cut away."""
    from vision_lab import synth

    face = synth._rounded_mask(synth.FACE_W, synth.FACE_H, round(3.8 * synth.PX_PER_MM))
    to = cv2.getPerspectiveTransform(
        np.float32([[0, 0], [synth.FACE_W, 0], [synth.FACE_W, synth.FACE_H], [0, synth.FACE_H]]), corners)
    return cv2.warpPerspective(face, to, (shape[1], shape[0]), flags=cv2.INTER_LINEAR).astype(np.float32) / 255


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ranks", default="A,2,3,4,5,6,7,8,9,T,J,Q,K", help="ranks (T for ten), each in all four suits")
    ap.add_argument("--effects", default=",".join(EFFECTS),
                    help="effects, comma-separated; several joined by + are applied in turn to one picture")
    ap.add_argument("--seed", type=int, default=9100)
    ap.add_argument("--size", default="1280x960", help="the photograph's size, WxH")
    ap.add_argument("--keep", help="save every wrong card's picture in this folder")
    ap.add_argument("--scene", action="store_true",
                    help="read each picture beside its table's empty view, as a camera's watcher reads it")
    ap.add_argument("--refusals", action="store_true",
                    help="print every refusal of a card meant to be read, with its design and reason")
    ap.add_argument("--colour-camera", action="store_true",
                    help="read each picture as a colour camera's (shoed vision identify --colour-camera)")
    args = ap.parse_args()
    cv2.setNumThreads(1)
    import shoed
    from shoed.vision.recognize import Recognizer, scene_shows_colour
    from shoed.vision.watch import monochrome
    from vision_lab import decks, hard_sets

    print(f"shoed from {Path(shoed.__file__).parent}")
    try:
        effects = {combo: combine(combo) for combo in args.effects.split(",")}
    except ValueError as exc:
        ap.error(str(exc))
    recognizer = Recognizer()
    size = tuple(int(v) for v in args.size.split("x"))
    labels = [rank + suit for rank in args.ranks.split(",") for suit in "CDHS"]
    designs = decks.held_out_designs()
    tally = {name: [0, 0, 0] for name in effects}  # right, wrong, refused
    # every refusal's reason (a card a design's index does not let shoed read included)
    reasons: dict[str, Counter[str]] = {name: Counter() for name in effects}
    by_design: dict[str, dict[str, list[int]]] = {name: {} for name in effects}  # right, pictures
    for i, label in enumerate(labels):
        seed = card_seed(args.seed, i)
        # the lettering designs' cards uncovered; the artwork's with synth.photograph's chance of a cover
        shots = hard_sets.held_out_shots(label, seed, size, designs, lettering={"occlusion_p": 0.0})
        for j, (shot, name, refuse) in enumerate(shots):
            for e, (effect, names) in enumerate(effects.items()):
                corners = np.float32(shot.corners)
                picture = apply_effects(names, shot.image, draws(seed, j, e), corners)
                colour = args.colour_camera and not monochrome(picture)
                if args.scene and not colour:  # the same effects, drawn alike, over the table without the card
                    empty = apply_effects(names, without_card(shot.image, corners), draws(seed, j, e), corners)
                    colour = scene_shows_colour(cv2.mean(empty)[:3], picture)
                result = recognizer.identify(picture, colour=colour)
                k = 2 if result.card is None else 0 if result.card == label else 1
                if k == 1:
                    print(f"  WRONG {label} -> {result.card} at {result.confidence:.2f}: {effect}, {name}, "
                          f"seed {seed}, shot {j}", flush=True)
                    if args.keep:
                        os.makedirs(args.keep, exist_ok=True)
                        cv2.imwrite(os.path.join(args.keep, f"{effect}_{name}_{label}_{result.card}.png"), picture)
                if k == 2:
                    reasons[effect][str(result.reason)] += 1
                    if args.refusals and not refuse:
                        print(f"  refused {label}: {effect}, {name}, {result.reason}"
                              + (f" ({result.detail})" if result.detail else "")
                              + f" at {result.confidence:.2f}", flush=True)
                if k == 2 and refuse:
                    k = 0
                tally[effect][k] += 1
                counts = by_design[effect].setdefault(name, [0, 0])
                counts[0] += k == 0
                counts[1] += 1
        print(f"{label}: " + ", ".join(f"{e} {t[0]}/{sum(t)} wrong {t[1]}" for e, t in tally.items()), flush=True)
    wrong = 0
    for effect, (right, bad, refused) in tally.items():
        n = right + bad + refused
        print(f"{effect:8}: {n:5} pictures, right {right / n:6.1%}, wrong {bad}, refused {refused}")
        print("          reasons: " + ", ".join(f"{why} {count}" for why, count in reasons[effect].most_common()))
        short = sorted((c[0] / c[1], name, c) for name, c in by_design[effect].items() if c[0] < c[1])
        print("          designs not read whole: " + (", ".join(f"{name} {c[0]}/{c[1]}" for _, name, c in short)
                                                      or "none"))
        wrong += bad
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
