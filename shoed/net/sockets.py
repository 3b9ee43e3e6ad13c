"""What the parts of the network side share: a server socket made and bound in one way, and
`with` closing a part that holds sockets or threads."""

from __future__ import annotations

import errno
import os
import socket
import stat
from typing import TYPE_CHECKING, Any, Self

import zmq

if TYPE_CHECKING:
    from shoed.net.curve import ServerCurve


def bind_server(context: zmq.Context, kind: int, endpoint: str | None, curve: ServerCurve | None, curve_domain: str,
                **options: Any) -> zmq.Socket:
    """A socket of `kind` with `options` (pyzmq's socket attributes, e.g. linger=0), CURVE applied
    before the bind (the ZAP handler runs first), bound to `endpoint` (None: left for the caller to
    bind). A socket that cannot be set up or bound is closed before the error goes on; an ipc
    endpoint that another process answers on is refused (`refuse_live_ipc`)."""
    if endpoint is not None:
        refuse_live_ipc(endpoint)
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


def refuse_live_ipc(endpoint: str) -> None:
    """zmq.ZMQError (EADDRINUSE) when `endpoint` is an ipc path that a process answers on. libzmq
    unlinks an ipc path's socket file and binds anew without a word, cutting off whoever served
    there (another table's daemon); a socket file nobody answers on (left by a daemon that was
    killed) is left for libzmq to take."""
    scheme, _, path = endpoint.partition("://")
    if scheme != "ipc" or not path or path == "*" or path.startswith("@"):
        return
    try:
        if not stat.S_ISSOCK(os.stat(path).st_mode):
            return
    except OSError:
        return
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    probe.settimeout(1.0)
    try:
        probe.connect(path)
    except OSError:
        return  # refused (a stale file), or not ours to tell: libzmq's bind says what it finds
    finally:
        probe.close()
    raise zmq.ZMQError(errno.EADDRINUSE, f"another process answers on {endpoint}")


class Closing:
    """A part with a `close()` that is safe to call twice: `with part:` closes it on the way out."""

    def close(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
