"""A card-reading shuffler's order never leaves its driver in plain text, over a real pseudo-terminal:
not in a chunk (sealed), and not in the bytes that any other reading carries as evidence (a chunk out
of turn, a chunk forged under a seq already taken, a chunk with an impossible card)."""

from __future__ import annotations

import os
import select
import struct
import threading
import time
import tty
import zlib

from firmware_protocol import decode, encode
from firmware_protocol import messages as m
from firmware_protocol.codec import cobs_encode
from shoed.daemon.loop import input_from_reading
from shoed.drivers.shuffler import ShufflerDriver

ORDER = ("7H", "KS", "2D", "AC", "9C", "QH")


def frame(type_id: int, seq: int, payload: bytes) -> bytes:
    body = struct.pack("<BBH", 1, type_id, seq) + payload
    return cobs_encode(body + struct.pack("<I", zlib.crc32(body))) + b"\0"


def chunk_payload(position: int, cards: tuple[str, ...], extra: bytes = b"") -> bytes:
    return struct.pack("<IH", 77, position) + bytes([len(cards)]) + bytes(m.card_byte(c) for c in cards) + extra


def test_no_reading_carries_the_order_in_plain(tmp_path):
    key = tmp_path / "order.key"
    key.write_text(os.urandom(32).hex())
    master, slave = os.openpty()
    tty.setraw(slave)
    path = os.ttyname(slave)
    os.close(slave)
    stop = threading.Event()

    def drain():  # the host's writes (acks) are read and dropped, as a shuffler would take them
        while not stop.is_set():
            if select.select([master], [], [], 0.05)[0]:
                try:
                    os.read(master, 65536)
                except OSError:
                    time.sleep(0.05)

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    driver = ShufflerDriver(path, order_key_file=str(key), heartbeat=0.5, silence=30)
    driver.open()
    got = []

    def pump(seconds: float) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            for reading in driver.poll(0.05):
                got.append(reading)
                driver.acknowledge(reading)

    try:
        os.write(master, b"\0" + encode(m.Hello(seq=0, major=1, minor=1, vendor="Acme", model="CS-8", serial="SH1",
                                                firmware="1", boot=0x11223344))
                 + encode(m.Heartbeat(seq=1, uptime_ms=0, unacked=1))
                 + frame(0x52, 1, chunk_payload(0, ORDER[:2])))
        pump(0.6)
        os.write(master, frame(0x52, 3, chunk_payload(4, ORDER[4:6])))  # seq 2 lost on the line
        os.write(master, frame(0x52, 1, chunk_payload(0, ORDER[:2], b"\x01")))  # another frame under seq 1
        os.write(master, frame(0x52, 2, chunk_payload(2, ("5S",))[:-1] + bytes([0x0E])))  # no such card
        pump(0.8)
    finally:
        driver.close()
        stop.set()
        reader.join(2)
        os.close(master)
    kinds = {(r.kind, r.code) for r in got}
    assert ("order_chunk", None) in kinds and ("warning", "seq_gap") in kinds
    assert ("forged_frame", "forged_frame") in kinds and ("alarm", "firmware_fault") in kinds
    for reading in got:
        item = input_from_reading(reading)
        for hexed in (item.get("raw") or "", str((item.get("detail") or {}).get("taken") or "")):
            if hexed and not hexed.startswith("sha256:"):
                _, message = decode(bytes.fromhex(hexed))
                assert not isinstance(message, m.OrderChunk), (reading.kind, reading.code, hexed)
                assert bytes.fromhex(hexed)[2:3] != b"\x52", (reading.kind, reading.code, hexed)
        if (reading.kind, reading.code) in {("warning", "seq_gap"), ("forged_frame", "forged_frame"),
                                            ("alarm", "firmware_fault")}:
            assert not item.get("raw") and len(item["detail"]["raw_sha256"]) == 64, item
