"""The network side's one way of making a server socket (shoed/net/sockets.py)."""

from __future__ import annotations

import socket
import threading

import pytest
import zmq

from shoed.net.sockets import Closing, bind_server


def test_a_server_socket_has_its_options_and_is_bound(tmp_path):
    ctx = zmq.Context()
    try:
        sock = bind_server(ctx, zmq.ROUTER, f"ipc://{tmp_path}/s", None, "global", linger=0, router_mandatory=1,
                           rcvhwm=64, maxmsgsize=4096)
        assert sock.rcvhwm == 64 and sock.maxmsgsize == 4096 and sock.linger == 0
        assert sock.getsockopt_string(zmq.LAST_ENDPOINT) == f"ipc://{tmp_path}/s"
        sock.close(0)
    finally:
        ctx.term()


def test_a_socket_that_cannot_bind_is_closed():
    """The port is taken: the error goes on, and the socket is not left open (the context's term,
    which waits for every socket to close, returns)."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        ctx = zmq.Context()
        with pytest.raises(zmq.ZMQError):
            bind_server(ctx, zmq.ROUTER, f"tcp://127.0.0.1:{port}", None, "global", linger=0)
        done = threading.Thread(target=ctx.term, daemon=True)
        done.start()
        done.join(5)
        assert not done.is_alive(), "a socket was left open"


def test_with_closes_a_part():
    class Part(Closing):
        closed = 0

        def close(self) -> None:
            self.closed += 1

    with Part() as part:
        assert part.closed == 0
    assert part.closed == 1


def test_an_ipc_path_a_process_answers_on_is_refused_and_a_stale_one_is_taken(ctx, base):
    """libzmq unlinks an ipc path's socket file and binds anew without a word: a live server there
    (another daemon) is refused; a file nobody answers on (a killed daemon's) is taken."""
    import errno

    live = ctx.socket(zmq.ROUTER)
    live.bind(f"ipc://{base}/live")
    with pytest.raises(zmq.ZMQError) as taken:
        bind_server(ctx, zmq.ROUTER, f"ipc://{base}/live", None, "shoed", linger=0)
    assert taken.value.errno == errno.EADDRINUSE and str(taken.value) == f"another process answers on ipc://{base}/live"
    live.close(0)
    stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stale.bind(str(base / "stale"))  # a socket file, and no one listening on it
    stale.close()
    bind_server(ctx, zmq.ROUTER, f"ipc://{base}/stale", None, "shoed", linger=0).close(0)
