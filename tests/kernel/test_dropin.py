"""A drop-in kernel: everything a notebook does on ipykernel still works, to the message spec.

`jupyter_kernel_test` validates every reply against the Jupyter messaging spec (v5); the
tests below it cover what a notebook user does that the generic suite does not: input(),
interrupt, `%matplotlib inline`, ipywidgets, comms and `!` shell commands.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import unittest
from pathlib import Path

import jupyter_kernel_test
import pytest
from jupyter_client.manager import start_new_kernel
from jupyter_kernel_test.msgspec_v5 import validate_message
from kernel_harness import Kernel, clean_env

from logician_kernel import __version__

pytestmark = pytest.mark.kernel


class TestMessageSpec(jupyter_kernel_test.KernelTests):
    kernel_name = "logician"
    language_name = "python"
    file_extension = ".py"
    code_hello_world = "print('hello, world')"
    code_stderr = "import sys; print('test', file=sys.stderr)"
    completion_samples = [{"text": "zi", "matches": {"zip"}}]
    complete_code_samples = ["1", "print('hello, world')", "def f(x):\n  return x*2\n\n\n"]
    incomplete_code_samples = ["print('''hello", "def f(x):\n  x*2"]
    invalid_code_samples = ["import = 7q"]
    code_page_something = "zip?"
    code_generate_error = "raise ValueError('boom')"
    code_execute_result = [
        {"code": "1+2+3", "result": "6"},
        {"code": "[n*n for n in range(1, 4)]", "result": "[1, 4, 9]"},
    ]
    code_display_data = [
        {
            "code": "from IPython.display import HTML, display; display(HTML('<b>test</b>'))",
            "mime": "text/html",
        },
        {
            "code": "from IPython.display import Math, display; display(Math('\\\\frac{1}{2}'))",
            "mime": "text/latex",
        },
    ]
    code_history_pattern = "1?2*"
    supported_history_operations = ("tail", "search")
    code_inspect_sample = "zip"
    code_clear_output = "from IPython.display import clear_output; clear_output()"

    @classmethod
    def setUpClass(cls) -> None:
        cls._workspace = tempfile.mkdtemp(prefix="logician-spec-")
        env = clean_env(
            LOGICIAN_THREAD="spec", LOGICIAN_CONFIG_DIR=os.environ["LOGICIAN_CONFIG_DIR"]
        )
        # The session fixture in conftest.py puts a `logician` spec for this interpreter on
        # JUPYTER_PATH, so the kernel is found by name like a frontend finds it.
        cls.km, cls.kc = start_new_kernel(kernel_name=cls.kernel_name, cwd=cls._workspace, env=env)

    @classmethod
    def tearDownClass(cls) -> None:
        super().tearDownClass()
        shutil.rmtree(cls._workspace, ignore_errors=True)

    def test_kernel_info_names_logician(self) -> None:
        self.flush_channels()
        msg_id = self.kc.kernel_info()
        reply = self.kc.get_shell_msg(timeout=15)
        validate_message(reply, "kernel_info_reply", msg_id)
        assert reply["content"]["logician_version"] == __version__
        assert reply["content"]["language_info"]["name"] == "python"

    def test_frame_cells_and_magic_cells_reply_to_spec(self) -> None:
        for code in (
            "open('f.txt', 'w').write('x')",
            "%logician frames",
            "%logician rewind --last",
            "%logician rewind 999",
        ):
            self.flush_channels()
            reply, outputs = self.execute_helper(code)
            validate_message(reply, "execute_reply", reply["parent_header"]["msg_id"])
            for msg in outputs:
                validate_message(msg)


@pytest.fixture
def kernel(tmp_path: Path, kernel_env: dict[str, str]):
    k = Kernel(tmp_path, kernel_env)
    yield k
    k.shutdown()


def test_input_reaches_the_frontend_and_back(kernel: Kernel) -> None:
    content = {
        "code": "name = input('who? ')\nprint('hi', name)",
        "silent": False,
        "store_history": True,
        "user_expressions": {},
        "allow_stdin": True,
    }
    msg = kernel.kc.session.msg("execute_request", content)
    kernel.kc.shell_channel.send(msg)
    request = kernel.kc.get_stdin_msg(timeout=30)
    assert request["msg_type"] == "input_request" and request["content"]["prompt"] == "who? "
    kernel.kc.input("Ada")
    result = kernel.collect(msg["header"]["msg_id"])
    assert result.status == "ok" and "hi Ada" in result.stdout


def test_interrupt_stops_a_running_cell_and_the_kernel_keeps_its_state(kernel: Kernel) -> None:
    kernel.run("x = 41")
    msg_id = kernel.send("import time\nprint('go', flush=True)\nwhile True: time.sleep(0.05)")
    kernel.wait_for_output("go")
    kernel.km.interrupt_kernel()
    assert kernel.collect(msg_id).reply["ename"] == "KeyboardInterrupt"
    assert "42" in kernel.run("print(x + 1)").stdout


def test_matplotlib_inline_produces_a_png(kernel: Kernel) -> None:
    r = kernel.run(
        "%matplotlib inline\nimport matplotlib.pyplot as plt\nplt.plot([1, 2, 3]); plt.show()"
    )
    assert r.status == "ok", r.text
    assert any(
        m["msg_type"] == "display_data" and "image/png" in m["content"]["data"] for m in r.messages
    )


def test_ipywidgets_and_comms_work(kernel: Kernel) -> None:
    r = kernel.run("import ipywidgets as w\nslider = w.IntSlider(value=3)\nslider")
    assert r.status == "ok", r.text
    opens = [m for m in r.messages if m["msg_type"] == "comm_open"]
    assert any(m["content"]["target_name"] == "jupyter.widget" for m in opens)
    views = [m for m in r.messages if m["msg_type"] in ("display_data", "execute_result")]
    assert any("application/vnd.jupyter.widget-view+json" in m["content"]["data"] for m in views)
    # A comm the frontend opens reaches a target registered in the kernel.
    kernel.run(
        "got = []\n"
        "def target(comm, msg):\n"
        "    got.append(msg['content']['data'])\n"
        "get_ipython().kernel.comm_manager.register_target('echo', target)"
    )
    comm = kernel.kc.session.msg(
        "comm_open", {"comm_id": "c1", "target_name": "echo", "data": {"v": 7}}
    )
    kernel.kc.shell_channel.send(comm)
    for _ in range(50):
        if "{'v': 7}" in kernel.run("print(got)").stdout:
            break
    else:
        raise AssertionError("comm_open never reached the registered target")


def test_a_widget_frontend_can_open_the_control_comm(kernel: Kernel) -> None:
    """JupyterLab's widget manager opens `jupyter.widget.control` to restore widget views."""
    kernel.run("import ipywidgets as w\nslider = w.IntSlider(value=5)")
    opened = {"comm_id": "ctl", "target_name": "jupyter.widget.control", "data": {}}
    kernel.kc.shell_channel.send(
        kernel.kc.session.msg("comm_open", opened, metadata={"version": "1.0.0"})
    )
    ask = {"comm_id": "ctl", "data": {"method": "request_states"}}
    kernel.kc.shell_channel.send(kernel.kc.session.msg("comm_msg", ask))
    for _ in range(100):
        m = kernel.kc.get_iopub_msg(timeout=10)
        if m["msg_type"] == "comm_msg" and m["content"]["comm_id"] == "ctl":
            assert m["content"]["data"]["method"] == "update_states"
            assert any(
                s["model_name"] == "IntSliderModel" for s in m["content"]["data"]["states"].values()
            )
            return
    raise AssertionError("the widget control comm never answered")


def test_shell_commands_and_their_exit_status(kernel: Kernel, tmp_path: Path) -> None:
    r = kernel.run("!echo from-shell && ls")
    assert r.status == "ok" and "from-shell" in r.stdout
    r = kernel.run("out = !echo captured\nprint(out)")
    assert "['captured']" in r.stdout
    r = kernel.run("!exit 3\nprint(_exit_code)")
    assert "3" in r.stdout


def test_python_m_logician_kernel_starts_a_kernel(tmp_path: Path) -> None:
    """The documented entry point, used by the kernelspec: `python -m logician_kernel -f`."""
    km, kc = start_new_kernel(kernel_name="logician", cwd=str(tmp_path))
    try:
        assert km.kernel_spec is not None
        assert km.kernel_spec.argv[1:3] == ["-m", "logician_kernel"]
        msg_id = kc.kernel_info()
        while (reply := kc.get_shell_msg(timeout=30))["parent_header"]["msg_id"] != msg_id:
            pass
        assert reply["content"]["logician_version"] == __version__
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


def test_console_command_exists() -> None:
    bin_dir = Path(os.sys.executable).parent
    out = subprocess.run([str(bin_dir / "logician"), "--help"], capture_output=True, text=True)
    assert out.returncode == 0 and "install" in out.stdout and "run" in out.stdout


if __name__ == "__main__":
    unittest.main()
