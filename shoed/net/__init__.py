"""The network side of shoed: ZeroMQ publishing, catch-up and the command endpoint.

- `wire`: topics and JSON on the wire (pure).
- `sequence`: the Clone pattern's sequencing verdicts (pure).
- `curve`: CURVE key pairs, the allow-list and the ZAP authenticator.
- `publisher`: the PUB socket that fans coup events out to displays.
- `snapshot`: the requests of the snapshot endpoint (current state, event ranges).
- `catchup`: that endpoint, served on a thread of its own with limits per client.
- `client`: the subscriber side of the Clone pattern, for displays and tests.
- `commands`: the authenticated ROUTER endpoint for the dealer console and pit.

The publisher and the command endpoint are single-threaded and pollable: the
daemon's loop registers `sockets()` with its `zmq.Poller` and calls
`handle(socket)` for what is ready. The catch-up endpoint and pyzmq's ZAP
authenticator run in threads of their own.

Submodules are not imported here, so `import shoed.net.wire` stays cheap.
"""
