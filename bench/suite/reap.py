"""Run a command as a child subreaper: every descendant that outlives its parent (the multiprocessing fork
server, a daemonised postgres) is re-parented here and reaped, so RUSAGE_CHILDREN counts all of their CPU.
Prints wall, user, sys (seconds) of the whole tree to the file in argv[1]."""

import ctypes
import os
import resource
import sys
import time
from pathlib import Path

PR_SET_CHILD_SUBREAPER = 36
ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
t0 = time.monotonic()
pid = os.fork()
if pid == 0:
    os.execvp(sys.argv[2], sys.argv[2:])
rc = 0
while True:
    try:
        p, status = os.wait()
    except ChildProcessError:
        break
    if p == pid:
        rc = os.waitstatus_to_exitcode(status)
        t_main = time.monotonic() - t0
ru = resource.getrusage(resource.RUSAGE_CHILDREN)
Path(sys.argv[1]).write_text(f"{t_main:.1f} {time.monotonic() - t0:.1f} {ru.ru_utime:.1f} {ru.ru_stime:.1f}\n")
sys.exit(rc)
