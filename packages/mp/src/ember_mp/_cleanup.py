"""The cleanup daemon of one process's file_system segments.

``python -m ember_mp._cleanup PREFIX OWNER_PID``, started (in its own session, so that it
outlives its owner) by the first file_system segment a process creates. Every
``INTERVAL`` seconds it unlinks each ``/dev/shm/PREFIX*`` file that no process holds a lock
on any more: users that exit normally unlink the segment themselves, so this is for users
killed by SIGKILL. It exits once the owner is gone and no segment of its prefix remains.
"""

from __future__ import annotations

import os
import sys
import time

from ._segments import SHM_DIR, unlink_if_unused

INTERVAL = 0.2
STALE_TMP = 2.0  # seconds after which an unlocked half-made segment is abandoned


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def sweep(prefix: str) -> int:
    """Unlinks the unused segments of ``prefix``; returns how many remain."""
    remaining = 0
    now = time.time()
    for name in os.listdir(SHM_DIR):
        if not name.startswith(prefix):
            continue
        if name.endswith("_tmp"):
            try:
                if now - os.stat(os.path.join(SHM_DIR, name)).st_mtime < STALE_TMP:
                    remaining += 1
                    continue
            except FileNotFoundError:
                continue
        if not unlink_if_unused(name):
            remaining += 1
    return remaining


def main(prefix: str, owner: int) -> None:
    while True:
        remaining = sweep(prefix)
        if remaining == 0 and not _alive(owner):
            return
        time.sleep(INTERVAL)


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
