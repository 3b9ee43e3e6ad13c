"""What the parts of the network side share: a server socket made and bound in one way, and
`with` closing a part that holds sockets or threads."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Self

import zmq

if TYPE_CHECKING:
    from shoed.net.curve import ServerCurve


def bind_server(context: zmq.Context, kind: int, endpoint: str | None, curve: ServerCurve | None, curve_domain: str,
                **options: Any) -> zmq.Socket:
    """A socket of `kind` with `options` (pyzmq's socket attributes, e.g. linger=0), CURVE applied
    before the bind (the ZAP handler runs first), bound to `endpoint` (None: left for the caller to
    bind). A socket that cannot be set up or bound is closed before the error goes on."""
    sock = context.socket(kind)
    try:
        for name, value in options.items():
            setattr(sock, name, value)
        if curve is not None:
            curve.apply(sock, curve_domain)
        if endpoint is not None:
            sock.bind(endpoint)
    except Exception:
        sock.close(0)
        raise
    return sock


class Closing:
    """A part with a `close()` that is safe to call twice: `with part:` closes it on the way out."""

    def close(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
