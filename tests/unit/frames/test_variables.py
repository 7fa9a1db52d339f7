"""Variable checkpoints without Jupyter: detection, storage and restore over a plain dict."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from logician_kernel.durable.blob_key import BlobKey
from logician_kernel.frames.variable_checkpoints import VariableCheckpoints
from logician_kernel.frames.variable_store import SerializeError, VariableStore, pickle_group
from logician_kernel.ledger.thread_ledger import FrameOpen, ThreadLedger


def key_of(tmp_path: Path) -> BlobKey:
    """The user's state key, outside the state dir (as the user config dir is)."""
    return BlobKey.in_dir(tmp_path / "user-config")


class Notebook:
    """A namespace run cell by cell, with frames as the kernel makes them."""

    def __init__(self, tmp_path: Path, **settings: Any) -> None:
        self.ledger = ThreadLedger(tmp_path / "threads", "t")
        OPENED.append(self.ledger)
        self.vars = VariableCheckpoints(self.ledger, tmp_path, key=key_of(tmp_path), **settings)
        self.ns: dict[str, Any] = {"__name__": "__main__"}
        self.vars.bind(self.ns, None)
        self.frame = 0

    def run(self, code: str) -> list[Any]:
        self.frame += 1
        self.ledger.append(
            FrameOpen,
            frame=self.frame,
            execution_count=self.frame,
            cell_id=None,
            code=code,
            pre_tree=None,
        )
        self.vars.open(self.frame, code)
        exec(code, self.ns)
        entry = self.vars.close()
        return entry.records if entry is not None else []

    def changes(self, code: str) -> dict[str, str]:
        return {r.name: r.action for r in self.run(code)}

    def rewind(self, frame: int) -> dict[str, str]:
        from logician_kernel.ledger.thread_ledger import ProjectionItem

        results, taken = self.vars.rewind(frame)
        self.ledger.append(
            ProjectionItem, reason="rewind", variables=results, variable_frames=taken
        )
        return {r.name: r.action for r in results}


OPENED: list[ThreadLedger] = []


@pytest.fixture(autouse=True)
def _close_ledgers() -> Iterator[None]:
    yield
    while OPENED:
        OPENED.pop().close()


@pytest.fixture
def nb(tmp_path: Path) -> Notebook:
    return Notebook(tmp_path)


def test_detects_binding_mutation_and_deletion_but_not_untouched_names(nb: Notebook) -> None:
    assert nb.changes("lst = [1, 2, 3]\nd = {'a': 1}\nkeep = 'x'") == {
        "lst": "created",
        "d": "created",
        "keep": "created",
    }
    assert nb.changes("lst.append(4)") == {"lst": "changed"}
    assert nb.changes("d['a'] = 2") == {"d": "changed"}  # same length: found by the hash
    assert nb.changes("print(len(lst))") == {}
    assert nb.changes("del keep") == {"keep": "deleted"}
    assert nb.changes("lst = lst") == {}


def test_mutation_through_a_notebook_function_is_caught(nb: Notebook) -> None:
    nb.run("cfg = {'k': 1}\ndef bump():\n    cfg['k'] += 1\n")
    assert nb.changes("bump()") == {"cfg": "changed"}


def test_rewind_restores_values_deletes_creations_and_brings_back_deletions(nb: Notebook) -> None:
    nb.run("lst = [1, 2, 3]\ngone = {'x': 1}")
    nb.run("lst.append(4)\nnew = 5\ndel gone")
    assert nb.rewind(2) == {"lst": "restored", "new": "deleted", "gone": "restored"}
    assert nb.ns["lst"] == [1, 2, 3] and nb.ns["gone"] == {"x": 1} and "new" not in nb.ns
    # After the rewind the restored value is known: reading it is no change.
    assert nb.changes("print(lst)") == {}


def test_rewind_across_frames_takes_the_oldest_pre_image(nb: Notebook) -> None:
    nb.run("x = [0]")
    nb.run("x.append(1)")
    nb.run("x.append(2)")
    nb.run("x.append(3)")
    nb.rewind(2)
    assert nb.ns["x"] == [0]
    # Frames 2..4 were taken back: rewinding a later frame never resurrects their values.
    nb.run("x.append(9)")
    nb.rewind(5)
    assert nb.ns["x"] == [0]


def test_aliasing_survives_a_rewind(nb: Notebook) -> None:
    nb.run("a = [1, 2]\nb = a\nnested = [a, 3]")
    nb.run("a.append(3)")
    nb.rewind(2)
    assert nb.ns["a"] == [1, 2]
    assert nb.ns["b"] is nb.ns["a"]
    assert nb.ns["nested"][0] is nb.ns["a"]


def test_closures_lambdas_and_notebook_classes_round_trip(nb: Notebook) -> None:
    nb.run(
        "class P:\n    def __init__(self, v):\n        self.v = v\n"
        "def make(n):\n    return lambda x: x + n\n"
        "p = P(1)\nadd2 = make(2)\nsq = lambda v: v * v"
    )
    nb.run("p.v = 5\nadd2 = make(10)\nsq = None")
    assert nb.rewind(2) == {"p": "restored", "add2": "restored", "sq": "restored"}
    assert nb.ns["p"].v == 1 and nb.ns["add2"](1) == 3 and nb.ns["sq"](3) == 9


def test_unpicklable_and_oversized_values_are_reported_not_stored(tmp_path: Path) -> None:
    nb = Notebook(tmp_path, max_bytes=10_000)
    records = {
        r.name: r for r in nb.run("gen = (i for i in range(3))\nbig = bytes(50_000)\nok = 1")
    }
    assert records["gen"].blob is None and "generator" in (records["gen"].not_captured or "")
    assert records["big"].blob is None and "max_variable_bytes" in (
        records["big"].not_captured or ""
    )
    assert records["ok"].blob is not None
    nb.run("gen = 2\nbig = 3\nok = 2")
    steps = {s.name: s for s in nb.vars.plan(2)}
    assert steps["gen"].action == "not-restorable" and "In [1]" in steps["gen"].detail
    assert nb.rewind(2) == {"gen": "not-restored", "big": "not-restored", "ok": "restored"}
    assert nb.ns["gen"] == 2  # left as it is, never half-restored


def test_ignored_and_bookkeeping_names_are_not_user_variables(tmp_path: Path) -> None:
    nb = Notebook(tmp_path, ignore=("big_*",))
    changes = nb.changes(
        "big_x = [1]\n_ = 3\n__ = 4\n_i1 = 'x'\n_7 = 1\n_ih = []\n_oh = {}\nIn = []\n"
        "Out = {}\nexit = quit = get_ipython = None\n_exit_code = 0"
    )
    assert changes == {}


def test_a_hidden_name_counts_once_the_user_rebinds_it(tmp_path: Path) -> None:
    nb = Notebook(tmp_path)
    shell_open = object()
    nb.ns["open"] = shell_open
    nb.vars.bind(nb.ns, {"open": shell_open})
    assert nb.changes("x = 1") == {"x": "created"}
    assert nb.changes("open = len") == {"open": "created"}
    assert nb.rewind(2) == {"open": "deleted"}
    assert nb.ns["open"] is shell_open  # the shell's own value, not a hole


def test_module_bindings_rewind_as_bindings_and_the_module_stays_loaded(nb: Notebook) -> None:
    import json
    import sys

    nb.run("keep = 1")
    records = {r.name: r for r in nb.run("import json as j\nimport sys\nimport threading as lk")}
    assert {n: r.action for n, r in records.items()} == {
        "j": "created",
        "lk": "created",
        "sys": "created",
    }
    assert records["j"].type == "module json" and records["j"].blob is not None
    assert records["j"].size < 200  # a reference by name, not the module's contents
    assert nb.rewind(2) == {"j": "deleted", "lk": "deleted", "sys": "deleted"}
    assert "j" not in nb.ns and "sys" not in nb.ns
    assert sys.modules["json"] is json  # the module itself is not unloaded
    nb.run("j = 5")
    nb.run("import json as j")
    assert nb.rewind(4) == {"j": "restored"} and nb.ns["j"] == 5
    assert nb.rewind(3) == {"j": "deleted"}


def test_a_module_not_importable_by_its_name_is_named_not_pickled(nb: Notebook) -> None:
    records = {r.name: r for r in nb.run("import types\nm = types.ModuleType('made_here')")}
    assert records["m"].blob is None
    assert "not importable by its name" in (records["m"].not_captured or "")
    assert records["types"].blob is not None


def test_ipython_objects_are_user_variables_and_round_trip(nb: Notebook) -> None:
    pytest.importorskip("IPython")
    code = (
        "from IPython.utils.text import SList\n"
        "from IPython.utils.capture import capture_output\n"
        "from IPython.display import HTML\n"
        "from IPython.core.display_functions import DisplayHandle\n"
        "files = SList(['a.txt', 'b.txt'])\n"
        "with capture_output() as cap:\n"
        "    print('hello')\n"
        "page = HTML('<b>x</b>')\n"
        "handle = DisplayHandle('d1')\n"
    )
    nb.run("keep = 1")
    changes = nb.changes(code)
    for name in ("files", "cap", "page", "handle"):
        assert changes[name] == "created", changes
    assert all(r.blob for r in nb.run("files = 1\ncap = 2\npage = 3\nhandle = 4") if r.name)
    assert nb.rewind(3)["files"] == "restored"
    assert nb.ns["files"].n == "a.txt\nb.txt" and nb.ns["cap"].stdout == "hello\n"
    assert nb.ns["page"].data == "<b>x</b>" and nb.ns["handle"].display_id == "d1"
    assert nb.rewind(2) == {
        "SList": "deleted",
        "capture_output": "deleted",
        "HTML": "deleted",
        "DisplayHandle": "deleted",
        "files": "deleted",
        "cap": "deleted",
        "page": "deleted",
        "handle": "deleted",
    }


def test_the_running_shell_is_stored_as_a_reference_to_it(nb: Notebook) -> None:
    shell_module = pytest.importorskip("IPython.core.interactiveshell")
    shell = shell_module.InteractiveShell.instance()
    try:
        nb.ns["get_shell"] = lambda: shell
        nb.run("keep = 1")
        records = {r.name: r for r in nb.run("ip = get_shell()")}
        assert records["ip"].blob is not None and records["ip"].size < 300
        nb.run("ip = None")
        assert nb.rewind(3) == {"ip": "restored"} and nb.ns["ip"] is shell
    finally:
        shell_module.InteractiveShell.clear_instance()


def test_same_value_stored_twice_costs_once(tmp_path: Path) -> None:
    nb = Notebook(tmp_path)
    nb.run("v = list(range(1000))")
    nb.run("v = list(range(1000))")
    blobs = [p for p in (tmp_path / "variables" / "objects").rglob("*") if p.is_file()]
    assert len(blobs) == 1


def test_restart_restores_from_disk_and_names_what_is_not_live(tmp_path: Path) -> None:
    nb = Notebook(tmp_path)
    nb.run("kept = 'before'\nx = 1")
    nb.run("x = 2")
    nb.ledger.close()
    # A new kernel: the same ledger and store, an empty namespace.
    again = Notebook.__new__(Notebook)
    again.ledger = ThreadLedger(tmp_path / "threads", "t")
    OPENED.append(again.ledger)
    again.vars = VariableCheckpoints(again.ledger, tmp_path, key=key_of(tmp_path))
    again.ns = {}
    again.vars.bind(again.ns, None)
    again.frame = 2
    assert again.rewind(2) == {"x": "restored", "kept": "not-live"}
    assert again.ns == {"x": 1}


def test_numpy_and_pandas_values_round_trip_through_the_store(tmp_path: Path) -> None:
    np = pytest.importorskip("numpy")
    pd = pytest.importorskip("pandas")
    nb = Notebook(tmp_path)
    nb.run(
        "arr = np.arange(10.0)\ndf = pd.DataFrame({'a': [1, 2]}, index=['x', 'y'])".replace(
            "np.", "__import__('numpy')."
        ).replace("pd.", "__import__('pandas').")
    )
    nb.run("arr += 1\ndf['c'] = df['a'] * 2.5")
    nb.rewind(2)
    np.testing.assert_array_equal(nb.ns["arr"], np.arange(10.0))
    pd.testing.assert_frame_equal(nb.ns["df"], pd.DataFrame({"a": [1, 2]}, index=["x", "y"]))


def test_a_lock_is_not_picklable_and_says_so() -> None:
    with pytest.raises(SerializeError, match="cannot be pickled"):
        pickle_group({"lk": threading.Lock()})


def test_a_truncated_blob_is_reported_not_raised(tmp_path: Path) -> None:
    nb = Notebook(tmp_path)
    nb.run("x = [1]")
    nb.run("x = [2]")
    for blob in (tmp_path / "variables" / "objects").rglob("*"):
        if blob.is_file():
            blob.write_bytes(blob.read_bytes()[:10])
    assert nb.rewind(2) == {"x": "not-restored"}
    assert nb.ns["x"] == [2]
    assert VariableStore(tmp_path / "variables", key_of(tmp_path)).has("0" * 32) is False


def test_a_restored_notebook_function_still_works_on_the_live_namespace(nb: Notebook) -> None:
    nb.run("cfg = {'k': 1}\ndef bump():\n    cfg['k'] += 1\n")
    nb.run("def bump():\n    cfg['k'] += 10\n")
    assert nb.rewind(2) == {"bump": "restored"}
    nb.ns["bump"]()
    assert nb.ns["cfg"] == {"k": 2}


def test_a_large_buffer_is_stored_when_mutated_and_left_alone_when_only_read(
    nb: Notebook, tmp_path: Path
) -> None:
    nb.run("import os\nbuf = bytearray(os.urandom(17 * 2**20))")  # incompressible: stored raw
    first = nb.ns["buf"][0]
    assert nb.changes("n = len(buf)") == {"n": "created"}  # mentioned, hashed, not written
    assert nb.changes("buf[0] = (buf[0] + 1) % 256") == {"buf": "changed"}
    store = tmp_path / "variables"
    assert not list(store.glob(".speculative*"))
    assert len([p for p in (store / "objects").rglob("*") if p.stat().st_size > 2**24]) == 2
    nb.rewind(3)
    assert nb.ns["buf"][0] == first and len(nb.ns["buf"]) == 17 * 2**20


def test_an_unpicklable_object_is_named_once_not_on_every_later_cell(nb: Notebook) -> None:
    from logician_kernel.workspace.frame import not_captured_line as frame_line

    records = nb.run("import sqlite3\ncon = sqlite3.connect(':memory:')")
    line = frame_line(1, records) or ""
    assert "con (cannot be pickled" in line and "sqlite3.Connection" in line
    for code in (
        "con.execute('create table t(a)')",
        "rows = con.execute('select * from t').fetchall()",
        "y = 2",
        "con.commit()",
    ):
        assert frame_line(nb.frame + 1, nb.run(code)) is None, code
    # A list that holds the connection changes: the list is named, the connection is not.
    records = nb.run("conns = [con]")
    assert {r.name: r.action for r in records} == {"conns": "created", "con": "shared"}
    line = frame_line(nb.frame, records) or ""
    assert "conns (" in line and "con (" not in line and "1 variable(s)" in line


def test_what_from_pylab_import_star_binds_round_trips(nb: Notebook) -> None:
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    from matplotlib import rcsetup

    records = nb.run("from pylab import *")
    assert len(records) > 500 and {r.action for r in records} == {"created"}
    missed = {r.name: r.not_captured for r in records if r.blob is None}
    assert "rcParamsOrig" not in missed and "np" not in missed, missed
    nb.run("rcParamsOrig = 1\nnp = 2")
    assert nb.rewind(2) == {"np": "restored", "rcParamsOrig": "restored"}
    restored = nb.ns["rcParamsOrig"]
    # The library's auto-backend marker comes back as itself, not as a copy.
    assert dict.__getitem__(restored, "backend") is rcsetup._auto_backend_sentinel
    assert nb.ns["np"] is __import__("numpy")
