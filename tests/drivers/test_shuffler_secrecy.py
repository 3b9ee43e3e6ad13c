"""A card-reading shuffler's order never leaves its driver in plain text, over a real pseudo-terminal:
not in a chunk (sealed), not in the completed shuffle's digest (keyed), and not in the bytes that any other
reading carries as evidence (a chunk out of turn, a chunk forged under a seq already taken, a chunk with an
impossible card): a keyed hash only, never a plain one, which would give the cards back to whoever tries
the few not dealt yet."""

from __future__ import annotations

import hashlib
import json
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
from shoed.drivers import open_driver
from shoed.drivers.shuffler import ShufflerDriver
from shoed.rules.shuffle import digest_mac, evidence, read_key

ORDER = ("7H", "KS", "2D", "AC", "9C", "QH")


def frame(type_id: int, seq: int, payload: bytes) -> bytes:
    body = struct.pack("<BBH", 1, type_id, seq) + payload
    return cobs_encode(body + struct.pack("<I", zlib.crc32(body))) + b"\0"


def chunk_payload(position: int, cards: tuple[str, ...], extra: bytes = b"") -> bytes:
    return struct.pack("<IH", 77, position) + bytes([len(cards)]) + bytes(m.card_byte(c) for c in cards) + extra


def test_no_reading_carries_the_order_in_plain(tmp_path):
    key = tmp_path / "order.key"
    key.write_text(os.urandom(32).hex())
    order_key = read_key(key.read_bytes())
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

    lost = frame(0x52, 3, chunk_payload(4, ORDER[4:6]))
    written = [lost]
    try:
        os.write(master, b"\0" + encode(m.Hello(seq=0, major=1, minor=1, vendor="Acme", model="CS-8", serial="SH1",
                                                firmware="1", boot=0x11223344))
                 + encode(m.Heartbeat(seq=1, uptime_ms=0, unacked=1))
                 + frame(0x52, 1, chunk_payload(0, ORDER[:2])))
        pump(0.6)
        os.write(master, lost)  # seq 2 lost on the line
        written.append(frame(0x52, 1, chunk_payload(0, ORDER[:2], b"\x01")))  # another frame under seq 1
        written.append(frame(0x52, 2, chunk_payload(2, ("5S",))[:-1] + bytes([0x0E])))  # no such card
        written.append(frame(0x52, 2, chunk_payload(2, ORDER[2:4])))
        written.append(lost)
        completed = m.ShuffleCompleted(seq=4, shuffle=77, shoe=1, cards=6, digest=m.order_digest(ORDER))
        written.append(encode(completed))
        for data in written[1:]:
            os.write(master, data)
        pump(0.8)
    finally:
        driver.close()
        stop.set()
        reader.join(2)
        os.close(master)
    kinds = {(r.kind, r.code) for r in got}
    assert ("order_chunk", None) in kinds and ("warning", "seq_gap") in kinds
    assert ("forged_frame", "forged_frame") in kinds and ("alarm", "firmware_fault") in kinds
    assert [r.kind for r in got].count("order_chunk") == 3
    (done,) = [r for r in got if r.kind == "shuffle_completed"]
    assert done.detail["digest_hmac"] == digest_mac(order_key, completed.digest) and "digest" not in done.detail
    hashes = {hashlib.sha256(data).hexdigest() for data in written} | {completed.digest}
    for reading in got:
        item = input_from_reading(reading)
        text = json.dumps(item)
        assert not any(h in text for h in hashes), item  # no plain hash of a frame, nor the order's digest
        assert "raw_sha256" not in text and "sha256:" not in text
        for hexed in (item.get("raw") or "", str((item.get("detail") or {}).get("taken") or "")):
            if hexed and not hexed.startswith("hmac:"):
                _, message = decode(bytes.fromhex(hexed))
                assert not isinstance(message, m.OrderChunk), (reading.kind, reading.code, hexed)
                assert bytes.fromhex(hexed)[2:3] != b"\x52", (reading.kind, reading.code, hexed)
        if (reading.kind, reading.code) in {("warning", "seq_gap"), ("forged_frame", "forged_frame"),
                                            ("alarm", "firmware_fault")}:
            assert not item.get("raw") and len(item["detail"]["raw_hmac"]) == 64, item
        if (reading.kind, reading.code) == ("warning", "seq_gap"):
            assert item["detail"]["raw_hmac"] == evidence(order_key, lost)  # matched with the key, against the line
        if reading.kind == "forged_frame":
            taken = frame(0x52, 1, chunk_payload(0, ORDER[:2]))
            assert item["detail"]["taken"] == "hmac:" + evidence(order_key, taken)


def test_only_the_shuffler_driver_is_given_the_shufflers_messages(tmp_path):
    key = tmp_path / "order.key"
    key.write_text(os.urandom(32).hex() + "\n")
    assert open_driver("shuffler", "loop://", order_key_file=str(key)).session.shuffler
    assert not open_driver("native", "loop://").session.shuffler
