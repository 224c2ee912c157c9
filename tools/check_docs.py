"""Run the documentation: every ```python block of the pages must execute.

    python tools/check_docs.py docs [--allow-missing docs/_generated] [--links FILE ...]

For each Markdown page under the given directories (``_generated/`` excluded), the
```python (or ```py) blocks run in order, in one namespace per page, so a later block can
use the names an earlier one defined. A block whose info string has ``no-run`` after the
language (```python no-run) is shown but not executed. Relative links of the pages, and of
the extra files given with ``--links``, must point at files that exist. Exit status 1 if
anything failed, with the page and line of each failure.
"""

from __future__ import annotations

import argparse
import re
import sys
import traceback
from pathlib import Path

FENCE = re.compile(r"^(?P<indent> {0,3})(?P<fence>`{3,}|~{3,})(?P<info>[^`]*)$")
LINK = re.compile(r"!?\[[^\]]*\]\((?P<target>[^)\s]+)(?:\s+\"[^\"]*\")?\)")
RUN_LANGS = {"python", "py"}


def code_blocks(text: str) -> list[tuple[int, str, str]]:
    """(first line number, info string, code) of every fenced block."""
    blocks = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        fence, info, start = m["fence"], m["info"].strip(), i + 1
        body = []
        i += 1
        while i < len(lines):
            close = FENCE.match(lines[i])
            if close and close["fence"].startswith(fence[0] * len(fence)) and not close["info"]:
                break
            body.append(lines[i])
            i += 1
        blocks.append((start + 1, info, "\n".join(body) + "\n"))
        i += 1
    return blocks


def run_page(page: Path) -> tuple[list[str], int]:
    """Failures and number of blocks run."""
    failures, ran = [], 0
    namespace: dict[str, object] = {"__name__": "__docs__"}
    for line, info, code in code_blocks(page.read_text()):
        words = info.split()
        if not words or words[0] not in RUN_LANGS or "no-run" in words[1:]:
            continue
        ran += 1
        try:
            exec(compile(code, f"{page}:{line}", "exec"), namespace)
        except Exception:
            failures.append(f"{page}:{line}: the python block failed\n{traceback.format_exc()}")
    return failures, ran


def _strip_code(text: str) -> str:
    """The text without fenced blocks and inline code, where links are not links."""
    out, inside = [], None
    for line in text.splitlines():
        m = FENCE.match(line)
        if m and inside is None:
            inside = m["fence"]
            continue
        if m and inside and m["fence"].startswith(inside) and not m["info"].strip():
            inside = None
            continue
        if inside is None:
            out.append(re.sub(r"`[^`]*`", "", line))
    return "\n".join(out)


def check_links(page: Path, allow_missing: list[Path]) -> list[str]:
    failures = []
    for m in LINK.finditer(_strip_code(page.read_text())):
        target = m["target"]
        if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
            continue  # a URL, mailto:, or an anchor in the same page
        path = (page.parent / target.split("#", 1)[0]).resolve()
        if path.exists():
            continue
        if any(path.is_relative_to(a) for a in allow_missing):
            print(f"note: {page}: link to {target} (not generated yet)")
            continue
        failures.append(f"{page}: broken link to {target}")
    return failures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dirs", nargs="+", type=Path, help="directories of Markdown pages")
    parser.add_argument(
        "--allow-missing",
        action="append",
        type=Path,
        default=[],
        help="links into this directory may point at missing files",
    )
    parser.add_argument(
        "--links",
        nargs="*",
        type=Path,
        default=[],
        help="further Markdown files whose links are checked (not run)",
    )
    args = parser.parse_args(argv)

    allow = [p.resolve() for p in args.allow_missing]
    pages = sorted(
        page
        for d in args.dirs
        for page in d.rglob("*.md")
        if "_generated" not in page.relative_to(d).parts
    )
    failures: list[str] = []
    ran = 0
    for page in pages:
        page_failures, page_ran = run_page(page)
        ran += page_ran
        failures += page_failures + check_links(page, allow)
        print(f"{'FAIL' if page_failures else 'ok  '} {page}")
    for extra in args.links:
        if extra.exists():
            failures += check_links(extra, allow)
        else:
            failures.append(f"{extra}: no such file")
    for failure in failures:
        print(failure, file=sys.stderr)
    print(f"{len(pages)} pages, {ran} python blocks, {len(failures)} problems")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
