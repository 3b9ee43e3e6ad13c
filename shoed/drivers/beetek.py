"""The Bee-Tek card-reading shoe: its ASCII tokens, and a driver over a serial port.

The shoe (facts in docs/standards/beetek-shoe.md) sends ASCII tokens surrounded by
single spaces, ` [MODE]<BODY> `, at 9600 baud 8N1, and takes nothing back:

    [Game]<Card:4S>              a card read in a coup      -> card 4S, mode game
    [Manual Burn Cards]<Card:H3> a card burnt by the dealer -> card 3H, mode burn
    [Game]<Game>                 a card passed, not read    -> unreadable
    [GameAlarm]<Alarm:E3 Card Not Read>                     -> alarm E3
    <W0x01>                      a warning, mode optional   -> warning W0x01

`next_token` is the framer: a pure function over a byte buffer returning how
many bytes it used and the token, or (0, None) for "need more". The driver
keeps the unmatched tail for the next read (bounded), takes no token from
bytes that are not ASCII between tokens (they are noise, reported), and turns
tokens into Readings.

What this link cannot guarantee. There is no sequence number, checksum or
acknowledgement, so:
- a token lost on the line cannot be detected by the link at all; the rules
  engine's expectations (a card that is due and never came) and the dealer's
  confirmation of each coup are the safety net;
- a token damaged into another valid token (a bit flip turning `4S` into `5S`)
  cannot be detected either; damage that breaks the token's shape is caught;
- cards read while the link is down are lost: the shoe does not repeat them.

Decisions, never guesses:
- A token that is recognisably a card (`<Card:...>` or a near miss of `Card` or
  `Game`) but does not parse intact is an `unreadable` reading (code
  `garbled`): the dealer enters the card by hand. Anything else broken is a
  `warning` (code `garbled`). A non-ASCII or control byte inside a token, or
  text glued to its front, breaks it.
- Control and non-ASCII bytes between tokens (no shoe sends them: a line read
  at the wrong speed or parity, a break) are noise too, reported as such; in
  one report, 8 of them or more are an `alarm` (code `line_garbled`), as a
  card token whose every byte came damaged so may be lost in them.
- Broken stretches that are not a card are noise on the line: they are
  counted and reported together (shoed.drivers.noise), as one `warning`
  (code `garbled`, `detail`: `stretches`, `length`, `kept`; `raw`: the first
  bytes) before the next token, or after a second of noise that goes on, never
  one reading each. A card-like broken token stays a reading of its own: the
  dealer enters that card by hand.
- The mode prefix is what keeps burn cards apart from game cards, so a card
  under a mode the shoe is not known to send is `unreadable` (code
  `unknown_mode`), and so is a card without a mode prefix (code `no_mode`;
  never seen from the shoe, and what a damaged `[Manual Burn Cards]` prefix
  leaves behind). Spaces between the prefix and the body are accepted; a
  space inside a card's body (`<Card :AS>`) is damage, and the card
  `unreadable`. One byte lost, added or changed anywhere in a card token
  leaves exactly one reading for it, the card or `unreadable`: never none (the
  next card would take its place in the coup) and never two. A `>` put inside
  a token cuts it in two pieces; the piece glued after the `>` is judged
  together with the one before it.
- A token that is recognisably an alarm (`Alarm` in its mode or body, or one byte away from
  it) but broken is an `alarm` reading (code `garbled`), never noise: the shoe stopped the
  coup, and one byte on the line must not hide that. It is never an unreadable card.
- `Alarm:E3 Card Not Read` is an `alarm` (code E3), not also an unreadable
  card: the shoe reports the unread card itself as `<Game>`, and counting the
  alarm as a second card could count one card twice. An alarm stops the coup
  for the dealer in any case.
"""

from __future__ import annotations

import dataclasses
import re
import time
from collections import deque
from collections.abc import Iterable, Iterator
from typing import Any
from dataclasses import dataclass

from shoed.drivers.base import Reading
from shoed.drivers.link import LinkDriver, SerialTransport, Transport
from shoed.drivers.noise import NoiseCoalescer, noise_reading
from shoed.rules.cards import CardError, parse_card

BAUDRATE = 9600

# Bounds: the longest real token is ` [Manual Burn Cards]<Alarm:E3 Card Not Read> `.
MAX_MODE = 40
MAX_BODY = 80
MAX_STRETCH = 160  # a garbled stretch is cut here, so the kept tail never grows past it
STALE_TAIL = 0.5  # seconds: a token takes ~50 ms at 9600 baud; a tail older than this is broken

# Mode names as the shoe sends them (compared without case; any other damage makes a mode unknown).
GAME_MODES = {"game", "gamealarm"}
BURN_MODES = {"manual burn cards"}

_WARNING = re.compile(r"W0X([0-9A-F]{1,4})")


@dataclass(frozen=True)
class Token:
    """One token of the Bee-Tek stream (or one garbled stretch)."""

    kind: str  # "card" | "unreadable" | "alarm" | "warning" | "garbled"
    start: int  # offset of raw in the buffer given to next_token
    raw: bytes  # the token as received, without the surrounding spaces
    mode: str | None = None  # the mode text as sent, e.g. "Manual Burn Cards"; None without prefix
    card: str | None = None  # "4S" etc. for kind "card"
    code: str | None = None  # unreadable reason, alarm code, warning code
    text: str | None = None  # alarm description
    looks_like_card: bool = False  # for "garbled": the stretch is recognisably a card report
    looks_like_alarm: bool = False  # for "garbled": the stretch is recognisably an alarm (and not a card)

    def to_json(self, base: int = 0) -> dict:
        """One line of `shoed decode`: like the native decoder's, `type` the token's kind, or
        `type` "rejected" (kind "garbled") for a damaged stretch; `raw` as text."""
        out: dict = {"offset": base + self.start, "length": len(self.raw)}
        if self.kind == "garbled":
            out.update(type="rejected", kind="garbled", rejected=True,
                       reason="garbled card token" if self.looks_like_card
                       else "garbled alarm token" if self.looks_like_alarm
                       else "control or non-ASCII bytes" if self.code == OUTSIDE_ASCII else "garbled token")
        else:
            out["type"] = self.kind
        for name in ("mode", "card", "code", "text"):
            value = getattr(self, name)
            if value is not None and not (name == "code" and self.kind == "garbled"):
                out[name] = value
        out["raw"] = self.raw.decode("latin-1")
        return out


SPACES = b" \t\r\n"
OUTSIDE_ASCII = "outside_ascii"  # the code of a stretch of control or non-ASCII bytes between tokens


def _is_filler(b: int) -> bool:
    """Bytes between tokens: spaces and line ends, and the control and non-ASCII bytes that no shoe sends
    (they end a token, and start none; `next_token` returns them as noise, code OUTSIDE_ASCII)."""
    return not 0x21 <= b <= 0x7E


def _in_token(b: int) -> bool:
    """Bytes allowed inside a token: printable ASCII and the space."""
    return 0x20 <= b <= 0x7E


def _near(word: str, target: str) -> bool:
    """True if `word` is `target` with at most one letter changed, dropped, added or swapped."""
    word = word.strip().lower()
    if abs(len(word) - len(target)) > 1:
        return False
    if len(word) == len(target):
        diff = [i for i, (a, b) in enumerate(zip(word, target)) if a != b]
        swapped = len(diff) == 2 and diff[1] == diff[0] + 1 and word[diff[0]] == target[diff[1]] \
            and word[diff[1]] == target[diff[0]]
        return len(diff) <= 1 or swapped
    short, long_ = sorted((word, target), key=len)
    return any(long_[:i] + long_[i + 1:] == short for i in range(len(long_)))


def _ends_in_card(text: str) -> str | None:
    """What comes before a card notation that ends `text` ("card" for "card4s"), or None."""
    for n in (2, 3):
        if len(text) > n:
            try:
                parse_card(text[-n:])
            except CardError:
                continue
            return text[:-n]
    return None


def _near_card_body(body: str) -> bool:
    """A body one byte away from `Card:XX` or `Game`, damaged at or around the colon: `Card4S`,
    `Card;4S`, `C:ard:4S`, `:Game`, `Ga:me` (the shoe sends no other body that comes this close)."""
    low = body.strip().lower()
    if _near(low.replace(":", "", 1), "game"):
        return True
    key, colon, value = low.rpartition(":")
    if colon and _ends_in_card(":" + value) == ":" and _near(key.replace(":", ""), "card"):
        return True  # a colon put inside the key (`C:ard:4S`, `:Card:4S`)
    before = _ends_in_card(low)  # the colon lost or changed: `Card4S`, `Card;4S`
    return before is not None and (_near(before, "card") or _near(before[:-1], "card"))


def _looks_like_card(text: str) -> bool:
    """A damaged stretch that was meant to report a card (read or unread)."""
    low = text.lower()
    if "card:" in low or "<game>" in low:
        return True
    for body in re.findall(r"<([^<>]*)", low):
        key = body.partition(":")[0]
        if _near(key, "card") or _near(body.rstrip(">"), "game"):
            return True
    if low[:1] in ("[", "<") and low.endswith(">"):  # a whole token, one byte lost or changed inside it
        rest = low
        if low.startswith("["):  # the mode prefix, or all of a stretch that is only a prefix
            rest = low.partition("]")[2] if "]" in low else "<" + low.partition("<")[2] if "<" in low else ""
        flat = re.sub(r"[^a-z0-9:]", "", rest)
        if _near_card_body(flat) or _near_card_body(flat.replace(":", "")):
            return True
    return False


def _looks_like_alarm(text: str) -> bool:
    """A damaged stretch that was meant to report an alarm: it has a body (a mode prefix alone is
    noise: its body, if it came, is a token of its own), and `Alarm` is intact in it or in its mode,
    or the mode is one byte away from `GameAlarm`, or the body's first letters one byte away from
    `Alarm` (`<Alarn:E3 ...>`, `<AlarmE3 ...>`, `<Al:arm:E3 ...>`). A prefix cut short (`[GameAlarm` and filler) is
    a mode alone too."""
    low = text.lower()
    mode = re.match(r"\[([^\[\]<>]*)\]", low)
    body = low[mode.end():] if mode else low
    if not body.strip() or (not mode and low.startswith("[") and "]" not in low and "<" not in low):
        return False
    if "alarm" in low or (mode and _near(mode.group(1), "gamealarm")):
        return True
    letters = re.sub(r"[^a-z]", "", body)  # a byte put in or changed among the key's letters
    return any(_near(letters[:n], "alarm") for n in (4, 5, 6)) and len(letters) >= 4


def _mode_kind(mode: str | None) -> str | None:
    """"game", "burn" or None (unknown) for a mode as sent; no prefix counts as game."""
    if mode is None:
        return "game"
    key = mode.strip().lower()
    if key in GAME_MODES:
        return "game"
    if key in BURN_MODES:
        return "burn"
    return None


def _resync(buf: bytes | memoryview, start: int, final: bool) -> int | None:
    """End of a garbled stretch starting at `start`: the next token start that follows filler.

    None means the stretch may go on (need more bytes)."""
    limit = min(len(buf), start + MAX_STRETCH)
    for p in range(start + 1, limit):
        if buf[p] in b"[<" and _is_filler(buf[p - 1]):
            return p
    if limit == start + MAX_STRETCH or final:
        return limit
    return None


def _garbled(buf: bytes | memoryview, start: int, end: int) -> Token:
    raw = bytes(buf[start:end])
    # Trailing filler (the separating space, noise) is not part of the stretch.
    while raw and _is_filler(raw[-1]):
        raw = raw[:-1]
    text = raw.decode("latin-1")
    mode = None
    m = re.match(r"\[([^\[\]<>]*)\]<", text)
    if m:
        mode = m.group(1)
    looks = _looks_like_card(text)
    alarm = not looks and _looks_like_alarm(text)
    return Token("garbled", start, raw, mode=mode, code="garbled", looks_like_card=looks, looks_like_alarm=alarm)


def _classify(raw: bytes, start: int, mode: str | None, body: str) -> Token:
    text = body.strip()
    key, sep, value = text.partition(":")
    low_key = key.strip().lower()
    if not sep and low_key == "game":
        return Token("unreadable", start, raw, mode=mode, code="not_read")
    if sep and low_key == "card":
        if any(c.isspace() for c in body):  # the shoe sends none: a card token with a space in it is damaged
            return Token("garbled", start, raw, mode=mode, code="garbled", looks_like_card=True)
        try:
            card = parse_card(value)
        except CardError:
            return Token("garbled", start, raw, mode=mode, code="garbled", looks_like_card=True)
        return Token("card", start, raw, mode=mode, card=str(card))
    if sep and low_key == "alarm":
        code, _, description = value.strip().partition(" ")
        return Token("alarm", start, raw, mode=mode, code=code.upper() or "unknown", text=description.strip() or None)
    m = _WARNING.fullmatch(text.upper())
    if m:
        return Token("warning", start, raw, mode=mode, code="W0x" + m.group(1))
    looks = _near(low_key, "card") if sep else _near(low_key, "game")
    looks = looks or _near_card_body(text)
    alarm = not looks and _looks_like_alarm(raw.decode("latin-1"))
    return Token("garbled", start, raw, mode=mode, code="garbled", looks_like_card=looks, looks_like_alarm=alarm)


def next_token(buf: bytes | memoryview, final: bool = False) -> tuple[int, Token | None]:
    """The framer: (consumed, token) for the first token of `buf`.

    (0, None): need more bytes. (n, None): n bytes of filler skipped, nothing
    else in `buf` yet. With `final` (end of a capture, or a tail gone stale) a
    trailing incomplete token is returned as garbled instead of waiting.
    """
    n = len(buf)
    i = 0
    while i < n and _is_filler(buf[i]):
        i += 1
    outside = [p for p in range(i) if buf[p] not in SPACES]
    if outside:  # bytes no Bee-Tek shoe sends between its tokens: noise on the line, reported
        first, last = outside[0], outside[-1] + 1
        if i == n and not final and n - first < MAX_STRETCH:
            return first, None  # the run may go on: one stretch however the line's reads cut it
        return last, Token("garbled", first, bytes(buf[first:last]), code=OUTSIDE_ASCII)
    if i == n:
        return i, None
    start = i
    mode: str | None = None
    if buf[i] == ord("["):
        j = i + 1
        while j < n and j - i <= MAX_MODE and buf[j] != ord("]"):
            if not _in_token(buf[j]) or buf[j] in b"[<>":
                break
            j += 1
        if j == n and not final:
            return (0, None) if j - i <= MAX_MODE else _stretch(buf, start, final)
        if j >= n or buf[j] != ord("]"):
            return _stretch(buf, start, final)
        mode = bytes(buf[i + 1:j]).decode("ascii")
        i = j + 1
        while i < n and buf[i] == 0x20 and i - j <= MAX_MODE:
            i += 1
        if i == n:
            return (0, None) if not final else _stretch(buf, start, final)
        if buf[i] != ord("<"):  # a mode is followed by its body
            return _stretch(buf, start, final)
    if buf[i] != ord("<"):
        return _stretch(buf, start, final)
    j = i + 1
    while j < n and j - i <= MAX_BODY and buf[j] != ord(">"):
        if not _in_token(buf[j]) or buf[j] in b"[<":
            break
        j += 1
    if j == n and not final and j - i <= MAX_BODY:
        return 0, None
    if j >= n or buf[j] != ord(">"):
        return _stretch(buf, start, final)
    raw = bytes(buf[start:j + 1])
    return j + 1, _classify(raw, start, mode, bytes(buf[i + 1:j]).decode("ascii"))


def _stretch(buf: bytes | memoryview, start: int, final: bool) -> tuple[int, Token | None]:
    end = _resync(buf, start, final)
    if end is None:
        return 0, None
    return end, _garbled(buf, start, end)


def tokens(data: bytes, final: bool = True) -> list[Token]:
    """Every token of a whole capture (starts are offsets into `data`)."""
    stream = TokenStream()
    found = stream.feed(data) + (stream.flush() if final else [])
    return [dataclasses.replace(token, start=offset) for offset, token in found]


def decode_stream(chunks: Iterable[bytes]) -> Iterator[dict]:
    """`shoed decode --driver beetek`: one dict per token or garbled stretch, with its offset, as
    the capture's chunks arrive (the framer's tail is bounded, whatever the capture's length)."""
    stream = TokenStream()
    for chunk in chunks:
        for offset, token in stream.feed(chunk):
            yield dataclasses.replace(token, start=offset).to_json()
    for offset, token in stream.flush():
        yield dataclasses.replace(token, start=offset).to_json()


def decode_capture(data: bytes) -> list[dict]:
    """A whole capture decoded (decode_stream)."""
    return list(decode_stream([data]))


NOISE_TEXT = "unrecognised bytes from the shoe"
OUTSIDE_TEXT = "control or non-ASCII bytes, which no Bee-Tek shoe sends"
FLOOD_UNREAD = 10  # unreadable cards within a second, none read between, past which they are a flood
FLOOD_TEXT = ("unreadable card reports faster than any dealer draws, none read between: the shoe or its line "
              "repeats a damaged report; they are not taken; look at the shoe and check the coup")
NS_PER_S = 1_000_000_000
OUTSIDE_ALARM = 8  # bytes outside ASCII in one report that raise an alarm: half the shortest card token


def token_reading(token: Token, source: str, offset: int, mono_ns: int, utc_ns: int) -> Reading:
    """A token as a Reading; `offset` is where the token starts in the link's stream."""
    mode = _mode_kind(token.mode)
    detail: dict = {}
    if token.mode is None:
        detail["mode_sent"] = None
    elif mode is None or token.mode != token.mode.strip():
        detail["mode_sent"] = token.mode
    common: dict[str, Any] = {"source": source, "raw": token.raw, "offset": offset, "mono_ns": mono_ns, "utc_ns": utc_ns,
              "detail": detail}
    if token.kind == "card":
        if token.mode is None:
            return Reading(kind="unreadable", code="no_mode",
                           text="a card without a mode prefix: game or burn unknown", **common)
        if mode is None:
            return Reading(kind="unreadable", code="unknown_mode",
                           text=f"a card under unknown mode {token.mode!r}", **common)
        return Reading(kind="card", card=token.card, mode=mode, **common)
    if token.kind == "unreadable":
        return Reading(kind="unreadable", mode=mode or "game", code=token.code, **common)
    if token.kind == "alarm":
        return Reading(kind="alarm", mode=mode or "game", code=token.code, text=token.text, **common)
    if token.kind == "warning":
        return Reading(kind="warning", mode=mode or "game", code=token.code, **common)
    if token.looks_like_card:
        return Reading(kind="unreadable", mode=mode or "game", code="garbled",
                       text="a card token arrived damaged; enter the card by hand", **common)
    if token.looks_like_alarm:
        return Reading(kind="alarm", mode=mode or "game", code="garbled",
                       text="an alarm from the shoe arrived damaged; look at the shoe's display", **common)
    return Reading(kind="warning", mode=mode or "game", code="garbled",
                   text=OUTSIDE_TEXT if token.code == OUTSIDE_ASCII else NOISE_TEXT, **common)


class TokenStream:
    """The framer over a stream: keeps the unmatched tail between reads (bounded by the framer).

    Pure: no I/O and no clock; the driver decides when a tail has gone stale
    and calls `flush`."""

    def __init__(self, offset: int = 0) -> None:
        self.tail = b""
        self.offset = offset  # stream offset of the tail's first byte
        self._last: tuple[int, Token] | None = None  # the last token found, and its stream offset

    def feed(self, data: bytes) -> list[tuple[int, Token]]:
        """(stream offset, token) for every token completed by `data`."""
        self.tail += data
        return self._drain(final=False)

    def flush(self) -> list[tuple[int, Token]]:
        """The end of the stream (or of a link): what is left becomes garbled tokens."""
        return self._drain(final=True)

    def _drain(self, final: bool) -> list[tuple[int, Token]]:
        out = []
        buf, pos = self.tail, 0
        view = memoryview(buf)
        while pos < len(buf):
            used, token = next_token(view[pos:], final=final)
            if used == 0:
                break
            if token is not None:
                offset = self.offset + pos + token.start
                if token.code != OUTSIDE_ASCII:  # such bytes separate tokens: never one's piece
                    token = self._glued(offset, token)
                    self._last = (offset, token)
                out.append((offset, token))
            pos += used
        self.tail = buf[pos:]
        self.offset += pos
        return out


    def _glued(self, offset: int, token: Token) -> Token:
        """A broken stretch that starts right after the last token's `>`, with no space between, is
        the rest of one token that a `>` put in by line noise cut in two (`[Game]<Ca>rd:4S>`): the
        two pieces are judged together, so that such a card is one unreadable reading, never none
        (both pieces noise) and never two."""
        if token.kind != "garbled" or self._last is None:
            return token
        last_offset, last = self._last
        if last_offset + len(last.raw) != offset or not last.raw.endswith(b">"):
            return token
        last_card_like = last.kind in ("card", "unreadable") or last.looks_like_card
        whole = (last.raw + token.raw).decode("latin-1")
        looks = not last_card_like and _looks_like_card(whole)
        last_alarm_like = last.kind == "alarm" or last.looks_like_alarm
        alarm = not looks and not last_card_like and not last_alarm_like and _looks_like_alarm(whole)
        return dataclasses.replace(token, looks_like_card=looks, looks_like_alarm=alarm,
                                   mode=last.mode if looks or alarm else token.mode)


class BeeTekDriver(LinkDriver):
    """A Bee-Tek shoe on a serial port (9600 8N1). Nothing is ever sent to it."""

    name = "beetek"

    def __init__(self, url: str, *, baudrate: int = BAUDRATE, **options) -> None:
        self.baudrate = baudrate
        super().__init__(url, **options)
        self._stream = TokenStream()
        self._tail_since = 0.0
        self._noise = NoiseCoalescer()
        self._unread: deque[int] = deque(maxlen=FLOOD_UNREAD)  # when the last unreadable cards came, no card between
        self._flood_said = False

    def _make_transport(self) -> Transport:
        return SerialTransport(self.url, baudrate=self.baudrate)

    def _readings(self, found, mono_ns: int, utc_ns: int) -> list[Reading]:
        out = []
        for offset, token in found:
            if token.code == OUTSIDE_ASCII:
                self._noise.note(OUTSIDE_ASCII, token.raw, len(token.raw), OUTSIDE_TEXT, offset, mono_ns, utc_ns)
                continue
            if token.kind == "garbled" and not (token.looks_like_card or token.looks_like_alarm):
                self._noise.note("garbled", token.raw, len(token.raw), NOISE_TEXT, offset, mono_ns, utc_ns)
                continue
            reading = token_reading(token, self.source, offset, mono_ns, utc_ns)
            if self._flooding(reading):
                if not self._flood_said:
                    self._flood_said = True
                    out += self._noise_readings()
                    out.append(Reading(kind="alarm", code="shoe_flood", source=self.source, raw=b"", offset=offset,
                                       mono_ns=mono_ns, utc_ns=utc_ns, text=FLOOD_TEXT))
                self._noise.note("flood", token.raw, len(token.raw), FLOOD_TEXT, offset, mono_ns, utc_ns)
                continue
            if self._noise.pending is not None:  # the noise before this token is reported before it
                out += self._noise_readings()
            out.append(reading)
        if self._noise.due(mono_ns):  # noise that goes on: one report per interval
            out += self._noise_readings()
        return out

    def _flooding(self, reading: Reading) -> bool:
        """True for an unreadable card that comes FLOOD_UNREAD-th or later within a second with no card read
        between: no dealer draws so fast, so it is a stuck sensor or a broken line repeating one damaged token,
        not cards. Each would be a journal record and a misdeal; they are one `alarm` (code `shoe_flood`) and
        noise instead, until a card is read or a second passes without one."""
        if reading.kind != "unreadable":
            if reading.kind == "card":
                self._unread.clear()
                self._flood_said = False
            return False
        run = self._unread
        if run and reading.mono_ns - run[-1] >= NS_PER_S:
            run.clear()
            self._flood_said = False
        flooding = len(run) == run.maxlen and reading.mono_ns - run[0] < NS_PER_S
        run.append(reading.mono_ns)
        return flooding

    def _noise_readings(self) -> list[Reading]:
        """The noise held, as its one reading (none held: nothing): a `warning`, or an `alarm` (code
        `line_garbled`) when it holds OUTSIDE_ALARM bytes or more that no shoe sends, enough to have been a
        card token whose bytes all came with their high bit set (a line read at the wrong parity or speed):
        a card may be lost there, and the dealer's look at the coup is what finds it."""
        stretch = self._noise.take()
        if stretch is None:
            return []
        reading = noise_reading(stretch, self.source, "garbled")
        outside = stretch.kind_bytes.get(OUTSIDE_ASCII, 0)
        if outside >= OUTSIDE_ALARM:
            reading = dataclasses.replace(
                reading, kind="alarm", code="line_garbled",
                text=f"{outside} bytes no Bee-Tek shoe sends (control or non-ASCII) on the line: a card may be lost "
                "in them; check the coup, the cable and the port's settings (9600 8N1)")
        return [reading]

    def _on_drop(self, mono_ns: int, utc_ns: int) -> list[Reading]:
        # A token cut by the unplug is reported (as garbled) at once, before the loss, rather than
        # glued to the next link's bytes or held until the shoe comes back.
        found = self._stream.flush()
        self._stream = TokenStream(self._offset)
        readings = self._readings(found, mono_ns, utc_ns)
        if self._noise.pending is not None:  # the last link's noise is not held over to the next
            readings += self._noise_readings()
        return readings

    def _on_connect(self, mono_ns: int, utc_ns: int) -> list[Reading]:
        readings = self._on_drop(mono_ns, utc_ns)  # (nothing held, unless the link was closed by hand)
        self._link_up()  # the shoe never answers: an open port is all there is to know
        return readings

    def _on_data(self, data: bytes, offset: int, mono_ns: int, utc_ns: int) -> list[Reading]:
        self._tail_since = time.monotonic()
        return self._readings(self._stream.feed(data), mono_ns, utc_ns)

    def _next_tick(self) -> float | None:
        ticks = [self._tail_since + STALE_TAIL] if self._stream.tail else []
        if (noise_due := self._noise.due_ns()) is not None:
            ticks.append(noise_due / 1e9)
        return min(ticks, default=None)

    def _on_tick(self, mono_ns: int, utc_ns: int) -> list[Reading]:
        # Nothing came to finish the tail: the rest of that token was lost on the line.
        stale = bool(self._stream.tail) and time.monotonic() >= self._tail_since + STALE_TAIL
        return self._readings(self._stream.flush() if stale else [], mono_ns, utc_ns)
