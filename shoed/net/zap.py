"""The ZAP handler that answers a ZeroMQ context's CURVE handshakes: is this key on the allow-list?

libzmq asks the handler bound at `inproc://zeromq.zap.01` of the socket's
context once per handshake (ZeroMQ RFC 27), after the CURVE crypto. The
handler runs on a thread of its own, so a flood of refused handshakes never
runs on the card loop's thread; and it is as small as the protocol allows
(one lookup in a dict, one reply, no logging per request), because each
request still takes the interpreter for a moment: at about 1,000 refused
handshakes a second, pyzmq's general `ThreadAuthenticator` (an asyncio loop,
address lists, debug logging) cost the daemon a fifth of a core and the card
loop its turns.

Answers: CURVE with a key on the domain's allow-list is 200, its user id the
key in Z85 (what `zmq.Frame.get("User-Id")` gives the command server); NULL
is 200 (endpoints without keys, on a context that has a handler); anything
else, or an unknown domain, is 400.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping

import zmq
from zmq.utils import z85

ZAP_ENDPOINT = "inproc://zeromq.zap.01"
VERSION = b"1.0"
STOP_CHECK_MS = 100  # how often the thread looks whether it should stop

_OK, _NO = b"200", b"400"


class ZapHandler:
    """One context's ZAP endpoint, served by its own thread.

    `providers` maps a ZAP domain to a callable `(domain, z85_key) -> bool`;
    the mapping is read on each request, so a provider may change its list
    at any time. Binding happens in the constructor: a second handler on the
    same context fails there (zmq.ZMQError, EADDRINUSE)."""

    def __init__(self, context: zmq.Context, providers: Mapping[str, Callable[[str, bytes], bool]]) -> None:
        self.context = context
        self.providers = providers
        self.stats = {"allowed": 0, "refused": 0}
        sock = context.socket(zmq.REP)
        sock.linger = 0
        try:
            sock.bind(ZAP_ENDPOINT)
        except zmq.ZMQError:
            sock.close(0)
            raise
        self._socket = sock  # handed to the thread (starting it is the memory barrier ZeroMQ asks for)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="shoed-zap", daemon=True)
        self._thread.start()

    def is_alive(self) -> bool:
        return self._thread.is_alive()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not threading.current_thread():
            self._thread.join(5)

    def _run(self) -> None:
        sock = self._socket
        try:
            while not self._stop.is_set():
                if not sock.poll(STOP_CHECK_MS):
                    continue
                while True:  # every request waiting, in one go
                    try:
                        request = sock.recv_multipart(zmq.NOBLOCK)
                    except zmq.Again:
                        break
                    sock.send_multipart(self.answer(request))
        finally:
            sock.close(0)

    def answer(self, request: list[bytes]) -> list[bytes]:
        """The reply frames for one ZAP request."""
        request_id = request[1] if len(request) > 1 else b""
        if len(request) < 6 or request[0] != VERSION:
            return [VERSION, request_id, _NO, b"bad request", b"", b""]
        domain, mechanism = request[2], request[5]
        if mechanism == b"CURVE" and len(request) == 7 and len(request[6]) == 32:
            name = domain.decode("ascii", "replace")
            provider = self.providers.get(name)
            key = z85.encode(request[6])
            if provider is not None and provider(name, key):
                self.stats["allowed"] += 1
                return [VERSION, request_id, _OK, b"OK", key, b""]
        elif mechanism == b"NULL":
            return [VERSION, request_id, _OK, b"OK", b"anonymous", b""]
        self.stats["refused"] += 1
        return [VERSION, request_id, _NO, b"NO ACCESS", b"", b""]
