#!/usr/bin/env python3
"""Generate labelled synthetic photographs and dealing videos of playing cards.

For testing the camera fallback (shoed.vision) without a camera. Uses
vision_lab.synth; the same seed gives the same files.

  photos:  python tools/make_card_images.py photos OUT_DIR [--count 200] [--seed 1]
               [--style classic|held-out] [--kinds card,back,empty,hidden,blank]
               [--size 1280x960] [--occlusion 0.15]
           writes OUT_DIR/NNNN_<card or kind>.jpg and OUT_DIR/manifest.json:
           [{"file", "card" (null if none readable), "kind", "corners", "font", "style"}, ...]

  video:   python tools/make_card_images.py video OUT.avi [--cards 8H,TD,KS | --count 10]
               [--seed 1] [--style classic|held-out] [--size 1280x720] [--roi 440,160,400,400] [--fps 30]
           writes an MJPG .avi and OUT.avi.json: {"cards": [...], "frames", "fps", "roi", "size"}

  frames:  python tools/make_card_images.py frames OUT_DIR [same options as video]
           the dealing sequence as numbered JPEG frames plus OUT_DIR/labels.json
"""

from __future__ import annotations

import sys
from pathlib import Path

# The vision lab lives beside shoed in the repository, not in the installed package.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import argparse
import time


def _size(text: str) -> tuple[int, int]:
    try:
        w, h = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"size is WIDTHxHEIGHT, e.g. 1280x960, not {text!r}") from None
    if w < 64 or h < 64:
        raise argparse.ArgumentTypeError("size is at least 64x64")
    return w, h


def _roi(text: str) -> tuple[int, int, int, int]:
    try:
        x, y, w, h = (int(v) for v in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"roi is X,Y,W,H, not {text!r}") from None
    return x, y, w, h


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    sub = ap.add_subparsers(dest="mode", required=True)
    photos = sub.add_parser("photos", help="still photographs with a manifest")
    photos.add_argument("out")
    photos.add_argument("--count", type=int, default=200)
    photos.add_argument("--seed", type=int, default=1)
    photos.add_argument("--style", choices=("classic", "held-out"), default="classic")
    photos.add_argument("--kinds", default="card", help="comma-separated: card, back, empty, hidden, blank")
    photos.add_argument("--size", type=_size, default=None, help="WIDTHxHEIGHT (default: a mix of phone sizes)")
    photos.add_argument("--occlusion", type=float, default=0.15, help="share of cards partly covered")
    for name in ("video", "frames"):
        p = sub.add_parser(name, help="a dealing sequence" + (" (MJPG .avi)" if name == "video" else " as JPEG frames"))
        p.add_argument("out")
        p.add_argument("--cards", help="comma-separated cards in deal order, e.g. 8H,TD,KS")
        p.add_argument("--count", type=int, default=10, help="random cards when --cards is not given")
        p.add_argument("--seed", type=int, default=1)
        p.add_argument("--style", choices=("classic", "held-out"), default="classic")
        p.add_argument("--size", type=_size, default=(1280, 720))
        p.add_argument("--roi", type=_roi, default=(440, 160, 400, 400))
        if name == "video":
            p.add_argument("--fps", type=float, default=30.0)
    args = ap.parse_args(argv)

    import numpy as np

    from shoed.rules.cards import CardError, parse_card
    from vision_lab import synth

    t0 = time.monotonic()
    if args.mode == "photos":
        kinds = tuple(k.strip() for k in args.kinds.split(",") if k.strip())
        bad = [k for k in kinds if k not in ("card", "back", "empty", "hidden", "blank")]
        if bad or not kinds:
            ap.error(f"unknown kinds {bad}: use card, back, empty, hidden, blank")
        options = {"occlusion_p": args.occlusion}
        if args.size:
            options["size"] = args.size
        manifest = synth.write_set(args.out, args.count, args.seed, args.style, kinds, **options)
        print(f"{len(manifest)} images in {args.out} ({time.monotonic() - t0:.1f} s); labels in manifest.json")
        return 0
    if args.cards:
        try:
            labels = [str(parse_card(c)) for c in args.cards.split(",")]
        except CardError as exc:
            ap.error(str(exc))
    else:
        rng = np.random.default_rng(args.seed + 7919)
        labels = [str(c) for c in rng.choice(synth.all_labels(), size=args.count)]
    style = synth.STYLES[args.style]()
    options = {"size": args.size, "roi": args.roi, "style": style}
    x, y, w, h = args.roi
    if x < 0 or y < 0 or x + w > args.size[0] or y + h > args.size[1]:
        ap.error(f"roi {args.roi} does not fit in {args.size[0]}x{args.size[1]}")
    if args.mode == "video":
        info = synth.write_deal_video(args.out, labels, args.seed, fps=args.fps, **options)
        where = args.out + ".json"
    else:
        info = synth.write_deal_folder(args.out, labels, args.seed, **options)
        where = "labels.json"
    print(f"{info['frames']} frames, cards {' '.join(info['cards'])} ({time.monotonic() - t0:.1f} s); labels in {where}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
