"""A Board (shoed.display.board) painted as a PNG with Pillow.

Pillow is optional (`pip install 'shoed[report]'`) and imported only here, when
a report is drawn. The board is painted at twice its size and scaled down, so
circles and strokes come out smooth; the PNG has the board's own size, at most
MAX_WIDTH x MAX_HEIGHT (shoed.display.board bounds what it lays out): a larger board, or a
drawing Pillow refuses, is a ReportError, one line, never a traceback.
"""

from __future__ import annotations

import io
import os
from pathlib import Path

from shoed.display.board import Board, Circle, Label, Line, Rect

SCALE = 2
MAX_WIDTH, MAX_HEIGHT = 8192, 4096  # pixels of the board; painted at SCALE times that


class ReportError(Exception):
    """The report cannot be drawn or written."""


def _pillow():
    try:
        from PIL import Image, ImageDraw, ImageFont
    except ImportError:
        raise ReportError("drawing the PNG needs Pillow: pip install 'shoed[report]'") from None
    return Image, ImageDraw, ImageFont


def paint(board: Board):
    """The board as a Pillow image of board.width x board.height."""
    if not (0 < board.width <= MAX_WIDTH and 0 < board.height <= MAX_HEIGHT):
        raise ReportError(f"the board would be {board.width}x{board.height} pixels, more than "
                          f"{MAX_WIDTH}x{MAX_HEIGHT}: not drawn")
    try:
        return _paint(board)
    except (ValueError, TypeError, OSError, MemoryError) as exc:  # Pillow's refusals (a label it cannot draw, memory)
        raise ReportError(f"cannot draw the board: {type(exc).__name__}: {str(exc)[:200]}") from None


def _paint(board: Board):
    Image, ImageDraw, ImageFont = _pillow()
    fonts: dict = {}

    def font(size: float):
        key = round(size * SCALE)
        if key not in fonts:
            fonts[key] = ImageFont.load_default(key)  # Pillow's own scalable font: the same on every machine
        return fonts[key]

    image = Image.new("RGB", (board.width * SCALE, board.height * SCALE), board.background)
    draw = ImageDraw.Draw(image)
    s = SCALE
    for shape in board.shapes:
        if isinstance(shape, Rect):
            draw.rectangle([shape.x * s, shape.y * s, (shape.x + shape.w) * s, (shape.y + shape.h) * s],
                           fill=shape.fill, outline=shape.stroke, width=max(1, round(shape.width * s)))
        elif isinstance(shape, Line):
            draw.line([shape.x1 * s, shape.y1 * s, shape.x2 * s, shape.y2 * s], fill=shape.stroke,
                      width=max(1, round(shape.width * s)))
        elif isinstance(shape, Circle):
            box = [(shape.cx - shape.r) * s, (shape.cy - shape.r) * s, (shape.cx + shape.r) * s,
                   (shape.cy + shape.r) * s]
            width = max(1, round(shape.width * s)) if shape.stroke else 0
            draw.ellipse(box, fill=shape.fill, outline=shape.stroke, width=width)
        elif isinstance(shape, Label):
            anchor = "mm" if shape.anchor == "middle" else "la"
            # Pillow's default font has no bold face: a thin stroke of the same colour stands in.
            draw.text((shape.x * s, shape.y * s), shape.text, fill=shape.fill, font=font(shape.size), anchor=anchor,
                      stroke_width=1 if shape.bold else 0, stroke_fill=shape.fill)
    return image.resize((board.width, board.height), Image.Resampling.LANCZOS)


def write_png(board: Board, path: str | os.PathLike) -> Path:
    """Paint the board and write it as a PNG, whole or not at all (`shoed.files.write_whole`)."""
    from shoed.files import write_whole

    buffer = io.BytesIO()
    paint(board).save(buffer, format="PNG", optimize=True)
    path = Path(path)
    try:
        write_whole(path, buffer.getvalue())
    except OSError as exc:
        raise ReportError(f"cannot write {path}: {exc.strerror or exc}") from None
    return path
