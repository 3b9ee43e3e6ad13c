"""The journal's hash chain: canonical form, sealing and checking of records.

Pure functions over dicts and bytes (no I/O, no clock), shared by the writer,
the recovery scan at start-up and `shoed journal verify`, so all three agree
byte for byte on what an intact record is.

A record on disk is one line: the canonical JSON of the record with three
fields added, `jseq` (its line number in the file, from 1), `prev` (the `hash`
of the record before it; across files, the last record of the previous file;
the very first record of a table's journal chains to GENESIS) and `hash`
(SHA-256, or HMAC-SHA-256 keyed with a secret kept off the box, over the
canonical JSON of the record without `hash`). Line 1 of every file is a header
record of kind "journal_file" written by the journal itself.

Canonical JSON is what msgspec writes with sorted keys: no whitespace, keys
sorted by code point, UTF-8, only `"`, `\\` and control characters escaped,
floats in their shortest round-trip form. The writer writes nothing else.

Checking a line does not encode it again: the canonical JSON of a record
without `hash` is its line with the member `"hash":"<hex>",` cut out (keys are
sorted and `jseq`, `kind`, `prev` always follow `hash`), so the line's own
bytes, less that member, are hashed. Every byte of the line is thus covered,
and a flipped byte is caught even where it would parse to the same value
(`1e16` and `1E16`). Where the hash cannot be checked (a keyed journal read
without its secret) the line must instead be exactly the canonical form of
what it parses to.
"""

from __future__ import annotations

import hashlib
import hmac
import math
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal, overload

import msgspec

from shoed.journal.seal import ALG_FSS, Keys, SealError, as_keys
from shoed.table.events import canonical

GENESIS = "0" * 64  # what the first record of a table's first file chains to
FORMAT = 1  # the header's "format": bumped if the line format ever changes
HEADER_KIND = "journal_file"
# A journal file's header and checkpoint lines are under a kilobyte: a reader that wants only them
# (where a file starts) reads no further than this.
HEAD_LINE_MAX = 1 << 20
ALG_SHA256 = "sha256"
ALG_HMAC = "hmac-sha256"
RESERVED = frozenset({"jseq", "prev", "hash"})

_decoder = msgspec.json.Decoder()

TABLE_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
# <table>-<file_seq>-<UTC opened>-<shoe>.jsonl; the file number comes before
# the time so that a clock stepped backwards cannot reorder the files.
NAME_RE = re.compile(
    r"(?P<table>[A-Za-z0-9][A-Za-z0-9_.-]*?)-(?P<seq>\d{6,})-(?P<utc>\d{8}T\d{6}Z)-(?P<shoe>[A-Za-z0-9_.-]*)\.jsonl"
)


class StepLine(msgspec.Struct):
    """A step record read for a replay: its envelope and its input decoded, its events left as
    the line's own bytes (compared with the replayed events' canonical bytes, never parsed)."""

    events: msgspec.Raw
    hash: str
    input: dict
    jseq: int
    kind: str
    prev: str

    def get(self, key: str, default=None):
        """As a record dict answers the few keys a reader asks of every record."""
        return getattr(self, key, default) if key in _STEP_KEYS else default

    def __getitem__(self, key: str):
        if key in _STEP_KEYS:
            return getattr(self, key)
        raise KeyError(key)


_STEP_KEYS = frozenset(StepLine.__struct_fields__)
_step_decoder = msgspec.json.Decoder(StepLine)
_STEP_HEAD = b'{"events":['  # a step's line as the writer writes it: its events first, then its hash
# No record the journal writes comes near this (its longest, a checkpoint, holds a shoe's results: tens of
# kilobytes): a longer line is not parsed at all, since a few bytes of JSON can parse to many times their size
# in objects (`[{},{},...]`: about 28 times), and a line sealed again by whoever can write the files could make
# every reader, the daemon at start first, run out of memory.
RECORD_MAX = 4 * 1024 * 1024
_HASH_KEY = b',"hash":"'


class RecordError(ValueError):
    """A record the journal cannot take (nothing was written)."""


@dataclass(frozen=True, slots=True)
class FileName:
    table: str
    file_seq: int
    utc: str
    shoe: str


def file_name(table: str, file_seq: int, opened: datetime, shoe_id: str) -> str:
    shoe = re.sub(r"[^A-Za-z0-9_.-]", "_", shoe_id)[:64]
    return f"{table}-{file_seq:06d}-{opened.strftime('%Y%m%dT%H%M%SZ')}-{shoe}.jsonl"


def parse_file_name(name: str) -> FileName | None:
    m = NAME_RE.fullmatch(name)
    if m is None:
        return None
    return FileName(m["table"], int(m["seq"]), m["utc"], m["shoe"])


def digest(body: bytes, secret: bytes | None) -> str:
    if secret is None:
        return hashlib.sha256(body).hexdigest()
    return hmac.new(secret, body, hashlib.sha256).hexdigest()


_LEAVES = frozenset((str, int, bool, type(None)))


def _plain(value) -> bool:
    """True if value is made of dicts with str keys, lists, str, int, bool, None and finite
    floats, exactly those types; False also for subclasses (then `_check_value` decides).
    The quick test every appended record takes: it builds no path strings."""
    t = type(value)
    if t is dict:
        for key, item in value.items():
            if type(key) is not str or (type(item) not in _LEAVES and not _plain(item)):
                return False
        return True
    if t is list or t is tuple:
        for item in value:
            if type(item) not in _LEAVES and not _plain(item):
                return False
        return True
    if t is float:
        return math.isfinite(value)
    return t in _LEAVES


def _check_value(value, where: str) -> None:
    # Only plain JSON values: anything else (bytes, datetimes, sets, NaN) would
    # come back from the file as something other than what was appended.
    if value is None or isinstance(value, (str, bool, int)):
        return
    if isinstance(value, float):
        if not math.isfinite(value):
            raise RecordError(f"{where}: {value!r} has no JSON form")
        return
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                raise RecordError(f"{where}: key {key!r} is not a string")
            _check_value(item, f"{where}.{key}")
        return
    if isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            _check_value(item, f"{where}[{i}]")
        return
    raise RecordError(f"{where}: {type(value).__name__} is not a JSON value")


def seal(record: dict, jseq: int, prev: str, secret: bytes | None) -> tuple[dict, bytes]:
    """The record with `jseq`, `prev` and `hash` added, and its line (with the newline)."""
    if not isinstance(record, dict):
        raise RecordError(f"a record is a dict, not {type(record).__name__}")
    kind = record.get("kind")
    if not isinstance(kind, str) or not kind:
        raise RecordError("a record needs a non-empty string 'kind'")
    clash = RESERVED.intersection(record)
    if clash:
        raise RecordError(f"the journal sets {', '.join(sorted(clash))} itself")
    if not _plain(record):
        _check_value(record, "record")  # names the value that has no JSON form
    sealed = dict(record)
    sealed["jseq"] = jseq
    sealed["prev"] = prev
    sealed["hash"] = digest(canonical(sealed), secret)
    return sealed, canonical(sealed) + b"\n"


def header(
    *, table: str, shoe: str, file_seq: int, prev_file: str | None, opened_utc: str, keyed: bool,
    key_id: str | None = None,
) -> dict:
    """Line 1 of every file: which table, shoe and file this is, and which file came before.
    A forward-secure file (key_id given) also names its key pair and its epoch (its file number)."""
    rec = {
        "kind": HEADER_KIND,
        "format": FORMAT,
        "alg": ALG_FSS if key_id else ALG_HMAC if keyed else ALG_SHA256,
        "table": table,
        "shoe": shoe,
        "file_seq": file_seq,
        "prev_file": prev_file,
        "opened_utc": opened_utc,
    }
    if key_id:
        rec["key_id"] = key_id
        rec["epoch"] = file_seq
    return rec


# Not a fault of the journal: what the reader was not given (the commands say so apart).
KEY_NEEDED = "the journal is {what} is needed to verify it"


def key_needed(reason: str) -> bool:
    return reason.endswith(" is needed to verify it") and reason.startswith("the journal is ")


# How the commands say it (`journal verify`, `replay`), where a reason is key_needed.
NOT_VERIFIED = "NOT VERIFIED (a key is needed, nothing found wrong)"
GIVE_THE_KEY = "give --secret-file or --verify-key"


def header_key(rec: dict, keys: Keys, links_if_keyed: bool = False) -> tuple[bytes | None, bool, str | None]:
    """The key a file's records are checked with, from its header: (key, links_only, reason).
    links_only: the hashes cannot be recomputed with these keys (allowed only if links_if_keyed)."""
    alg = rec.get("alg")
    if alg == ALG_SHA256:
        if keys.secret is not None or keys.verify_key is not None:
            return None, False, "the journal is not keyed (sha256) but a key was given"
        return None, False, None
    if alg == ALG_HMAC:
        if keys.secret is not None:
            return keys.secret, False, None
        if keys.verify_key is not None:
            return None, False, "the file is keyed with a static secret (hmac-sha256), not forward-secure"
        if links_if_keyed:
            return None, True, None
        return None, False, KEY_NEEDED.format(what="keyed (hmac-sha256): its secret")
    if alg == ALG_FSS:
        epoch, file_seq = rec.get("epoch"), rec.get("file_seq")
        if not isinstance(epoch, int) or isinstance(epoch, bool) or epoch != file_seq or epoch < 1:
            return None, False, f"sealed header with epoch {epoch!r} for file {file_seq!r}"
        if keys.secret is not None:
            return None, False, "the file is sealed forward-securely (fss-hmac-sha256): give its verify key"
        if keys.key_id is not None and rec.get("key_id") != keys.key_id:
            return None, False, f"sealed with key {rec.get('key_id')!r}, not with this key ({keys.key_id})"
        try:
            key = keys.epoch_key(epoch)
        except SealError as exc:
            return None, False, str(exc)
        if key is not None:
            return key, False, None
        if links_if_keyed:
            return None, True, None
        return None, False, KEY_NEEDED.format(what="sealed (fss-hmac-sha256): its verify key")
    return None, False, f"unknown hash algorithm {alg!r}"


def check_line(
    line: bytes, secret: bytes | Keys | None, *, first: bool, links_only: bool = False, links_if_keyed: bool = False
) -> tuple[dict | None, str | None]:
    """Is one line (without its newline) an intact record on its own?

    Returns (record, None) or (record or None, reason). A keyed journal read
    without its secret fails at its header, unless links_if_keyed: then, as
    with links_only, the hashes are not recomputed; the form and the links
    still are checked.
    """
    if not line:
        return None, "empty line"
    if len(line) > RECORD_MAX:
        return None, too_long(len(line))
    try:
        rec = _decoder.decode(line)
    except (msgspec.DecodeError, UnicodeDecodeError):  # msgspec lets bad UTF-8 in a key through as the latter
        return None, "not valid JSON (torn or damaged)"
    except RecursionError:  # msgspec lets it out too: arrays or objects nested thousands deep
        return None, "JSON nested too deeply (no record of the journal's form is)"
    if not isinstance(rec, dict):
        return None, "not a JSON object"
    h, jseq, prev, kind = rec.get("hash"), rec.get("jseq"), rec.get("prev"), rec.get("kind")
    if not (isinstance(h, str) and isinstance(prev, str) and isinstance(kind, str)):
        return None, "hash, prev or kind missing"
    if not isinstance(jseq, int) or isinstance(jseq, bool):
        return None, "jseq missing"
    if first:
        if kind != HEADER_KIND:
            return rec, f"line 1 is not a {HEADER_KIND} header"
        if rec.get("format") != FORMAT:
            return rec, f"header format {rec.get('format')!r}, this reader knows {FORMAT}"
        secret, links, reason = header_key(rec, as_keys(secret), links_if_keyed)
        if reason is not None:
            return rec, reason
        links_only = links_only or links
    elif kind == HEADER_KIND:
        return rec, f"a {HEADER_KIND} header after line 1"
    elif isinstance(secret, Keys):
        raise TypeError("a line after the header is checked with its file's key, not with Keys")
    if links_only:
        if canonical(rec) != line:
            return None, "not in canonical form (a byte was altered)"
        return rec, None
    body = _body(line, h)
    if body is None:  # no such member, or two: the slow way, from what the line parses to
        if canonical(rec) != line:
            return None, "not in canonical form (a byte was altered)"
        rest = dict(rec)
        del rest["hash"]
        body = canonical(rest)
    if not hmac.compare_digest(digest(body, secret), h):
        if canonical(rec) != line:  # only to name the fault better: an intact line never gets here
            return None, "not in canonical form (a byte was altered)"
        hint = " (wrong secret, or the record was altered)" if secret is not None else ""
        return rec, f"hash does not match the record{hint}"
    return rec, None


def step_hasher(secret: bytes | None) -> Callable[[], Any]:
    """What makes a fresh hasher for each step line of a file: SHA-256, or HMAC-SHA256 under the
    file's key, copied from one keyed once (keying an HMAC costs three times a copy of one)."""
    if secret is None:
        return hashlib.sha256
    return hmac.new(secret, digestmod=hashlib.sha256).copy


def check_step_line(line: bytes, new_hasher: Callable[[], Any]) -> StepLine | None:
    """A step's line (not line 1) checked without decoding its events: its envelope and input
    parsed, its hash (`new_hasher`: step_hasher of the file's key) taken over the line's bytes
    less the `hash` member at the offset the parse gives (right after the events). None where
    this does not apply or does not hold (another kind of record, another form, a bad hash):
    check_line then says what the line is."""
    if not line.startswith(_STEP_HEAD) or len(line) > RECORD_MAX:
        return None
    try:
        rec = _step_decoder.decode(line)
    except (msgspec.DecodeError, UnicodeDecodeError, RecursionError):
        return None
    if rec.kind != "step":
        return None
    h = rec.hash.encode()
    at = 10 + len(rec.events)  # the comma after the events
    end = at + 9 + len(h)
    if line[at:at + 9] != _HASH_KEY or line[at + 9:end] != h or line[end:end + 2] != b'",':
        return None
    # Hashed in two parts, the line not copied: what is before the member, and what is after it.
    view = memoryview(line)
    hasher = new_hasher()
    hasher.update(view[:at + 1])
    hasher.update(view[end + 2:])
    if not hmac.compare_digest(hasher.hexdigest().encode(), h):
        return None
    return rec


def _body(line: bytes, h: str) -> bytes | None:
    """The bytes the hash of a canonical line was taken over: the line without its
    `"hash":"<h>",` member, or None if that member is not there exactly once (a
    nested object holding the same member could make the cut ambiguous: such a
    line is then hashed as the canonical form of what it parses to)."""
    try:
        member = b'"hash":"' + h.encode("ascii") + b'",'
    except UnicodeEncodeError:
        return None
    at = line.find(member)
    if at < 0:
        return None
    if line.find(member, at + 1) >= 0:
        return None
    if not line.startswith(b'"jseq":', at + len(member)):
        return None  # not where the sorted keys put it (the line then must be its record's canonical form)
    return line[:at] + line[at + len(member):]


def too_long(size: int) -> str:
    return (f"a line of {size:,} bytes: no record of the journal's form comes near {RECORD_MAX // (1024 * 1024)} MiB "
            "(not parsed)")


@dataclass(frozen=True, slots=True)
class Bad:
    """The first record of a file that is not intact or does not link."""

    line: int  # 1-based line number in the file
    offset: int  # byte offset where the line starts
    jseq: int | None  # as read from the record; the expected one when it cannot be read
    reason: str


def lines(data: bytes) -> Iterator[tuple[int, int, bytes, bool]]:
    """(line number, offset, line without newline, ended by a newline) for each line."""
    offset, number, size = 0, 0, len(data)
    while offset < size:
        number += 1
        end = data.find(b"\n", offset)
        if end < 0:
            yield number, offset, data[offset:], False
            return
        yield number, offset, data[offset:end], True
        offset = end + 1


@overload
def chain(
    data: bytes, *, prev: str | None, secret: bytes | Keys | None, links_if_keyed: bool = False,
    steps: Literal[False] = False,
) -> Iterator[dict | Bad]: ...


@overload
def chain(
    data: bytes, *, prev: str | None, secret: bytes | Keys | None, links_if_keyed: bool = False,
    steps: bool,
) -> Iterator[dict | StepLine | Bad]: ...


def chain(
    data: bytes, *, prev: str | None, secret: bytes | Keys | None, links_if_keyed: bool = False,
    steps: bool = False,
) -> Iterator[dict | StepLine | Bad]:
    """Walk one file's records in order: yield each intact, linked record; at the
    first that is not, yield a Bad and stop.

    prev is the hash the first record must chain to, or None to take the
    file's own claim (a file read on its own, or the oldest file kept).
    With `steps`, a step record whose hash can be checked comes as a StepLine (its events
    unparsed: check_step_line); every other record as a dict.
    """
    if not data:
        yield Bad(1, 0, 1, "empty file: no header")
        return
    expect_prev = prev
    keys = as_keys(secret)
    key: bytes | None = None
    new_hasher = step_hasher(None)
    links_only = False
    offset, number, size = 0, 0, len(data)
    while offset < size:  # the lines, as `lines` gives them (written out here: a replay reads every one)
        number += 1
        cut = data.find(b"\n", offset)
        ended = cut >= 0
        line = data[offset:cut] if ended else data[offset:]
        start, offset = offset, (cut + 1 if ended else size)
        fast = check_step_line(line, new_hasher) if steps and number > 1 and not links_only else None
        rec: dict | StepLine | None
        if fast is not None:
            if not ended or fast.jseq != number or (expect_prev is not None and fast.prev != expect_prev):
                rec, reason = fast, None  # the checks below name the fault
            else:
                expect_prev = fast.hash
                yield fast
                continue
        else:
            rec, reason = check_line(
                line, key if number > 1 else keys, first=number == 1, links_only=links_only,
                links_if_keyed=links_if_keyed
            )
        if number == 1 and isinstance(rec, dict) and reason is None:
            key, links_only, _ = header_key(rec, keys, links_if_keyed)
            new_hasher = step_hasher(key)
        read_jseq = rec.get("jseq") if rec is not None and isinstance(rec.get("jseq"), int) else number
        if rec is None:  # check_line gives a record wherever it gives no reason
            yield Bad(number, start, read_jseq, reason or "not a record")
            return
        if reason is None and not ended:
            reason = "torn: the last line has no newline"
        if reason is None and rec["jseq"] != number:
            reason = f"jseq {rec['jseq']} where {number} is due"
        if reason is None and expect_prev is not None and rec["prev"] != expect_prev:
            reason = (
                "prev does not link to the record before it"
                if number > 1
                else ("prev does not link to the last record of the previous file")
            )
        if reason is not None:
            yield Bad(number, start, read_jseq, reason)
            return
        expect_prev = rec["hash"]
        yield rec


def torn_tail(data: bytes, bad: Bad, verified_to: int = 0) -> bool:
    """Is `bad`, the first record of a table's last file (`data`) that is not intact, a torn
    write rather than corruption? The one rule start-up (which cuts such a tail and keeps it
    as evidence) and the readers (`journal verify`, `recall`) apply.

    Torn is only a last line without its newline, after the header, at or past what the
    verified mark covers (`verified_to`: its offset in this file, 0 if it covers none of it):
    a crash in the middle of a write, never fsync'd whole, so never acknowledged. Nothing
    follows such a line, so no intact record can. A complete line that fails, even the very
    last one, and any byte the mark covers are corruption.
    """
    return bad.line > 1 and data.find(b"\n", bad.offset) < 0 and bad.offset >= verified_to


def intact_after(data: bytes, offset: int, secret: bytes | None, links_only: bool = False) -> int | None:
    """The line number of the first intact record after the line at offset, if any.

    A bad record with an intact one after it is corruption in the middle of a
    journal; a bad tail with nothing intact after it is a torn write.
    """
    start = data.find(b"\n", offset)
    if start < 0:
        return None
    skipped = data.count(b"\n", 0, start + 1)
    for number, _, line, ended in lines(data[start + 1 :]):
        if not ended:
            break
        _, reason = check_line(line, secret, first=False, links_only=links_only)
        if reason is None:
            return skipped + number
    return None


def check_header(
    rec: dict,
    *,
    name: FileName | None,
    previous: tuple[str, int] | None,
) -> str | None:
    """What is wrong with a file's header given its name and the file before it
    (its name and file_seq), or None."""
    seq = rec.get("file_seq")
    if not isinstance(seq, int) or isinstance(seq, bool) or seq < 1:
        return "header has no file_seq"
    if name is not None:
        if rec.get("table") != name.table:
            return f"header says table {rec.get('table')!r}, the file name {name.table!r}"
        if seq != name.file_seq:
            return f"header says file {seq}, the file name {name.file_seq}"
        shoe, opened = rec.get("shoe"), rec.get("opened_utc")
        if isinstance(shoe, str) and isinstance(opened, str):  # the name is made from them (`file_name`)
            try:
                made = parse_file_name(file_name(name.table, seq, datetime.fromisoformat(opened), shoe))
            except ValueError:
                return f"header's opened_utc {opened!r} is not a time"
            if made is not None and (made.utc, made.shoe) != (name.utc, name.shoe):
                return (f"header says shoe {shoe!r} opened {opened}, the file name {name.shoe!r} at {name.utc}: "
                        "the file was renamed")
    if seq == 1 and rec.get("prev") != GENESIS:
        return "the first file of a journal must chain to the genesis value"
    if previous is not None:
        prev_name, prev_seq = previous
        if seq != prev_seq + 1:
            return f"file {seq} follows file {prev_seq}: a file is missing or out of place"
        if rec.get("prev_file") != prev_name:
            return f"header names {rec.get('prev_file')!r} as the previous file, not {prev_name!r}"
    return None
