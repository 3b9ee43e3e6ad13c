"""Identifying the card in a photograph: a card, or no card and the reason.

`identify(image)` finds the card (shoed.vision.locate), flattens it, reads the
rank-over-suit index in each corner (shoed.vision.index) with the classifier
(shoed.vision.model), and weighs the evidence:

- rank: the classifier's probability for the best rank of the rank mark;
- suit: shape and colour must both speak for it - the classifier's share for
  the suit shape among everything the mark could be, times the odds that the
  print has that suit's colour (hearts and diamonds red, clubs and spades
  black);
- sharpness: a mark blurred beyond what its size can bear (index.blur_ratio)
  loses the trust in its shape, whatever the classifier says;
- pips: number cards and aces show their suit again, larger, in the middle;
  agreement adds to the index's suit, a clear contradiction takes away;
- corners: a card shows the same index in opposite corners; if two corners are
  read as different cards with any conviction, the card is unreadable.

Below the confidence threshold the answer is no card (with a reason): a guess
is never presented as a card. Pure functions of the image: no clock, no I/O.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from shoed.vision import index as X
from shoed.vision import locate as L
from shoed.vision.model import RANK_CLASSES, SUIT_CLASSES, IndexModel, default_model

DEFAULT_THRESHOLD = 0.9
RED_SUITS = "DH"


@dataclass(frozen=True)
class CornerRead:
    """The best reading of one corner of the flattened card."""

    corner: str
    card: str
    confidence: float
    rank_p: float
    suit_p: float
    red_p: float


@dataclass(frozen=True)
class Identification:
    """What the camera saw. `card` is in the project's notation ("TD", "AS") or
    None, and then `reason` says why; `confidence` is 0..1 (for None, the
    confidence of the best reading that was not good enough, or 0)."""

    card: str | None
    confidence: float
    reason: str | None = None
    corners: list[list[float]] | None = None  # card outline in image pixels: TL, TR, BR, BL of the portrait card
    index: str | None = None  # which corner's index gave the answer
    reads: tuple[CornerRead, ...] = field(default=(), repr=False)

    def to_json(self) -> dict:
        out = {"card": self.card, "confidence": round(float(self.confidence), 4)}
        if self.reason is not None:
            out["reason"] = self.reason
        if self.corners is not None:
            out["corners"] = self.corners
        if self.index is not None:
            out["index"] = self.index
        return out


def _label(rank: str, suit: str) -> str:
    return ("T" if rank == "10" else rank) + suit


def red_probability(redness: float) -> float:
    """How sure the print is red, from its paper-normalised redness (black print
    measures about 0, red print 0.35 to 0.8)."""
    return 1.0 / (1.0 + math.exp(-(redness - 0.18) / 0.035))


def sharpness(blur: float) -> float:
    """Trust in a mark's shape given its blur (index.blur_ratio): full up to
    0.12 (sharp print measures 0.02-0.07, phone photographs up to about 0.11),
    none from 0.2 on, where small suits lose the shapes that tell them apart."""
    return min(1.0, max(0.0, (0.2 - blur) / 0.08))


class Recognizer:
    """Reads cards with a given model and confidence threshold."""

    def __init__(self, model: IndexModel | None = None, threshold: float = DEFAULT_THRESHOLD):
        if not 0.0 < threshold <= 1.0:
            raise ValueError(f"the confidence threshold is in (0, 1], not {threshold}")
        self.model = model or default_model()
        self.threshold = threshold

    def identify(self, image: np.ndarray) -> Identification:
        image = _as_bgr(image)
        quads = L.find_quads(image)
        if not quads:
            return Identification(None, 0.0, "no card found")
        best: Identification | None = None
        for quad in quads:
            tries = [quad, quad.turned()] if quad.ambiguous else [quad]
            for q in tries:
                result = self.read_card(L.warp_card(image, q))
                result = Identification(result.card, result.confidence, result.reason, q.as_list(), result.index,
                                        result.reads)
                if best is None or _rank(result) > _rank(best):
                    best = result
            if best is not None and best.card is not None:
                break
        return best

    def read_card(self, card: np.ndarray) -> Identification:
        """Identify a flattened canonical card (locate.CANON_W x CANON_H, BGR)."""
        views, pips = X.read_card_marks(card)
        vectors = X.collect_vectors(views)
        pip_vectors = [X.glyph_vector(p.ink, p.mask) for p in pips]
        probs = self.model.predict(np.vstack([vectors, *pip_vectors]) if pip_vectors else vectors)
        pip_suit = self._pip_suit(pips, probs[len(vectors) :])
        reads = []
        for view in views:
            best = None
            for p in view.pairings:
                read = self._with_pips(self._read_pair(view.name, p, probs), pip_suit)
                if best is None or read.confidence > best.confidence:
                    best = read
            if best is not None:
                reads.append(best)
        return self._decide(reads)

    def _suit_of(self, sp: np.ndarray, redness: float, blur: float) -> tuple[int, float, float]:
        """Suit index, its probability and the red probability, for one mark's class
        probabilities `sp`. Shape and colour must both speak for the suit: the
        shape's share among everything the mark could be, times the odds that the
        print has that suit's colour (a heart printed black is no spade; it is
        unreadable), times the trust its sharpness allows."""
        red = red_probability(redness)
        colour = np.array([red if x in RED_SUITS else 1.0 - red for x in SUIT_CLASSES])
        shape = sp[13:17]
        s = int(np.argmax(shape * colour))
        p = float(shape[s] / (sp.sum() + 1e-9)) * float(colour[s]) * sharpness(blur)
        return s, p, red

    def _read_pair(self, corner: str, p: X.Pairing, probs: np.ndarray) -> CornerRead:
        rp = probs[p.rank_key]
        r = int(np.argmax(rp[:13]))
        s, suit_p, red = self._suit_of(probs[p.suit_key], p.redness, p.suit_blur)
        rank_p = float(rp[r]) * sharpness(p.rank_blur)
        return CornerRead(corner, _label(RANK_CLASSES[r], SUIT_CLASSES[s]), rank_p * suit_p, rank_p, suit_p, red)

    def _pip_suit(self, pips: list[X.Pip], probs: np.ndarray) -> tuple[str, float] | None:
        """The suit the middle of the card shows, and how surely: the suit most of
        the suit-like marks agree on, weighed by how many agree."""
        votes: dict[int, list[float]] = {}
        for pip, sp in zip(pips, probs, strict=True):
            s, p, _ = self._suit_of(sp, pip.redness, pip.blur)
            if p >= 0.5:
                votes.setdefault(s, []).append(p)
        if not votes:
            return None
        s = max(votes, key=lambda k: (len(votes[k]), sum(votes[k])))
        agree = len(votes[s]) / sum(len(v) for v in votes.values())
        return SUIT_CLASSES[s], float(np.median(votes[s])) * agree

    def _with_pips(self, read: CornerRead, pip_suit: tuple[str, float] | None) -> CornerRead:
        """Number cards and aces show their suit again, larger, in the middle:
        agreement adds to the index's suit, a clear contradiction takes away."""
        if pip_suit is None or read.card[:-1] in ("J", "Q", "K"):
            return read
        suit, p = pip_suit
        if suit == read.card[-1]:
            suit_p = 1.0 - (1.0 - read.suit_p) * math.sqrt(1.0 - p)
        elif p >= 0.5:
            suit_p = read.suit_p * (1.0 - p)
        else:
            return read
        return CornerRead(read.corner, read.card, read.rank_p * suit_p, read.rank_p, suit_p, read.red_p)

    def _decide(self, reads: list[CornerRead]) -> Identification:
        if not reads:
            return Identification(None, 0.0, "no corner index found")
        reads.sort(key=lambda r: -r.confidence)
        top = reads[0]
        confidence = top.confidence
        for other in reads[1:]:
            if other.card != top.card:
                if other.confidence >= 0.5:
                    return Identification(None, 0.0, f"corner indices disagree ({top.card} or {other.card})",
                                          reads=tuple(reads))
                confidence *= 1.0 - other.confidence
            elif other.confidence >= 0.5:
                # Another corner says the same. Its print is the same font, so its
                # doubt is not independent: it counts at half weight.
                confidence = 1.0 - (1.0 - confidence) * math.sqrt(1.0 - other.confidence)
        if confidence < self.threshold:
            why = "colour unclear" if 0.2 < top.red_p < 0.8 else "low confidence"
            return Identification(None, round(confidence, 4), why, reads=tuple(reads))
        return Identification(top.card, round(confidence, 4), None, index=top.corner, reads=tuple(reads))


def _rank(result: Identification) -> tuple:
    return (result.card is not None, result.confidence)


def _as_bgr(image: np.ndarray) -> np.ndarray:
    if not isinstance(image, np.ndarray) or image.ndim not in (2, 3) or image.size == 0:
        raise ValueError("an image is a non-empty numpy array (height x width x 3, BGR)")
    if image.dtype != np.uint8:
        raise ValueError(f"an image has 8-bit pixels, not {image.dtype}")
    if image.ndim == 2:
        return np.repeat(image[..., None], 3, axis=2)
    if image.shape[2] == 4:
        return np.ascontiguousarray(image[..., :3])
    if image.shape[2] != 3:
        raise ValueError(f"an image has 3 colour channels, not {image.shape[2]}")
    return image


_default: Recognizer | None = None


def identify(image: np.ndarray, threshold: float = DEFAULT_THRESHOLD) -> Identification:
    """Identify the one card in a BGR image (numpy uint8 array)."""
    global _default
    if _default is None:
        _default = Recognizer()
    if threshold == _default.threshold:
        return _default.identify(image)
    return Recognizer(_default.model, threshold).identify(image)
