"""Every developer task of the Ember monorepo.

    nox -l              list the sessions
    nox -s demo         build the core once, install it with the meta-package, run the demo
    nox -s tests        every package's tests, each installed alone, then the example plugins
                        and the Table 1 models against their PyTorch twins
    nox -s tests_core   one component, installed alone (also tests_ember, ...)

The C++ core is compiled at most once: the ``wheel`` helper builds
``dist/ember_tensor_core-*.whl`` in a persistent CMake build directory
(``build/tensor-core-wheel``) and every session installs that one wheel. The wheel is
rebuilt only when a source file of ``packages/tensor-core`` is newer than it, or when the
build configuration (``EMBER_CUDA``) changed. ``nox -s wheel -- --force``
rebuilds unconditionally.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import subprocess
import sys
import tomllib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import nox
import nox.command
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

nox.needs_version = ">=2024.3.2"
nox.options.default_venv_backend = "venv"
nox.options.reuse_venv = "yes"
nox.options.sessions = ["lint", "tests"]

ROOT = Path(__file__).resolve().parent
PACKAGES_DIR = ROOT / "packages"
CORE_DIR = PACKAGES_DIR / "tensor-core"
CORE_NAME = "ember-tensor-core"
DIST_DIR = ROOT / "dist"
WHEEL_BUILD_DIR = ROOT / "build" / "tensor-core-wheel"
# One virtual environment that holds the core's build dependencies. The CMake cache in
# WHEEL_BUILD_DIR records paths into it, so every build uses this same environment.
WHEEL_BUILD_ENV = ROOT / "build" / "tensor-core-wheel-env"
WHEEL_LOCK = ROOT / "build" / "tensor-core-wheel.lock"
WHEEL_STAMP = DIST_DIR / "ember_tensor_core.build.json"

# With build isolation off, scikit-build-core needs these in the environment.
BUILD_TOOLS = ("cmake>=3.26", "ninja>=1.11")
# Environment variables that change what the core's wheel contains.
BUILD_CONFIG_ENV = ("EMBER_CUDA", "EMBER_CUDA_ARCHS", "EMBER_LTO")
# A CUDA build compiles against the cuBLAS and cuDNN headers of these wheels (the kernels load
# the libraries at run time), installed into the build environment when nvcc is there.
CUDA_HEADER_WHEELS = ("nvidia-cublas", "nvidia-cudnn-cu13")
# Directory names under packages/tensor-core that are not inputs of the wheel.
NOT_SOURCES = frozenset(
    {"build", "dist", "tests", "__pycache__", ".pytest_cache", ".hypothesis", ".ruff_cache"}
)
# The only torch build the project installs: the CPU wheel the machines carry. Anything else
# (an unpinned "torch") would make pip fetch a multi-GB CUDA build.
TORCH_PIN = "==2.13.0"
RUFF = "ruff==0.17.5"
PY_TAG = f"cp{sys.version_info.major}{sys.version_info.minor}"


# --------------------------------------------------------------------------------------
# The packages of the monorepo, read from their pyproject.toml files


@dataclass(frozen=True)
class Package:
    name: str  # canonical distribution name
    path: Path
    short: str  # session suffix: tests_<short>
    requires: tuple[Requirement, ...]
    test_requires: tuple[Requirement, ...]
    build_requires: tuple[str, ...]


def _read_packages() -> dict[str, Package]:
    packages: dict[str, Package] = {}
    for pyproject in sorted(PACKAGES_DIR.glob("*/pyproject.toml")):
        data = tomllib.loads(pyproject.read_text())
        project = data["project"]
        extras = project.get("optional-dependencies", {})
        name = canonicalize_name(project["name"])
        packages[name] = Package(
            name=name,
            path=pyproject.parent,
            short=pyproject.parent.name.removeprefix("tensor-").replace("-", "_"),
            requires=tuple(Requirement(r) for r in project.get("dependencies", [])),
            test_requires=tuple(Requirement(r) for r in extras.get("test", [])),
            build_requires=tuple(data.get("build-system", {}).get("requires", [])),
        )
    return packages


PACKAGES = _read_packages()


def _is_local(req: Requirement) -> bool:
    return canonicalize_name(req.name) in PACKAGES


def _applies(req: Requirement) -> bool:
    return req.marker is None or req.marker.evaluate()


def _closure(names: Iterable[str], *, with_tests: bool) -> list[Package]:
    """The local packages ``names`` need, dependencies before dependents."""
    order: list[Package] = []
    seen: set[str] = set()

    def visit(name: str, chain: tuple[str, ...]) -> None:
        if name in chain:
            raise RuntimeError(f"dependency cycle between packages: {' -> '.join(chain + (name,))}")
        if name in seen:
            return
        pkg = PACKAGES[name]
        reqs = list(pkg.requires)
        if with_tests and name in roots:
            reqs += pkg.test_requires
        for req in reqs:
            if _is_local(req) and _applies(req):
                visit(canonicalize_name(req.name), chain + (name,))
        seen.add(name)
        order.append(pkg)

    roots = {canonicalize_name(n) for n in names}
    for name in sorted(roots, key=_test_order):
        visit(name, ())
    return order


def _test_order(name: str) -> tuple[int, str]:
    # the core first (everything sits on it), the meta-package last, the rest alphabetically
    return (0 if name == CORE_NAME else 2 if name == "ember" else 1, name)


def _check_torch(req: Requirement) -> None:
    if canonicalize_name(req.name) == "torch" and str(req.specifier) != TORCH_PIN:
        raise RuntimeError(
            f"torch must be pinned as 'torch{TORCH_PIN}' (the local CPU build), got {req!s}"
        )


# --------------------------------------------------------------------------------------
# The core's wheel: built once, installed everywhere


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _newest_source_mtime() -> tuple[float, Path]:
    newest, newest_path = 0.0, CORE_DIR
    for dirpath, dirnames, filenames in os.walk(CORE_DIR):
        dirnames[:] = [d for d in dirnames if d not in NOT_SOURCES and not d.endswith(".egg-info")]
        for filename in filenames:
            path = Path(dirpath, filename)
            mtime = path.stat().st_mtime
            if mtime > newest:
                newest, newest_path = mtime, path
    return newest, newest_path


def _build_config() -> dict[str, str]:
    return {"python": PY_TAG, **{k: os.environ.get(k, "") for k in BUILD_CONFIG_ENV}}


def _cuda_build_requires() -> tuple[str, ...]:
    """CUDA_HEADER_WHEELS when the core will build with CUDA: a CUDA compiler is there
    ($CUDACXX, or nvcc on PATH, as CMake looks for it) and EMBER_CUDA is not OFF."""
    if os.environ.get("EMBER_CUDA", "").strip().upper() in {"OFF", "0", "FALSE", "NO"}:
        return ()
    if not shutil.which(os.environ.get("CUDACXX") or "nvcc"):
        return ()
    return CUDA_HEADER_WHEELS


def _existing_wheels() -> list[Path]:
    return sorted(DIST_DIR.glob(f"ember_tensor_core-*-{PY_TAG}-*.whl"))


def _fresh_wheel() -> tuple[Path | None, str]:
    """The up-to-date core wheel in dist/, or None and the reason to build."""
    wheels = _existing_wheels()
    if not wheels:
        return None, "no wheel in dist/"
    if len(wheels) > 1:
        return None, f"{len(wheels)} core wheels in dist/"
    wheel = wheels[0]
    source_mtime, source = _newest_source_mtime()
    if source_mtime >= wheel.stat().st_mtime:
        return None, f"{source.relative_to(ROOT)} is newer than {wheel.name}"
    try:
        stamp = json.loads(WHEEL_STAMP.read_text())
    except (OSError, ValueError):
        return None, f"no readable {WHEEL_STAMP.name}"
    if stamp != _build_config():
        return None, f"build configuration changed: {stamp} -> {_build_config()}"
    return wheel, ""


def pip_install(session: nox.Session, *args: str) -> None:
    """``session.install`` without byte-compiling what it installs: compiling torch's and
    SciPy's thousands of modules took ~35 s of every session; a test run compiles only the
    modules it imports."""
    session.install("--no-compile", *args)


def core_wheel(session: nox.Session, *, force: bool = False) -> Path:
    """Path of the core's wheel in dist/, built first when missing or stale."""
    with _locked(WHEEL_LOCK):
        wheel, reason = _fresh_wheel()
        if wheel is not None and not force:
            session.log(f"using {wheel.relative_to(ROOT)} (up to date)")
            return wheel
        session.log(f"building the {CORE_NAME} wheel: {reason or 'forced'}")
        python = WHEEL_BUILD_ENV / "bin" / "python"
        if not python.exists():
            session.run(sys.executable, "-m", "venv", str(WHEEL_BUILD_ENV), external=True)
        core = PACKAGES[CORE_NAME]
        pip = (str(python), "-m", "pip")
        session.run(
            *pip,
            "install",
            "-q",
            "--no-compile",
            *core.build_requires,
            *BUILD_TOOLS,
            *_cuda_build_requires(),
            external=True,
        )
        for old in _existing_wheels():
            old.unlink()
        WHEEL_STAMP.unlink(missing_ok=True)
        DIST_DIR.mkdir(exist_ok=True)
        WHEEL_BUILD_DIR.mkdir(parents=True, exist_ok=True)
        env = {
            "PATH": f"{python.parent}{os.pathsep}{os.environ.get('PATH', '')}",
            "VIRTUAL_ENV": str(WHEEL_BUILD_ENV),
        }
        session.run(
            *pip,
            "wheel",
            "--no-build-isolation",
            "--no-deps",
            "--wheel-dir",
            str(DIST_DIR),
            f"--config-settings=build-dir={WHEEL_BUILD_DIR}",
            str(CORE_DIR),
            env=env,
            external=True,
        )
        WHEEL_STAMP.write_text(json.dumps(_build_config(), indent=2) + "\n")
        wheels = _existing_wheels()
        if len(wheels) != 1:
            session.error(f"expected one core wheel for {PY_TAG} in dist/, found {wheels}")
        return wheels[0]


def _external_requirements(
    order: Iterable[Package], names: Iterable[str], *, tests: bool
) -> list[str]:
    """What ``order`` needs from the registry (the ``test`` extras of ``names`` too, with
    ``tests``), each once, for this Python."""
    roots = {canonicalize_name(n) for n in names}
    external: list[str] = []
    for pkg in order:
        reqs = list(pkg.requires) + (list(pkg.test_requires) if tests and pkg.name in roots else [])
        for req in reqs:
            if not _is_local(req) and _applies(req):
                _check_torch(req)
                if str(req) not in external:
                    external.append(str(req))
    return external


def install(session: nox.Session, *names: str, tests: bool = False) -> list[Package]:
    """Install the local packages ``names`` and what they need into the session.

    Local dependencies come from this repository (the core from its wheel in dist/), never
    from a registry; everything else comes from the registry. With ``tests``, the ``test``
    extras of ``names`` are installed too.
    """
    order = _closure(names, with_tests=tests)
    external = _external_requirements(order, names, tests=tests)
    local_targets = [
        str(core_wheel(session)) if p.name == CORE_NAME else str(p.path) for p in order
    ]
    if external:
        pip_install(session, *external)
    # --force-reinstall: a rebuilt wheel or edited package keeps its version number
    pip_install(session, "--force-reinstall", "--no-deps", *local_targets)
    session.run("python", "-m", "pip", "check", silent=True)
    return order


def conformance_plugins(pkg: Package) -> list[str]:
    """The conformance kits a package ships: ``src/<module>/conformance.py``."""
    kits = sorted(pkg.path.glob("src/*/conformance.py"))
    return [f"{path.parent.name}.conformance" for path in kits]


def run_tests(session: nox.Session, packages: Iterable[Package]) -> None:
    """pytest once per package, each in its own directory's configuration; a package that
    ships a conformance kit runs it too, against itself (``-p <module>.conformance``)."""
    failed: list[str] = []
    for pkg in sorted(packages, key=lambda p: _test_order(p.name)):
        tests = pkg.path / "tests"
        if not any(tests.rglob("test_*.py")):
            session.warn(f"{pkg.name} has no tests in {tests.relative_to(ROOT)}")
            continue
        session.log(f"--- {pkg.name} ---")
        kits = [arg for plugin in conformance_plugins(pkg) for arg in ("-p", plugin)]
        # the pytest script, not `python -m pytest`: the source tree must not shadow the
        # installed packages on sys.path
        try:
            session.run("pytest", *kits, str(tests.relative_to(ROOT)), *session.posargs)
        except nox.command.CommandFailed:
            failed.append(pkg.name)  # go on: one package's failure hides no other's
    if failed:
        session.error(f"tests failed in: {', '.join(failed)}")


# --------------------------------------------------------------------------------------
# Sessions


@nox.session(venv_backend="none")
def wheel(session: nox.Session) -> None:
    """Build the ember-tensor-core wheel into dist/ (skipped when up to date; -- --force)."""
    path = core_wheel(session, force="--force" in session.posargs)
    session.log(f"core wheel: {path.relative_to(ROOT)}")


# Rough minutes each test session takes after the core wheel is built (CI, 2 cores): the
# lanes of `nox -s tests` are balanced by these. A session missing here counts as 1.
SESSION_MINUTES = {
    "tests_core": 3.5,
    "tests_ember": 2,
    "tests_nn": 2,
    "plugins": 2,
    "tests_autograd": 1.2,
    "tests_mp": 1,
    "tests_optim": 1,
    "cuda_cpu_mode": 1,
    "models": 1,
    "tests_data": 0.8,
    "tests_distributions": 0.5,
    "tests_distributed": 0.6,
}
LANES_DIR = ROOT / ".nox" / "_lanes"


def _test_sessions() -> list[str]:
    """The sessions `nox -s tests` runs, in their serial order."""
    packages = sorted(PACKAGES.values(), key=lambda p: _test_order(p.name))
    return [f"tests_{p.short}" for p in packages] + ["cuda_cpu_mode", "plugins", "models"]


def _lanes(sessions: list[str], count: int) -> list[list[str]]:
    """``sessions`` split into ``count`` lanes of about equal expected time (longest first
    onto the least loaded lane), each lane keeping the serial order."""
    lanes: list[list[str]] = [[] for _ in range(count)]
    load = [0.0] * count
    for name in sorted(sessions, key=lambda n: -SESSION_MINUTES.get(n, 1)):
        k = load.index(min(load))
        lanes[k].append(name)
        load[k] += SESSION_MINUTES.get(name, 1)
    return [sorted(lane, key=sessions.index) for lane in lanes if lane]


def _lane_count() -> int:
    """EMBER_TEST_LANES, else one lane per core, at most 2 (the sessions are single-threaded
    pytest runs; more lanes than cores only make the timing-sensitive tests flaky)."""
    value = os.environ.get("EMBER_TEST_LANES")
    if value:
        return max(1, int(value))
    return max(1, min(2, os.cpu_count() or 1))


@nox.session(venv_backend="none")
def tests(session: nox.Session) -> None:
    """Every package's tests, each package installed alone in its own environment (the
    tests_<short> sessions: the core, each component with only its declared dependencies, the
    meta-package with everything), then the example plugins and the Table 1 models (pytest
    args after --).

    The core wheel is built first; then the sessions run in parallel lanes (one per core, at
    most 2; EMBER_TEST_LANES=1 runs them one after another in this process). A lane's output
    is printed whole when it ends and kept in .nox/_lanes/."""
    sessions = _test_sessions()
    lanes = _lanes(sessions, _lane_count())
    if len(lanes) == 1:
        for name in sessions:
            session.notify(name, posargs=session.posargs)
        return
    core_wheel(session)  # once, before the lanes, which then find it up to date
    LANES_DIR.mkdir(parents=True, exist_ok=True)
    running = []
    for k, lane in enumerate(lanes):
        log = LANES_DIR / f"lane-{k}.log"
        session.log(f"lane {k}: {' '.join(lane)} (output in {log.relative_to(ROOT)})")
        cmd = [sys.executable, "-m", "nox", "--non-interactive", "-s", *lane]
        if session.posargs:
            cmd += ["--", *session.posargs]
        handle = log.open("w")
        proc = subprocess.Popen(cmd, cwd=ROOT, stdout=handle, stderr=subprocess.STDOUT)
        running.append((k, lane, proc, handle, log))
    failed = []
    for k, lane, proc, handle, log in running:
        code = proc.wait()
        handle.close()
        print(f"\n{'=' * 30} lane {k}: {' '.join(lane)} (exit {code}) {'=' * 30}", flush=True)
        print(log.read_text(errors="replace"), flush=True)
        if code != 0:
            failed.append(f"lane {k} ({' '.join(lane)})")
    if failed:
        session.error(f"tests failed in {', '.join(failed)}: see the lane output above")


def _component_session(pkg: Package) -> None:
    def component(session: nox.Session) -> None:
        install(session, pkg.name, tests=True)
        run_tests(session, [pkg])

    component.__doc__ = f"{pkg.name} installed alone (with its Ember dependencies); its tests."
    nox.session(name=f"tests_{pkg.short}", tags=["components"])(component)


for _pkg in PACKAGES.values():
    _component_session(_pkg)


@nox.session
def cuda_cpu_mode(session: nox.Session) -> None:
    """The CUDA test files against the CPU: packages/tensor-core/tests/test_cuda_*.py with
    EMBER_CUDA_TEST_DEVICE=cpu, which runs every comparison with the device under test on
    the CPU and so checks the tests themselves on a machine without a GPU (where a GPU is
    present, tests_core runs them on it). The core with ember-autograd, for the backward
    tests (pytest args after --)."""
    install(session, CORE_NAME, "ember-autograd", tests=True)
    tests = CORE_DIR / "tests"
    files = sorted(str(p.relative_to(ROOT)) for p in tests.glob("test_cuda_*.py"))
    session.run("pytest", *files, *session.posargs, env={"EMBER_CUDA_TEST_DEVICE": "cpu"})


# The Array API standard's conformance suite (data-apis/array-api-tests), used as it is from
# the shared third-party folder next to the repository (see its README there); absent from
# a user's clone, where the session skips.
ARRAY_API_SUITE = ROOT.parent / "shared" / "third_party" / "array-api-tests"
ARRAY_API_XFAILS = CORE_DIR / "tests" / "array_api_xfails.txt"
ARRAY_API_SUITE_REQUIRES = ("pytest>=8", "pytest-xdist>=3", "pytest-json-report>=1.5",
                            "hypothesis>=6.151.0", "ndindex>=1.8")


@nox.session
def array_api_suite(session: nox.Session) -> None:
    """The Array API conformance suite against ``ember_tensor.array_api`` (2024.12, 20
    derandomized examples per test, 2 workers). The tests listed in
    packages/tensor-core/tests/array_api_xfails.txt are expected to fail and are skipped
    (ARRAY_API_TESTS_XFAIL_MARK=skip: hypothesis would spend minutes shrinking their
    failures); any other failure fails the session. pytest args after -- go to the suite
    (e.g. ``-- -k test_sum``)."""
    if not (ARRAY_API_SUITE / "array_api_tests").is_dir():
        session.skip(f"the Array API conformance suite is not at {ARRAY_API_SUITE}")
    install(session, CORE_NAME)
    pip_install(session, *ARRAY_API_SUITE_REQUIRES)
    # pytest loads the conftest.py files above every path on its command line, the value of
    # --xfails-file included: a copy outside the repository's tests keeps tests/conftest.py
    # (which imports torch) out of the suite's run
    xfails = Path(session.create_tmp()).resolve() / ARRAY_API_XFAILS.name
    shutil.copyfile(ARRAY_API_XFAILS, xfails)
    session.chdir(ARRAY_API_SUITE)
    session.run(
        "pytest", "array_api_tests", "-p", "no:cacheprovider", "--max-examples", "20",
        "--derandomize", "-n", "2", "--xfails-file", str(xfails), "-q", "-rfE",
        *session.posargs,
        env={"ARRAY_API_TESTS_MODULE": "ember_tensor.array_api",
             "ARRAY_API_TESTS_VERSION": "2024.12", "ARRAY_API_TESTS_XFAIL_MARK": "skip"},
    )


SANITIZE_BUILD_DIR = ROOT / "build" / "tensor-core-sanitize"
SANITIZERS = "address,undefined"


@nox.session
def sanitize(session: nox.Session) -> None:
    """The core built with AddressSanitizer and UndefinedBehaviorSanitizer (-O1, no LTO, no
    CUDA, its own build dir: about 20 minutes on 2 cores the first time, incremental after),
    then its tests (2 xdist workers: about 8 minutes) and the differential fuzzer's CI slice
    under them. Any report fails the run (a sanitizer stops the process at its first
    finding: the test fails with the report; leaks are not checked: CPython keeps its
    objects). pytest args after -- (e.g. ``nox -s sanitize -- -k overlap``). Do not reuse the
    environment with ``-R``: it skips installing the components the fuzz slice imports."""
    core = PACKAGES[CORE_NAME]
    pip_install(session, *core.build_requires, *BUILD_TOOLS)
    pip_install(session, *_external_requirements([core], [CORE_NAME], tests=True),
                "pytest-xdist>=3")
    SANITIZE_BUILD_DIR.mkdir(parents=True, exist_ok=True)
    session.run(
        "python",
        "-m",
        "pip",
        "install",
        "--no-build-isolation",
        "--no-deps",
        "--no-compile",
        "--force-reinstall",
        "-q",
        f"--config-settings=build-dir={SANITIZE_BUILD_DIR}",
        f"--config-settings=cmake.define.EMBER_SANITIZE={SANITIZERS}",
        "--config-settings=cmake.define.EMBER_CUDA=OFF",
        str(CORE_DIR),
        env={"EMBER_LTO": ""},
    )
    # CPython is not built with ASan: its runtime must be loaded before anything else, and
    # with the C++ runtime, whose __cxa_throw it wraps (else the first C++ exception aborts)
    runtimes = [
        str(session.run("gcc", f"-print-file-name={lib}", silent=True, external=True)).strip()
        for lib in ("libasan.so", "libstdc++.so")
    ]
    env = {
        "LD_PRELOAD": " ".join(runtimes),
        # a request beyond what can be allocated is the op's MemoryError, as without ASan
        "ASAN_OPTIONS": "detect_leaks=0:abort_on_error=1:allocator_may_return_null=1",
        "UBSAN_OPTIONS": "print_stacktrace=1:halt_on_error=1",
        "PYTHONMALLOC": "malloc",  # Python's own objects under ASan's allocator too
    }
    # two workers; a worker that a sanitizer stops is replaced, so one run reports every
    # finding (each a failed test with the report in its output)
    session.run(
        "pytest",
        "-p",
        "no:cacheprovider",
        "--capture=sys",  # a sanitizer's report is written to fd 2 just before it exits
        "-n",
        "2",
        "--max-worker-restart=1000",
        str((CORE_DIR / "tests").relative_to(ROOT)),
        *session.posargs,
        env=env,
    )
    # the differential fuzzer's slice, over the whole framework (pure Python packages)
    others = [p for p in _closure(["ember"], with_tests=False) if p.name != CORE_NAME]
    pip_install(session, *_external_requirements(others, ["ember"], tests=True))
    pip_install(session, "--no-deps", "--force-reinstall", *(str(p.path) for p in others))
    fuzz_env = {**env, "EMBER_FUZZ_CALLS": "20000", "EMBER_FUZZ_MEMORY_GB": "0"}
    with session.chdir(PACKAGES_DIR / "ember" / "tests"):
        session.run("pytest", "-p", "no:cacheprovider", "--capture=sys", "test_fuzz.py",
                    *session.posargs, env=fuzz_env)  # fmt: skip


@nox.session
def fuzz(session: nox.Session) -> None:
    """The differential fuzzer's long run (packages/ember/tests/fuzz): a million calls of
    every op and public callable against PyTorch, two worker processes, seed 0; its summary,
    and the JSON report in packages/ember/tests/fuzz.json. Arguments after -- replace the
    defaults (``nox -s fuzz -- --calls 50000 --seed 3``; see ``python -m fuzz --help``)."""
    install(session, "ember", tests=True)
    args = session.posargs or ["--calls", "1000000", "--jobs", "2", "--seed", "0"]
    with session.chdir(PACKAGES_DIR / "ember" / "tests"):
        session.run("python", "-m", "fuzz", *args, "--report", "fuzz.json")


PLUGINS_DIR = ROOT / "examples" / "plugins"


@nox.session
def plugins(session: nox.Session) -> None:
    """The third-party-style plugins of examples/plugins/, installed beside the ember
    meta-package as their users would install them; each one's tests, run from its own
    directory with its own pytest configuration (which enables the conformance kit it must
    pass)."""
    install(session, "ember", tests=True)
    pip_install(session, "setuptools>=64")  # the plugins build against the installed core
    failed = []
    for pyproject in sorted(PLUGINS_DIR.glob("*/pyproject.toml")):
        project = tomllib.loads(pyproject.read_text())["project"]
        reqs = [Requirement(r) for r in project.get("dependencies", [])]
        reqs += [Requirement(r) for r in project.get("optional-dependencies", {}).get("test", [])]
        external = [str(r) for r in reqs if not _is_local(r) and _applies(r)]
        for req in external:
            _check_torch(Requirement(req))
        if external:
            pip_install(session, *external)
        pip_install(
            session, "--no-build-isolation", "--no-deps", "--force-reinstall", str(pyproject.parent)
        )
        session.log(f"--- plugin {project['name']} ---")
        with session.chdir(pyproject.parent):
            try:
                session.run("pytest", *session.posargs)
            except nox.command.CommandFailed:
                failed.append(project["name"])
    if failed:
        session.error(f"plugin tests failed in: {', '.join(failed)}")


@nox.session
def models(session: nox.Session) -> None:
    """The paper's Table 1 models (benchmarks/models/) against their PyTorch twins: outputs,
    losses and gradients with the weights copied over (pytest args after --)."""
    install(session, "ember", tests=True)
    session.run("pytest", "benchmarks/models/test_models.py", *session.posargs)


@nox.session
def lint(session: nox.Session) -> None:
    """ruff check over the repository (args after -- go to ruff)."""
    pip_install(session, RUFF)
    session.run("ruff", "check", *(session.posargs or ["."]))


@nox.session
def docs(session: nox.Session) -> None:
    """The documentation site: generate the op table, execute every ```python block of
    docs/, build the site (mkdocs.yml; warnings are errors) into build/site, and check that
    it rendered (tools/check_site.py)."""
    # the site's tools, pinned (tools/griffe_ember.py uses griffe's extension API)
    site_tools = (
        "mkdocs==1.6.1",
        "mkdocstrings==1.0.8",
        "mkdocstrings-python==2.0.11",
        "griffelib==2.4.1",
        "mkdocs-autorefs==1.4.5",
    )
    install(session, *PACKAGES)
    # pytest: docs/write-your-own-component.md runs a conformance kit; ruff: mkdocstrings
    # formats the signatures with it
    pip_install(session, "pyyaml>=6", "pytest>=8", RUFF, *site_tools)
    gen = CORE_DIR / "codegen" / "gen.py"
    check = ["python", "tools/check_docs.py", "docs"]
    if gen.exists():
        session.run("python", str(gen.relative_to(ROOT)), "--docs", "docs/_generated/ops.md")
    else:
        session.warn(f"{gen.relative_to(ROOT)} does not exist yet: no op table")
        check += ["--allow-missing", "docs/_generated"]
    session.run(
        *check, "--links", "README.md", *PACKAGES_DIR.glob("*/README.md"), "benchmarks/README.md"
    )
    if not gen.exists():
        session.error("the site needs the op table: no mkdocs build without codegen/gen.py")
    session.run("mkdocs", "build", "--strict", "--config-file", "mkdocs.yml")
    session.run("python", "tools/check_site.py", "--config", "mkdocs.yml")


@nox.session
def bench(session: nox.Session) -> None:
    """Ember vs PyTorch 2.13 (CPU) side by side: the tensor core, then autograd (args after
    -- go to both scripts, e.g. --quick)."""
    install(session, "ember-autograd")
    pip_install(session, f"torch{TORCH_PIN}")
    session.run("python", "benchmarks/bench_core.py", *session.posargs)
    session.run("python", "benchmarks/bench_autograd.py", *session.posargs)


@nox.session
def demo(session: nox.Session) -> None:
    """The main job: install the core and the ember meta-package, run the API tour
    (examples/demo.py), then train a CNN on the digits (examples/train_digits.py; args after
    -- go to it, e.g. -- --epochs 5)."""
    install(session, "ember")
    pip_install(session, "scikit-learn", "tqdm", "matplotlib")
    session.run("python", "examples/demo.py")
    session.run("python", "examples/train_digits.py", *session.posargs)
