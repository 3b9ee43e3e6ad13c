"""Identifying the card in a photograph: a card, or no card and the reason.

`identify(image)` finds the card (shoed.vision.locate), flattens it, reads the
rank-over-suit index in each corner (shoed.vision.index) with the classifier
(shoed.vision.model), and weighs the evidence. Every cue a croupier uses must
agree, or there is no card:

- rank: the classifier's probability for the best rank of the rank mark; a
  mark with a twin beside it is one glyph of a two-glyph index ("10") and is
  never read alone (the "1" of a narrow "10" looks like a "J"); a two-glyph
  rank over ten pips of one size is a ten, whatever its lettering;
- suit: shape and colour must both speak for it - the classifier's share for
  the suit shape among everything the mark could be, times the odds that the
  print has that suit's colour, judged against the card's own paper;
- sharpness: a mark blurred beyond what its size can bear (index.blur_ratio)
  loses the trust in its shape, whatever the classifier says;
- resolution: glyphs fewer pixels tall (in the original picture) than the
  candidates need to be told apart give `too_small`, never a guess;
- pips: a number card shows as many pips as its rank (never more), an ace one,
  a court card a picture; number cards and aces show their suit again, larger
  (a finger may hide a few pips, never most of a high card's);
  A contradiction gives `cues_disagree`; a count equal to the rank adds to it;
  three pips alone down the middle column are a three's layout and read the
  rank where the index allows a three (lettering never seen: a flat-topped
  "3" taken for a "5");
- corners: a card shows the same index in opposite corners; if two corners are
  read as different cards with any conviction, the card is unreadable;
- a rank alone in the corner (designs with no suit under the rank): read only
  where the card's other print tells the suit - a suit printed alone beside
  the rank with the middle in its colour, or pips numbering the rank and
  showing the suit - and every cue agrees; a court card's picture tells no
  suit: its rank is read only with the suit printed beside it (a split index:
  rank and suit in one colour, clear paper between them, a picture in colours
  in the middle, no rows of pips), else `no_suit_in_index`;
- colour: a picture with no colour in it at all (a monochrome camera, a
  camera's night mode) cannot tell red print from black: a black card read in
  it gives `no_colour` (a red card read shows the colour by its own print).

Below the confidence threshold the answer is no card (with a reason): a guess
is never presented as a card. Pure functions of the image: no clock, no I/O.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import cv2
import numpy as np

from shoed.vision import index as X
from shoed.vision import locate as L
from shoed.vision.model import CLASSES, RANK_CLASSES, SUIT_CLASSES, IndexModel, default_model

DEFAULT_THRESHOLD = 0.9
RED_SUITS = "DH"
COURTS = ("J", "Q", "K")
# The smallest glyphs, in pixels of the picture the card was seen in, whose
# shapes still tell the candidates apart (see docs/vision.md): below
# MIN_BLACK_SUIT_PX a spade and a club run together (a club's three lobes need
# about three pixels each), below MIN_RED_SUIT_PX a heart and a diamond, below
# MIN_RANK_PX a "10" and a "J" - whatever a classifier says.
MIN_BLACK_SUIT_PX = 10.0
MIN_RED_SUIT_PX = 8.0
MIN_RANK_PX = 10.0
# A court card's rank ("J", "Q", "K": a hook, a ring with a tail, diagonals) is read from this many pixels
# where its middle is a picture in colours with no rows of pips (no "10": a ten shows at least
# 10 - MAX_HIDDEN_PIPS of its pips) and another corner reads the same card (one glyph this small, pale or
# smeared, reads as another court rank as surely: nothing else on the card tells them apart), and its
# suit, too small in the index, from the suit its picture prints again, larger (PipEvidence.large; over a
# picture only: a number card's pips are large marks too).
MIN_COURT_RANK_PX = 8.0
# Two corners that read two cards, each at this or more, leave the card refused through that outline
# (low confidence) and contest both cards for every other outline (Identification.contested), as
# corners that disagree at even odds or more do.
CONTEST_P = 0.4
COURT_PICTURE = 0.1  # a court card's picture fills its middle with colours: at least this share of it
# the readings whose middle is measured for a picture in colours: a court card's shows one, an ace's never
PICTURE_ASKED = (*COURTS, "A")
# Pips counted in place of a rank glyph too small to read must be at least this
# tall, or the index must read that rank at COUNT_RANK_P or more: smaller ones
# run together (or a blurred one fades) and are counted short, and a five then
# agrees with a tiny index weakly misread as a four.
MIN_COUNT_PX = 10.0
COUNT_RANK_P = 0.5
# a mark in a corner of a card with no rank-over-suit index reads as a rank at least this surely
# (its blur weighed in) to be a rank printed alone: an index, not a pip near the corner
LONE_RANK_P = 0.5
# Several prints of one suit tell it from a smaller size than one glyph does
# (MIN_BLACK_PIPS_PX, MIN_RED_PIPS_PX; min_prints_px), where one blurred glyph
# would be a guess: a number card's pips, every pip of its rank in view, at
# least PIPS_AGREEING of them read as one suit by their shape and nearly all
# (PIPS_SUIT_P) agree; or the index's suit in PIPS_AGREEING corners, each read
# as that suit surely (PIPS_SUIT_P) and none as the other suit of its colour.
MIN_BLACK_PIPS_PX = 7.0
MIN_RED_PIPS_PX = 6.0
PIPS_AGREEING = 2
PIPS_SUIT_P = 0.9
# A group of pips of one size, as many as the index's rank, counts that rank
# with at least this trust (counting needs no fine shapes, only separate blobs).
COUNT_TRUST = 0.97
# A two, four, six and eight print a three's, five's, seven's, nine's (or ten's) pips but those
# of its middle column, where a lamp's glare washes a pip out, leaving a paler mark of another
# size or none: their count seconds their rank only where the middle shows nothing but the pips
# (_whole) and the index reads the rank at COUNT_RANK_P or more (a defocused "5" read as a "4" at
# 0.42 and 0.54 in its corners over a five's four outer pips, its middle one pale in the glare).
MIDDLE_HIDDEN = ("2", "4", "6", "8")
# Corners that read the same card make it surer only where each reads both its glyphs at least
# this surely: doubt about a glyph's shape printed alike in every corner (a foreign suit symbol
# taken for a spade at 0.5-0.7 in all four) is the design's, not a blur's, and its repeats are
# no new evidence.
SECONDING_P = 0.7
# A court card's middle, a picture, tells no rank: read in one corner alone (the other corner
# covered, or out of the outline), its rank rests on that corner's glyph, and the card needs at
# least this confidence (a narrow "J" bent by a wide lens read as a "Q" at 0.92, its other corner
# under a finger).
COURT_ALONE_P = 0.95
# A finger or a chip over the middle of a number card hides at most this many
# of its pips: a "9" with one pip in view is a court card's picture misread.
MAX_HIDDEN_PIPS = 4
# A "6" read the wrong way up is a "9": a nine is claimed only where more pips
# are in view than a six has, or one in the middle column (a six prints none there).
# A "9" read the wrong way up is a "6" (a design that prints its lower index
# upright, as KDE's ancient-egyptians does, shows a "6" there from the other end):
# a six is claimed only where no pip lies in the middle column, and, read in one corner
# alone, only where the print over the middle may not hide the pips a nine shows more
# (_may_hide: a finger over its middle column), or a pip in view lies on the middle row
# beside the middle column (a six's, never a nine's).
TURNED_SIX = 6
# Three pips in one column down the middle of the card, and no others, are a
# three's whole layout: no other rank prints three pips in its middle column
# with nothing beside them but a seven of some designs (two, three, two), and
# one finger never hides both its side columns while its middle stays in view.
# There the pips read the rank, provided the index leaves it at least this
# likely (a court card's picture or an ace is never taken for a three); so do
# ten pips of one size under a two-glyph rank (a "9" run into a mark beside it
# is two glyphs too).
LAYOUT_FLOOR = 0.05
# The number cards whose pips' layout tells their rank (pip_layout): pips -> (rank, pips in
# each side column, pips in the middle column). No other card shows it with a pip hidden.
LAYOUTS = {3: ("3", 0, 3), 5: ("5", 2, 1), 8: ("8", 3, 2), 9: ("9", 4, 1), 10: ("10", 4, 2)}
TURNED = -1  # a middle-row mark read as one suit's shape one way up and another's the other way
LAYOUT_MIRROR = 0.05  # the side columns' distances from the middle differ by at most this (of the card's width)
LAYOUT_ROW = 0.05  # a row's two pips differ in height by at most this (of the card's height)
LAYOUT_SPAN = 0.4  # the rows span at least this (of the card's height)
LAYOUT_EVEN = 0.1  # a pip is at most this (of the rows' span) from where an even layout puts it
LAYOUT_OFF_CENTRE = 0.15  # an eight's, a ten's middle pips lie at least this (of the span) off the centre
INDEX_SIZE_RATIO = 1.5  # a deck's indices are printed alike: rank glyphs of one size within this factor
# Another corner whose rank glyph, of the index's size and large enough to read, reads another rank at
# least this surely contests the card however unsure its suit is: its rank is as good a reading as the
# best one's (a "J" read for sure above a "4" of another corner). So does its suit, read as another suit
# by its shape this surely, large enough to tell the suits apart. A "6" and a "9" are one glyph turned
# (a design may print its lower index upright): they contest nothing (TURNED_SIX rules them apart).
SURE_GLYPH_P = 0.9
TURNED_RANKS = frozenset({"6", "9"})
MIDDLE_COLUMN = 0.1  # a pip in the middle column: its centre this near the card's middle (fraction of the width)
# Reasons for no card beyond "no card found", "no corner index found", "low
# confidence", "colour unclear" and "corner indices disagree (X or Y)":
TOO_SMALL = "too_small"  # the glyphs are too few pixels to tell the candidates apart
CUES_DISAGREE = "cues_disagree"  # index, pips and colour do not tell the same card
NO_SUIT_IN_INDEX = "no_suit_in_index"  # a rank alone in the corner, and the card's other print does not tell its suit
SEVERAL_CARDS = "several_cards"  # two outlines read two different cards: which one was dealt is not known
NO_COLOUR = "no_colour"  # the picture has no colour (a monochrome camera): red and black print look alike
MIRRORED = "mirrored"  # a rank glyph reads as another rank mirrored: the camera mirrors its picture
_NOTHING_READ = ("no card found", "no corner index found")  # refusals that read no print of a card
# A picture has colour where at least COLOURED_SHARE of its pixels (in a copy of it no larger than
# COLOUR_SIDE) have two channels COLOURED_LEVEL or more apart once its tint is taken out, and, in a picture
# that large, a brightness within EVEN_LEVEL around them (_EVEN_AROUND, 2 px each way: colour_share). A
# monochrome camera's picture has none if grey, and 0.02% at most in a tint at 320 px or more (a JPEG's
# colour noise left); a colour camera's 0.03% and more but for some black cards on grey cloth
# (docs/vision.md).
COLOURED_LEVEL = 40
EVEN_LEVEL = 80
COLOURED_SHARE = 0.0003
COLOUR_SIDE = 320
MAX_TINT_GAIN = 4.0  # a channel is scaled up at most this much to take a tint out
_EVEN_AROUND = np.ones((5, 5), np.uint8)
# A camera's view shows colour where the pixels of the view with a card in it that are as bright as the
# empty view's mean (within SCENE_BAND levels, SCENE_SHARE of the view or more) differ in colour from it by
# SCENE_APART or more in a channel's share of the three (scene_shows_colour); the empty view at least
# SCENE_DARK bright, where a colour has a share to speak of. Measured on vision_lab's photographs cut to
# the card (docs/vision.md): a colour camera's 0.22 apart at the median; a monochrome camera's in a tint
# after a JPEG's round trip 0.056 at most.
SCENE_BAND = 12
SCENE_SHARE = 0.002
SCENE_APART = 0.08
SCENE_DARK = 12
SAME_OUTLINE = 0.8  # an outline overlapping the card's by this share of the smaller (within it, around it) is the card
# two such outlines of one card whose areas differ by less than this factor trace it alike, and are read once
SAME_SIZE = 1.15
# A rank alone in a corner is read only where its print has the suit's colour this surely.
LONE_COLOUR = 0.9
# A suit mark whose colour lies off red and black (index.off_colour) from OFF_COLOUR[0] is taken to
# be of either colour less surely, evenly so from OFF_COLOUR[1] (off_colour_red). Black print through
# a lens's strongest colour fringes measures up to 0.17, red print 0.09; a German bell striped in
# yellow and blue 0.24 and more (docs/vision.md, Measured).
OFF_COLOUR = (0.2, 0.3)
# A hole drilled through the card's middle (_holes): within HOLE_CENTRE of the card's width of its
# centre; its colour's redness (index.Pip.colour) HOLE_GREEN or less (the cloth greener than print),
# or HOLE_NOT_RED or less among pips whose median redness is HOLE_RED_PIPS or more.
HOLE_CENTRE, HOLE_GREEN, HOLE_NOT_RED, HOLE_RED_PIPS = 0.05, -0.15, 0.15, 0.4
PICTURE_COLOURS = 0.03  # a middle with more than this share printed in other colours than red and black is a picture
ACE_PIP = 1.5  # an ace's one pip is at least this many times as tall as its rank
# Print in the middle other than the pips, from this share of a pip's area on, may hide a pip: the pips then
# stand in for no rank too small to read (_whole).
STRAY_PRINT = 0.5
COURT_PIPS = 7  # a court card's picture never shows this many marks of one size: rows of pips
COURT_MARKS = 3  # nor, where its middle shows no picture in colours, this many
# A suit printed beside a court card's rank alone (a split index) stands on the
# rank's line across clear paper: at most this share of the card between them printed.
SUIT_CLEAR = 0.02
# A pip's shape leans to a suit from this share of what the mark could be; the
# pips of one card are printed alike, so where at least SPLIT_PIPS of them, and
# SPLIT_SHARE of those that lean to a suit of the colour, lean to the other suit
# than the rest, the shape of this design's suit is not told apart.
PIP_LEAN = 0.3
PIP_VOTE = 0.5  # a pip read as a suit at least this surely votes for it
LEAST_PIP_P = min(PIP_LEAN, PIP_VOTE, PIPS_SUIT_P)  # below this a pip's reading counts for nothing
SPLIT_PIPS = 2
SPLIT_SHARE = 0.25
# A mark of the middle's group of pips of one size is a pip by its size and
# place; its shape is asked which suit it shows. Where the four suit shapes
# hold at least PIP_SUIT_SHARE of its odds, the odds that it is no glyph at all
# (the "none" class: a small or unusual print of a suit fades towards it) are
# set aside, and each suit's share is of the suits and the ranks.
PIP_SUIT_SHARE = 0.4
NONE_CLASS = CLASSES.index("none")
TWIN_SUIT = {"C": "S", "S": "C", "D": "H", "H": "D"}
# No card is printed mirrored. A card is refused as MIRRORED where one of its rank glyphs that read
# the card (one glyph, at least MIN_RANK_PX tall) reads, mirrored left to right, as another rank at
# MIRROR_P or more, and at least MIRROR_GAIN more surely than as the card's rank as it is: the
# picture is mirrored (a camera set to mirror, a phone's front camera, a view through a mirror), and
# a "4" may read as an "A" (docs/vision.md).
MIRROR_P = 0.9
MIRROR_GAIN = 0.3
# A refusal is said to be MIRRORED where this many corners read one rank so (a card is withheld on one).
MIRROR_CORNERS = 2


@dataclass(frozen=True)
class CornerRead:
    """The best reading of one corner of the flattened card."""

    corner: str
    card: str
    confidence: float
    rank_p: float
    suit_p: float
    red_p: float
    rank_px: float = math.inf  # height of the rank glyph in the picture's pixels
    suit_px: float = math.inf
    glyphs: int = 1  # glyphs in the rank ("10": two)
    counted: bool = False  # the rank was told by the pips' layout, the index agreeing
    # the suit mark's shape reads as this suit more than as any other (False: its shape is another
    # suit's, and its colour alone named this one)
    suit_shaped: bool = True


@dataclass(frozen=True)
class PipEvidence:
    """What the middle of the card says: the pips' suit (and how surely), how
    many pips of one size there are, and their height in the picture's pixels."""

    suit: str | None
    suit_p: float
    count: int
    px: float
    three: bool = False  # three pips, all in the middle column and spread down the card: a three's layout
    split: str | None = None  # the other suit of `suit`'s colour, where a share of the pips' shapes read as it
    agreeing: int = 0  # how many pips read as `suit`
    centred: bool = False  # a pip in the card's middle column
    # the largest print in the middle that is no pip of the group, as a share of a pip's area (index.stray_print)
    stray: float = 0.0
    # the suit that every mark of the middle read surely (PIPS_SUIT_P) by its shape and colour, and as large as
    # an index's suit must be, names, no mark leaning to another (a court card's picture prints its suit again,
    # larger than its index's); and how surely, the least sure of them
    large: str | None = None
    large_p: float = 0.0
    # the middle is a picture in colours (COURT_PICTURE of it; measured only where a corner's rank reads as a
    # court card's, or where the pips would count a rank read unsurely): only there do `large` marks stand for
    # a court card's suit (not a number card's pips), and there marks of one size number no rank
    picture: bool = False
    # the rank whose layout the pips show (pip_layout), of those no card with a pip hidden shows
    layout: str | None = None
    # every mark of the group reads as a pip of `suit` (or, on the middle row, as one suit's shape one
    # way up and another's the other way): only then does their number count a rank
    alike: bool = False
    # two pips alike, in the middle column and spread down the card: a two's layout (or a three's with its
    # middle pip hidden)
    two: bool = False
    # the pips do not lie mirrored about the card's middle column as a number card prints them (mirrored):
    # a pip of a side column hidden; their number then counts no rank (_numbered)
    lopsided: bool = False
    # a pip on the card's middle row beside its middle column: a six's, seven's or eight's, never a nine's
    # (a nine prints four pips down each side, none on the middle row)
    side_middle: bool = False

    @property
    def picture_suit(self) -> str | None:
        """The suit a court card's picture prints again, larger: `large`, over a picture in colours only."""
        return self.large if self.picture else None


NO_PIPS = PipEvidence(None, 0.0, 0, 0.0)


@dataclass(frozen=True)
class Identification:
    """What the camera saw. `card` is in the project's notation ("TD", "AS") or
    None, and then `reason` says why (`detail` may say more); `confidence` is
    0..1 (for None, the confidence of the best reading that was not good
    enough, or 0)."""

    card: str | None
    confidence: float
    reason: str | None = None
    corners: list[list[float]] | None = None  # card outline in image pixels: TL, TR, BR, BL of the portrait card
    index: str | None = None  # which corner's index gave the answer
    reads: tuple[CornerRead, ...] = field(default=(), repr=False)
    detail: str | None = None
    # the cards this reading found evidence against: the index's card where the card's own print
    # speaks against it (more pips than its rank, pips read as another suit or as both suits of
    # its colour, a "9" over a six's pips; not pips too few, which an outline cutting the card
    # short shows too), both cards where two corners read two cards. Another outline's reading
    # of one of them does not count: an outline cut wider (over a chip beside the card) bends the
    # card's middle (a side column's pips move to the middle) or leaves a corner out.
    contested: tuple[str, ...] = field(default=(), repr=False)
    pip_count: int = field(default=0, repr=False)  # pips of one size seen in the card's middle
    pips_covered: bool = field(default=False, repr=False)  # print over the middle may hide a pip (_whole)
    pip_layout: str | None = field(default=None, repr=False)  # the rank whose layout the pips lie in (pip_layout)

    def to_json(self) -> dict:
        out: dict[str, Any] = {"card": self.card, "confidence": round(float(self.confidence), 4)}
        if self.reason is not None:
            out["reason"] = self.reason
        if self.detail is not None:
            out["detail"] = self.detail
        if self.corners is not None:
            out["corners"] = self.corners
        if self.index is not None:
            out["index"] = self.index
        return out


def _a(rank: str) -> str:
    """A rank with its article: "a 2", "an 8", "an A"."""
    return f"an {rank}" if rank in ("A", "8") else f"a {rank}"


def _label(rank: str, suit: str) -> str:
    return ("T" if rank == "10" else rank) + suit


def min_suit_px(suit: str) -> float:
    """The smallest suit glyph (pixels) whose shape tells `suit` from the other
    suit of its colour."""
    return MIN_RED_SUIT_PX if suit in RED_SUITS else MIN_BLACK_SUIT_PX


def min_prints_px(suit: str) -> float:
    """The smallest prints (pixels) whose shapes tell `suit` from the other suit
    of its colour where PIPS_AGREEING of them read alike."""
    return MIN_RED_PIPS_PX if suit in RED_SUITS else MIN_BLACK_PIPS_PX


def _corners_tell_suit(card: str, reads: Sequence[CornerRead]) -> bool:
    """Whether the index's suit, printed in PIPS_AGREEING corners or more, tells the
    suit of `card` where one corner's glyph is too small to: each read as that
    card surely (PIPS_SUIT_P), as large as min_prints_px, and no corner read as
    the other suit of its colour."""
    suit = card[-1]
    if any(r.card[-1] == TWIN_SUIT[suit] for r in reads):
        return False
    return sum(1 for r in reads if r.card == card and r.suit_p >= PIPS_SUIT_P
               and r.suit_px >= min_prints_px(suit)) >= PIPS_AGREEING


def _pips_of(rank: str) -> int | None:
    """How many pips a number card of `rank` shows (None for aces and courts)."""
    if rank == "T":
        return 10
    return int(rank) if rank.isdigit() else None


def _numbered(rank: str, pips: PipEvidence) -> bool:
    """Whether the middle's pips number `rank` (a number card's): as many as it prints, lying as it
    prints them, mirrored about its middle column. A card with a pip hidden from a side column (by
    a lamp's glare that leaves no mark, where a finger leaves one: _whole) shows a lower rank's
    number, lopsided: a six with a corner's pip washed out counts five."""
    return pips.count == _pips_of(rank) and not pips.lopsided


def _count_seconds(rank: str, rank_p: float, pips: PipEvidence) -> bool:
    """Whether the pips' count, equal to `rank`'s, may second the rank as the index reads it
    (at `rank_p`): a two, four, six or eight only over a middle that shows nothing but its pips,
    its index reading it at even odds or better (MIDDLE_HIDDEN)."""
    return rank not in MIDDLE_HIDDEN or (rank_p >= COUNT_RANK_P and _whole(pips))


def _holes(pips: list[X.Pip], rows: list[np.ndarray], turned: list[np.ndarray | None]) -> list[int]:
    """The marks of the middle (their indices in `pips`) that are a hole through the card's very
    middle, as casinos drill the cards of a deck they retire, showing the cloth under the card. Such
    a mark lies at the card's centre (within HOLE_CENTRE of its width), its shape is no suit's
    either way up (`rows`, `turned`: its class probabilities), and its colour is no print's: greener
    or bluer than any red or black print (index.Pip.colour at HOLE_GREEN or less: black print
    measures about 0, red print above 0.4), or far off red and black (index.off_colour), or, among
    red pips, no red at all (HOLE_NOT_RED or less: the cloth dark or grey). A hole over black,
    grey or brown cloth under black pips is as dark as they are, or as grey as one washed out in
    glare, and one over red cloth under red pips as red: it counts as a mark of no suit's shape,
    and the card is refused. A mark taken so is print over the middle, as a chip there is
    (_whole): the pips are not all in view, and their count stands in for no rank too small to
    read, nor seconds a two's, four's, six's or eight's (_count_seconds)."""
    shapeless = [i for i, pip in enumerate(pips) if _at_centre(pip.mark) and not any(
        float(r[13:17].max()) >= PIP_LEAN for r in (rows[i], turned[i]) if r is not None)]
    if not shapeless:
        return []
    suited = [pip.colour() for pip, r in zip(pips, rows, strict=True)
              if float(r[13:17].max()) >= PIP_VOTE]
    red_pips = bool(suited) and float(np.median(suited)) >= HOLE_RED_PIPS
    return [i for i in shapeless if pips[i].colour() <= HOLE_GREEN or pips[i].off >= OFF_COLOUR[1]
            or (red_pips and pips[i].colour() <= HOLE_NOT_RED)]


def _at_centre(m: X.Mark) -> bool:
    cx, cy = m.x + m.w / 2, m.y + m.h / 2
    return abs(cx - L.CANON_W / 2) <= HOLE_CENTRE * L.CANON_W and abs(cy - L.CANON_H / 2) <= HOLE_CENTRE * L.CANON_W


def _whole(pips: PipEvidence) -> bool:
    """Whether the middle shows nothing but its pips: other print there as large as
    STRAY_PRINT of a pip (a finger, a chip) may hide one (a three with its middle pip
    covered shows a two's pips), and the pips then stand in for no rank too small
    to read."""
    return pips.stray < STRAY_PRINT


def _with_pips_seen(result: Identification, pips: PipEvidence) -> Identification:
    """A card's answer with what its middle showed, for the other outlines to weigh (_identify):
    how many pips of one size, whether print over them may hide more, and the rank whose layout
    they lie in."""
    return dataclasses.replace(result, pip_count=pips.count, pips_covered=not _whole(pips), pip_layout=pips.layout)


def _outline_against(found: Identification, through: Identification) -> Identification | None:
    """`found` refused where another outline of the same card (`through`: what was read through
    it) tells another card, or None: it reads another card, its corners contest one (two corners
    reading two cards), or its middle, nothing over it, shows the pips of another rank's layout
    (pip_layout)."""
    card = found.card
    assert card is not None
    seen = through.card if through.card is not None else next((c for c in through.contested if c != card), None)
    if seen is not None and seen != card:
        return dataclasses.replace(found, card=None, reason=f"corner indices disagree ({card} or {seen})", index=None,
                                   detail=OUTLINES_DISAGREE_DETAIL)
    layout = through.pip_layout
    if layout is not None and not through.pips_covered and int(layout) != _pips_of(card[:-1]):
        return dataclasses.replace(found, card=None, reason=CUES_DISAGREE, index=None,
                                   detail=f"index {card}, a {layout}'s pips in the middle through another outline "
                                          "of the card")
    return None


def _both_ends(result: Identification) -> bool:
    """Whether two opposite corners read the card, each from its own rank glyph (not one the pips'
    layout stands in for): a glyph large enough to be read by itself, or a smaller one (FRAME_END_PX
    or more) that reads the rank surely by itself (SURE_GLYPH_P), as a 128 px picture's do. This is
    what the picture's frame, taken as the card's outline, must show. A part of a card that the
    picture's edges cut through looks like a card itself (five pips of an eight in a five's layout,
    a piece of its index in a corner); it cannot show the index at both ends. The card itself must
    pass the threshold as ever; its other end need only read it at FRAME_END_P (that corner may lie
    in glare, or be cut a little)."""
    ends = {r.corner for r in result.reads
            if r.card == result.card and r.confidence >= FRAME_END_P and (
                r.rank_px >= MIN_RANK_PX or (r.rank_px >= FRAME_END_PX and r.rank_p >= SURE_GLYPH_P))}
    return any(ends >= pair for pair in _OPPOSITE_CORNERS)


_OPPOSITE_CORNERS = ({"top-left", "bottom-right"}, {"top-right", "bottom-left"})
FRAME_END_P = 0.1
FRAME_END_PX = 6.0
FRAME_ENDS_DETAIL = "the picture taken as the card: its index must be read at both ends"
FRAME_DISAGREES_DETAIL = "an outline within the picture and the picture taken as the card read two cards"
OUTLINES_DISAGREE_DETAIL = "two outlines of the card, one within the other, read two cards"


def _counted_alone(result: Identification) -> bool:
    """Whether a card's rank was told by its pips alone: its index's rank glyph
    too small to be read by itself."""
    return (result.card is not None and _pips_of(result.card[:-1]) is not None and bool(result.reads)
            and result.reads[0].rank_px < MIN_RANK_PX)


def _pips_tell_suit(rank: str, pips: PipEvidence) -> bool:
    """Whether the middle's pips are large enough to tell their suit by its
    shape: as large as an index's suit glyph must be, where at least
    PIPS_AGREEING of them read as it, or they number the rank (an ace: one), or,
    where they are all of a number card's pips and read alike, as large as
    MIN_BLACK_PIPS_PX or MIN_RED_PIPS_PX. One mark of the middle read as a suit,
    beside one that is not, under a rank of more pips, may be a piece of a
    design's picture (a sprig of leaves read as a spade), not its pip."""
    if pips.suit is None or rank in COURTS:
        return False
    if pips.px >= min_suit_px(pips.suit):
        return pips.agreeing >= PIPS_AGREEING or _numbered(rank, pips) or (rank == "A" and pips.count == 1)
    return (pips.px >= min_prints_px(pips.suit) and _numbered(rank, pips) and pips.agreeing >= PIPS_AGREEING
            and pips.suit_p >= PIPS_SUIT_P and pips.split is None)


def _as_pip(sp: np.ndarray) -> np.ndarray:
    """A pip's class probabilities `sp` with the odds that it is no glyph set
    aside, where its suit shapes hold at least PIP_SUIT_SHARE of them."""
    if sp[13:17].sum() < PIP_SUIT_SHARE * sp.sum():
        return sp
    out = sp.copy()
    out[NONE_CLASS] = 0.0
    return out


def _other_colours(a: int, b: int) -> bool:
    """Whether two suit classes are of different colours (one red, one black)."""
    return (SUIT_CLASSES[a] in RED_SUITS) != (SUIT_CLASSES[b] in RED_SUITS)


def red_probability(redness: float) -> float:
    """How sure the print is red, from its redness against the card's own paper
    (index._print_redness: black print measures about 0, red print 0.5 to 0.9;
    under strong casts black stays below 0.25, red above 0.4). Print whose ink barely differs from
    the paper around it can measure far outside that (a yellow patch on green cloth, under -30):
    the odds are then 0, not an overflow."""
    z = -(redness - 0.35) / 0.05
    return 1.0 / (1.0 + math.exp(z)) if z < 700.0 else 0.0


def off_colour_red(red: float, off: float) -> float:
    """The odds `red` that a mark's print is red, taken towards even as its colour lies off red
    and black (`off`: index.off_colour): untouched to OFF_COLOUR[0], even from OFF_COLOUR[1]. A
    suit printed in yellow and blue is no French suit of either colour, whatever its shape."""
    lo, hi = OFF_COLOUR
    k = min(1.0, max(0.0, (off - lo) / (hi - lo)))
    return red + (0.5 - red) * k


def _surest_shape(sp: np.ndarray, trust: float) -> float:
    """The most that _suit_of can make of a mark's class probabilities `sp` at this trust
    (sharpness), whatever its print's colour: the share of its likeliest suit shape.
    _suit_of's answer is never more (the colour's odds are at most 1)."""
    return float(sp[13:17].max() / (sp.sum() + 1e-9)) * trust


def sharpness(blur: float) -> float:
    """Trust in a mark's shape given its blur (index.blur_ratio): full up to
    0.12 (sharp print measures 0.02-0.07, phone photographs up to about 0.11),
    none from 0.2 on, where small suits lose the shapes that tell them apart."""
    return min(1.0, max(0.0, (0.2 - blur) / 0.08))


def picture_scale(quad: L.CardQuad) -> float:
    """Pixels of the picture per pixel of the canonical card, along the card's
    shorter-seen long side (the most foreshortened way, where glyphs are
    smallest). Never above 1: the canonical card bounds the detail too."""
    c = quad.corners.astype(np.float64)
    left, right = float(np.linalg.norm(c[3] - c[0])), float(np.linalg.norm(c[2] - c[1]))
    top, bottom = float(np.linalg.norm(c[1] - c[0])), float(np.linalg.norm(c[2] - c[3]))
    return float(min(1.0, min(left, right) / L.CANON_H, min(top, bottom) / L.CANON_W))


class Recognizer:
    """Reads cards with a given model and confidence threshold."""

    def __init__(self, model: IndexModel | None = None, threshold: float = DEFAULT_THRESHOLD):
        if not 0.0 < threshold <= 1.0:
            raise ValueError(f"the confidence threshold is in (0, 1], not {threshold}")
        self.model = model or default_model()
        self.threshold = threshold

    def identify(self, image: np.ndarray, colour: bool = False) -> Identification:
        """The card in `image` (BGR). `colour`: the picture is known to be a colour camera's (the
        camera's own view showed colour: `scene_shows_colour`), so a picture with no colour in it
        (a black card filling it) is read; else such a picture is refused as `no_colour`."""
        image = _as_bgr(image)
        quads = L.find_quads(image)
        if not quads:
            return Identification(None, 0.0, "no card found")
        found = self._identify(image, quads)
        if found.reason not in _NOTHING_READ and not colour and not _read_red(found) and not has_colour(image):
            # a card's print was read (as a card, or not surely enough): without colour it is no card
            return dataclasses.replace(found, card=None, reason=NO_COLOUR, index=None,
                                       detail="the picture has no colour: red and black print cannot be told "
                                              "apart (a monochrome camera?)")
        return found

    def _identify(self, image: np.ndarray, quads: list[L.CardQuad]) -> Identification:
        best: Identification | None = None
        contested: dict[str, Identification] = {}
        counts: set[int] = set()  # the pips of one size counted through each outline, two or more
        covered = False  # an outline showed pips with print over the middle that may hide more (_whole)
        earlier: list[tuple[L.CardQuad, Identification]] = []  # each outline, with what it read
        for at, quad in enumerate(quads):
            for q in quad.ways():
                result = self._read_through(image, q)
                earlier.append((quad, result))
                for card in result.contested:
                    contested.setdefault(card, result)
                if result.card is not None and result.card in contested:
                    result = contested[result.card]
                elif result.card is not None and (doubt := _other_outlines_doubt(result, counts, covered)):
                    result = dataclasses.replace(result, card=None, reason=CUES_DISAGREE, index=None, detail=doubt)
                if result.pip_count >= 2:
                    counts.add(result.pip_count)
                    covered = covered or result.pips_covered
                if best is None or _rank(result) > _rank(best) and (result.card is not None or not quad.frame):
                    best = result  # the picture's frame offers a card, not a refusal over an outline's
            if best is not None and best.card in contested:  # the other way up of this outline contests it
                best = contested[best.card]
            if best is not None and best.card is not None:
                return self._alone(image, best, quad, quads[at + 1:], earlier)
        return best if best is not None else Identification(None, 0.0, "no card found")

    def _alone(self, image: np.ndarray, found: Identification, quad: L.CardQuad, others: list[L.CardQuad],
               earlier: Sequence[tuple[L.CardQuad, Identification]] = ()) -> Identification:
        """The card read through `quad` is the answer where no other outline reads another card:
        two cards in view (side by side, or one lying over the other) are refused (SEVERAL_CARDS),
        never one of them taken for the card dealt. An outline within the card's, or around it
        (SAME_OUTLINE: its printed frame, an outline cut wider over a chip, a box printed on the
        cloth around the card), is the card itself, and one that reads no card is no card. Where
        the card's pips do not number its rank, such an outline of another size (SAME_SIZE) must
        not tell another card (_outline_against): through a box a little wider than the card, its
        corners' indices lie inward, where pips are looked for, and an index misread may pass for
        the card. `earlier`: the outlines read before `quad`, with what each read (refusals).
        The picture's own frame, where offered, is read again: the picture may be the card, an
        outline within it a part of the card, and a card read through each, two, is refused alike."""
        # the card's pips number its rank: two cues agree through this outline, which is the card's
        numbered = found.card is not None and found.pip_count == _pips_of(found.card[:-1])

        def same_card(other: L.CardQuad) -> bool:
            return L.overlap(quad, other) >= SAME_OUTLINE and not other.frame

        def weighed(other: L.CardQuad) -> bool:  # an outline of the card whose reading is weighed against it
            return not numbered and L.area_ratio(quad, other) >= SAME_SIZE

        for other, through in earlier:
            if other is not quad and same_card(other) and weighed(other) and (
                    against := _outline_against(found, through)) is not None:
                return against
        for other in others:
            same = same_card(other)
            if same and not weighed(other):
                continue  # the card traced again, nearly as it was, or through its own outline
            for q in other.ways():
                through = self._read_through(image, q)
                if same:
                    if (against := _outline_against(found, through)) is not None:
                        return against
                elif through.card is not None and through.card != found.card:
                    if other.frame:
                        return dataclasses.replace(
                            found, card=None, reason=f"corner indices disagree ({found.card} or {through.card})",
                            index=None, detail=FRAME_DISAGREES_DETAIL)
                    return dataclasses.replace(found, card=None, reason=SEVERAL_CARDS, index=None,
                                               detail=f"{found.card} and {through.card} in view")
                if through.card is not None:
                    break
        return found

    def _read_through(self, image: np.ndarray, q: L.CardQuad) -> Identification:
        """The card read through the outline `q`. Through the picture's own frame a card is read only
        where its index is read at both ends (_both_ends)."""
        result = dataclasses.replace(self.read_card(L.warp_card(image, q), picture_scale(q)), corners=q.as_list())
        if q.frame and result.card is not None and not _both_ends(result):
            result = dataclasses.replace(result, card=None, reason="low confidence", index=None,
                                         detail=FRAME_ENDS_DETAIL)
        return result

    def read_card(self, card: np.ndarray, scale: float = 1.0) -> Identification:
        """Identify a flattened canonical card (locate.CANON_W x CANON_H, BGR);
        `scale`: pixels of the original picture per pixel of `card` (at most 1)."""
        maps = X.print_maps(card)
        views = X.read_corners(maps)
        if all(p.partial for view in views for p in view.pairings):
            # no corner holds a rank over a suit that can be read (the "1" of a
            # "10" is never read alone)
            return self._read_lone(card, scale, maps)
        pips, covering = X.index_pips(views, maps, card)
        vectors = X.collect_vectors(views)
        pip_vectors = _pip_vectors(pips)
        probs = self.model.predict(np.vstack([vectors, *pip_vectors]) if pip_vectors else vectors)
        evidence = self._pip_evidence(pips, probs[len(vectors) :], scale, covering)
        measured = any(RANK_CLASSES[int(np.argmax(probs[p.rank_key][:13]))] in PICTURE_ASKED
                       for view in views for p in view.pairings if not p.partial)
        if measured:
            # a court card's reading: is its middle a picture (the suit printed again there, a small rank)?
            # an ace's: its middle is one pip, no picture
            evidence = dataclasses.replace(evidence, picture=X.middle_colours(card) >= COURT_PICTURE)
        reads = []
        read_by: dict[str, tuple[X.CornerView, X.Pairing]] = {}  # each corner's best reading: its window, pairing
        for view in views:
            best = None
            for p in view.pairings:
                if p.partial:
                    continue  # one glyph of a two-glyph index: the "1" of a "10" is no jack
                # a two-glyph rank over ten pips of one size is a ten, however its lettering looks
                # (the only two-glyph rank, counted), where the index leaves it at least LAYOUT_FLOOR
                # likely: a "9" that runs into a mark beside it is two glyphs too, over ten of the
                # many pips a design may print
                ten = (len(p.rank.labels) == 2 and evidence.count == 10
                       and probs[p.rank_key][RANK_CLASSES.index("10")] >= LAYOUT_FLOOR)
                three = (evidence.three and len(p.rank.labels) == 1
                         and probs[p.rank_key][RANK_CLASSES.index("3")] >= LAYOUT_FLOOR)
                # a rank glyph too small to read tells no rank; pips in the layout of one number card
                # do (pip_layout); a ten's layout only under a rank of two glyphs, as a ten's is (a design
                # may print more pips than its rank: xskat-german's five prints ten, in a ten's layout)
                laid = evidence.layout if (
                    not (ten or three) and evidence.layout is not None and p.rank.h * scale < MIN_RANK_PX
                    and (evidence.layout != "10" or len(p.rank.labels) == 2)) else None
                read = self._with_pips(self._read_pair(view.name, p, probs, scale, ten, three, laid), evidence)
                if best is None or read.confidence > best.confidence:
                    best = read
                    read_by[view.name] = (view, p)
            if best is not None:
                reads.append(best)
        if not reads:
            return self._read_lone(card, scale, maps)
        top = max(reads, key=lambda r: r.confidence)
        if not measured and top.confidence < self.threshold and _numbered(top.card[:-1], evidence) and evidence.alike:
            # the pips would count a rank read unsurely (_decide): marks of a picture in colours number no rank
            evidence = dataclasses.replace(evidence, picture=X.middle_colours(card) >= COURT_PICTURE)
        result = self._decide(reads, evidence)
        asked = [(*read_by[r.corner], r) for r in result.reads if result.card in (None, r.card)]
        result = self._unmirrored(result, [(view, p.rank, probs[p.rank_key], r.card[:-1]) for view, p, r in asked],
                                  scale)
        return _with_pips_seen(result, evidence)

    def _read_lone(self, card: np.ndarray, scale: float, maps: X.PrintMaps | None = None
                   ) -> Identification:
        """A card with no rank-over-suit index in any corner: a rank printed
        alone in a corner is read where the card's other print tells its suit
        and every cue agrees. The suit comes from a suit printed alone in the
        other corner of that end (the card's middle then showing print of the
        suit's colour), or from the pips, which must then number the rank (an
        ace: one pip). A court card's picture tells no suit: its rank is read
        only with a suit printed beside it, across clear paper, over a picture."""
        maps = maps if maps is not None else X.print_maps(card)
        indices = X.lone_indices(maps)
        if not indices:
            return Identification(None, 0.0, "no corner index found")
        rows: list[np.ndarray] = []
        for li in indices:
            li.rank_key = len(rows)
            rows.append(X.mark_vector(li.view, li.rank))
            if li.suit is not None and li.suit_view is not None:
                li.suit_key = len(rows)
                rows.append(X.mark_vector(li.suit_view, li.suit))
        probs = self.model.predict(np.vstack(rows))
        # a mark that reads as no rank is no index: where a design prints a pip near a corner (taken
        # for a rank alone, the pip beside it for its suit), both are left to the pips and counted
        lone = X.lone_marks(card, maps, indices, [li for li in indices if _lone_rank_p(li, probs) >= LONE_RANK_P])
        pip_rows = _pip_vectors(lone.pips)
        pip_probs = self.model.predict(np.vstack(pip_rows)) if pip_rows else probs[:0]
        evidence = self._pip_evidence(lone.pips, pip_probs, scale, lone.covering)
        results = [self._lone_result(li, probs, evidence, lone, scale) for li in lone.indices]
        result = self._lone_answer(results, lone, probs)
        result = self._unmirrored(result, [(li.view, li.rank, probs[li.rank_key], r.reads[0].card[:-1])
                                           for li, r in zip(lone.indices, results, strict=True)
                                           if r.reads and (r is result or result.card is None)], scale)
        return _with_pips_seen(result, evidence)

    @staticmethod
    def _lone_answer(results: list[Identification], lone: X.LoneMarks, probs: np.ndarray) -> Identification:
        """Of the readings of each rank alone (`results`, one per lone.indices):
        a card, else the most telling refusal (a reading with a suit, then a rank
        read surely, before marks too unsure to be called a rank); a card only
        where no other corner shows another rank surely."""
        order = sorted(range(len(results)), reverse=True, key=lambda i: (
            results[i].card is not None, results[i].confidence, results[i].reason != "no corner index found"))
        top, li = results[order[0]], lone.indices[order[0]]
        if top.card is None:
            return top
        for i in order[1:]:
            other, oli = results[i], lone.indices[i]
            beside = li.suit_view is not None and oli.view.name == li.suit_view.name and li.suit is not None and (
                (oli.rank.x, oli.rank.y, oli.rank.w, oli.rank.h) == (li.suit.x, li.suit.y, li.suit.w, li.suit.h))
            if beside or not _alike_marks(li.rank, oli.rank):
                continue  # the suit beside the rank, or a mark of another size than the rank's
            rp = probs[oli.rank_key]
            r = int(np.argmax(rp[:13]))
            sure = _lone_rank_p(oli, probs) >= LONE_RANK_P
            # another corner shows another rank surely, or another card with any conviction
            if (sure and _label(RANK_CLASSES[r], "") != top.card[:-1]) or (
                    other.reads and other.reads[0].card != top.card and other.reads[0].confidence >= 0.5):
                seen = other.reads[0].card if other.reads else _label(RANK_CLASSES[r], "?")
                return Identification(None, 0.0, f"corner indices disagree ({top.card} or {seen})",
                                      contested=(top.card, seen))
        return top

    def _lone_result(self, li: X.LoneIndex, probs: np.ndarray, pips: PipEvidence, lone: X.LoneMarks,
                     scale: float) -> Identification:
        """Weigh one rank alone in a corner against the card's other print."""
        rank = _label(RANK_CLASSES[int(np.argmax(probs[li.rank_key][:13]))], "")
        rank_p = _lone_rank_p(li, probs)
        rank_px = li.rank.h * scale
        if rank_p < LONE_RANK_P:  # no rank surely enough to call the mark an index
            return Identification(None, 0.0, "no corner index found")
        court = rank in COURTS
        if court and li.suit is None:
            return Identification(None, 0.0, NO_SUIT_IN_INDEX,
                                  detail=f"{_a(rank)} alone in the corner, no suit beside it: "
                                         "a court card's picture does not tell its suit")
        n = _pips_of(rank) or 1
        # The pips' number counts here without every mark reading as the suit's pip (PipEvidence.alike,
        # which _decide asks): pips below the middle are printed upside down, and those of KDE's oxygen
        # decks (which print a rank alone) read so as no suit surely, clubs and hearts: half the pips
        # lean to none (asked here, 38 of KDE's 624 deck pictures are lost). The rank is read alone at
        # even odds or better, and a court's rank counts no pips. They lie as a number card prints
        # them, mirrored about the middle column (_numbered).
        counted = not court and pips.count == n and not pips.lopsided and pips.suit is not None
        if rank == "A" and pips.px < ACE_PIP * rank_px:
            counted = False  # an ace's one pip is large; a small mark alone is a detail, not its pip
        if court and pips.count >= COURT_PIPS:
            return Identification(None, 0.0, CUES_DISAGREE,
                                  detail=f"{_a(rank)} alone in the corner, {pips.count} pips in the middle")
        # pips of one size, two or more, must number the rank (one alone may be a
        # piece of a design's one large suit symbol, cut by the card's edge)
        if not court and pips.count >= 2 and pips.count != n:
            return Identification(None, 0.0, CUES_DISAGREE,
                                  detail=f"{_a(rank)} alone in the corner, {pips.count} pips in the middle")
        corner: tuple[str, float] | None = None
        if li.suit is not None:
            sp = probs[li.suit_key]
            if sp[13:17].max() > sp[:13].max():  # a rank beside it is the same index again, not a suit
                s, p, _ = self._suit_of(sp, li.suit_red, li.suit_blur, li.suit_off)
                corner = (SUIT_CLASSES[s], p)
        if corner is not None and counted and corner[0] != pips.suit:
            return Identification(None, 0.0, CUES_DISAGREE,
                                  detail=f"a suit {corner[0]} in the corner, pips of {pips.suit}")
        if rank == "A" and not pips.alike:
            # the one mark does not read as the suit's pip (the suit came from other print): a large
            # mark of no suit's shape is a picture's print (a court card's silhouette), no ace's pip
            counted = False
        if rank != "A" and lone.middle_colours > PICTURE_COLOURS:
            # a number card is printed in its suit's ink alone: marks of a picture in colours number no
            # rank (a German deck's green leaves, run together in a small frame, are no spades' pips;
            # an ace's pip may lie in a coloured ornament, and is asked to read as its suit instead)
            counted = False
        if corner is None and not counted:
            return Identification(None, 0.0, NO_SUIT_IN_INDEX,
                                  detail=f"{_a(rank)} alone in the corner, no suit beside it"
                                         + ("" if court else " and no pips to count"))
        suit = corner[0] if corner is not None else str(pips.suit)
        card = _label(rank, suit)
        red = suit in RED_SUITS
        # the rank is printed in its suit's colour, and so is the middle (pips, or a large suit symbol)
        rank_red = red_probability(li.rank_red)
        colour = rank_red if red else 1.0 - rank_red
        if colour < 1.0 - LONE_COLOUR:
            return Identification(None, 0.0, CUES_DISAGREE,
                                  detail=f"{_a(rank)} alone in the corner printed {'black' if red else 'red'}, "
                                         f"the suit {suit}")
        if colour < LONE_COLOUR:
            return Identification(None, 0.0, "colour unclear")
        if court:
            # a split index: the suit printed alone beside the rank, on clear
            # paper as an index is (not a detail of a picture), over a picture
            if li.suit_apart > SUIT_CLEAR:
                return Identification(None, 0.0, NO_SUIT_IN_INDEX,
                                      detail=f"{_a(rank)} alone in the corner, print between it and the mark beside it "
                                             f"({li.suit_apart:.0%} of the paper between them)")
            if lone.middle_colours <= PICTURE_COLOURS:
                return Identification(None, 0.0, CUES_DISAGREE,
                                      detail=f"{_a(rank)} alone in the corner, no picture in colours in the middle")
        elif corner is not None and not counted:
            if lone.middle_colours > PICTURE_COLOURS:
                return Identification(None, 0.0, CUES_DISAGREE,
                                      detail=f"{_a(rank)} alone in the corner, a picture in colours in the middle "
                                             f"({lone.middle_colours:.0%} of it), not one suit's print")
            if lone.middle is None:
                return Identification(None, 0.0, NO_SUIT_IN_INDEX,
                                      detail=f"a suit {suit} in one corner only, no print in the middle")
            mid_red = red_probability(lone.middle_red)
            if (mid_red if red else 1.0 - mid_red) < LONE_COLOUR:
                return Identification(None, 0.0, CUES_DISAGREE,
                                      detail=f"a suit {suit} in the corner, the middle not in its colour")
        if corner is not None and counted:
            suit_p = 1.0 - (1.0 - corner[1]) * math.sqrt(1.0 - pips.suit_p)
        elif corner is not None:
            suit_p = corner[1]
        else:
            suit_p = pips.suit_p
        confidence = rank_p * suit_p
        if counted and rank_p >= 0.3 and _count_seconds(rank, rank_p, pips):
            confidence = max(confidence, COUNT_TRUST * suit_p)
        suit_px = li.suit.h * scale if li.suit is not None else math.inf if counted else 0.0
        read = CornerRead(li.view.name, card, confidence, rank_p, suit_p, rank_red, rank_px,
                          suit_px if corner is not None else 0.0, len(li.rank.labels))
        small = self._too_small(read, pips, counts=counted)
        if small:
            return Identification(None, round(confidence, 4), TOO_SMALL, reads=(read,), detail=small)
        if confidence < self.threshold:
            return Identification(None, round(confidence, 4), "low confidence", reads=(read,))
        return Identification(card, round(confidence, 4), None, index=li.view.name, reads=(read,))

    def _unmirrored(self, result: Identification, ranks: list[tuple[X.CornerView, X.Mark, np.ndarray, str]],
                    scale: float) -> Identification:
        """`result`, or a refusal as MIRRORED where the rank glyphs that read it (`ranks`: its corner,
        the mark, the mark's class probabilities, the rank it was read as; for a card, those that read
        the card) read as another rank mirrored left to right more surely (MIRROR_P, MIRROR_GAIN): one
        glyph for a card (a card is withheld on any sign that the picture is mirrored, and contested
        for the other outlines), two corners reading one rank so for a refusal (MIRROR_CORNERS: one
        stray mark is no mirrored picture). A glyph alike both ways ("A", "8") tells nothing; a "10"
        and a glyph smaller than MIN_RANK_PX are not asked. A refusal so found keeps its doubt, and
        says the picture looks mirrored."""
        asked = [(view, m, own[RANK_CLASSES.index("10" if rank == "T" else rank)], rank)
                 for view, m, own, rank in ranks if len(m.labels) == 1 and m.h * scale >= MIN_RANK_PX]
        needed = 1 if result.card is not None else MIRROR_CORNERS
        if len(asked) < needed:
            return result
        flipped = self.model.predict(np.stack([
            X.glyph_vector(view.ink[m.y : m.bottom, m.x : m.x + m.w][:, ::-1], m.mask[:, ::-1])
            for view, m, _, _ in asked]))
        seen_by: dict[str, dict[str, str]] = {}  # a rank read mirrored -> corner -> what it read
        for (view, _, as_is, rank), fp in zip(asked, flipped, strict=True):
            r = int(np.argmax(fp[:13]))
            seen = _label(RANK_CLASSES[r], "")
            if seen != rank and fp[r] >= MIRROR_P and fp[r] - as_is >= MIRROR_GAIN:
                seen_by.setdefault(seen, {}).setdefault(
                    view.name, f"the {view.name} rank reads mirrored as {_a(seen)} ({fp[r]:.2f}), as it is as "
                               f"{_a(rank)} ({as_is:.2f})")
        for corners in seen_by.values():
            if len(corners) >= needed:
                # a card withheld so is contested for every other outline: the picture is mirrored through each
                contested = result.contested if result.card is None else (*result.contested, result.card)
                return dataclasses.replace(result, card=None, reason=MIRRORED, index=None, contested=contested,
                                           detail=f"{next(iter(corners.values()))}: no card is printed mirrored "
                                                  "(a camera set to mirror its picture?)")
        return result

    def _suit_of(self, sp: np.ndarray, redness: float, blur: float, off: float = 0.0) -> tuple[int, float, float]:
        """Suit index, its probability and the red probability, for one mark's class
        probabilities `sp`. Shape and colour must both speak for the suit: the
        shape's share among everything the mark could be, times the odds that the
        print has that suit's colour (a heart printed black is no spade; it is
        unreadable), times the trust its sharpness allows. Print of another colour than
        red and black (`off`: index.off_colour) is neither: its odds of either colour
        go to even."""
        red = off_colour_red(red_probability(redness), off)
        colour = np.array([red if x in RED_SUITS else 1.0 - red for x in SUIT_CLASSES])
        shape = sp[13:17]
        s = int(np.argmax(shape * colour))
        p = float(shape[s] / (sp.sum() + 1e-9)) * float(colour[s]) * sharpness(blur)
        return s, p, red

    def _pip_reading(self, pip: X.Pip, sp: np.ndarray, other: np.ndarray | None,
                     lone: bool, grouped: bool = False) -> tuple[int, float] | int | None:
        """One mark's suit and how surely, from its class probabilities `sp` (and
        `other`, those of its print turned over, on the middle row); TURNED where one
        suit's shape reads one way up and another's the other way; None where it
        counts for no suit (its colour then is not measured). `grouped`: the mark is
        one of the pips of one size (index.pip_group), so a suit's shape read one way
        up only (no suit's shape the other way) is its suit."""
        trust = sharpness(pip.blur)
        if _surest_shape(sp, trust) < LEAST_PIP_P and (other is None or _surest_shape(other, trust) < LEAST_PIP_P):
            return None  # read either way up, and of either colour, it counts for no suit
        s, p, _ = self._suit_of(sp, pip.colour(), pip.blur, pip.off)
        if other is None:
            return s, p
        s2, p2, _ = self._suit_of(other, pip.colour(), pip.blur, pip.off)
        upright, over = int(np.argmax(sp[13:17])), int(np.argmax(other[13:17]))
        if upright == over:
            if s2 != s:
                return s, 0.0
            # one of the pips printed one way up that reads as no suit's shape the other way (a club
            # upside down), no other suit's either way, is the suit's pip, as surely as it reads the
            # way it is printed (a mark of a court card's picture is asked both ways alike)
            if grouped and _surest_shape(sp, trust) < LEAST_PIP_P:
                return s, p2
            if grouped and _surest_shape(other, trust) < LEAST_PIP_P:
                return s, p
            return s, min(p, p2)
        if lone and _other_colours(upright, over):
            # A pip alone in the middle (an ace's): turned over, its shape reads as a suit of
            # the other colour (a heart as a spade, a spade or a club as a diamond), and the
            # print's colour tells which way is up. Two shapes of one colour tell nothing.
            s, p = (s, p) if p >= p2 else (s2, p2)
            return (s, p) if s in (upright, over) else None
        return TURNED  # one shape one way up, another the other way (a club turned looks like a spade)

    def _read_pair(self, corner: str, p: X.Pairing, probs: np.ndarray, scale: float, ten: bool = False,
                   three: bool = False, laid: str | None = None) -> CornerRead:
        """A corner's rank over its suit; `ten`, `three`, `laid`: the rank is the one the pips tell
        (a ten's count, a three's column, the layout's rank), not the likeliest of the index alone."""
        rp = probs[p.rank_key]
        r = RANK_CLASSES.index("10") if ten else RANK_CLASSES.index("3") if three else \
            RANK_CLASSES.index(laid) if laid else int(np.argmax(rp[:13]))
        s, suit_p, red = self._suit_of(probs[p.suit_key], p.redness, p.suit_blur, p.suit_off)
        rank_p = float(rp[r]) * sharpness(p.rank_blur)
        if laid:  # the layout's rank: as sure as a count, or as the index if it reads so more surely
            rank_p = max(rank_p, COUNT_TRUST)
        shaped = int(np.argmax(probs[p.suit_key][13:17])) == s
        return CornerRead(corner, _label(RANK_CLASSES[r], SUIT_CLASSES[s]), rank_p * suit_p, rank_p, suit_p, red,
                          p.rank.h * scale, p.suit.h * scale, len(p.rank.labels), three or laid is not None, shaped)

    def _pip_evidence(self, pips: list[X.Pip], probs: np.ndarray, scale: float,
                      covering: dict[int, int] | None = None) -> PipEvidence:
        """The suit most of the middle's suit-like marks agree on, weighed by how
        many agree; and how many pips of one size the middle shows. `probs`:
        the class probabilities of _pip_vectors(pips)'s rows. A pip on the
        middle row is read both ways up: it tells a suit only where both ways
        show one suit's shape, as surely as the less sure of the two (a pip of the
        group, as the way that reads where the other shows no suit's shape), or, alone
        in the middle, where the two shapes are of different colours and its
        print's colour picks one. `covering`: the print in the middle that may
        cover a pip (index.middle_pips), weighed against the pips (index.stray_print).
        Pips in the lower half are read turned over, as most designs print them; where
        that reads their suit less than surely, they are read again as a design that
        prints every pip one way up (_one_way_up)."""
        turned_rows = iter(probs[len(pips) :])
        turned = [next(turned_rows) if pip.either_way else None for pip in pips]
        rows = list(probs[: len(pips)])
        holes = _holes(pips, rows, turned)
        if holes:  # the cloth seen through the card: print over the middle, no pip
            covering = dict(covering or {})
            for i in holes:
                covering.update((k, int(pips[i].mask.sum())) for k in pips[i].mark.labels)
            kept = [i for i in range(len(pips)) if i not in holes]
            pips, rows, turned = [pips[i] for i in kept], [rows[i] for i in kept], [turned[i] for i in kept]
        group = X.pip_group(pips)  # by the marks' sizes alone: the same however the pips are read
        found = self._pips_read(pips, group, rows, turned, scale, covering)
        if found.suit is None or len(pips) < 2 or (found.suit_p >= PIPS_SUIT_P and found.alike) or found.split:
            # read surely, or their shapes read as both suits of a colour (`split`: this design's, or
            # this picture's, spades and clubs are not told apart), which no other way up undoes
            return found
        return self._one_way_up(pips, group, rows, turned, found, scale, covering)

    def _one_way_up(self, pips: list[X.Pip], group: list[X.Pip], rows: list[np.ndarray],
                    turned: list[np.ndarray | None], found: PipEvidence, scale: float,
                    covering: dict[int, int] | None) -> PipEvidence:
        """The pips read as a design that prints every pip one way up (none turned over in the
        lower half): every pip as it lies on the card, and every pip turned over (the card may lie
        either way up). The surer of the two is taken where it tells the suit `found` tells (the
        pips read as most designs print them), more surely than `found` and at PIPS_SUIT_P or
        more; else `found`. The suit never changes. Not asked where `found` reads the
        pips as both suits of a colour (`split`)."""
        flat = [pip for pip, t in zip(pips, turned, strict=True) if t is None]
        rest = iter(self.model.predict(np.stack([_turned_vector(p) for p in flat])) if flat else ())
        over = [t if t is not None else next(rest) for t in turned]
        # as each pip lies on the card, and each turned over: a pip in the lower half is kept turned
        as_lies = [o if pip.turned else r for pip, r, o in zip(pips, rows, over, strict=True)]
        as_turned = [r if pip.turned else o for pip, r, o in zip(pips, rows, over, strict=True)]
        none: list[np.ndarray | None] = [None] * len(pips)
        best = max((self._pips_read(pips, group, way, none, scale, covering) for way in (as_lies, as_turned)),
                   key=lambda e: e.suit_p)
        if best.suit == found.suit and best.suit_p >= max(PIPS_SUIT_P, found.suit_p):
            # a court card's picture prints its suit again turned over in its lower half, as most
            # designs print their pips: what it says (`large`) is read as printed so
            return dataclasses.replace(best, large=found.large, large_p=found.large_p)
        return found

    def _pips_read(self, pips: list[X.Pip], group: list[X.Pip], rows: list[np.ndarray],
                   turned: list[np.ndarray | None], scale: float, covering: dict[int, int] | None) -> PipEvidence:
        """_pip_evidence's reading, each pip's class probabilities as read (`rows`) and, on the middle
        row, turned over (`turned`, None for a pip read one way); `group`: X.pip_group(pips)."""
        votes: dict[int, list[float]] = {}
        leans = [0] * len(SUIT_CLASSES)
        lone = len(pips) == 1
        sure: dict[int, list[float]] = {}  # surely read suits of marks as large as an index's suit must be
        # id of a mark -> the suit it leans to (PIP_LEAN), or TURNED: a suit's shape one way up and
        # another's the other way; a mark not here leans to no suit
        leaning: dict[int, int] = {}
        in_group = {id(p) for p in group}
        for pip, sp, other in zip(pips, rows, turned, strict=True):
            # a court card's picture prints its suit again (`sure`, `large`) only where the picture's
            # mark reads surely as a glyph; the pips of a group read as pips (_as_pip)
            raw = self._pip_reading(pip, sp, other, lone)
            got = raw
            if id(pip) in in_group:
                asp, aother = _as_pip(sp), None if other is None else _as_pip(other)
                if asp is not sp or aother is not other or other is not None:
                    # read as a pip; on the middle row, as its suit one way up alone where need be
                    got = self._pip_reading(pip, asp, aother, lone, True)
            if isinstance(got, int):
                leaning[id(pip)] = TURNED
                continue
            if got is not None:
                s, p = got
                if p >= PIP_VOTE:
                    votes.setdefault(s, []).append(p)
                if p >= PIP_LEAN:
                    leans[s] += 1
                    leaning[id(pip)] = s
            if isinstance(raw, tuple) and raw[1] >= PIPS_SUIT_P and \
                    pip.mark.h * scale >= min_suit_px(SUIT_CLASSES[raw[0]]):
                sure.setdefault(raw[0], []).append(raw[1])
        px = float(np.median([p.mark.h for p in group])) * scale if group else 0.0
        three = len(group) == 3 and _in_middle_column(group)
        in_middle = [_in_middle_column([pip], spread=False) for pip in group]
        centred = any(in_middle)
        side_middle = any(pip.either_way and not middle for pip, middle in zip(group, in_middle, strict=True))
        stray = X.stray_print(group, covering or {})
        lopsided = not mirrored(group)
        large, large_p = None, 0.0
        if len(sure) == 1:
            k = next(iter(sure))
            if all(n == 0 for j, n in enumerate(leans) if j != k):
                large, large_p = SUIT_CLASSES[k], min(sure[k])
        if not votes:
            return PipEvidence(None, 0.0, len(group), px, three, centred=centred, stray=stray, large=large,
                               large_p=large_p, lopsided=lopsided, side_middle=side_middle)
        s = max(votes, key=lambda k: (len(votes[k]), sum(votes[k])))
        # a layout counts where every mark of it reads as a pip of the suit (or, on the middle row, as
        # one shape one way up and another the other way): none of no suit's shape (a chip, a speck
        # of the pips' size), none of another suit's
        alike = all(leaning.get(id(p)) in (s, TURNED) for p in group)
        layout = pip_layout(group) if alike else None
        agree = len(votes[s]) / sum(len(v) for v in votes.values())
        suit = SUIT_CLASSES[s]
        twin = leans[SUIT_CLASSES.index(TWIN_SUIT[suit])]
        split = TWIN_SUIT[suit] if twin >= SPLIT_PIPS and twin >= SPLIT_SHARE * (twin + leans[s]) else None
        return PipEvidence(suit, float(np.median(votes[s])) * agree, len(group), px, three, split, len(votes[s]),
                           centred, stray, large, large_p, layout=layout, alike=alike,
                           two=alike and len(group) == 2 and _in_middle_column(group), lopsided=lopsided,
                           side_middle=side_middle)

    def _with_pips(self, read: CornerRead, pips: PipEvidence) -> CornerRead:
        """Number cards and aces show their suit again, larger, in the middle:
        agreement adds to the index's suit where the index's mark reads as that
        suit by its shape more than as any other, a clear contradiction takes away.
        Where the index's suit is too small to be told by its shape, the pips'
        suit stands in for it, if they are large enough. A court card's picture
        has no pips, but may print its suit again, larger (PipEvidence.large):
        it adds to the index's suit, or takes away, alike."""
        if read.card[:-1] in COURTS:
            if pips.picture_suit is None:
                return read
            suit, p = pips.picture_suit, pips.large_p
        elif pips.suit is None:
            return read
        else:
            suit, p = pips.suit, pips.suit_p
        if suit == read.card[-1]:
            if read.suit_px < min_suit_px(suit) and _pips_tell_suit(read.card[:-1], pips):
                suit_p = p
            elif not read.suit_shaped:
                # the index's mark reads as another suit by its shape, and its colour alone
                # names this one: nothing there to agree with
                return read
            else:
                suit_p = 1.0 - (1.0 - read.suit_p) * math.sqrt(1.0 - p)
        elif p >= 0.5:
            suit_p = read.suit_p * (1.0 - p)
        else:
            return read
        return dataclasses.replace(read, confidence=read.rank_p * suit_p, suit_p=suit_p)

    def _decide(self, reads: list[CornerRead], pips: PipEvidence = NO_PIPS) -> Identification:
        if not reads:
            return Identification(None, 0.0, "no corner index found")
        reads.sort(key=lambda r: -r.confidence)
        top = reads[0]
        confidence = top.confidence
        rank = top.card[:-1]
        sure_enough = top.confidence >= 0.3 or top.glyphs == 2 or top.counted
        # marks of the middle that do not all read as the suit's pips (pieces of a court card's
        # picture among them), or that lie in a picture in colours (a court card's suit printed twice
        # in its frame, under a mirrored "K" read as a "2"), number no rank, however many they are
        counted = (_numbered(rank, pips) and sure_enough and pips.alike and not pips.picture
                   and _count_seconds(rank, top.rank_p, pips))
        if counted:
            # The index's rank and the number of pips agree: two cues, one answer.
            confidence = max(confidence, COUNT_TRUST * top.suit_p)
        seconded = _seconded(top, reads)
        top_sure = _glyphs_sure(top)  # its agreement with another corner may make the card surer
        for other in reads[1:]:
            if other.card != top.card:
                # passed over: the pips rule the other corner's reading out (more pips than its rank,
                # a picture's card with rows of pips; a reading they allow keeps its doubt: pips run
                # together in a small picture are counted short), or two corners agree and a weak
                # reading of other marks, of another size, is a detail of the picture, not this
                # deck's index
                # a "9" against a counted "6": six pips not in the middle column are a nine's with three
                # hidden too, where no pip in view lies on the middle row beside it (a six's, never a nine's)
                ruled_out = counted and _disagreement(other.card, pips) is not None and (
                    {rank, other.card[:-1]} != TURNED_RANKS or rank == "9" or pips.side_middle)
                passed_over = ruled_out or (seconded and not _alike(other, top))
                if (other.confidence >= 0.5 and not ruled_out) or (not passed_over and _contests(other, top)):
                    return Identification(None, 0.0, f"corner indices disagree ({top.card} or {other.card})",
                                          reads=tuple(reads), contested=(top.card, other.card))
                if not passed_over:
                    confidence *= 1.0 - other.confidence
            elif other.confidence >= 0.5 and top_sure and _glyphs_sure(other):
                # Another corner says the same. Its print is the same font, so its
                # doubt is not independent: it counts at half weight.
                confidence = 1.0 - (1.0 - confidence) * math.sqrt(1.0 - other.confidence)
        small = self._too_small(top, pips, reads)
        if small:
            return Identification(None, round(confidence, 4), TOO_SMALL, reads=tuple(reads), detail=small)
        if top.confidence >= 0.5:
            clash = _disagreement(top.card, pips) or _picture_under_ace(top, pips, reads)
            short = None if clash else _pips_short(top.card, pips)
            if clash or short:
                # what the middle shows against the card holds for every outline, but for pips too few:
                # another outline may show the middle whole
                return Identification(None, round(confidence, 4), CUES_DISAGREE, reads=tuple(reads),
                                      detail=clash or short,
                                      contested=() if short or _too_few_pips(top.card, pips) else (top.card,))
        too_low = confidence < self.threshold
        # read in one corner alone, a court card's rank and a suit the middle does not show again rest on
        # that corner's one glyph
        alone = not too_low and not seconded and confidence < COURT_ALONE_P and (
            rank in COURTS or pips.suit != top.card[-1])
        # a "6" read in one corner alone over print that may hide the pips a "9" would show more, none of
        # those in view on the middle row beside the middle column (a six's, never a nine's): a "9" printed
        # upright at that end with its middle column hidden shows the same (TURNED_SIX), however surely
        turned = (not too_low and not seconded and rank == "6" and not pips.side_middle
                  and _may_hide(pips) >= 9 - pips.count)
        if too_low or alone or turned:
            why = "colour unclear" if too_low and 0.2 < top.red_p < 0.8 else "low confidence"
            # corners reading two cards at nearly even odds each speak against both, as surer ones do
            doubted = tuple(dict.fromkeys(r.card for r in reads if r.confidence >= CONTEST_P))
            detail = None if too_low else (
                f"a {'court card' if rank in COURTS else 'suit'} read in one corner alone, {COURT_ALONE_P} needed"
                if alone else "a 6 read in one corner alone, print over the middle that may hide a 9's")
            return Identification(None, round(confidence, 4), why, reads=tuple(reads),
                                  contested=doubted if len(doubted) > 1 else (), detail=detail)
        return Identification(top.card, round(confidence, 4), None, index=top.corner, reads=tuple(reads))

    @staticmethod
    def _too_small(top: CornerRead, pips: PipEvidence, reads: Sequence[CornerRead] = (),
                   counts: bool = True) -> str | None:
        """Why the best reading's glyphs are too small to be trusted, or None. The
        rank may instead be counted from pips large enough to lie apart (number
        cards; `counts`: whether the reading lets its pips count), the suit seen in
        large enough pips that agree, or in the index's suit read alike in two
        corners (`reads`: every corner's reading)."""
        rank, suit = top.card[:-1], top.card[-1]
        # pips in a number card's layout lie apart, however small: none ran together
        counted = counts and _numbered(rank, pips) and _whole(pips) and (
            pips.px >= MIN_COUNT_PX or top.rank_p >= COUNT_RANK_P or pips.layout is not None)
        # an ace's one large pip, read as the index's suit, is its rank's second reading
        ace = (rank == "A" and pips.count == 1 and _whole(pips) and pips.px >= ACE_PIP * top.rank_px
               and pips.alike and pips.suit == suit and pips.suit_p >= PIPS_SUIT_P and top.rank_p >= COUNT_RANK_P)
        # a court card: a picture in colours rules out a ten, whose pips are rows of one size
        court = (rank in COURTS and pips.picture and top.rank_px >= MIN_COURT_RANK_PX
                 and pips.count < 10 - MAX_HIDDEN_PIPS and _seconded(top, reads))
        if top.rank_px < MIN_RANK_PX and not (counted or ace or court):
            covered = "" if _whole(pips) or rank in COURTS or pips.count != (_pips_of(rank) or 1) else (
                f", other print in the middle, the size of {pips.stray:.1f} pips")
            return f"rank glyph {top.rank_px:.1f} px tall, {MIN_RANK_PX:.0f} needed{covered}"
        need = min_suit_px(suit)
        # a court card's picture printing its suit again, larger, tells it where the index's is too small
        if top.suit_px < need and not (pips.suit == suit and _pips_tell_suit(rank, pips)) and not (
                rank in COURTS and pips.picture_suit == suit) and not _corners_tell_suit(top.card, reads):
            return f"suit glyph {top.suit_px:.1f} px tall, {need:.0f} needed"
        return None


def _contests(other: CornerRead, top: CornerRead) -> bool:
    """Whether `other` corner, its index of the size of `top`'s, reads one of its glyphs otherwise
    than `top` as surely as a glyph is read (SURE_GLYPH_P) and from enough pixels: another rank,
    whatever its suit reads, or another suit by its shape, whatever its rank reads. The corners then
    disagree. A "6" against a "9" is one glyph turned (TURNED_RANKS)."""
    if not _alike(other, top):
        return False
    ranks = {other.card[:-1], top.card[:-1]}
    if len(ranks) == 2 and ranks != TURNED_RANKS and other.rank_p >= SURE_GLYPH_P and other.rank_px >= MIN_RANK_PX:
        return True
    suit = other.card[-1]
    return (suit != top.card[-1] and other.suit_p >= SURE_GLYPH_P and other.suit_shaped
            and other.suit_px >= min_suit_px(suit))


def _seconded(top: CornerRead, reads: Sequence[CornerRead]) -> bool:
    """Whether another corner than `top`'s reads its card, at 0.5 or more."""
    return any(r is not top and r.card == top.card and r.confidence >= 0.5 for r in reads)


def _glyphs_sure(read: CornerRead) -> bool:
    """Whether a corner reads both its rank and its suit at SECONDING_P or more: its agreement
    with another corner then makes the card surer."""
    return min(read.rank_p, read.suit_p) >= SECONDING_P


def _lone_rank_p(li: X.LoneIndex, probs: np.ndarray) -> float:
    """How surely the mark of a rank printed alone (`li`) reads as its likeliest rank, its blur
    weighed in (`probs`: the classifier's rows, li.rank_key among them)."""
    rp = probs[li.rank_key]
    return float(rp[:13].max()) * sharpness(li.rank_blur)


def _pip_vectors(pips: list[X.Pip]) -> list[np.ndarray]:
    """Each pip's feature vector, then those of the pips on the middle row
    upside down (the card may lie either way up)."""
    rows = [X.glyph_vector(p.ink, p.mask) for p in pips]
    return rows + [_turned_vector(p) for p in pips if p.either_way]


def _turned_vector(pip: X.Pip) -> np.ndarray:
    """A pip's feature vector with its print turned over (half a turn)."""
    return X.glyph_vector(pip.ink[::-1, ::-1], pip.mask[::-1, ::-1])


def _disagreement(card: str, pips: PipEvidence) -> str | None:
    """Where the middle of the card contradicts its index, or None. A number card
    shows as many pips as its rank (fewer may be in view, never more); an ace
    one; a court card a picture, not rows of pips nor a two's two pips down
    the middle column with no picture; three pips alone down the middle column
    are a three's; pips laid out as only one rank lays them (pip_layout) are
    that rank's. Number cards and aces show the index's suit.
    Fewer pips than the rank may be in view (a finger over the middle), but
    not MAX_HIDDEN_PIPS fewer, nor as few as a six's under a "9"."""
    rank, suit = card[:-1], card[-1]
    n = _pips_of(rank)
    if rank in COURTS and pips.count >= COURT_PIPS:
        return f"index {card}, {pips.count} pips in the middle"
    if rank in COURTS and pips.two and not pips.picture:
        # a court card's picture may print its suit twice, not down the middle with nothing in colours
        return f"index {card}, a two's pips in the middle, no picture"
    if rank in COURTS and pips.count >= COURT_MARKS and not pips.picture:
        # nor three marks of one size or more with no picture in colours: a number card's pips, the
        # rest of them out of view (a finger, glare, the card bent)
        return f"index {card}, {pips.count} pips in the middle, no picture"
    if rank == "A" and pips.count >= 2:
        return f"index {card}, {pips.count} pips in the middle"
    if n is not None and (pips.count > n or _too_few_pips(card, pips)):
        return f"index {card}, {pips.count} pips in the middle"
    if rank == "9" and pips.count <= TURNED_SIX and not pips.centred:
        return f"index {card}, {pips.count} pips in the middle: a 6 the wrong way up"
    if n is not None and n != 3 and pips.three:
        return f"index {card}, a three's pips"
    if rank not in COURTS and pips.suit not in (None, suit) and pips.suit_p >= 0.8 and pips.px >= min_suit_px(suit):
        return f"index {card}, pips of {pips.suit}"
    if rank not in COURTS and _suits_split(card, pips):
        return f"index {card}, pips that read as {pips.suit} and as {pips.split}"
    if pips.layout is not None and n != int(pips.layout):
        # the pips lie as only a card of another rank lays them out (pip_layout)
        return f"index {card}, a {pips.layout}'s pips in the middle"
    if rank == "6" and pips.centred:
        return f"index {card}, a pip in the middle column: a 9 the wrong way up"
    return None


def _picture_under_ace(top: CornerRead, pips: PipEvidence, reads: Sequence[CornerRead]) -> str | None:
    """Where the best reading is an ace over a picture in colours, read in one corner alone, or None.
    An ace's middle is one pip: a court card's picture under a rank misread as an "A" (a black mark of
    the picture taken for the ace's pip). Some designs print their ace of spades in a picture in
    colours: an ace that two corners read is read over one."""
    if top.card[:-1] == "A" and pips.picture and not _seconded(top, reads):
        return f"index {top.card}, a picture in colours in the middle"
    return None


def _other_outlines_doubt(result: Identification, counts: set[int], covered: bool) -> str | None:
    """What the card's other outlines showed against `result`'s card, or None: more pips of one size
    than its rank (`counts`: the pips counted through each); or, where the count stands in for a
    rank too small to read (_counted_alone), another count, or print over the pips (`covered`: a
    finger whose edge and the card's bound this outline, the pips in view of it lying as a lower
    rank's)."""
    card = result.card
    assert card is not None
    if max(counts, default=0) > (_pips_of(card[:-1]) or COURT_PIPS):
        return f"index {card}, {max(counts)} pips in the middle through another outline"
    if _counted_alone(result):
        if others := counts - {result.pip_count}:
            return f"index {card}, {result.pip_count} pips in the middle, {max(others)} through another outline"
        if covered:
            return f"index {card}, {result.pip_count} pips in the middle, print over them through another outline"
    return None


def _too_few_pips(card: str, pips: PipEvidence) -> bool:
    """Whether fewer of a number card's pips are in view than a finger hides: the card's middle is
    not all in view (an outline that cuts the card short shows this too: another may show them all)."""
    n = _pips_of(card[:-1])
    return n is not None and pips.count < n - MAX_HIDDEN_PIPS


def _may_hide(pips: PipEvidence) -> int:
    """How many pips the print over the middle may hide: none where the middle shows nothing but its
    pips (_whole); else one for each STRAY_PRINT of a pip's area, or part of it, that the largest
    such print measures (print of 0.6 of a pip's area may lie over parts of two), at most
    MAX_HIDDEN_PIPS."""
    return 0 if _whole(pips) else min(MAX_HIDDEN_PIPS, math.ceil(pips.stray / STRAY_PRINT))


def _pips_short(card: str, pips: PipEvidence) -> str | None:
    """Where fewer of a number card's pips are in view than its rank, two or more, large enough to
    lie apart (not run together and counted short), and more are missing than the print over the
    middle may hide (_may_hide: any, where nothing lies over it): the index's rank is doubted (an
    "8" read as a "9" in a small frame; a "4" read as a "7" over three pips and a finger's edge),
    or None. A pip the outline cut off, or a lamp's glare washed out, costs a refusal, never a
    wrong card. Only the best reading is asked: the count rules no other corner's reading out."""
    n = _pips_of(card[:-1])
    if n is not None and 2 <= pips.count < n and n - pips.count > _may_hide(pips) and pips.px >= MIN_COUNT_PX:
        over = "nothing" if _whole(pips) else f"print the size of {pips.stray:.1f} pips"
        return f"index {card}, {pips.count} pips in the middle and {over} over it"
    return None


def _suits_split(card: str, pips: PipEvidence) -> bool:
    """Whether the middle's pips read as both suits of `card`'s colour: the
    design's suit shapes are not told apart."""
    return pips.split is not None and card[-1] in (pips.suit, pips.split)


def _alike(a: CornerRead, b: CornerRead) -> bool:
    """Whether two corner readings are of marks of one size (a deck prints its
    indices alike): rank glyphs within a factor INDEX_SIZE_RATIO of each other."""
    if math.isinf(a.rank_px) or math.isinf(b.rank_px):
        return True
    return max(a.rank_px, b.rank_px) <= INDEX_SIZE_RATIO * min(a.rank_px, b.rank_px)


def _alike_marks(a: X.Mark, b: X.Mark) -> bool:
    """Whether two marks are of one size, as a deck's ranks are (INDEX_SIZE_RATIO)."""
    return max(a.h, b.h) <= INDEX_SIZE_RATIO * min(a.h, b.h)


def _centre(pip: X.Pip) -> tuple[float, float]:
    """Where a pip's centre lies on the flattened card, as fractions of its width and height."""
    return (pip.mark.x + pip.mark.w / 2) / L.CANON_W, (pip.mark.y + pip.mark.h / 2) / L.CANON_H


def _middle_column(x: float) -> bool:
    """Whether a pip centred at `x` (a fraction of the card's width) is in the card's middle column."""
    return abs(x - 0.5) <= MIDDLE_COLUMN


def _in_middle_column(group: list[X.Pip], spread: bool = True) -> bool:
    """Whether the pips all lie in the card's middle column and, with `spread`,
    spread from its upper to its lower part (not a cluster in one place)."""
    centres = [_centre(p) for p in group]
    ys = [y for _, y in centres]
    return all(_middle_column(x) for x, _ in centres) and (not spread or (min(ys) < 0.35 and max(ys) > 0.65))


def _columns(group: list[X.Pip]) -> tuple[list[tuple[float, float]], list[float], list[tuple[float, float]]]:
    """The pips' centres on the flattened card (fractions of its width and height): those of the left
    side column, the heights of those in the middle column, those of the right side column."""
    left: list[tuple[float, float]] = []
    middle: list[float] = []
    right: list[tuple[float, float]] = []
    for p in group:
        x, y = _centre(p)
        if _middle_column(x):
            middle.append(y)
        else:
            (left if x < 0.5 else right).append((x, y))
    return left, middle, right


def _mirror_rows(left: list[tuple[float, float]], right: list[tuple[float, float]]) -> list[float] | None:
    """The heights of the rows two side columns of pips make where they mirror each other about the
    card's middle, as a number card prints them (as many pips on either side, as far from the middle,
    each row a pip on either side at one height), top to bottom; None where they do not."""
    if len(left) != len(right):
        return None
    if not left:
        return []
    left, right = sorted(left, key=lambda c: c[1]), sorted(right, key=lambda c: c[1])
    reach_left = 0.5 - sum(x for x, _ in left) / len(left)
    reach_right = sum(x for x, _ in right) / len(right) - 0.5
    if abs(reach_left - reach_right) > LAYOUT_MIRROR:
        return None
    if any(abs(a[1] - b[1]) > LAYOUT_ROW for a, b in zip(left, right)):
        return None
    return [(a[1] + b[1]) / 2 for a, b in zip(left, right)]


def mirrored(group: list[X.Pip]) -> bool:
    """Whether the pips lie as a number card prints them, mirrored about its middle column (a
    pip hidden from a side column, by a finger or a lamp's glare, leaves them lopsided)."""
    left, _, right = _columns(group)
    return _mirror_rows(left, right) is not None


def pip_layout(group: list[X.Pip]) -> str | None:
    """The rank whose layout the pips of one size show, of those no other number card shows
    with a pip hidden, or None. A number card prints its pips in two side columns, mirrored,
    on rows evenly spaced, and in the middle column: a three three down it; a five, a
    nine one at the centre, four or eight round it; an eight, a ten two, as far above
    the centre as below it, six or eight round them. A two is a three with its middle pip
    hidden, a four a five, a six a seven, a seven an eight: their layouts tell nothing
    alone. Positions on the flattened card, as fractions of its width and height."""
    want = LAYOUTS.get(len(group))
    if want is None:
        return None
    rank, sides, middles = want
    left, middle, right = _columns(group)
    if len(left) != sides or len(right) != sides or len(middle) != middles:
        return None
    middle.sort()
    rows = _mirror_rows(left, right)
    if rows is None:
        return None  # the side columns mirror each other about the middle, a pip on either side of each row
    if not sides:
        rows = middle  # a three: its pips are its rows
    top, bottom = rows[0], rows[-1]
    span = bottom - top
    if span < LAYOUT_SPAN:
        return None  # spread from the card's upper part to its lower
    step = span / (len(rows) - 1)
    if any(abs(rows[i] - (top + i * step)) > LAYOUT_EVEN * span for i in range(1, len(rows) - 1)):
        return None  # rows evenly spaced
    centre = (top + bottom) / 2
    if middles == 1 and abs(middle[0] - centre) > LAYOUT_EVEN * span:
        return None  # one pip at the centre
    if middles == 2:
        above, below = centre - middle[0], middle[1] - centre
        if abs(above - below) > LAYOUT_EVEN * span or min(above, below) < LAYOUT_OFF_CENTRE * span \
                or max(above, below) > span / 2:
            return None  # two pips between the outer rows, as far above the centre as below it, neither at it
    return rank


def _rank(result: Identification) -> tuple:
    return (result.card is not None, result.confidence)


def _read_red(found: Identification) -> bool:
    """Whether the card read is a red one: its suit's shape read in print measured redder than the
    card's own paper, which a monochrome camera's picture never shows (its red print is as dark as
    black, in grey or in one tint). The card itself shows the camera sees colour, where the rest of
    the picture may not: a small card on grey cloth, its pips too small to count in has_colour's copy."""
    return found.card is not None and found.card[-1] in RED_SUITS


def has_colour(image: np.ndarray) -> bool:
    """Whether the picture (BGR) shows colour: at least COLOURED_SHARE of it (colour_share). A
    monochrome camera's picture has none, in grey or in one tint: its red print is as dark as
    black, and no suit's colour can be told; a colour camera's shows its cloth, chips or red print."""
    return colour_share(image) >= COLOURED_SHARE


def colour_share(image: np.ndarray) -> float:
    """The share of the picture's pixels with two channels COLOURED_LEVEL apart once its tint is
    taken out (each channel scaled to the mean of the three: a grey world). The picture is judged
    on a copy no larger than COLOUR_SIDE (its pixels picked, not averaged); on a picture that
    large, only where the brightness around a pixel is even (within EVEN_LEVEL, 2 pixels each
    way): a JPEG keeps colour at half resolution and smears a tinted paper's colour across the
    edges of the print. A smaller picture's print has no even ground inside it (a 128 x 128
    frame's pips are 5-8 pixels wide): every pixel counts, and a tint is not told from colour."""
    h, w = image.shape[:2]
    large = max(h, w) >= COLOUR_SIDE
    if max(h, w) > COLOUR_SIDE:
        scale = COLOUR_SIDE / max(h, w)
        image = cv2.resize(image, (max(1, round(w * scale)), max(1, round(h * scale))),
                           interpolation=cv2.INTER_NEAREST)
    means = np.maximum(np.array(cv2.mean(image)[:3]), 1.0)
    gains = np.minimum(means.mean() / means, MAX_TINT_GAIN)
    b, g, r = cv2.split(cv2.transform(image, np.diag(gains)))  # OpenCV's: a twentieth of numpy's time here
    spread = cv2.max(cv2.max(cv2.absdiff(b, g), cv2.absdiff(g, r)), cv2.absdiff(b, r))
    coloured = spread >= COLOURED_LEVEL
    if large:
        uneven = cv2.morphologyEx(cv2.cvtColor(image, cv2.COLOR_BGR2GRAY), cv2.MORPH_GRADIENT, _EVEN_AROUND)
        coloured &= uneven < EVEN_LEVEL
    return float(np.count_nonzero(coloured)) / spread.size


def scene_shows_colour(empty: Sequence[float] | np.ndarray, view: np.ndarray) -> bool:
    """Whether a camera's view shows colour: its empty view's mean colour (BGR: the table's cloth)
    and the colour of the pixels as bright in the same view with a card in it (`view`, BGR), apart by
    SCENE_APART or more in a channel's share of the three. A monochrome camera's colour is a
    function of brightness, whatever its tint and tone curves: at one brightness, the cloth and the
    card's print (its edges, grey ink) are one colour. A colour camera sees green, blue or red cloth
    beside black print as bright, where a picture of the card alone (a black card filling it)
    shows no colour. Grey cloth, or none of the card's print as bright as the cloth, shows nothing."""
    if view.ndim != 3:
        return False  # a grey picture: a monochrome camera's
    view = _as_bgr(view)  # an alpha channel left out
    cloth = np.asarray(empty, np.float64)[:3]
    level = float(cloth.mean())
    if level < SCENE_DARK:
        return False
    grey = cv2.transform(view, np.full((1, 3), 1 / 3))  # the mean of the channels, as the cloth's level
    near = cv2.inRange(grey, level - SCENE_BAND, level + SCENE_BAND)
    if cv2.countNonZero(near) < SCENE_SHARE * grey.size:
        return False
    same = np.array(cv2.mean(view, near)[:3])
    return float(np.abs(cloth / cloth.sum() - same / max(same.sum(), 1.0)).max()) >= SCENE_APART


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
