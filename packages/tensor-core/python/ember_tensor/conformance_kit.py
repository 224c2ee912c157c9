"""The plumbing shared by the conformance kits of Ember's slots (``autograd``, ``nn``,
``optim``, ...): each kit is a pytest plugin module, enabled explicitly with
``-p <plugin module>``, that holds one aggregate test class and gets everything else from
here. Not imported by ``import ember_tensor``; only by the kits.

A kit module does::

    from ember_tensor.conformance_kit import define_kit

    _KIT = define_kit(globals(), component="nn", class_name="TestNNConformance",
                      default_provider="ember_nn")
    # request.config.stash[_KIT].provider: the provider under test

and gets the options ``--<component>-provider=MODULE`` (the implementation under test,
imported when pytest is configured) and ``--<component>-xfail=FILE`` (expected failures,
one ``<test id> : <reason>`` a line, each test listed marked ``xfail(strict=True)``), the
provider's description in the report header, the kit module collected whatever the
directory pytest runs in, and a summary of the kit's outcomes at the end of the run.
"""

from __future__ import annotations

import importlib
import re
import sys
from importlib import metadata
from pathlib import Path

import pytest

# <test id> : <reason>, the separator being a colon that is not part of "::"
_LINE = re.compile(r"^(?P<id>.*?[^:\s])\s*(?<!:):(?!:)\s*(?P<reason>.*)$")


def define_kit(namespace: dict, component: str, class_name: str, default_provider: str):
    """Makes the module whose globals are ``namespace`` a kit: defines its pytest hooks
    (``pytest_addoption``, ``pytest_configure``), ``parse_xfail_file`` and ``_SPEC`` (the
    ``ConformanceKit``); returns the stash key under which the run's kit state lives."""
    spec = ConformanceKit(component, class_name, default_provider, namespace["__name__"])
    namespace.update(pytest_addoption=spec.pytest_addoption,
                     pytest_configure=spec.pytest_configure,
                     parse_xfail_file=spec.parse_xfail_file, _SPEC=spec)
    return spec.stash_key


class ConformanceKit:
    """The options, the xfail file, the collection and the hooks of one slot's kit.

    ``component``: the slot (``"autograd"``), naming the options (``--autograd-provider``,
    ``--autograd-xfail``) and the kit in messages and reports; ``class_name``: the
    aggregate test class, defined in the plugin module; ``default_provider``: the module
    tested without ``--<component>-provider``; ``plugin_module``: the kit's module name
    (``__name__`` there), also the node id of the collected kit module.
    """

    def __init__(
        self, component: str, class_name: str, default_provider: str, plugin_module: str
    ) -> None:
        self.component = component
        self.class_name = class_name
        self.default_provider = default_provider
        self.plugin_module = plugin_module
        self.provider_option = f"--{component}-provider"
        self.xfail_option = f"--{component}-xfail"
        self.title = f"ember {component} conformance kit"
        self.stash_key = pytest.StashKey[_Kit]()
        self.module_node = type("_KitModule", (_KitModule,), {"kit_spec": self})

    # -- the plugin's module-level hooks -----------------------------------------------------

    def pytest_addoption(self, parser: pytest.Parser) -> None:
        group = parser.getgroup(f"ember-{self.component}-conformance", self.title)
        group.addoption(
            self.provider_option,
            metavar="MODULE",
            default=self.default_provider,
            help=f"the {self.component} implementation under test, an importable module "
            f"(default: {self.default_provider})",
        )
        group.addoption(
            self.xfail_option,
            metavar="FILE",
            default=None,
            help="expected failures: one '<test id> : <reason>' per line",
        )

    def pytest_configure(self, config: pytest.Config) -> None:
        kit = _Kit(
            self,
            config.getoption(f"{self.component}_provider"),
            config.getoption(f"{self.component}_xfail"),
        )
        config.stash[self.stash_key] = kit
        config.pluginmanager.register(kit, f"ember-{self.component}-conformance-kit")

    # -- helpers -------------------------------------------------------------------------

    def parse_xfail_file(self, path: Path) -> dict[str, str]:
        """``{short test id: reason}`` of an expected-failures file: every non-blank line
        not starting with ``#`` reads ``<test id> : <reason>``."""
        opt = self.xfail_option
        try:
            text = path.read_text()
        except OSError as exc:
            raise pytest.UsageError(f"{opt}: cannot read {str(path)!r}: {exc}") from None
        out: dict[str, str] = {}
        for number, raw in enumerate(text.splitlines(), 1):
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            m = _LINE.match(line)
            reason = m["reason"].strip() if m else ""
            if not m or not reason:
                raise pytest.UsageError(
                    f"{opt}: {path}:{number}: expected '<test id> : <reason>', got "
                    f"{line!r}: every expected failure needs a reason"
                )
            test_id = self.short_id(m["id"].strip())
            if test_id in out:
                raise pytest.UsageError(f"{opt}: {path}:{number}: {test_id} listed twice")
            out[test_id] = reason
        return out

    def short_id(self, test_id: str) -> str:
        """``<class name>::test_x[param]`` from a full node id (any module part)."""
        at = test_id.find(self.class_name + "::")
        return test_id[at:] if at >= 0 else test_id

    def module(self):
        """The plugin module (imported: it is the plugin)."""
        return sys.modules[self.plugin_module]

    def test_class(self) -> type:
        """The aggregate test class."""
        return getattr(self.module(), self.class_name)


class _KitModule(pytest.Module):
    """The plugin module, collected as a test module whatever the directory pytest runs in."""

    kit_spec: ConformanceKit  # set in the subclass made for each kit (its module_node)

    def _getobj(self):
        return self.kit_spec.module()


class _Kit:
    """The plugin's state and hooks for one pytest run."""

    def __init__(self, spec: ConformanceKit, provider_name: str, xfail: str | None) -> None:
        self.spec = spec
        self.provider_name = provider_name
        self.xfail_path = Path(xfail) if xfail else None
        self.xfails = spec.parse_xfail_file(self.xfail_path) if self.xfail_path else {}
        self.kit_items: dict[str, str] = {}  # nodeid -> short id, of the kit's tests
        self.outcomes: dict[str, str] = {}  # short id -> outcome
        self._description: str | None = None
        try:
            self.provider = importlib.import_module(provider_name)
        except Exception as exc:  # noqa: BLE001 - any import failure is a usage error
            raise pytest.UsageError(
                f"{spec.provider_option}: cannot import the {spec.component} provider "
                f"{provider_name!r}: {type(exc).__name__}: {exc}"
            ) from exc

    def describe(self) -> str:
        """The provider: module, version, distribution and version, interface version."""
        if self._description is None:
            self._description = self._describe()
        return self._description

    def _describe(self) -> str:
        module = self.provider
        text = f"{self.provider_name} {getattr(module, '__version__', '(no __version__)')}"
        top = self.provider_name.split(".")[0]
        for dist in metadata.packages_distributions().get(top, [])[:1]:
            try:
                text += f", distribution {dist} {metadata.version(dist)}"
            except metadata.PackageNotFoundError:
                text += f", distribution {dist}"
        iface = getattr(module, "INTERFACE_VERSION", "missing")
        return f"{text}, interface version {iface}"

    def pytest_report_header(self) -> str:
        line = f"{self.spec.title}: provider {self.describe()}"
        if self.xfail_path is not None:
            line += f"; expected failures: {self.xfail_path} ({len(self.xfails)})"
        return line

    @pytest.hookimpl(wrapper=True)
    def pytest_make_collect_report(self, collector: pytest.Collector):
        report = yield
        if isinstance(collector, pytest.Session) and report.passed:
            here = Path(self.spec.module().__file__).resolve()
            if not any(getattr(node, "path", None) == here for node in report.result):
                report.result.append(
                    self.spec.module_node.from_parent(
                        collector, path=here, nodeid=self.spec.plugin_module
                    )
                )
        return report

    @pytest.hookimpl(tryfirst=True)  # before -k / --deselect drop items
    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        test_class = self.spec.test_class()
        for item in items:
            if getattr(item, "cls", None) is not test_class:
                continue
            short = self.spec.short_id(item.nodeid)
            self.kit_items[item.nodeid] = short
            reason = self.xfails.get(short)
            if reason is not None:
                item.add_marker(pytest.mark.xfail(reason=reason, strict=True))
        unknown = sorted(set(self.xfails) - set(self.kit_items.values()))
        if unknown:
            raise pytest.UsageError(
                f"{self.spec.xfail_option}: {self.xfail_path} names tests the kit does not "
                "have: " + ", ".join(unknown)
            )

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        short = self.kit_items.get(report.nodeid)
        if short is None:
            return
        if hasattr(report, "wasxfail"):
            outcome = "xfailed" if report.skipped else "xpassed"
        elif report.failed and str(report.longrepr).startswith("[XPASS(strict)]"):
            outcome = "xpassed"  # a listed test that passed: a failure, counted apart
        elif report.failed:
            outcome = "failed" if report.when == "call" else "error"
        elif report.skipped:
            outcome = "skipped"
        elif report.when == "call":
            outcome = "passed"
        else:
            return
        if self.outcomes.get(short) in ("failed", "error", "xpassed"):
            return  # a teardown that passed does not hide a failed call
        self.outcomes[short] = outcome

    def pytest_terminal_summary(self, terminalreporter) -> None:
        counts: dict[str, int] = {}
        for outcome in self.outcomes.values():
            counts[outcome] = counts.get(outcome, 0) + 1
        tr = terminalreporter
        tr.section(self.spec.title)
        tr.write_line(f"provider: {self.describe()}")
        labels = {
            "passed": "passed",
            "failed": "failed",
            "error": "errors",
            "xfailed": "xfailed (expected failures)",
            "xpassed": "xpassed (listed as expected failures: strict, so failures)",
            "skipped": "skipped",
        }
        summary = ", ".join(f"{counts[k]} {v}" for k, v in labels.items() if counts.get(k))
        tr.write_line(f"kit tests: {summary or 'none ran'}")
        if self.xfails:
            tr.write_line(f"expected failures ({len(self.xfails)}, from {self.xfail_path}):")
            for test_id, reason in self.xfails.items():
                got = self.outcomes.get(test_id, "not run")
                tr.write_line(f"  {test_id} : {reason} [{got}]")


# --------------------------------------------------------------------------------------
# For the kits' own tests: run a kit in a child pytest and read its outcomes


def run_kit(kit: str, cwd: Path, *args: str, plugin: bool = True, env: dict | None = None):
    """``python -m pytest -p <kit> -p no:cacheprovider -v <args>`` in ``cwd`` (prepended to
    PYTHONPATH, so a fake provider can sit there), without the calling pytest's environment;
    ``plugin=False`` leaves ``-p <kit>`` out. Returns the CompletedProcess (text output)."""
    import os
    import subprocess

    child = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    child.update(env or {})
    child["PYTHONPATH"] = os.pathsep.join(filter(None, [str(cwd), child.get("PYTHONPATH")]))
    return subprocess.run(
        [sys.executable, "-m", "pytest", *(["-p", kit] if plugin else []), "-p",
         "no:cacheprovider", "-v", *args],
        cwd=cwd, env=child, capture_output=True, text=True, timeout=600,
    )


def kit_outcomes(out: str, kit: str, class_name: str) -> dict[str, str]:
    """``{test name[param]: PASSED / FAILED / ERROR / XFAIL / XPASS / SKIPPED}`` of the kit's
    aggregate class, read from ``pytest -v`` output."""
    prefix = re.escape(f"{kit}::{class_name}::")
    pattern = rf"^{prefix}(\S+) (PASSED|FAILED|ERROR|XFAIL|XPASS|SKIPPED)"
    return {m[1]: m[2] for m in re.finditer(pattern, out, re.M)}
