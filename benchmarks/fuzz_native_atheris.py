"""Coverage-guided fuzzing of the native shoe protocol's decoder (atheris / libFuzzer), for long runs by hand.

What a shoe's serial line can carry is attacker-controlled (a tampered shoe,
a tapped cable). For any byte stream, cut anywhere into reads:

- `firmware_protocol.Decoder.feed` never raises and always moves forward;
- every frame it yields is an intact frame of the stream (its bytes, found
  again at its offset, encode back to exactly those bytes): no message is
  made up from noise;
- the host's protocol logic (`NativeSession.receive`) never raises either,
  and every card reading it returns carries the exact bytes of a frame that
  decodes to that card.

The hypothesis tests (tests/firmware_protocol/test_wire_fuzz.py,
tests/drivers/test_native_session.py) run in CI; this is the same idea for
hours, guided by coverage.

    .venv/bin/pip install atheris
    .venv/bin/python benchmarks/fuzz_native_atheris.py -max_total_time=3600 -max_len=4096 corpus/
    .venv/bin/python benchmarks/fuzz_native_atheris.py -runs=200000           # a quick check

A crash writes the input to ./crash-<hash>; replay it with the same command and the file as argument.
"""

from __future__ import annotations

import sys

import atheris

with atheris.instrument_imports():
    from firmware_protocol import Decoder, Rejected, decode, encode
    from firmware_protocol import messages as m
    from shoed.drivers.native import host_hello
    from shoed.drivers.native_session import NativeSession

# A seed for the fuzzer: a Hello, a heartbeat and a card, so it starts from frames that pass the CRC.
SEED = (encode(m.Hello(vendor="v", model="m", serial="s", firmware="f", boot=7))
        + encode(m.Heartbeat(seq=0, unacked=0)) + encode(m.CardRead(seq=1, rank=9, suit=2)))


def check_stream(data: bytes, cuts: list[int]) -> None:
    decoder = Decoder()
    start = 0
    for cut in [*cuts, len(data)]:
        chunk = data[start:cut]
        before = decoder.offset
        for offset, item in decoder.feed(chunk):
            if isinstance(item, Rejected):
                assert item.length >= 0
                continue
            # An accepted frame is an intact frame of the stream, at its offset.
            frame = encode(item)
            assert data[offset:offset + len(frame)] == frame, (offset, item)
            used, again = decode(frame)
            assert used == len(frame) and again == item
        assert decoder.offset >= before
        start = cut


def check_session(data: bytes, cuts: list[int]) -> None:
    session = NativeSession("native:fuzz", host_hello(boot=1))
    session.link_up(0, 0, 0)
    session.receive(SEED[: SEED.index(b"\x00", 1) + 1], 1, 1)  # the shoe's Hello: the session is up
    start, now = 0, 2
    for cut in [*cuts, len(data)]:
        readings, _ = session.receive(data[start:cut], now, now)
        for reading in readings:
            if reading.kind == "card":
                used, msg = decode(reading.raw)
                assert used == len(reading.raw) and isinstance(msg, m.CardRead)
                assert m.card_text(msg) == reading.card
        session.outgoing()
        start, now = cut, now + 1


def test_one_input(raw: bytes) -> None:
    fdp = atheris.FuzzedDataProvider(raw)
    count = fdp.ConsumeIntInRange(0, 6)
    cuts = sorted(fdp.ConsumeIntInRange(0, 4096) for _ in range(count))
    data = fdp.ConsumeBytes(fdp.remaining_bytes())
    cuts = [min(c, len(data)) for c in cuts]
    check_stream(data, cuts)
    check_session(data, cuts)


def main() -> None:
    atheris.Setup(sys.argv, test_one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
