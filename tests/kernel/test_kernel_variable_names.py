"""Every name a notebook binds is rewound or named, whatever its class: IPython's objects
(`!ls`, `%%capture`, display handles, the shell) and module bindings, through a real kernel.
IPython's own bookkeeping names stay outside the rewind."""

from __future__ import annotations

from pathlib import Path

import pytest
from kernel_harness import Kernel

# These tests read Logician's notices in the output of the cells they are about.
pytestmark = [pytest.mark.kernel, pytest.mark.notices_in_cells]

BOOKKEEPING = """\
import sys as _probe_sys
print(sorted(n for n in ('In', 'Out', '_ih', '_oh', '_dh', '_i1', 'exit', 'quit', 'get_ipython')
             if n not in globals()), type(In).__name__, callable(get_ipython))
"""


@pytest.fixture
def kernel(workspace: Path, kernel_env: dict[str, str]):
    k = Kernel(workspace, kernel_env)
    yield k
    k.shutdown()


def ok(k: Kernel, code: str) -> str:
    r = k.run(code)
    assert r.status == "ok", r.text
    return r.text


def test_ipython_objects_and_module_bindings_rewind_and_come_back_with_undo(
    kernel: Kernel,
) -> None:
    ok(kernel, "keep = 1")
    ok(kernel, "files = !ls")
    ok(kernel, "%%capture cap\nprint('captured text')")
    shown = ok(
        kernel,
        "from IPython.display import HTML, display\n"
        "handle = display(HTML('<b>one</b>'), display_id=True)\n"
        "page = HTML('<i>two</i>')\nip = get_ipython()",
    )
    assert "not captured" not in shown, shown
    ok(kernel, "import json as j\nimport sys")
    listing = ok(kernel, "%logician vars 5")
    assert "module json" in listing and "module sys" in listing
    assert "stored as a binding (a rewind never unloads the module)" in listing
    handles = ok(kernel, "%logician vars 4")
    assert "DisplayHandle" in handles and "Shell " in handles, handles

    report = ok(kernel, "%logician rewind 2")
    for name in ("files", "cap", "handle", "page", "ip", "j", "sys", "HTML", "display"):
        assert f"deleted   variable {name} " in report, (name, report)
    gone = ok(
        kernel,
        "print(sorted(n for n in ('files', 'cap', 'handle', 'page', 'ip', 'j', 'sys') "
        "if n in globals()))\nimport sys as s2\nprint('json' in s2.modules)",
    )
    assert gone.split() == ["[]", "True"], gone  # the module itself stays loaded
    assert ok(kernel, BOOKKEEPING).split() == ["[]", "list", "True"]

    undone = ok(kernel, "%logician undo")
    assert "restored" in undone and "variable files" in undone, undone
    back = ok(
        kernel,
        "print(type(files).__name__, 'data.csv' in files)\n"
        "print(cap.stdout.strip(), bool(handle.display_id), page.data)\n"
        "print(ip is get_ipython(), j.dumps([1]), sys.version_info[0])",
    )
    assert back.split() == [
        "SList",
        "True",
        "captured",
        "text",
        "True",
        "<i>two</i>",
        "True",
        "[1]",
        "3",
    ]
    handle_update = ok(kernel, "handle.update(HTML('<b>three</b>'))")
    assert "Traceback" not in handle_update


def test_an_unstorable_object_is_named_once_with_its_reason(kernel: Kernel) -> None:
    first = ok(kernel, "import sqlite3\ncon = sqlite3.connect('notes.db')")
    assert "con (cannot be pickled" in first and "sqlite3.Connection" in first, first
    for code in (
        "con.execute('create table t(a)')",
        "con.execute('insert into t values (1)')\ncon.commit()",
        "rows = con.execute('select * from t').fetchall()",
        "y = 2",
    ):
        assert "not captured" not in ok(kernel, code), code
    listing = ok(kernel, "%logician vars 1")
    assert "not captured: cannot be pickled" in listing and "sqlite3 " in listing
    report = ok(kernel, "%logician rewind 1")
    assert "deleted   variable con " in report and "deleted   variable sqlite3 " in report


def test_a_background_job_manager_is_named_not_captured_and_rewound(kernel: Kernel) -> None:
    ok(kernel, "keep = 1")
    started = ok(
        kernel,
        "import threading\nfrom IPython.lib import backgroundjobs as bg\n"
        "done = threading.Event()\njobs = bg.BackgroundJobManager()\njob = jobs.new(done.wait)",
    )
    assert "not captured" in started and "jobs (cannot be pickled" in started, started
    listing = ok(kernel, "%logician vars 2")
    assert "BackgroundJobManager" in listing and "not captured: cannot be pickled" in listing
    ok(kernel, "done.set()\njob.join()")
    report = ok(kernel, "%logician rewind 2")
    for name in ("jobs", "job", "done", "bg", "threading"):
        assert f"deleted   variable {name} " in report, (name, report)
    assert ok(kernel, "print('jobs' in globals(), keep)").split() == ["False", "1"]
