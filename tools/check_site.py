"""Check that the built documentation site rendered: run after ``mkdocs build --strict``.

    python tools/check_site.py [--config mkdocs.yml] [--site build/site]

MkDocs' strict mode catches what it warns about; this checks the output itself:

1. every page of the nav has its HTML file, with a title and a non-empty body;
2. the API pages (``docs/api/*.md``) document what they claim: for every
   ``::: identifier`` directive, the object is on the page (an element with that id), and
   for a module, every name of its ``__all__`` (or of the directive's ``members:`` list)
   is there too, as ``module.name`` (or as ``module.name.name`` for a function documented
   from the submodule of the same name); the packages must be importable, as they are in
   ``nox -s docs``. A few names are required by name as well (``ember_optim.Adam``,
   ``ember_tensor.Tensor``, ...), and the op table must list the ops;
3. nothing was left unrendered: no ``:::`` directive and no code fence outside code in
   any page;
4. every internal link (``href``/``src``) of every page resolves to a file of the site,
   and a ``#fragment`` to an element of that page with that id.

Exit status 0 when all holds; 1 with one line per problem otherwise.
"""

from __future__ import annotations

import argparse
import importlib
import re
import sys
import types
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import yaml

ROOT = Path(__file__).resolve().parent.parent

# names that must be on the API pages whatever the directives say (site path -> ids)
REQUIRED = {
    "api/ember/index.html": ["ember.use", "ember.SlotError"],
    "api/tensor/index.html": [
        "ember_tensor.Tensor",
        "ember_tensor.Tensor.add",
        "ember_tensor.Tensor.shape",
        "ember_tensor.tensor",
        "ember_tensor.zeros",
        "ember_tensor.linalg.solve",
        "ember_tensor.serialization.save",
    ],
    "api/autograd/index.html": ["ember_autograd.grad", "ember_autograd.Function"],
    "api/nn/index.html": ["ember_nn.Module", "ember_nn.Linear", "ember_nn.functional.relu"],
    "api/optim/index.html": ["ember_optim.Adam", "ember_optim.SGD",
                             "ember_optim.lr_scheduler.StepLR"],
    "api/data/index.html": ["ember_data.DataLoader", "ember_data.Dataset"],
    "api/mp/index.html": ["ember_mp.ProcessGroup", "ember_mp.all_reduce"],
}
# ops that the op table page must list (its rows are `name`)
REQUIRED_OPS = ["add", "matmul", "softmax", "sum"]
OP_TABLE = "_generated/ops/index.html"

DIRECTIVE = re.compile(r"^::: +(?P<ident>[\w.]+)\s*$")


class Page(HTMLParser):
    """What the checks need from one HTML page."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.ids: set[str] = set()
        self.links: list[tuple[str, str]] = []  # (attribute, url)
        self.title = ""
        self.text_outside_code: list[str] = []
        self.main_text: list[str] = []
        self._in_title = False
        self._code_depth = 0
        self._skip_depth = 0  # <script>, <style>
        self._main_depth = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        for key in ("id", "name"):
            if a.get(key) and (key == "id" or tag == "a"):
                self.ids.add(a[key])
        for key in ("href", "src"):
            if a.get(key) and tag in ("a", "img", "link", "script"):
                self.links.append((key, a[key]))
        if tag == "title":
            self._in_title = True
        if tag in ("pre", "code"):
            self._code_depth += 1
        if tag in ("script", "style"):
            self._skip_depth += 1
        if self._main_depth:
            self._main_depth += 1 if tag not in _VOID else 0
        elif a.get("role") == "main":
            self._main_depth = 1

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self._in_title = False
        if tag in ("pre", "code"):
            self._code_depth = max(0, self._code_depth - 1)
        if tag in ("script", "style"):
            self._skip_depth = max(0, self._skip_depth - 1)
        if self._main_depth and tag not in _VOID:
            self._main_depth -= 1

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title += data
        if self._skip_depth:
            return
        if not self._code_depth:
            self.text_outside_code.append(data)
        if self._main_depth:
            self.main_text.append(data)


_VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source",
         "track", "wbr"}


def parse(path: Path) -> Page:
    page = Page()
    page.feed(path.read_text(encoding="utf-8"))
    return page


def nav_pages(nav: list) -> list[str]:
    """The Markdown paths of the nav (external links left out)."""
    out: list[str] = []
    for item in nav:
        value = next(iter(item.values())) if isinstance(item, dict) else item
        if isinstance(value, list):
            out += nav_pages(value)
        elif isinstance(value, str) and "://" not in value:
            out.append(value)
    return out


def html_path(md: str) -> str:
    """The site path of a page, with directory URLs (``a/b.md`` -> ``a/b/index.html``)."""
    stem = md[:-3] if md.endswith(".md") else md
    parts = stem.split("/")
    if parts[-1] in ("index", "README"):
        parts = parts[:-1]
    return "/".join([*parts, "index.html"]) if parts else "index.html"


def directives(md_file: Path) -> list[tuple[str, dict]]:
    """(identifier, options) of every ``::: identifier`` of a page."""
    lines = md_file.read_text(encoding="utf-8").splitlines()
    found = []
    for i, line in enumerate(lines):
        m = DIRECTIVE.match(line)
        if not m:
            continue
        block = []
        for follow in lines[i + 1:]:
            if follow.strip() and not follow.startswith("    "):
                break
            block.append(follow[4:])
        options = (yaml.safe_load("\n".join(block)) or {}).get("options", {}) if block else {}
        found.append((m["ident"], options or {}))
    return found


def expected_ids(ident: str, options: dict) -> list[list[str]]:
    """For one directive: the ids that must be on the page, each as a list of accepted
    alternatives."""
    want = [[ident]]
    if options.get("members") is False:
        return want
    try:
        module = importlib.import_module(ident)
    except ImportError:
        return want  # a class or function: its own id is enough
    members = options.get("members")
    names = members if isinstance(members, list) else list(getattr(module, "__all__", []))
    skipped = _alias_names(module)
    for name in names:
        if isinstance(getattr(module, name, None), types.ModuleType):
            continue  # a submodule: documented by its own directive
        if name.startswith("_") or name in skipped:
            continue  # private names (PyTorch's aten entry points), and aliases of documented ops
        want.append([f"{ident}.{name}", f"{ident}.{name}.{name}"])
    return want


def _alias_names(module) -> set[str]:
    """The names a module's ``_aliases`` submodule adds (ember_tensor/_aliases.py): each is
    another name of an op documented under its own name (or the function form of an in-place
    method), and mkdocstrings renders such an alias as a reference, not a second entry."""
    aliases = getattr(module, "_aliases", None)
    if aliases is None:
        return set()
    return {*aliases.ALIASES, *aliases.FUNCTION_ALIASES, *aliases.INPLACE_FUNCTIONS,
            *(alias for alias, _, _ in aliases.LINALG_ALIASES), "ger", "concatenate"}


def check(config_path: Path, site: Path) -> list[str]:
    config = yaml.safe_load(config_path.read_text(encoding="utf-8"))
    docs_dir = config_path.parent / config.get("docs_dir", "docs")
    problems: list[str] = []
    if not site.is_dir():
        return [f"{site}: no built site (run `mkdocs build --strict` first)"]

    # 1. every nav page rendered
    for md in nav_pages(config.get("nav", [])):
        out = site / html_path(md)
        if not out.is_file():
            problems.append(f"nav page {md}: {out.relative_to(site)} was not built")
            continue
        page = parse(out)
        if not page.title.strip():
            problems.append(f"nav page {md}: no <title>")
        if not "".join(page.main_text).strip():
            problems.append(f"nav page {md}: empty body")

    pages = {p.relative_to(site).as_posix(): parse(p) for p in sorted(site.rglob("*.html"))}

    # 2. the API pages document their objects
    ids_on = {path: page.ids for path, page in pages.items()}
    for md_file in sorted((docs_dir / "api").glob("*.md")):
        out = html_path(md_file.relative_to(docs_dir).as_posix())
        ids = ids_on.get(out)
        if ids is None:
            problems.append(f"{md_file.resolve().relative_to(ROOT)}: {out} was not built")
            continue
        for ident, options in directives(md_file):
            for alternatives in expected_ids(ident, options):
                if not any(a in ids for a in alternatives):
                    problems.append(
                        f"{out}: `{alternatives[0]}` is not documented (from `::: {ident}` "
                        f"in {md_file.resolve().relative_to(ROOT)})"
                    )
    for out, names in REQUIRED.items():
        for name in names:
            if name not in ids_on.get(out, set()):
                problems.append(f"{out}: required name `{name}` is not documented")
    table = pages.get(OP_TABLE)
    if table is None:
        problems.append(f"{OP_TABLE}: the op table was not built")
    else:
        text = "".join(table.main_text)
        for op in REQUIRED_OPS:
            if not re.search(rf"\b{op}\b", text):
                problems.append(f"{OP_TABLE}: op `{op}` is not in the table")

    # 3. nothing left unrendered; 4. internal links resolve
    for path, page in pages.items():
        outside = "".join(page.text_outside_code)
        directive = re.search(r":::\s*[A-Za-z_][\w.]*", outside)
        if directive:
            problems.append(f"{path}: an unrendered directive {directive.group(0)!r}")
        if "```" in outside or re.search(r"(^|\n)\s*~~~", outside):
            problems.append(f"{path}: a code fence rendered as text (an unclosed block?)")
        for attr, url in page.links:
            problem = check_link(site, path, url, ids_on)
            if problem:
                problems.append(f"{path}: {attr}={url!r}: {problem}")
    return problems


def check_link(site: Path, page_path: str, url: str, ids_on: dict[str, set[str]]) -> str:
    parts = urlsplit(url)
    if parts.scheme or parts.netloc or url.startswith(("mailto:", "javascript:")):
        return ""
    base = Path(page_path).parent
    if parts.path:
        # a path from the root (the 404 page's links) is relative to the site's root
        relative = unquote(parts.path)
        start = site if relative.startswith("/") else site / base
        target = (start / relative.lstrip("/")).resolve()
        if not target.is_relative_to(site.resolve()):
            return "points outside the site"
        if target.is_dir():
            target = target / "index.html"
        if not target.is_file():
            return "no such file in the site"
        target_path = target.relative_to(site.resolve()).as_posix()
    else:
        target_path = page_path
    fragment = unquote(parts.fragment)
    if fragment and target_path.endswith(".html") and fragment not in ids_on.get(target_path, ()):
        return f"no element with id {fragment!r} in {target_path}"
    return ""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", type=Path, default=ROOT / "mkdocs.yml")
    parser.add_argument("--site", type=Path, default=None,
                        help="the built site (default: site_dir of the config)")
    args = parser.parse_args(argv)
    config = yaml.safe_load(args.config.read_text(encoding="utf-8"))
    site = args.site or args.config.parent / config.get("site_dir", "site")
    problems = check(args.config, site.resolve())
    for problem in problems:
        print(problem, file=sys.stderr)
    n_pages = len(list(site.rglob("*.html")))
    if problems:
        print(f"check_site: {len(problems)} problems in {site}", file=sys.stderr)
        return 1
    print(f"check_site: {n_pages} pages in {site} rendered, API names present, links resolve")
    return 0


if __name__ == "__main__":
    sys.exit(main())
