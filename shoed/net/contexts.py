"""ZeroMQ contexts of the daemon: the card path's I/O threads apart from the ones a client can load.

A context's I/O thread does the work of all its sockets' connections: TCP
accepts, ZMTP handshakes, CURVE crypto (four key agreements per handshake,
a quarter of a millisecond), encoding and sending. Left in one context, a
burst of 50 refused CURVE handshakes on the command port puts about 15 ms of
crypto in front of the next card's event. So:

- each event stream (an XPUB: the display's, the surveillance's) has a
  context of its own (`stream_context()`): its I/O thread serves that
  stream's subscribers only;
- the command and catch-up endpoints share the public context
  (`public_context()`), whose I/O thread runs at a lower priority
  (`lower_io_priority()`, nice +10): when the cores are short, the card
  loop and the streams' I/O threads go first, and the handshake flood waits.

A stream with CURVE keys still does its own handshakes on its own I/O
thread; a flood at that port slows that stream alone.
"""

from __future__ import annotations

import logging
import os
import time

import zmq

log = logging.getLogger("shoed.net.contexts")

PUBLIC_PREFIX = 7  # the public context's threads are named "7/ZMQbg/IO/0", ... (ZMQ_THREAD_NAME_PREFIX)
PUBLIC_NICE = 10  # how much lower than the rest of the daemon the public I/O threads run


def public_context() -> zmq.Context:
    """The context of the command and catch-up endpoints (one I/O thread, named by PUBLIC_PREFIX)."""
    context = zmq.Context()
    context.set(zmq.THREAD_NAME_PREFIX, PUBLIC_PREFIX)
    return context


def stream_context() -> zmq.Context:
    """A context for one event stream: an I/O thread of its own."""
    return zmq.Context()


def io_threads(prefix: int = PUBLIC_PREFIX) -> list[int]:
    """The thread ids of this process's I/O threads of the contexts named by `prefix`
    (a context starts them with its first socket)."""
    name = f"{prefix}/ZMQbg/IO/"
    found = []
    try:
        tasks = os.listdir("/proc/self/task")
    except OSError:  # not Linux: nothing to find
        return []
    for tid in tasks:
        try:
            with open(f"/proc/self/task/{tid}/comm") as f:
                if f.read().startswith(name):
                    found.append(int(tid))
        except OSError:
            continue
    return found


def lower_io_priority(prefix: int = PUBLIC_PREFIX, nice: int = PUBLIC_NICE, wait: float = 0.5) -> list[int]:
    """Run the public context's I/O threads `nice` steps below the daemon (Linux: per thread).
    Call it once the context has a socket; a new thread names itself a moment after it starts, so
    this waits up to `wait` seconds for it. Returns the threads changed; where the platform does
    not allow it, none, and a warning says so."""
    deadline = time.monotonic() + wait
    while not (tids := io_threads(prefix)) and os.path.isdir("/proc/self/task") and time.monotonic() < deadline:
        time.sleep(0.005)
    changed = []
    for tid in tids:
        try:
            os.setpriority(os.PRIO_PROCESS, tid, os.getpriority(os.PRIO_PROCESS, tid) + nice)
        except OSError as exc:
            log.warning("could not lower the public I/O thread's priority (%s); it runs as the card loop does", exc)
            continue
        changed.append(tid)
    return changed
