"""Hard, labelled pictures for judging the camera fallback on what it never saw.

Three kinds, each drawn only from lettering the classifier never trained on
(the held-out Debian font families of vision_lab.fonts, or the held-out
synthetic style when those fonts are not installed):

- `narrow`: tens, court cards and number cards in condensed and narrow
  lettering (a narrow "10" is the classic way to be read as a jack);
- `frames`: frames of a small embedded camera (128 x 128 by default): the card
  fills the frame and its glyphs are a handful of pixels tall (`deck_frames`:
  the same of deck artwork never trained on);
- `casts`: small photographs under strong colour casts (green, amber, blue,
  magenta light, a camera's white balance gone wrong);
- `bleed`: cards whose print runs off their edges, mostly on dark cloth;
- `overlapping`: two different cards, one lying partly over the other (no card is the answer:
  which of them was dealt, the picture does not tell).

Deterministic for a seed and the set of installed fonts.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

import cv2
import numpy as np

from vision_lab import decks
from vision_lab import fonts as F
from vision_lab import synth

CASTS = {  # BGR gains of the light: a white card turns this colour
    "green": (0.75, 1.25, 0.65),
    "amber": (0.55, 0.95, 1.25),
    "blue": (1.3, 1.0, 0.7),
    "magenta": (1.15, 0.7, 1.2),
}
NARROW_CARDS = ("TS", "TH", "TD", "TC", "JS", "JH", "QC", "QD", "KS", "KH", "4C", "7D", "9S", "AH")


def held_out_styles() -> list[synth.CardStyle]:
    """One deck design per held-out Debian font (narrow to normal widths), or the
    held-out synthetic style when none is installed."""
    fonts = F.held_out_system_fonts()
    if not fonts:
        return [synth.held_out_style()]
    base = synth.classic_style()
    return [dataclasses.replace(base, name=f.label, fonts=(f,), width_factor=(0.5, 0.85), drawn_suits_p=1.0)
            for f in fonts]


def held_out_shots(label: str, seed: int, size: tuple[int, int], designs: list[str],
                   lettering: dict | None = None, artwork: dict | None = None
                   ) -> list[tuple[synth.Shot, str, bool]]:
    """One photograph of the card `label` in every held-out lettering design (the kth drawn
    from seed + k, with `lettering`'s options to synth.photograph) and in each of `designs`
    that prints it (the dth from seed + 2000 + d, with `artwork`'s options): (the shot, its
    design's name, whether refusing the card is right there: decks.to_refuse)."""
    shots = [(synth.photograph(label, np.random.default_rng(seed + k), style, size=size, **(lettering or {})),
              style.name, False) for k, style in enumerate(held_out_styles())]
    for d, design in enumerate(designs):
        face = decks.face(design, label)
        if face is not None:
            shots.append((_artwork_shot(label, seed, size, d, face, artwork), design, decks.to_refuse(design, label)))
    return shots


def held_out_shot(label: str, seed: int, size: tuple[int, int], designs: list[str], design: str,
                  artwork: dict | None = None) -> tuple[synth.Shot, int]:
    """The photograph held_out_shots(label, seed, size, designs, artwork=artwork) takes of the card
    in the deck design `design` (one of `designs`, which must print the card), and its place among
    them: one picture of a search found again without taking the others."""
    d = designs.index(design)
    face = decks.face(design, label)
    if face is None:
        raise ValueError(f"{design} prints no {label}")
    place = len(held_out_styles()) + sum(decks.face(other, label) is not None for other in designs[:d])
    return _artwork_shot(label, seed, size, d, face, artwork), place


def _artwork_shot(label: str, seed: int, size: tuple[int, int], d: int, face: synth.Face,
                  artwork: dict | None) -> synth.Shot:
    """The photograph of `face`, the card in the dth held-out deck design, drawn from seed + 2000 + d."""
    return synth.photograph(label, np.random.default_rng(seed + 2000 + d), synth.classic_style(), size=size,
                            face=face, **(artwork or {}))


def side_by_side(rng: np.random.Generator, labels: tuple[str | None, str | None],
                 kinds: tuple[str, str] = ("card", "card")) -> np.ndarray:
    """Two photographs of 960 x 960, one card each (`kinds`: a card, or a back with its label None),
    uncovered, joined left to right into one picture: two cards in view."""
    halves = [synth.photograph(label, rng, kind=kind, size=(960, 960), occlusion_p=0, size_frac=(0.5, 0.7)).image
              for label, kind in zip(labels, kinds)]
    return np.hstack(halves)


def smear(img: np.ndarray, length: int, degrees: float) -> np.ndarray:
    """The picture as a camera moving during the exposure gives it: the mean along a straight line
    `length` px long at `degrees` (a square kernel of that side, its middle row turned)."""
    kernel = np.zeros((length, length), np.float32)
    kernel[length // 2, :] = 1.0
    turn = cv2.getRotationMatrix2D(((length - 1) / 2, (length - 1) / 2), degrees, 1.0)
    kernel = cv2.warpAffine(kernel, turn, (length, length))
    return cv2.filter2D(img, -1, kernel / kernel.sum())


def jpeg(img: np.ndarray, quality: int) -> np.ndarray:
    """The picture as a camera's JPEG at `quality` gives it back."""
    ok, buf = cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_QUALITY, quality])
    return cv2.imdecode(buf, cv2.IMREAD_COLOR)


def monochrome(img: np.ndarray, gains: tuple[float, float, float], quality: int) -> np.ndarray:
    """The picture as a monochrome camera gives it: each pixel's brightness in every channel, times
    the channel's gain (BGR; all 1: grey, else one tint), after a JPEG's round trip at `quality`."""
    level = cv2.cvtColor(img, cv2.COLOR_BGR2GRAY).astype(np.float32)
    return jpeg(np.clip(level[..., None] * np.array(gains, np.float32), 0, 255).astype(np.uint8), quality)


def cast(img: np.ndarray, name: str) -> np.ndarray:
    """The picture under a coloured light (channels clip as a sensor's do)."""
    gains = np.array(CASTS[name], np.float32)
    return np.clip(img.astype(np.float32) * gains, 0, 255).astype(np.uint8)


def narrow(count: int, seed: int, size: tuple[int, int] = (1280, 960),
           size_frac: tuple[float, float] = (0.35, 0.85)) -> Iterator[tuple[synth.Shot, str]]:
    """(shot, design) pairs: NARROW_CARDS in turn, a design each."""
    styles = held_out_styles()
    for i in range(count):
        rng = np.random.default_rng(seed * 100_003 + i)
        style = styles[i % len(styles)]
        label = NARROW_CARDS[(i // len(styles) + i) % len(NARROW_CARDS)]
        yield synth.photograph(label, rng, style, size=size, size_frac=size_frac, occlusion_p=0.0, tilt=0.15), style.name


# how a small camera over the table frames a card: filling most of the picture, a little out of focus
FRAMED = {"size_frac": (0.7, 0.95), "occlusion_p": 0.0, "tilt": 0.15, "blur": 1.0}


def frames(count: int, seed: int, side: int = 128, first: int = 0) -> Iterator[tuple[synth.Shot, str]]:
    """Frames of a side x side camera over the card (a few under a colour cast);
    `first`: the number of the first (the frames before it are left out)."""
    styles = held_out_styles()
    labels = synth.all_labels()
    for i in range(first, count):
        rng = np.random.default_rng(seed * 100_003 + i)
        style = styles[i % len(styles)]
        shot = synth.photograph(labels[(i * 7) % 52], rng, style, size=(4 * side, 4 * side), **FRAMED)
        yield small_frame(shot, side, i), style.name


def deck_frames(per_design: int, seed: int, side: int = 128,
                names: list[str] | None = None) -> Iterator[tuple[synth.Shot, str]]:
    """Frames of a side x side camera over cards of deck artwork never trained on
    (vision_lab.decks: `per_design` cards of each design in `names`, default
    the held-out designs), as `frames` makes them."""
    for i, (shot, design) in enumerate(decks.shots(per_design, seed, size=(4 * side, 4 * side), names=names,
                                                   **FRAMED)):
        yield small_frame(shot, side, i), design


def small_frame(shot: synth.Shot, side: int, i: int) -> synth.Shot:
    """The photograph shrunk to a side x side frame, the `i`th of a set: every
    third under a colour cast (the casts in turn), saved as a JPEG."""
    img = cv2.resize(shot.image, (side, side), interpolation=cv2.INTER_AREA)
    if i % 3 == 2:
        img = cast(img, tuple(CASTS)[i % len(CASTS)])
    return dataclasses.replace(shot, image=jpeg(img, 80))


def casts(count: int, seed: int, size: tuple[int, int] = (480, 360)) -> Iterator[tuple[synth.Shot, str]]:
    """Small photographs under each colour cast in turn."""
    styles = held_out_styles()
    labels = synth.all_labels()
    for i in range(count):
        rng = np.random.default_rng(seed * 100_003 + i)
        style = styles[i % len(styles)]
        shot = synth.photograph(labels[(i * 11) % 52], rng, style, size=size, size_frac=(0.6, 0.9),
                                occlusion_p=0.0, tilt=0.15)
        img = cast(shot.image, tuple(CASTS)[i % len(CASTS)])
        yield dataclasses.replace(shot, image=jpeg(img, 85)), style.name


def bleed(count: int, seed: int, size: tuple[int, int] = (1280, 960),
          styles: list[synth.CardStyle] | None = None) -> Iterator[tuple[synth.Shot, str]]:
    """(shot, design) pairs: cards whose print runs off their edges (one large
    suit symbol cut by the edges; a court card's dark picture filling its
    lower edge), on dark cloth for three pictures in four, where the card's
    outline is lost along the print. Designs in turn: each held-out design
    (default: held_out_styles()) with a rank over its suit in the corner, and
    with the index split between the top corners."""
    styles = styles or held_out_styles()
    labels = synth.all_labels()
    for i in range(count):
        rng = np.random.default_rng(seed * 100_003 + i)
        base = styles[i % len(styles)]
        layout = ("stacked", "split")[(i // len(styles)) % 2]
        style = dataclasses.replace(base, centre="bleed", index_layout=layout)
        if layout == "split":  # a suit printed alone beside the rank is about the rank's size
            style = dataclasses.replace(style, suit_ratio=(0.7, 1.0))
        yield synth.photograph(labels[(i * 7) % 52], rng, style, size=size, occlusion_p=0.0,
                               dark_table=i % 4 != 3), f"{base.name}/{layout}"


def overlapping(count: int, seed: int, size: tuple[int, int] = (1280, 960)
                ) -> Iterator[tuple[np.ndarray, tuple[str, str], str]]:
    """Photographs of two different cards, the second lying partly over the first
    (synth.overlapping), the lettering designs in turn: (picture, (under, over), design)."""
    rng = np.random.default_rng(seed)
    styles = [synth.classic_style(), *held_out_styles()]
    labels = synth.all_labels()
    for i in range(count):
        under, over = (str(c) for c in rng.choice(labels, 2, replace=False))
        style = styles[i % len(styles)]
        yield synth.overlapping((under, over), rng, style, size), (under, over), style.name


SETS = {"narrow": narrow, "frames": frames, "deck_frames": deck_frames, "casts": casts, "bleed": bleed}
