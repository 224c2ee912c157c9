"""``python -m ember <command>``. Commands: ``doctor`` (see ``ember._doctor``)."""

from __future__ import annotations

import sys

USAGE = """usage: python -m ember doctor

  doctor   the installation's components, build and problems"""


def main(argv: list[str]) -> int:
    if argv[:1] == ["doctor"] and len(argv) == 1:
        from ember._doctor import main as doctor

        return doctor()
    print(USAGE, file=sys.stderr)
    return 0 if argv[:1] in (["-h"], ["--help"]) else 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
