"""Shared fixtures of the camera fallback tests: generated photographs and videos.

Everything is drawn by vision_lab.synth from fixed seeds, once per test
session, in memory or under a temporary folder; no picture is stored in the
repository. Sizes are phone resolutions, the two smaller ones, to keep the
whole folder well under a minute on one core.
"""

from __future__ import annotations

import pytest

from vision_lab import synth

TEST_SIZES = ((1280, 960), (960, 1280))


def shoot(count: int, seed: int, style: str = "classic", kinds=("card",), **options) -> list[synth.Shot]:
    """`count` photographs at the test sizes (synth.shots: cards from shuffled whole decks)."""
    return list(synth.shots(count, seed, style, kinds, sizes=TEST_SIZES, **options))


LENIENT = 0.7  # the sets are read once at this threshold; the 0.9 answers follow from the confidences


@pytest.fixture(scope="session")
def effects():
    """benchmarks/vision_effects.py as a module: what real cameras and rooms add to a photograph."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "benchmarks" / "vision_effects.py"
    spec = importlib.util.spec_from_file_location("vision_effects", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def recognizer():
    from shoed.vision.recognize import Recognizer

    return Recognizer()


def read_all(recognizer, shots):
    """Each shot with what a lenient recognizer (threshold 0.7) answers."""
    from shoed.vision.recognize import Recognizer

    lenient = Recognizer(recognizer.model, threshold=LENIENT)
    return [(shot, lenient.identify(shot.image)) for shot in shots]


@pytest.fixture(scope="session")
def classic_shots():
    return shoot(104, seed=2024)  # two decks


@pytest.fixture(scope="session")
def held_out_shots():
    return shoot(52, seed=2025, style="held-out")


@pytest.fixture(scope="session")
def classic_reads(recognizer, classic_shots):
    return read_all(recognizer, classic_shots)


@pytest.fixture(scope="session")
def held_out_reads(recognizer, held_out_shots):
    return read_all(recognizer, held_out_shots)


@pytest.fixture(scope="session")
def hard_shots():
    """Pictures in which no card can be read: the table alone, card backs,
    blank cards, faces with every corner index covered."""
    return shoot(24, seed=2026, kinds=("empty", "back", "blank", "hidden"))


@pytest.fixture(scope="session")
def deal_video(tmp_path_factory):
    """A dealing video (MJPG .avi) of eight cards and its labels."""
    folder = tmp_path_factory.mktemp("deal")
    path = str(folder / "deal.avi")
    cards = ["8H", "TD", "KS", "AC", "5D", "QH", "2S", "9C"]
    info = synth.write_deal_video(path, cards, seed=77)
    return path, info
