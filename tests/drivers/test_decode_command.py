"""`shoed decode`: field captures to JSON lines, run as the real command line.

SPEC.md §12 (worked examples) and §13 (test vectors) for the native format;
beetek-shoe.md for the Bee-Tek format.
"""

from __future__ import annotations

import json
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

import firmware_protocol
from firmware_protocol import encode
from firmware_protocol import messages as m
from shoed import drivers
from shoed.drivers import beetek, native


def decode(driver: str, *args: str, data: bytes | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(check=False, args=[sys.executable, "-m", "shoed", "decode", "--driver", driver, *args],
                          input=data, capture_output=True, timeout=60)


def lines(proc) -> list[dict]:
    assert proc.returncode == 0, proc.stderr
    return [json.loads(line) for line in proc.stdout.decode().splitlines()]


def test_native_capture_from_a_file(tmp_path):
    # SPEC.md §12.10: four bytes of noise right before the card of §12.1.
    capture = tmp_path / "capture.bin"
    card = bytes.fromhex("04011005040a01fa0105a397ae9500")
    capture.write_bytes(bytes.fromhex("deadbeef") + card + encode(m.Heartbeat(seq=5, unacked=0)) + card[:6])
    out = lines(decode("native", str(capture)))
    assert out[0] == {"type": "rejected", "kind": "garbage", "offset": 0, "length": 4, "raw": "deadbeef",
                      "rejected": True, "reason": out[0]["reason"]}
    assert out[1] == {"offset": 4, "type": "card", "seq": 5, "rank": 10, "suit": 1, "confidence": 250,
                      "faced": False, "mode": 0, "card": "TD"}
    assert (out[2]["offset"], out[2]["type"]) == (19, "heartbeat")
    # The capture ends inside a frame: a rejected stretch, never a message.
    assert (out[3]["type"], out[3]["kind"], out[3]["offset"], out[3]["length"]) == ("rejected", "truncated", 35, 6)


def test_native_stream_vectors_from_stdin():
    # SPEC.md §13: streams.json lists the items a receiver reports for each stream.
    vectors = json.loads((Path(firmware_protocol.__file__).parent / "vectors" / "streams.json").read_text())
    for vector in vectors:
        out = lines(decode("native-usb", "-", data=bytes.fromhex(vector["hex"])))
        got = [(o["offset"], o.get("length") if o["type"] == "rejected" else None, o["type"] == "rejected")
               for o in out if o.get("kind") != "truncated"]
        want = [(i["offset"], i.get("length") if i.get("reject") else None, bool(i.get("reject")))
                for i in vector["items"]]
        assert got == want, vector["name"]


def test_beetek_capture():
    data = b"\xff [Game]<Card:4S>  [Manual Burn Cards]<Card:H3> ~~ [Game]<Card:4X> <W0x01> "
    out = lines(decode("beetek", data=data))
    assert [(o["offset"], o["length"], o["type"]) for o in out] == [
        (0, 1, "rejected"), (2, 15, "card"), (19, 28, "card"), (48, 2, "rejected"), (51, 15, "rejected"),
        (67, 7, "warning")]
    assert out[0]["reason"] == "control or non-ASCII bytes"
    assert out[2]["card"] == "3H" and out[2]["mode"] == "Manual Burn Cards"
    assert out[4]["reason"] == "garbled card token" and "card" not in out[4]


@pytest.mark.parametrize(
    "args, message",
    [
        (["--driver", "bogus", "-"], "shoed: unknown driver 'bogus': choose one of native, native-usb, beetek, camera, shuffler"),
        (["--driver", "native", "/nonexistent/capture.bin"],
         "shoed: cannot read /nonexistent/capture.bin: No such file or directory"),
        (["--driver", "native", "/"], "shoed: cannot read /: Is a directory"),
    ],
)
def test_clear_errors(args, message):
    proc = subprocess.run(check=False, args=[sys.executable, "-m", "shoed", "decode", *args], capture_output=True, text=True,
                          timeout=60, input="")
    assert proc.returncode == 2
    assert proc.stderr.strip() == message
    assert proc.stdout == ""


def _vectors() -> list[bytes]:
    vectors = json.loads((Path(firmware_protocol.__file__).parent / "vectors" / "streams.json").read_text())
    return [bytes.fromhex(vector["hex"]) for vector in vectors]


BEETEK_CAPTURE = (b"\xff [Game]<Card:4S>  [Manual Burn Cards]<Card:H3> ~~ [Game]<Card:4X> <W0x01> "
                  b"[Game]<Ca>rd:9D> [Game]<Card:KC")


def _rejected_bytes(lines: list[dict]) -> set[int]:
    return {i for line in lines if line["type"] == "rejected" for i in range(line["offset"], line["offset"] + line["length"])}


@pytest.mark.parametrize("step", [1, 2, 7, 64])
def test_a_capture_decoded_as_it_arrives_gives_the_lines_of_the_whole(step):
    """`decode_stream` over the capture in chunks of any size gives what the whole capture decoded
    at once gives: every message at its offset, and the same bytes rejected, a frame cut short at
    the end among them. A Bee-Tek capture's lines are the same, line for line; a native capture's
    long run of noise may be cut into other stretches where the reads fall (SPEC.md §4: the
    receiver's buffer is bounded)."""
    def chunked(data: bytes) -> list[bytes]:
        return [data[i:i + step] for i in range(0, len(data), step)]

    for data in _vectors() + [bytes.fromhex("04011005040a01fa0105a397")]:
        streamed, whole = list(native.decode_stream(chunked(data))), native.decode_capture(data)
        assert [line for line in streamed if line["type"] != "rejected"] == [
            line for line in whole if line["type"] != "rejected"]
        assert _rejected_bytes(streamed) == _rejected_bytes(whole)
        assert whole[-1].get("kind") != "truncated" or streamed[-1] == whole[-1]
    assert list(beetek.decode_stream(chunked(BEETEK_CAPTURE))) == beetek.decode_capture(BEETEK_CAPTURE)


@pytest.mark.timeout(60)
def test_a_live_line_is_decoded_as_its_bytes_arrive():
    """`cat /dev/ttyUSB0 | shoed decode --driver beetek`: each token's line is written as soon as
    the token has come, the line still open."""
    proc = subprocess.Popen([sys.executable, "-m", "shoed", "decode", "--driver", "beetek", "-"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdin is not None and proc.stdout is not None
    try:
        for token, card in ((b"[Game]<Card:4S>", "4S"), (b" [Game]<Card:TD>", "TD")):
            proc.stdin.write(token)
            proc.stdin.flush()
            ready, _, _ = select.select([proc.stdout], [], [], 30)
            assert ready, "no line while the line is open"
            assert json.loads(proc.stdout.readline())["card"] == card
        proc.stdin.close()
        assert proc.wait(timeout=30) == 0
        assert proc.stdout.read() == b""
    finally:
        proc.kill()
        proc.wait()


@pytest.mark.timeout(60)
@pytest.mark.parametrize("driver", ["native", "beetek"])
def test_a_capture_that_never_ends_is_decoded_in_bounded_memory(driver):
    """/dev/zero as a capture: it is decoded for as long as it runs, and the process stays small
    (read whole, it took gigabytes in seconds)."""
    proc = subprocess.Popen([sys.executable, "-m", "shoed", "decode", "--driver", driver, "/dev/zero"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        time.sleep(3.0)
        status = Path(f"/proc/{proc.pid}/status").read_text()
        assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
    finally:
        proc.kill()
        proc.wait()
    peak_kb = int(next(line for line in status.splitlines() if line.startswith("VmHWM:")).split()[1])
    assert peak_kb < 150_000, f"peak {peak_kb} kB"


def test_a_driver_that_decodes_whole_captures_only_is_given_them_up_to_a_limit(tmp_path, monkeypatch):
    """A third-party driver with `decode_capture` and no `decode_stream`: the chunks are joined and
    decoded at once, and a capture past WHOLE_CAPTURE_MAX is one clear error, not all memory."""
    (tmp_path / "whole_capture.py").write_text("def decode_capture(data): return [{'bytes': len(data)}]\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(drivers, "_entry", lambda name: drivers._Entry("whole_capture", "X", capture="whole_capture"))
    decode = drivers.capture_stream("whole")
    assert list(decode([b"ab", b"c"])) == [{"bytes": 3}]
    monkeypatch.setattr(drivers, "WHOLE_CAPTURE_MAX", 10)
    with pytest.raises(drivers.DriverError, match="decodes a whole capture at once .* 0 MB at most"):
        list(decode(iter([b"x" * 6] * 100)))
