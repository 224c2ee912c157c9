"""MkDocs hooks of the documentation site (``hooks:`` in ``mkdocs.yml``).

The pages of ``docs/`` link to files of the repository outside ``docs/`` with relative
links (``../benchmarks/README.md``), which work on GitHub and in an editor, and which
``tools/check_docs.py`` checks. A site built from ``docs/`` alone would break them (and
``mkdocs build --strict`` refuses them), so the site takes those files in, under
``repo/`` with their repository paths:

- a Markdown file becomes a page (``repo/benchmarks/README.md``), whose own links are
  followed the same way;
- any other text file becomes a page that shows it in a code block
  (``../examples/hogwild.py`` -> ``repo/examples/hogwild.py.md``);
- a folder is shown by its ``README.md`` when it has one, else by a page that lists its
  entries (``repo/examples/plugins/index.md``).

Links are rewritten to those pages, and a link from a taken-in page back into ``docs/``
points at the site's page. Links to missing files are left alone, so MkDocs reports them.

Code blocks marked ``no-run`` for ``tools/check_docs.py`` (```` ```python no-run ````) lose
the marker, which Markdown would not recognise.
"""

from __future__ import annotations

import posixpath
import re
from pathlib import Path

from mkdocs.structure.files import File, Files

LINK = re.compile(r"(?P<open>!?\[[^\]]*\]\()(?P<target>[^)\s]+)(?P<close>(?:\s+\"[^\"]*\")?\))")
FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
SCHEME = re.compile(r"^[a-z][a-z0-9+.-]*:")
REPO_PREFIX = "repo"
LANGUAGES = {".py": "python", ".toml": "toml", ".yaml": "yaml", ".yml": "yaml", ".sh": "sh",
             ".txt": "text", ".json": "json", ".cpp": "cpp", ".h": "cpp"}

# real path of a taken-in file -> its src_uri in the site
_taken: dict[Path, str] = {}


def _root(config) -> Path:
    return Path(config.config_file_path).resolve().parent


def _code_spans(line: str) -> list[tuple[int, int]]:
    return [m.span() for m in re.finditer(r"(`+)(?:(?!\1).)+?\1", line)]


def _map_links(markdown: str, fn) -> str:
    """``markdown`` with every link outside code blocks and code spans replaced by
    ``fn(match)``."""
    out, fence = [], None
    for line in markdown.split("\n"):
        m = FENCE.match(line)
        if fence is None and m:
            fence = m.group(1)
        elif fence is not None:
            if m and m.group(1).startswith(fence) and not line.strip().strip(fence[0]):
                fence = None
        else:
            spans = _code_spans(line)

            def sub(link: re.Match, spans=spans) -> str:
                if any(a <= link.start() < b for a, b in spans):
                    return link.group(0)
                return fn(link)

            line = LINK.sub(sub, line)
        out.append(line)
    return "\n".join(out)


def _targets(markdown: str) -> list[str]:
    found: list[str] = []

    def collect(link: re.Match) -> str:
        found.append(link["target"])
        return link.group(0)

    _map_links(markdown, collect)
    return found


def _resolve(source: Path, target: str) -> tuple[Path, str] | None:
    """The real path a relative link of ``source`` points at, and its #fragment."""
    if SCHEME.match(target) or target.startswith(("#", "/")):
        return None
    path, _, fragment = target.partition("#")
    if not path:
        return None
    return (source.parent / path).resolve(), fragment


def on_files(files: Files, config) -> Files:
    """Take in the repository files that the pages link to, following Markdown links."""
    docs_dir, root = Path(config.docs_dir).resolve(), _root(config)
    _taken.clear()
    queue = [Path(f.abs_src_path) for f in files.documentation_pages() if f.abs_src_path]
    seen: set[Path] = set()
    while queue:
        source = queue.pop()
        if source in seen:
            continue
        seen.add(source)
        for target in _targets(source.read_text(encoding="utf-8")):
            resolved = _resolve(source, target)
            if resolved is None:
                continue
            path = resolved[0]
            if path.is_relative_to(docs_dir) or not path.is_relative_to(root):
                continue
            if path in _taken or not path.exists():
                continue
            rel = path.relative_to(root).as_posix()
            if path.is_dir():
                readme = path / "README.md"
                if readme.is_file():  # a folder is shown by its README, as on GitHub
                    if readme not in _taken:
                        uri = f"{REPO_PREFIX}/{rel}/README.md"
                        files.append(File.generated(config, uri, abs_src_path=str(readme)))
                        _taken[readme] = uri
                        queue.append(readme)
                    _taken[path] = _taken[readme]
                else:  # or by the list of what it holds
                    uri = f"{REPO_PREFIX}/{rel}/index.md"
                    files.append(File.generated(config, uri, content=_listing(path, rel)))
                    _taken[path] = uri
                continue
            if path.suffix == ".md":
                uri = f"{REPO_PREFIX}/{rel}"
                files.append(File.generated(config, uri, abs_src_path=str(path)))
                queue.append(path)
            else:
                uri = f"{REPO_PREFIX}/{rel}.md"
                lang = LANGUAGES.get(path.suffix, "text")
                text = path.read_text(encoding="utf-8")
                content = f"# `{rel}`\n\n````{lang}\n{text.rstrip()}\n````\n"
                files.append(File.generated(config, uri, content=content))
            _taken[path] = uri
    return files


# check_docs.py's marker of a block that is shown but not run (```python no-run): not part
# of the language, which Markdown would not recognise with it
NO_RUN = re.compile(r"^( {0,3}(?:`{3,}|~{3,})\s*[\w+-]+)\s+no-run\s*$", re.M)


# what a folder's listing leaves out: build output and tool state
NOT_LISTED = {"build", "dist", "__pycache__", ".pytest_cache", ".benchmarks", ".nox"}


def _listing(path: Path, rel: str) -> str:
    """A page that lists the entries of the repository folder ``path``."""
    entries = sorted(
        p for p in path.iterdir()
        if not p.name.startswith(".") and p.name not in NOT_LISTED
        and not p.name.endswith(".egg-info")
    )
    lines = [f"# `{rel}/`", "", "The folder holds:", ""]
    lines += [f"- `{p.name}{'/' if p.is_dir() else ''}`" for p in entries]
    return "\n".join(lines) + "\n"


def on_page_markdown(markdown: str, page, config, files: Files) -> str:
    """Drop the ``no-run`` markers of code blocks; point the links of a page at the site's
    copies of the files they name."""
    markdown = NO_RUN.sub(r"\1", markdown)
    docs_dir, root = Path(config.docs_dir).resolve(), _root(config)
    src_uri = page.file.src_uri
    if page.file.abs_src_path:
        source = Path(page.file.abs_src_path).resolve()
    else:  # a generated page without a source file: its links are relative to its uri
        source = docs_dir / src_uri
    here = posixpath.dirname(src_uri)

    def rewrite(m: re.Match) -> str:
        resolved = _resolve(source, m["target"])
        if resolved is None:
            return m.group(0)
        path, fragment = resolved
        if path in _taken:
            uri = _taken[path]
        elif path.is_relative_to(docs_dir) and (path.exists() or not path.suffix):
            uri = path.relative_to(docs_dir).as_posix()
        else:
            return m.group(0)
        new = posixpath.relpath(uri, here or ".") + (f"#{fragment}" if fragment else "")
        return f"{m['open']}{new}{m['close']}"

    if not source.is_relative_to(root):
        return markdown
    return _map_links(markdown, rewrite)
