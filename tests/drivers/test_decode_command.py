"""`shoed decode`: field captures to JSON lines, run as the real command line.

SPEC.md §12 (worked examples) and §13 (test vectors) for the native format;
beetek-shoe.md for the Bee-Tek format.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import firmware_protocol
from firmware_protocol import encode
from firmware_protocol import messages as m


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
        (2, 15, "card"), (19, 28, "card"), (48, 2, "rejected"), (51, 15, "rejected"), (67, 7, "warning")]
    assert out[1]["card"] == "3H" and out[1]["mode"] == "Manual Burn Cards"
    assert out[3]["reason"] == "garbled card token" and "card" not in out[3]


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
