"""The `logician` command: install the kernelspec, run notebooks headless, manage config."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ._version import __version__


def _cmd_install(args: argparse.Namespace) -> int:
    from .jupyter.kernelspec import install

    where = install(user=args.user, sys_prefix=args.sys_prefix, prefix=args.prefix)
    print(f"Installed kernelspec logician in {where}")
    return 0


def _cmd_run(args: argparse.Namespace) -> int:
    notebook = Path(args.notebook)
    if not notebook.is_file():  # said before the runner's imports (Jupyter's client: ~1 s)
        print(f"logician run: no such notebook: {notebook}", file=sys.stderr)
        return 2
    from .jupyter.runner import NotebookError, run_notebook

    try:
        summary = run_notebook(
            notebook, output=Path(args.output) if args.output else None, timeout=args.timeout
        )
    except NotebookError as exc:
        print(f"logician run: {exc}", file=sys.stderr)
        return 2
    print(f"{notebook}: {summary.cells} code cell(s), {len(summary.frames)} frame(s)")
    for line in summary.frames:
        print(f"  {line}")
    if summary.output is not None:
        print(f"executed notebook written to {summary.output}")
    if summary.failed:
        print(f"logician run: {summary.failed}", file=sys.stderr)
        for line in summary.traceback:
            print(f"  {line}", file=sys.stderr)
        return 1
    return 0


def _cmd_ledger(args: argparse.Namespace) -> int:
    from .ledger.repair import RepairError, check, repair
    from .workspace import state_path

    given = Path(args.thread)
    path = (
        given
        if given.suffix == ".jsonl"
        else (state_path(Path(args.workspace)) / "threads" / f"{args.thread}.jsonl")
    )
    if not path.is_file():
        print(f"logician ledger: no ledger for thread {args.thread!r} at {path}", file=sys.stderr)
        return 2
    try:
        report = repair(path) if args.action == "repair" else check(path)
    except RepairError as exc:
        print(f"logician ledger: {exc}", file=sys.stderr)
        return 2
    print("\n".join(report.lines()))
    # A repair succeeded only if the ledger now checks clean (it used to exit 0 regardless).
    return 0 if (report.clean_after if args.action == "repair" else report.healthy) else 1


def _cmd_state(args: argparse.Namespace) -> int:
    from .snapshots.state_trust import UntrustedStateError, check_state_dir
    from .workspace import state_path

    workspace = Path(args.workspace).resolve()
    state = state_path(workspace)  # a team member's own under a shared `.logician/`
    try:
        check_state_dir(workspace, state)
    except UntrustedStateError as exc:
        print(
            f"logician state: refused: {exc.path} {exc.problem}\n  fix: {exc.fix}", file=sys.stderr
        )
        return 1
    if not state.exists():
        print(f"{state}: not created yet; the kernel will create it yours alone (0700)")
    else:
        print(f"{state}: yours alone (owner and modes checked, as the kernel does on open)")
    return 0


def _cmd_kernel(args: argparse.Namespace) -> int:
    from .jupyter.kernelapp import main as kernel_main

    sys.argv = [sys.argv[0], *args.kernel_args]
    kernel_main()
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="logician", description="Logician Kernel: rewindable notebook cells and agent."
    )
    parser.add_argument("--version", action="version", version=f"logician {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    install = sub.add_parser("install", help="install the `logician` kernelspec")
    where = install.add_mutually_exclusive_group()
    where.add_argument("--user", action="store_true", help="for the current user only")
    where.add_argument("--sys-prefix", action="store_true", help="into sys.prefix (this env)")
    where.add_argument("--prefix", metavar="DIR", help="under DIR/share/jupyter/kernels")
    install.set_defaults(func=_cmd_install)

    run = sub.add_parser("run", help="execute a notebook headless on the Logician kernel")
    run.add_argument("notebook", help="the .ipynb to execute")
    run.add_argument("-o", "--output", metavar="OUT.ipynb", help="write the executed notebook")
    run.add_argument("--timeout", type=int, default=600, help="per-cell timeout, seconds")
    run.set_defaults(func=_cmd_run)

    ledger = sub.add_parser(
        "ledger", help="verify a thread's ledger, or restore what side files hold"
    )
    ledger.add_argument("action", choices=["check", "repair"], help="check (read-only) or repair")
    ledger.add_argument("thread", help="thread id (the notebook's name) or a path to its .jsonl")
    ledger.add_argument(
        "--workspace", default=".", help="workspace holding .logician/ (default: .)"
    )
    ledger.set_defaults(func=_cmd_ledger)

    state = sub.add_parser(
        "state", help="check that a workspace's .logician/ is yours alone (as the kernel does)"
    )
    state.add_argument("action", choices=["check"], help="check (read-only)")
    state.add_argument("--workspace", default=".", help="workspace holding .logician/ (default: .)")
    state.set_defaults(func=_cmd_state)

    kernel = sub.add_parser("kernel", help="start the kernel (as `python -m logician_kernel`)")
    kernel.add_argument("kernel_args", nargs=argparse.REMAINDER)
    kernel.set_defaults(func=_cmd_kernel)

    from .config.cli import add_config_subcommands

    add_config_subcommands(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return int(args.func(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
