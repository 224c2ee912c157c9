"""``python -m ember_autograd.regenerate`` writes the modules of ``ember_autograd/_generated``
from derivatives.yaml and the installed core's op schema (``codegen.sources``), those that
changed; ``--check`` only lists the stale ones and exits with 1 if there are any.

A module of its own (not ``codegen``): while the checked-in modules are stale, importing
ember_autograd generates them in memory with ``codegen``, which must not then run again as
``__main__``.
"""

from __future__ import annotations

import argparse
import os
import sys

from .codegen import COMMAND, GENERATED_DIR, stale_files, write


def main(argv: list[str] | None = None) -> int:
    """Runs the command with the arguments ``argv``; returns its exit status."""
    parser = argparse.ArgumentParser(
        prog=COMMAND,
        description="Regenerates ember_autograd/_generated from derivatives.yaml and the "
        "installed core's ops_schema.json.",
    )
    parser.add_argument("--check", action="store_true", help="only list the stale modules")
    if parser.parse_args(argv).check:
        stale = stale_files()
        for name in stale:
            print(f"stale: {os.path.join(GENERATED_DIR, name)} (run `{COMMAND}`)")
        return 1 if stale else 0
    for name in write():
        print(f"wrote {os.path.join(GENERATED_DIR, name)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
