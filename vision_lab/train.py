"""Training the index classifier from rendered glyphs.

    python -m vision_lab.train [--out shoed/vision/data/index_model.npz] [--per-class 4000] [--epochs 25] [--seed 1]

(the shipped model was made with these defaults, on a machine with the training
font families installed - the Debian packages of vision_lab.fonts.TRAINING_FAMILIES,
listed in docs/vision.md - and the deck artwork, in about ten minutes of one
core, CPU only, `nice -n 10`; the same seed and fonts give the same model)

Every sample is a rank or suit mark drawn by vision_lab.fonts in a training
font, then put through what a camera does to print: width and stroke weight
changes, a slight rotation and shear, shrinking to 12-64 pixels tall, blur,
faded contrast, noise; then binarised and measured by exactly the functions the
recogniser uses (index.threshold, index.absorb_fragments, index.rank_marks,
index.glyph_vector). The "none" class gets foreign letters, lone "1" and "0",
broken glyphs, and picture and pattern pieces. Each suit gets a quarter more
samples (SHADED_EXTRA), drawn from a random stream of their own, whose ink is
shaded (fonts.shaded: a gradient, a lighter centre, a dark outline around a
tinted inside, a highlight over one half), as many decks print their suits;
each suit gets as many again (WIDE_EXTRA), half of them shaded, from a stream
of their own: spades and clubs drawn in wider proportions than the common
shapes (fonts.suit_shape_mask(wide=True): a short body over a long slender
stem, small or large lobes set close or apart), so that a club is told from a
spade by its lobes, not by the length of its stem; hearts and diamonds drawn
as usual, so the four suits keep equal shares.

Deck artwork (vision_lab.decks, when gnome-cards-data and librsvg2-bin are
installed): the index marks of every card of the training designs
(decks.TRAINING_DESIGNS, whole families of lettering) are masters too, for a
share of the samples (`--deck-share`): index lettering drawn for cards
(narrow tens, flat-topped threes, clubs with thin stems), and foreign court
letters ("B", "D", "F", "R", a Cyrillic "T") as "none". Lettering found on
cards but in no training font (fonts.CARD_GLYPHS: the flat-topped "3") is
drawn for a share of its rank's samples. The other designs are
never trained on: the benchmark reports on them.

The held-out fonts (fonts.held_out_fonts) never enter training; the end of a
run prints accuracy on them beside accuracy on fresh samples of the training
fonts. Deterministic for a given seed and font set.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time

import cv2
import numpy as np

from vision_lab import decks
from vision_lab import fonts as F
from shoed.vision import index as X
from shoed.vision.model import CLASSES, DEFAULT_PATH, NONE, RANK_CLASSES, SUIT_CLASSES, IndexModel

FOREIGN = "BDRVOCLEPHUNMWXYTFIG"
CARD_GLYPH_SHARE = 0.2  # share of a rank's samples in card lettering (fonts.CARD_GLYPHS), where it has some
SHADED_EXTRA = 0.25  # shaded suit symbols (fonts.shaded) added to each suit's samples, as a share of --per-class
# drawn suit symbols, spades and clubs in wider proportions (fonts.suit_shape_mask(wide=True)), half of
# them shaded, added to each suit's samples, as a share of --per-class
WIDE_EXTRA = 0.35


def _pad(mask: np.ndarray, frac: float = 0.35) -> np.ndarray:
    p = int(max(mask.shape) * frac) + 4
    return cv2.copyMakeBorder(mask, p, p, p, p, cv2.BORDER_CONSTANT, value=0)


def _geometry(mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Width, stroke weight, rotation and shear of a high-resolution mask."""
    h, w = mask.shape
    wf = rng.uniform(0.68, 1.3)
    mask = cv2.resize(mask, (max(2, int(w * wf)), h), interpolation=cv2.INTER_AREA)
    k = int(rng.integers(-3, 4)) * max(1, h // 60)
    if k:
        el = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * abs(k) + 1, 2 * abs(k) + 1))
        mask = cv2.dilate(mask, el) if k > 0 else cv2.erode(mask, el)
    if mask.max() < 128:
        return mask
    mask = _pad(mask)
    h, w = mask.shape
    a = math.radians(rng.uniform(-5, 5))
    sh = rng.uniform(-0.12, 0.12)
    m = np.array([[math.cos(a), -math.sin(a) + sh, 0], [math.sin(a), math.cos(a), 0]], np.float32)
    c = np.array([w / 2, h / 2], np.float32)
    m[:, 2] = c - m[:, :2] @ c
    return cv2.warpAffine(mask, m, (w, h), flags=cv2.INTER_LINEAR)


def _camera(mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Shrink, blur, fade and soil a mask: the ink map a camera would give."""
    ys, xs = np.nonzero(mask > 60)
    if len(xs) == 0:
        return np.zeros((8, 8), np.float32)
    glyph_h = ys.max() - ys.min() + 1
    target = math.exp(rng.uniform(math.log(12), math.log(64)))
    f = min(1.0, target / glyph_h)  # only ever shrink (a glyph thinned away to a speck stays a speck)
    small = cv2.resize(mask, (max(3, round(mask.shape[1] * f)), max(3, round(mask.shape[0] * f))),
                       interpolation=cv2.INTER_AREA).astype(np.float32) / 255.0
    if rng.uniform() < 0.35:  # a card small in the picture: the warp enlarged fewer real pixels
        h, w = small.shape
        f2 = rng.uniform(1.3, 3.0)
        low = cv2.resize(small, (max(2, round(w / f2)), max(2, round(h / f2))), interpolation=cv2.INTER_AREA)
        small = cv2.resize(low, (w, h), interpolation=cv2.INTER_LINEAR)
    # Blur in proportion to the glyph: mostly a little, sometimes so much that
    # shapes run together (a club then looks like a spade, and should look unsure).
    rel = rng.uniform(0, 0.05) if rng.uniform() < 0.75 else rng.uniform(0.05, 0.16)
    sigma = rel * small.shape[0] / 1.3
    if sigma > 0.25:
        small = cv2.GaussianBlur(small, (0, 0), sigma)
    contrast = rng.uniform(0.45, 1.0)
    ink = small * contrast
    ink += rng.normal(0, rng.uniform(0.0, 0.06), ink.shape).astype(np.float32)
    if rng.uniform() < 0.3:  # uneven light left over after paper normalisation
        gy = np.linspace(0, rng.uniform(-0.15, 0.15), ink.shape[0], dtype=np.float32)[:, None]
        ink = ink + gy * (ink > 0.2)
    return np.clip(ink, 0.0, 1.0)


def measure(ink: np.ndarray, ten: bool = False, whole: bool = True) -> np.ndarray | None:
    """The feature vector of the main mark of an ink patch, found as the
    recogniser finds marks (largest mark; for ten the digits side by side).
    With `whole`, None when that mark is only a piece of the print (a glyph
    broken by thinning): such a piece must not be learnt as the glyph."""
    binary = (ink > X.threshold(ink)).astype(np.uint8)
    n, labels, stats, _ = cv2.connectedComponentsWithStats(binary, connectivity=8)
    marks = []
    for k in range(1, n):
        x, y, w, h, area = (int(v) for v in stats[k])
        if area < 6:
            continue
        marks.append(X.Mark(x, y, w, h, labels[y : y + h, x : x + w] == k, (k,)))
    if not marks:
        return None
    marks = X.absorb_fragments(marks)
    candidates = X.rank_marks(marks) if ten else marks
    best = max(candidates, key=lambda m: int(m.mask.sum()))
    if whole:
        ys, xs = np.nonzero(binary)
        if best.h < 0.85 * (ys.max() - ys.min() + 1) or best.w < 0.75 * (xs.max() - xs.min() + 1):
            return None
    return X.glyph_vector(ink[best.y : best.y + best.h, best.x : best.x + best.w], best.mask)


def _suit_master(suit: str, fonts: list[F.GlyphFont], rng: np.random.Generator, shaded: bool = False,
                 wide: bool = False) -> np.ndarray:
    """A suit symbol from a font or drawn from curves; with `shaded`, its ink
    shaded (fonts.shaded); with `wide`, drawn (spades and clubs in wider
    proportions) and shaded half the time."""
    if wide:
        master = F.suit_shape_mask(suit, 90, rng, wide=True)
        return F.shaded(master, rng) if rng.uniform() < 0.5 else master
    with_symbols = [f for f in fonts if f.suits]
    if with_symbols and rng.uniform() < 0.5:
        master = F.font_suit_mask(with_symbols[rng.integers(len(with_symbols))], suit, 90)
    else:
        master = F.suit_shape_mask(suit, 90, rng)
    if shaded:
        master = F.shaded(master, rng)
    return master


def _none_master(fonts: list[F.GlyphFont], rng: np.random.Generator) -> np.ndarray:
    """Something that is neither a rank nor a suit."""
    kind = rng.integers(9)
    font = fonts[rng.integers(len(fonts))]
    if kind == 0:
        return F.scale_to_height(F._text_master(font.face, font.weight, FOREIGN[rng.integers(len(FOREIGN))]), 90)
    if kind == 1:
        return F.scale_to_height(F._text_master(font.face, font.weight, "10"[rng.integers(2)]), 90)
    if kind == 2:  # a broken glyph
        text = RANK_CLASSES[rng.integers(13)]
        m = F.rank_mask(font, text, 90) if rng.uniform() < 0.7 else _suit_master("CDHS"[rng.integers(4)], fonts, rng)
        h, w = m.shape
        cut = rng.uniform(0.35, 0.6)
        side = rng.integers(4)
        if side == 0:
            return m[: int(h * cut)]
        if side == 1:
            return m[int(h * (1 - cut)) :]
        if side == 2:
            return m[:, : max(2, int(w * cut))]
        return m[:, int(w * (1 - cut)) :]
    if kind == 3:  # a rank and its suit printed touching
        r = F.rank_mask(font, RANK_CLASSES[rng.integers(13)], 90)
        s = _suit_master("CDHS"[rng.integers(4)], fonts, rng)
        s = F.scale_to_height(s, int(90 * rng.uniform(0.5, 0.8)))
        w = max(r.shape[1], s.shape[1])
        out = np.zeros((r.shape[0] + s.shape[0] - 2, w), np.uint8)
        out[: r.shape[0], (w - r.shape[1]) // 2 : (w - r.shape[1]) // 2 + r.shape[1]] = r
        out[r.shape[0] - 2 :, (w - s.shape[1]) // 2 : (w - s.shape[1]) // 2 + s.shape[1]] |= s
        return out
    canvas = np.zeros((100, 100), np.uint8)
    if kind == 4:  # a disc, a ring or an ellipse
        axes = (int(rng.uniform(10, 45)), int(rng.uniform(10, 45)))
        cv2.ellipse(canvas, (50, 50), axes, rng.uniform(0, 180), 0, 360, 255,
                    -1 if rng.uniform() < 0.5 else int(rng.integers(3, 12)), cv2.LINE_AA)
    elif kind == 5:  # a random polygon
        pts = rng.uniform(5, 95, (int(rng.integers(3, 8)), 2)).astype(np.int32)
        cv2.fillPoly(canvas, [pts], 255, cv2.LINE_AA)
    elif kind == 6:  # strokes of a picture, a corner of a frame
        for _ in range(int(rng.integers(1, 4))):
            p = rng.uniform(5, 95, (3, 2)).astype(np.int32)
            cv2.polylines(canvas, [p], False, 255, int(rng.integers(3, 12)), cv2.LINE_AA)
    elif kind == 7:  # a piece of a lattice or pattern
        step = int(rng.integers(8, 20))
        for k in range(-100, 200, step):
            cv2.line(canvas, (k, 0), (k + 100, 100), 255, 3)
            if rng.uniform() < 0.7:
                cv2.line(canvas, (k, 0), (k - 100, 100), 255, 3)
        cv2.circle(canvas, (50, 50), 49, 255, 2)
    else:  # two suits side by side
        a = _suit_master("CDHS"[rng.integers(4)], fonts, rng)
        b = _suit_master("CDHS"[rng.integers(4)], fonts, rng)
        b = F.scale_to_height(b, a.shape[0])
        return np.hstack([a, np.zeros((a.shape[0], 3), np.uint8), b])
    return canvas


def deck_masters(names: tuple[str, ...] = decks.TRAINING_DESIGNS) -> dict[int, list[np.ndarray]]:
    """Class -> index marks cut from the deck artwork of `names` (the installed
    ones): rank marks under their rank, suit marks under their suit, foreign
    rank letters under "none"."""
    out: dict[int, list[np.ndarray]] = {}
    installed = decks.designs()
    for design in names:
        if design not in installed:
            continue
        for label in _labels():
            marks = decks.index_masks(design, label)
            if marks is None:
                continue
            rank = "10" if label[:-1] == "T" else label[:-1]
            cls = NONE if label[:-1] in decks.foreign_ranks(design) else RANK_CLASSES.index(rank)
            out.setdefault(cls, []).append(marks[0])
            out.setdefault(len(RANK_CLASSES) + SUIT_CLASSES.index(label[-1]), []).append(marks[1])
    return out


def _labels() -> list[str]:
    return [("T" if r == "10" else r) + s for s in SUIT_CLASSES for r in RANK_CLASSES]


def sample(cls: int, fonts: list[F.GlyphFont], rng: np.random.Generator,
           masters: dict[int, list[np.ndarray]] | None = None, deck_share: float = 0.0,
           shaded: bool = False, wide: bool = False) -> np.ndarray | None:
    """One training vector of class `cls` (an index into model.CLASSES); with
    probability `deck_share` from one of `masters[cls]` (deck artwork); with
    `shaded`, a drawn suit symbol with its ink shaded; with `wide`, a drawn
    suit symbol (spades and clubs in wider proportions)."""
    if shaded or wide:
        master = _suit_master(SUIT_CLASSES[cls - 13], fonts, rng, shaded=shaded, wide=wide)
        ink = _camera(_geometry(_pad(master, 0.1), rng), rng)
        return measure(np.pad(ink, 6))
    # foreign letters are a small part of what "none" stands for
    if masters and masters.get(cls) and rng.uniform() < (deck_share * 0.3 if cls == NONE else deck_share):
        pool = masters[cls]
        master = pool[rng.integers(len(pool))]
    elif cls < 13 and RANK_CLASSES[cls] in F.CARD_GLYPHS and rng.uniform() < CARD_GLYPH_SHARE:
        master = F.card_glyph_mask(RANK_CLASSES[cls], 90, rng)
    elif cls < 13:
        font = fonts[rng.integers(len(fonts))]
        master = F.rank_mask(font, RANK_CLASSES[cls], 90)
    elif cls < 17:
        master = _suit_master(SUIT_CLASSES[cls - 13], fonts, rng)
    else:
        master = _none_master(fonts, rng)
    ink = _camera(_geometry(_pad(master, 0.1), rng), rng)
    ink = np.pad(ink, 6)
    return measure(ink, ten=(cls == RANK_CLASSES.index("10")), whole=(cls != NONE))


def make_set(per_class: int, fonts: list[F.GlyphFont], seed: int, none_share: float = 1.5,
             classes: range | None = None, log=None, masters: dict[int, list[np.ndarray]] | None = None,
             deck_share: float = 0.0, shaded_extra: float = 0.0,
             wide_extra: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    counts = [per_class] * (len(CLASSES) - 1) + [int(per_class * none_share)]
    xs: list[np.ndarray] = []
    ys: list[int] = []
    t0 = time.time()

    def draw(cls: int, count: int, stream: np.random.Generator, what: str, **options) -> None:
        """`count` vectors of class `cls` (a draw that gives none is drawn again)."""
        made = 0
        while made < count:
            v = sample(cls, fonts, stream, **options)
            if v is None:
                continue
            xs.append(v)
            ys.append(cls)
            made += 1
        if log:
            log(f"  {CLASSES[cls]:>4}: {count} {what} ({time.time() - t0:.0f} s)")

    for cls, count in enumerate(counts):
        if classes is None or cls in classes:
            draw(cls, count, rng, "samples", masters=masters, deck_share=deck_share)
    # shaded suit symbols, added from a stream of their own (the others stay as they were)
    extra = np.random.default_rng(seed + 500)
    for cls in range(len(RANK_CLASSES), len(RANK_CLASSES) + len(SUIT_CLASSES)):
        if shaded_extra > 0 and (classes is None or cls in classes):
            draw(cls, int(per_class * shaded_extra), extra, "shaded", shaded=True)
    # suit symbols of wider proportions, from a stream of their own
    wide = np.random.default_rng(seed + 600)
    for cls in range(len(RANK_CLASSES), len(RANK_CLASSES) + len(SUIT_CLASSES)):
        if wide_extra > 0 and (classes is None or cls in classes):
            draw(cls, int(per_class * wide_extra), wide, "wide", wide=True)
    return np.stack(xs), np.array(ys, np.int64)


def fit(x: np.ndarray, y: np.ndarray, hidden=(256, 128), epochs: int = 30, batch: int = 256, lr: float = 2e-3,
        decay: float = 2e-4, smoothing: float = 0.05, seed: int = 0, log=None) -> IndexModel:
    """Train the perceptron with Adam and label smoothing (it keeps the network
    from being sure where it has no reason to be)."""
    rng = np.random.default_rng(seed)
    mean = x.mean(axis=0)
    scale = x.std(axis=0) + 1e-3
    xn = ((x - mean) / scale).astype(np.float32)
    sizes = [x.shape[1], *hidden, len(CLASSES)]
    params = []
    for a, b in zip(sizes[:-1], sizes[1:]):
        params.append([rng.normal(0, math.sqrt(2.0 / a), (a, b)).astype(np.float32), np.zeros(b, np.float32)])
    m = [[np.zeros_like(p) for p in layer] for layer in params]
    v = [[np.zeros_like(p) for p in layer] for layer in params]
    n = len(xn)
    k = len(CLASSES)
    target_all = np.full((n, k), smoothing / k, np.float32)
    target_all[np.arange(n), y] += 1 - smoothing
    step = 0
    total = epochs * math.ceil(n / batch)
    for epoch in range(epochs):
        order = rng.permutation(n)
        loss_sum = 0.0
        for start in range(0, n, batch):
            idx = order[start : start + batch]
            acts = [xn[idx]]
            for i, (w, b) in enumerate(params):
                z = acts[-1] @ w + b
                acts.append(np.maximum(z, 0) if i < len(params) - 1 else z)
            z = acts[-1] - acts[-1].max(axis=1, keepdims=True)
            p = np.exp(z)
            p /= p.sum(axis=1, keepdims=True)
            t = target_all[idx]
            loss_sum += float(-(t * np.log(p + 1e-9)).sum())
            grad = (p - t) / len(idx)
            step += 1
            rate = lr * 0.5 * (1 + math.cos(math.pi * step / total))
            for i in range(len(params) - 1, -1, -1):
                w, b = params[i]
                gw = acts[i].T @ grad + decay * w
                gb = grad.sum(axis=0)
                if i > 0:
                    grad = (grad @ w.T) * (acts[i] > 0)
                for j, g in enumerate((gw, gb)):
                    m[i][j] = 0.9 * m[i][j] + 0.1 * g
                    v[i][j] = 0.999 * v[i][j] + 0.001 * g * g
                    mh = m[i][j] / (1 - 0.9**step)
                    vh = v[i][j] / (1 - 0.999**step)
                    params[i][j] -= rate * mh / (np.sqrt(vh) + 1e-8)
        if log:
            log(f"  epoch {epoch + 1}/{epochs}: loss {loss_sum / n:.4f}")
    layers = [(w.copy(), b.copy()) for w, b in params]
    return IndexModel(mean.astype(np.float32), scale.astype(np.float32), layers,
                      {"classes": list(CLASSES), "smoothing": smoothing})


def accuracy(model: IndexModel, x: np.ndarray, y: np.ndarray) -> float:
    return float((model.predict(x).argmax(axis=1) == y).mean())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m vision_lab.train", description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=DEFAULT_PATH)
    ap.add_argument("--per-class", type=int, default=4000)
    ap.add_argument("--epochs", type=int, default=25)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--deck-share", type=float, default=0.35,
                    help="share of samples drawn from the training designs' artwork, where installed")
    ap.add_argument("--cache", help="keep the generated training set in this .npz (reused when present)")
    args = ap.parse_args(argv)
    cv2.setNumThreads(1)

    def log(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    fonts = F.training_fonts()
    log(f"training fonts: {', '.join(f.label for f in fonts)}")
    if args.cache and _exists(args.cache):
        with np.load(args.cache) as data:
            x, y = data["x"], data["y"]
        log(f"training set from {args.cache}: {len(x)} samples")
    else:
        masters = deck_masters()
        log(f"deck artwork: {sum(len(v) for v in masters.values())} index marks of "
            f"{', '.join(d for d in decks.TRAINING_DESIGNS if d in decks.designs()) or 'no design installed'}")
        x, y = make_set(args.per_class, fonts, args.seed, log=log, masters=masters, deck_share=args.deck_share,
                        shaded_extra=SHADED_EXTRA, wide_extra=WIDE_EXTRA)
        if args.cache:
            np.savez_compressed(args.cache, x=x, y=y)
    model = fit(x, y, epochs=args.epochs, seed=args.seed, log=log)
    vx, vy = make_set(150, fonts, args.seed + 1000)
    # the held-out lettering: ranks only (its suits are drawn shapes, as in training)
    hx, hy = make_set(150, F.held_out_fonts(), args.seed + 2000, classes=range(13))
    model.info.update({
        "fonts": [f.label for f in fonts],
        "deck_designs": [d for d in decks.TRAINING_DESIGNS if d in decks.designs()],
        "deck_share": args.deck_share,
        "samples": int(len(x)),
        "seed": args.seed,
        "per_class": args.per_class,
        "epochs": args.epochs,
        "features": int(x.shape[1]),
        "accuracy_training_fonts": round(accuracy(model, vx, vy), 4),
        "accuracy_held_out_ranks": round(accuracy(model, hx, hy), 4),
    })
    model.save(args.out)
    log(json.dumps(model.info, indent=1))
    return 0


def _exists(path: str) -> bool:
    try:
        with open(path, "rb"):
            return True
    except OSError:
        return False


if __name__ == "__main__":
    raise SystemExit(main())
