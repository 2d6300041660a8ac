"""How often the server's threads hand the GIL to one another: every millisecond, not CPython's five.

Why: a thread that gives the GIL away for a system call (a flush, a read, a socket send) must then wait for the
thread holding it to let go, which a busy thread does only when the switch interval has passed.  The group
commit's writer makes about a dozen such calls per group (the ref updates of :mod:`notegate.vault.refwrite`: open,
write, ``fsync``, rename, the folder's ``fsync``, in the origin and in the clone), each one a wait of up to the
interval while request threads parse and answer, all of it with the write lock held.  Measured with
bench/probe_ref_gil.py beside a busy thread: a durable ref update took 58 ms at the default 5 ms interval and 15 ms
at 1 ms, while the busy thread kept running through it (libgit2's own update, holding the GIL, blocked it for most
of its 16 ms).  A shorter interval costs the threads that compute a few more handovers a second, each a few
microseconds.
"""

from __future__ import annotations

import sys

#: Seconds a thread may keep the GIL while another waits for it (CPython's default: 0.005).
SWITCH_INTERVAL = 0.001


def share() -> None:
    """Set the interval for this process; called by the server before it serves."""
    sys.setswitchinterval(SWITCH_INTERVAL)
