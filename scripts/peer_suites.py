"""Run ipykernel's and nbclient's own kernel-starting tests on `python3` and on `logician`.

    .venv/bin/python scripts/peer_suites.py [--suite ipykernel|nbclient] [--keep]

Fetches the sdists of the versions pinned in pyproject.toml ([tool.logician.peer-suites], the
installed versions) with `pip download`, unpacks them under .peer-suites/, and installs the
few test-only packages they import there too (never into .venv: pytest-asyncio would change how
our own suite runs). The smallest change points them at Logician: ipykernel's tests/utils.py
starts the kernel named by PEER_SUITE_KERNEL; nbclient's tests find `python`/`python3`
kernelspecs on JUPYTER_PATH that launch Logician. Prints the counts side by side and exits 1
when a test that passes on python3 does not pass on logician, unless docs/drop-in.md lists it
(with its reason) under "Peer-suite exceptions".
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import tomlkit

REPO = Path(__file__).resolve().parents[1]
CACHE = REPO / ".peer-suites"
DOC = REPO / "docs" / "drop-in.md"
PY = sys.executable
WHY_LINES = 6
"""Lines of a failure's message shown under its FAIL line (the whole log is kept)."""

SUITES = {
    # the tests that start a kernel (the others test ipykernel's classes in-process)
    "ipykernel": [
        "tests/test_message_spec.py",
        "tests/test_kernel.py",
        "tests/test_async.py",
        "tests/test_eventloop.py",
        "tests/test_subshells.py",
        "tests/test_debugger.py",
    ],
    "nbclient": ["tests/test_client.py", "tests/test_cli.py"],
}

PATCH = {
    # ipykernel's tests start jupyter_client's default kernel (python3); name it instead
    "tests/utils.py": [
        (
            "STARTUP_TIMEOUT = 60\n",
            'STARTUP_TIMEOUT = 60\nKERNEL_NAME = os.environ.get("PEER_SUITE_KERNEL", "python3")\n',
        ),
        (
            '    kwargs["stderr"] = STDOUT\n',
            '    kwargs["stderr"] = STDOUT\n    kwargs.setdefault("kernel_name", KERNEL_NAME)\n',
        ),
        (
            '    kwargs = {"stderr": STDOUT}\n',
            '    kwargs = {"stderr": STDOUT, "kernel_name": KERNEL_NAME}\n',
        ),
    ]
}


def pins() -> dict:
    doc = tomlkit.parse((REPO / "pyproject.toml").read_text()).unwrap()
    return doc["tool"]["logician"]["peer-suites"]


def installed(name: str) -> str:
    from importlib.metadata import version

    return version(name)


def fetch(name: str, want: str) -> Path:
    """The unpacked sdist of `name==want`, downloaded once into the cache."""
    have = installed(name)
    if have != want:
        sys.exit(
            f"peer_suites: {name} {have} is installed but pyproject.toml pins {want} "
            "([tool.logician.peer-suites]): the suites must test the installed version"
        )
    root = CACHE / f"{name}-{want}"
    sdist = CACHE / f"{name}-{want}.tar.gz"
    if not (root / "tests").is_dir():
        CACHE.mkdir(exist_ok=True)
        if not sdist.is_file():
            subprocess.run(
                [
                    PY,
                    "-m",
                    "pip",
                    "download",
                    "--quiet",
                    "--no-deps",
                    "--no-build-isolation",
                    "--no-binary",
                    ":all:",
                    f"{name}=={want}",
                    "-d",
                    str(CACHE),
                ],
                check=True,
            )
        with tarfile.open(sdist) as tar:
            tar.extractall(CACHE, filter="data")
        for rel, edits in PATCH.items() if name == "ipykernel" else ():
            path = root / rel
            text = path.read_text()
            for old, new in edits:
                if old not in text:
                    sys.exit(f"peer_suites: {path} changed; cannot apply the kernel-name patch")
                text = text.replace(old, new)
            path.write_text(text)
    return root


def test_deps(specs: list[str]) -> Path:
    target = CACHE / "deps"
    stamp = target / ".installed"
    if not stamp.is_file() or stamp.read_text() != "\n".join(specs):
        shutil.rmtree(target, ignore_errors=True)
        subprocess.run(
            [PY, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(target), *specs],
            check=True,
        )
        stamp.write_text("\n".join(specs))
    return target


def logician_specs(where: Path) -> Path:
    """`python` and `python3` kernelspecs that launch Logician (nbclient's tests name them)."""
    argv = [PY, "-m", "logician_kernel", "-f", "{connection_file}"]
    for name in ("python", "python3", "logician"):
        d = where / "kernels" / name
        d.mkdir(parents=True, exist_ok=True)
        spec = {
            "argv": argv,
            "display_name": f"Logician as {name}",
            "language": "python",
            "metadata": {"debugger": True, "supported_encryption": ["curve"]},
            "kernel_protocol_version": "5.5",
        }
        (d / "kernel.json").write_text(json.dumps(spec))
    return where


def suite_env(suite: str, kernel: str, deps: Path, scratch: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LOGICIAN_", "JPY_"))}
    env.update(
        PYTHONPATH=os.pathsep.join([str(deps), str(REPO)]),
        IPYTHONDIR=str(scratch / f"ipython-{suite}-{kernel}"),
        LOGICIAN_CONFIG_DIR=str(scratch / f"logician-config-{suite}"),
        JUPYTER_PLATFORM_DIRS="1",
        PEER_SUITE_KERNEL=kernel,
        # as in an activated venv: nbclient's test_cli runs `jupyter-execute`
        PATH=os.pathsep.join([str(Path(PY).parent), os.environ.get("PATH", "")]),
    )
    if kernel == "logician" and suite == "nbclient":
        env["JUPYTER_PATH"] = str(logician_specs(scratch / "jupyter-logician"))
    return env


def pytest_cmd(suite: str, report: Path) -> list[str]:
    return [
        PY,
        "-m",
        "pytest",
        "-p",
        "no:cacheprovider",
        "--color=no",
        # the same for both kernels: a loaded CI machine starts kernels slowly
        "-o",
        "timeout=300",
        # pytest-asyncio 1.x warns (an error under their filterwarnings) when it is unset
        "-o",
        "asyncio_default_fixture_loop_scope=function",
        f"--junitxml={report}",
    ]


def start(suite: str, root: Path, kernel: str, deps: Path, scratch: Path) -> subprocess.Popen:
    """One suite on one kernel, in the background (`outcomes` reads its JUnit report)."""
    run_dir = scratch / f"{suite}-{kernel}"
    cmd = [*pytest_cmd(suite, Path(f"{run_dir}.xml")), *SUITES[suite]]
    # a fresh copy per run: the kernel's workspace (.logician/) starts empty every time
    work = shutil.copytree(root, run_dir)
    with open(f"{run_dir}.log", "w") as log:
        return subprocess.Popen(
            cmd,
            cwd=work,
            env=suite_env(suite, kernel, deps, scratch),
            stdout=log,
            stderr=subprocess.STDOUT,
        )


def outcomes(suite: str, kernel: str, scratch: Path, report: Path | None = None) -> dict[str, str]:
    """Outcome per test id: passed, failed, error or skipped."""
    return {
        name: outcome for name, (outcome, _why) in results(suite, kernel, scratch, report).items()
    }


def results(
    suite: str, kernel: str, scratch: Path, report: Path | None = None
) -> dict[str, tuple[str, str]]:
    """Outcome per test id, with the first lines of its failure or error message."""
    report = report or scratch / f"{suite}-{kernel}.xml"
    if not report.is_file():
        sys.exit(
            f"peer_suites: {suite} on {kernel} did not run: {scratch / f'{suite}-{kernel}.log'}"
        )
    found: dict[str, tuple[str, str]] = {}
    for case in ET.parse(report).iter("testcase"):
        name = f"{case.get('classname')}::{case.get('name')}"
        kinds = {child.tag: child for child in case}
        outcome = (
            "failed"
            if "failure" in kinds
            else "error"
            if "error" in kinds
            else "skipped"
            if "skipped" in kinds
            else "passed"
        )
        bad = kinds.get("failure", kinds.get("error"))
        why = ""
        if bad is not None:
            text = (bad.get("message") or "") + "\n" + (bad.text or "")
            lines = [ln.rstrip() for ln in text.splitlines() if ln.strip()]
            why = "\n".join(lines[-WHY_LINES:])
        if found.get(name, ("passed", ""))[0] == "passed":
            found[name] = (outcome, why)
    return found


def node_id(name: str, root: Path) -> str:
    """`tests.test_client.TestExecute::test_x[p]` -> `tests/test_client.py::TestExecute::test_x[p]`."""
    dotted, _, test = name.partition("::")
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        module = Path(*parts[:cut]).with_suffix(".py")
        if (root / module).is_file():
            return "::".join([module.as_posix(), *parts[cut:], test])
    return name


def retry(suite: str, names: list[str], deps: Path, scratch: Path) -> dict[str, tuple[str, str]]:
    """Run `names` once more on logician, alone (not beside the three other runs)."""
    run_dir = scratch / f"{suite}-logician"
    report = scratch / f"{suite}-logician-retry.xml"
    ids = [node_id(name, run_dir) for name in names]
    with open(f"{run_dir}-retry.log", "w") as log:
        subprocess.run(
            [*pytest_cmd(suite, report), *ids],
            cwd=run_dir,
            env=suite_env(suite, "logician", deps, scratch),
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    return results(suite, "logician", scratch, report)


def exceptions(text: str) -> dict[str, str]:
    """`- `test id`: reason` lines under docs/drop-in.md's "Peer-suite exceptions" heading."""
    heading = "## Peer-suite exceptions"
    part = text.split(heading, 1)[1].split("\n## ", 1)[0] if heading in text else ""
    return dict(re.findall(r"^- `([^`]+)`: (.+)$", part, re.M))


def counts(outcomes: dict[str, str] | dict[str, tuple[str, str]]) -> str:
    """`91 pass, 0 fail, 0 error, 11 skip` of outcomes (bare, or with their messages)."""
    bare = [v if isinstance(v, str) else v[0] for v in outcomes.values()]
    n = {k: sum(1 for v in bare if v == k) for k in ("passed", "failed", "error", "skipped")}
    return f"{n['passed']} pass, {n['failed']} fail, {n['error']} error, {n['skipped']} skip"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--suite", choices=sorted(SUITES), action="append")
    parser.add_argument("--serial", action="store_true", help="one run at a time")
    parser.add_argument("--keep", action="store_true", help="keep the run's scratch folder")
    args = parser.parse_args(argv)
    pinned = pins()
    deps = test_deps(pinned["test-deps"])
    scratch = Path(tempfile.mkdtemp(prefix="peer-suites-"))
    suites = args.suite or sorted(SUITES)
    roots = {suite: fetch(suite, pinned[suite]) for suite in suites}
    started = time.monotonic()
    # The runs mostly wait on kernels: side by side they take about as long as the longest.
    runs = []
    for suite in suites:
        for kernel in ("python3", "logician"):
            runs.append(start(suite, roots[suite], kernel, deps, scratch))
            if args.serial:
                runs[-1].wait()
    for proc in runs:
        proc.wait()
    took = time.monotonic() - started
    allowed, bad, passed_anyway, flaky = exceptions(DOC.read_text()), [], [], []
    print(f"{'suite':<18} {'python3':<38} logician")
    for suite in suites:
        native, ours = outcomes(suite, "python3", scratch), results(suite, "logician", scratch)
        print(f"{suite + ' ' + pinned[suite]:<18} {counts(native):<38} {counts(ours)}")
        failing = [
            name
            for name, outcome in sorted(native.items())
            if outcome == "passed" and ours.get(name, ("missing", ""))[0] != "passed"
        ]
        # A failure beside the three other runs gets one more run alone: ipykernel's and
        # nbclient's suites race with a loaded machine on python3 too (several are @flaky).
        # Both outcomes are printed with the first run's message, so a pattern stays visible.
        again = (
            retry(suite, [n for n in failing if n not in allowed], deps, scratch)
            if any(n not in allowed for n in failing)
            else {}
        )
        for name in failing:
            first = ours.get(name, ("missing", ""))
            if name in allowed:
                passed_anyway.append((name, first[0]))
            elif again.get(name, ("missing", ""))[0] == "passed":
                flaky.append((name, first))
            else:
                bad.append((name, first, again.get(name, ("missing", ""))))
    print(f"({len(runs)} runs in {took:.0f} s{', one at a time' if args.serial else ''})")
    for command in reap(scratch):
        print(f"  killed a process the suites left running: {command[:200]}")
    for name, outcome in passed_anyway:
        print(f"  allowed ({allowed[name]}): {name} {outcome}")
    for name, (outcome, why) in flaky:
        print(f"  passed on a second run alone, {outcome} beside the others: {name}")
        print(indent(why))
    for name, (outcome, why), (then, why_again) in bad:
        print(f"  FAIL: passes on python3, {outcome} on logician (and {then} alone): {name}")
        print(indent(why_again or why))
    if args.keep or bad or flaky:
        print(f"logs: {scratch}")
    else:
        shutil.rmtree(scratch, ignore_errors=True)
    return 1 if bad else 0


def strays(scratch: Path) -> list[int]:
    """Processes the suites left running: any whose environment names this run's scratch
    folder (each suite's `IPYTHONDIR` is in it). ipykernel's debugger tests on a loaded machine
    orphan debugpy's adapter, which then spins a core's tenth for as long as the machine runs."""
    mark = f"IPYTHONDIR={scratch}{os.sep}".encode()
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry.name}/environ", "rb") as fh:
                environ = fh.read()
        except OSError:  # gone, or not ours to read
            continue
        if any(var.startswith(mark) for var in environ.split(b"\0")):
            found.append(int(entry.name))
    return found


def reap(scratch: Path) -> list[str]:
    """Kill what the suites left running (`strays`); the command lines killed."""
    killed = []
    for pid in strays(scratch):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as fh:
                command = fh.read().replace(b"\0", b" ").decode(errors="replace").strip()
            os.kill(pid, signal.SIGKILL)
        except OSError:  # it ended meanwhile
            continue
        killed.append(command)
    return killed


def indent(text: str) -> str:
    return (
        "\n".join(f"      {line}" for line in text.splitlines()) if text else "      (no message)"
    )


if __name__ == "__main__":
    sys.exit(main())
