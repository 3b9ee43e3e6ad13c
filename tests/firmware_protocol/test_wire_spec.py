"""SPEC.md says what the reference codec does: its worked examples, its tables and its C appendix.

A firmware engineer implements from the document alone, so every byte the
document shows is checked here against the codec, and its C code is compiled
and run against every vector.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

import firmware_protocol
from firmware_protocol import Decoder, Rejected, codec, decode, encode, from_json, make_vectors, messages, session

SPEC = (Path(firmware_protocol.__file__).parent / "SPEC.md").read_text(encoding="utf-8")


def _examples() -> list[tuple[str, dict, bytes, bytes]]:
    found = []
    for block in re.findall(r"```text\n(.*?)```", SPEC, re.DOTALL):
        fields = dict(re.findall(r"^(message|content|frame) +(.+)$", block, re.MULTILINE))
        if fields:
            found.append((fields["message"][:60], json.loads(fields["message"]),
                          bytes.fromhex(fields["content"]), bytes.fromhex(fields["frame"])))
    return found


EXAMPLES = _examples()


def test_the_spec_has_worked_examples_for_several_messages():
    assert len({example[1]["type"] for example in EXAMPLES}) >= 6


@pytest.mark.parametrize(("title", "message", "content", "frame"), EXAMPLES, ids=[e[0] for e in EXAMPLES])
def test_worked_example(title, message, content, frame):
    """SPEC.md §12."""
    msg = from_json(message)
    assert codec.frame_content(msg) == content
    assert encode(msg) == frame
    assert decode(frame) == (len(frame), msg)


def test_worked_example_garbage_then_card():
    """SPEC.md §12.10: four bytes of noise, then the card of §12.1 at offset 4."""
    stream = bytes.fromhex(re.search(r"^stream +(.+)$", SPEC, re.MULTILINE).group(1))
    items = Decoder().feed(stream)
    assert [(o, type(i).__name__) for o, i in items] == [(0, "Rejected"), (4, "CardRead")]
    assert items[0][1].kind == codec.GARBAGE and items[0][1].length == 4
    assert messages.card_text(items[1][1]) == "TD"


def _type_rows() -> list[list[str]]:
    section = SPEC.split("### 5.1 Types", 1)[1].split("###", 1)[0]
    return [[cell.strip() for cell in line.strip("|").split("|")]
            for line in section.splitlines() if line.startswith("| `0x")]


def test_types_table_matches_the_messages():
    """SPEC.md §5.1: type ids, names, reliability flags."""
    rows = _type_rows()
    table = {int(row[0].strip("`"), 16): (row[1], row[3] == "**yes**") for row in rows}
    assert table == {t: (cls.NAME, cls.RELIABLE) for t, cls in messages.MESSAGE_TYPES.items()}


def test_types_table_payload_sizes_match_the_codec():
    """SPEC.md §5.1: the payload sizes column, from the smallest to the largest payload of each type."""
    longest = {
        "hello": messages.Hello(vendor="v" * 64, model="m" * 64, serial="s" * 64, firmware="f" * 64),
        "alarm": messages.Alarm(text="t" * 255),
        "deck_check": messages.DeckCheck(**{name: ("AC",) * 64 for name in ("missing", "extra", "foreign",
                                                                            "face_reversed")}),
        "order_chunk": messages.OrderChunk(cards=("KS",) * 255),
        "shuffler_error": messages.ShufflerError(text="t" * 200),
    }
    shortest = {"order_chunk": messages.OrderChunk(cards=("KS",))}
    for row in _type_rows():
        cls = messages.MESSAGE_NAMES[row[1]]
        sizes = [int(n) for n in re.findall(r"\d+", row[4])]
        smallest = len(codec.frame_content(shortest.get(cls.NAME, cls()))) - codec.MIN_FRAME
        largest = len(codec.frame_content(longest.get(cls.NAME, cls()))) - codec.MIN_FRAME
        assert sizes == sorted({smallest, largest}), row


def test_limits_in_the_text_match_the_codec():
    """SPEC.md §3: 512 bytes of content, 516 on the wire; §7 and §6.2: timing and window."""
    assert (codec.MAX_FRAME, codec.MAX_WIRE, codec.MAX_ENCODED) == (512, 516, 515)
    assert "**512 bytes\nat most**" in SPEC or "**512 bytes at most**" in SPEC.replace("\n", " ")
    timing = SPEC.split("## 7. Timing", 1)[1].split("##", 1)[0]
    for value in ("| 1 s |", "| 3 s |", "| 200 ms |", "| 50 ms |", "| 16 |"):
        assert value in timing
    assert (session.HEARTBEAT_MS, session.LINK_LOSS_MS, session.RESEND_MS, session.ACK_WITHIN_MS,
            session.WINDOW) == (1000, 3000, 200, 50, 16)
    assert f"at least **{session.QUEUE_MIN}**" in SPEC.replace("\n", " ")


def test_version_is_1_1():
    assert (messages.PROTOCOL_MAJOR, messages.PROTOCOL_MINOR) == (1, 1)
    assert SPEC.startswith("# The shoed shoe protocol, version 1.1")


def test_messages_new_in_1_1_are_the_shufflers_and_the_plain_shoes_draw():
    """SPEC.md §5.1: types 0x12 (draw) and 0x50 - 0x55 are 1.1's; every 1.0 type keeps minor 0."""
    newer = {t for t, cls in messages.MESSAGE_TYPES.items() if cls.MINOR == 1}
    assert newer == {0x12, *range(0x50, 0x56)}
    assert all(cls.MINOR == 0 for t, cls in messages.MESSAGE_TYPES.items() if t not in newer)


# ----- the C appendix -------------------------------------------------------

HARNESS = r"""
#include <stdio.h>
#include <string.h>

static size_t unhex(const char *s, uint8_t *out)
{
    size_t n = 0;
    unsigned v;
    while (s[0] && s[1] && sscanf(s, "%2x", &v) == 1) { out[n++] = (uint8_t)v; s += 2; }
    return n;
}

static void puthex(const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++) printf("%02x", p[i]);
}

int main(void)
{
    static char line[8192];
    static uint8_t in[4096], out[4096];
    while (fgets(line, sizeof line, stdin)) {
        line[strcspn(line, "\n")] = 0;
        if (line[0] == 'E') {            /* E <content without crc>: encode as a frame */
            size_t n = unhex(line + 2, in);
            uint16_t seq = (uint16_t)(in[2] | in[3] << 8);
            size_t m = shoe_frame_encode(in[1], seq, in + 4, n - 4, out);
            puthex(out, m);
        } else if (line[0] == 'D') {     /* D <stuffed bytes without delimiter>: decode */
            size_t n = unhex(line + 2, in), len = 0;
            int rc = shoe_frame_decode(in, n, out, &len);
            if (rc == SHOE_OK) { printf("OK "); puthex(out, len); } else printf("ERR %d", rc);
        } else if (line[0] == 'C') {     /* C <bytes>: crc */
            size_t n = unhex(line + 2, in);
            printf("%08x", (unsigned)shoe_crc32(in, n));
        }
        printf("\n");
    }
    return 0;
}
"""

C_ERRORS = {-1: codec.COBS, -2: codec.SHORT, -3: codec.LONG, -4: codec.CRC}


@pytest.fixture(scope="module")
def spec_c(tmp_path_factory):
    compiler = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if compiler is None:
        pytest.skip("no C compiler on this machine: the C appendix of SPEC.md cannot be compiled here")
    blocks = re.findall(r"```c\n(.*?)```", SPEC, re.DOTALL)
    assert len(blocks) == 1
    folder = tmp_path_factory.mktemp("spec_c")
    source = folder / "spec.c"
    source.write_text(blocks[0] + HARNESS)
    binary = folder / "spec"
    subprocess.run([compiler, "-std=c99", "-O1", "-Wall", "-Wextra", "-Werror", "-o", str(binary), str(source)],
                   check=True, capture_output=True, timeout=120)

    def run(lines: list[str]) -> list[str]:
        proc = subprocess.run([str(binary)], input="\n".join(lines) + "\n", capture_output=True, text=True,
                              check=True, timeout=60)
        return proc.stdout.splitlines()

    return run


def test_c_crc_check_value(spec_c):
    """SPEC.md §3.2: CRC-32 of '123456789' is 0xCBF43926."""
    assert spec_c(["C " + b"123456789".hex()]) == ["cbf43926"]


def test_c_encoder_produces_every_canonical_vector(spec_c):
    vectors = [v for v in make_vectors.frame_vectors() if v.get("canonical", True)]
    got = spec_c(["E " + v["content"][:-8] for v in vectors])
    assert got == [v["hex"] for v in vectors]


def test_c_decoder_reads_every_vector_as_the_codec_does(spec_c):
    vectors = make_vectors.frame_vectors() + make_vectors.reject_vectors()
    got = spec_c(["D " + v["hex"][:-2] for v in vectors])
    for vector, line in zip(vectors, got, strict=True):
        frame = bytes.fromhex(vector["hex"])[:-1]
        content = codec.cobs_decode(frame)
        kind = vector.get("kind")
        if kind in C_ERRORS.values():
            assert line.startswith("ERR ") and C_ERRORS[int(line[4:])] == kind, vector["name"]
        else:
            # Intact frames: the C layer hands the content up; payload checks are the next layer's.
            assert line == "OK " + content.hex(), vector["name"]


def test_c_cobs_edge_cases_match_the_codec(spec_c):
    """Runs of 253..256 non-zero bytes at the end and in the middle of the content."""
    contents = []
    for size in (0, 1, 253, 254, 255, 256, 507, 508, 509):
        body = bytes([1, 0x30, 1, 1]) + bytes((i % 255) + 1 for i in range(size))
        contents += [body, body + b"\x00\x07"]
    contents = [c for c in contents if len(c) + 4 <= codec.MAX_FRAME]
    got = spec_c(["E " + c.hex() for c in contents])
    for content, line in zip(contents, got, strict=True):
        full = content + codec.crc32(content).to_bytes(4, "little")
        assert line == (codec.cobs_encode(full) + b"\x00").hex()
        assert isinstance(decode(bytes.fromhex(line))[1], (messages.Alarm, Rejected))
