"""Two versions of the camera's recogniser on the same pictures: answers and time.

Every set of benchmarks/vision_bench.py (its --quick sizes, or its full ones)
plus its 400 x 400 speed pictures is generated, one picture at a time, and
each picture is identified by the checkout this script belongs to (or the
folder given with --new) and by another version ("old": a folder holding its
`shoed` package, e.g. an extracted `git archive REF shoed`), each in a process
of its own, both pinned to the same core and single-threaded, turn about (old
first on even pictures, new first on odd ones), so that the load of the
machine falls on both alike.

Answers are compared whole (`Identification.to_json`: card, confidence,
reason, detail, outline corners, corner index); any difference is printed and
counted as: a card become another card, a card lost (refused now), a refusal
become a card (right or wrong against the label), or the same card or refusal
with other details. Times are processor time per picture (medians and p95),
per set, old against new. Exit status 1 where a card changed, was lost, or a
refusal became a wrong card.

    .venv/bin/python benchmarks/vision_compare.py OLD_DIR [--new DIR] [--quick] [--sets a,b] [--repeat N]
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")

import argparse  # noqa: E402
import json  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
from collections.abc import Iterator  # noqa: E402

import numpy as np  # noqa: E402

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

WORKER = r"""
import os, sys, json, pickle, time
import cv2
cv2.setNumThreads(1)
if hasattr(os, "sched_setaffinity"):
    os.sched_setaffinity(0, {int(sys.argv[2])})
import numpy as np
from shoed.vision.recognize import Recognizer
import shoed
r = Recognizer()
r.identify(np.load(sys.argv[1]))  # warm: the model loaded, the code paths touched
print(json.dumps({"module": shoed.__file__}), flush=True)
for line in sys.stdin:
    image = np.load(line.strip())
    t0, c0 = time.perf_counter(), time.process_time()
    out = r.identify(image).to_json()
    c1, t1 = time.process_time(), time.perf_counter()
    print(json.dumps({"out": out, "cpu": c1 - c0, "wall": t1 - t0}), flush=True)
"""


def pictures(quick: bool, only: set[str] | None = None) -> Iterator[tuple[str, np.ndarray, str | None]]:
    """(set name, picture, label) for every set of vision_bench.py (or those
    named in `only`), one at a time (a full run's pictures would not fit in memory)."""
    sys.path.insert(0, HERE)
    from vision_lab import decks, hard_sets, synth

    def make(count, seed, style="classic", kinds=("card",), **options):
        return ((s.image, s.card) for s in synth.shots(count, seed, style, kinds, **options))

    def pairs(shots):
        return ((s.image, s.card) for s, _ in shots)

    k = 1 if quick else 4
    sets = {
        "400x400": lambda: make(24, 31, size=(400, 400)),
        "classic": lambda: make(52 * k, 9001),
        "12mp": lambda: make(6 * k, 9007, size=(4032, 3024)),
        "held-out": lambda: make(52 * k // 2 if k > 1 else 52, 9002, "held-out"),
        "stress": lambda: make(26 * k, 9003, blur=3.0, size_frac=(0.12, 0.35), tilt=0.35, occlusion_p=0.3),
        "hard": lambda: make(10 * k, 9004, kinds=("empty", "back", "blank", "hidden")),
        "rank-alone": lambda: make(26 * k, 9005, "held-out", index_layout="rank-alone"),
        "split": lambda: make(26 * k, 9006, "held-out", index_layout="split"),
        "narrow": lambda: pairs(hard_sets.narrow(70 * k, 101)),
        "128x128": lambda: pairs(hard_sets.frames(100 * k, 102)),
        "casts": lambda: pairs(hard_sets.casts(60 * k, 103)),
        "bleed": lambda: pairs(hard_sets.bleed(48 * k, 105)),
        "decks": lambda: pairs(decks.shots(13 * k, 104, names=decks.held_out_designs("aisleriot"))),
        "decks-kde": lambda: pairs(decks.shots(13 * k, 106, names=decks.held_out_designs("kde"))),
        "decks-128": lambda: pairs(hard_sets.deck_frames(13 * k, 107)),
    }
    for name, make_set in sets.items():
        if only is None or name in only:
            for image, card in make_set():
                yield name, image, card


def start(path: str | None, first: str, cpu: int) -> subprocess.Popen:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (path or HERE, env.get("PYTHONPATH", "")) if p)
    return subprocess.Popen([sys.executable, "-c", WORKER, first, str(cpu)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True, env=env, cwd=tempfile.gettempdir())


def ask(worker: subprocess.Popen, path: str) -> dict:
    assert worker.stdin is not None and worker.stdout is not None
    worker.stdin.write(f"{path}\n")
    worker.stdin.flush()
    return json.loads(worker.stdout.readline())


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("old", help="a folder holding the other version's shoed package")
    ap.add_argument("--new", help="a folder holding the version to compare, if not this checkout's")
    ap.add_argument("--quick", action="store_true", help="vision_bench.py's --quick sizes")
    ap.add_argument("--sets", help="only these sets (comma-separated names)")
    ap.add_argument("--repeat", type=int, default=1, help="identify each picture this many times (timing)")
    args = ap.parse_args()
    shots: list[tuple[str, str | None]] = []  # (set, label) of each picture
    cpu = sorted(os.sched_getaffinity(0))[0] if hasattr(os, "sched_getaffinity") else 0
    answers: dict[str, list[dict]] = {"old": [], "new": []}
    times: dict[str, dict[str, list[float]]] = {"old": {}, "new": {}}
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "picture.npy")
        workers: dict[str, subprocess.Popen] = {}
        for i, (name, image, label) in enumerate(
                pictures(args.quick, set(args.sets.split(",")) if args.sets else None)):
            np.save(path, image)
            if not workers:  # started on the first picture, which warms them
                workers = {"old": start(args.old, path, cpu), "new": start(args.new, path, cpu)}
                for which, w in workers.items():
                    assert w.stdout is not None
                    print(f"{which}: {json.loads(w.stdout.readline())['module']}", flush=True)
            shots.append((name, label))
            for rep in range(args.repeat):
                order = ("old", "new") if (i + rep) % 2 == 0 else ("new", "old")
                for which in order:
                    got = ask(workers[which], path)
                    times[which].setdefault(name, []).append(got["cpu"] * 1e3)
                    if rep == 0:
                        answers[which].append(got["out"])
        for w in workers.values():
            assert w.stdin is not None
            w.stdin.close()
            w.wait()
    changed = {"card to another card": 0, "card lost": 0, "refusal to the right card": 0,
               "refusal to a wrong card": 0, "same answer, other details": 0}
    for i, (name, label) in enumerate(shots):
        a, b = answers["old"][i], answers["new"][i]
        if a == b:
            continue
        if a["card"] is not None and b["card"] is not None and a["card"] != b["card"]:
            kind = "card to another card"
        elif a["card"] is not None and b["card"] is None:
            kind = "card lost"
        elif a["card"] is None and b["card"] is not None:
            kind = "refusal to the right card" if b["card"] == label else "refusal to a wrong card"
        else:
            kind = "same answer, other details"
        changed[kind] += 1
        print(f"  changed ({kind}) {name} #{i} label {label}: old {a} new {b}")
    print(f"{len(shots)} pictures; answers identical: {sum(answers['old'][i] == answers['new'][i] for i in range(len(shots)))}; "
          + ", ".join(f"{k} {v}" for k, v in changed.items()))
    print(f"processor time per picture, ms (old -> new), {args.repeat} run(s) each, interleaved:")
    print(f"  {'set':11} {'n':>4}  {'median':>17}  {'p95':>17}")
    names = list(dict.fromkeys(name for name, _ in shots))
    for name in names + ["all"]:
        o = [t for n in names for t in times["old"][n]] if name == "all" else times["old"][name]
        n_ = [t for n in names for t in times["new"][n]] if name == "all" else times["new"][name]
        print(f"  {name:11} {len(o):4}  {np.median(o):7.1f} -> {np.median(n_):6.1f}  "
              f"{np.percentile(o, 95):7.1f} -> {np.percentile(n_, 95):6.1f}")
    print(f"load average: {' '.join(f'{v:.2f}' for v in os.getloadavg())} (on {os.cpu_count()} cores)")
    return 1 if changed["card to another card"] or changed["refusal to a wrong card"] or changed["card lost"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
