"""Kernel launch: ipykernel's IPKernelApp with our kernel class, as ipykernel's own launcher
does, plus one ordering fix at the end of its life.

The app keeps ipykernel's class name: clients match its log lines by the `[IPKernelApp]` prefix
(nbclient's tests filter its TCP-encryption warning by it), and traitlets names an app's logger
after its class.

The ordering fix: after a `shutdown_request`, the control thread still flushes stdout/stderr
and publishes `idle` through the IOPub thread, while the main thread, whose loop the request
stopped, runs on to the exit handlers, the first of which stops the IOPub thread. When the
main thread wins (a loaded machine, our background capture threads holding the GIL), the
control thread's flush sends into the event pipe of a thread that is gone, blocks forever, and
`close()` waits forever for the control thread: the kernel never exits. So the channel threads
are stopped and joined while IOPub still runs, before the exit handlers.
"""

from __future__ import annotations

import os
from typing import Any

import zmq
from ipykernel.kernelapp import IPKernelApp as _IPKernelApp

from .kernelspec import READ_EVERY_OUTPUT

CHANNEL_JOIN_SECONDS = 30.0
"""How long the exit waits for the control and shell-channel threads to finish their last
message; each runs only the end of the message it is handling."""


class IPKernelApp(_IPKernelApp):
    """ipykernel's app; its channel threads end before IOPub does (module docstring)."""

    def init_iopub(self, context: Any) -> None:
        if os.environ.get(READ_EVERY_OUTPUT) != "1":
            super().init_iopub(context)
            return
        context.setsockopt(zmq.SNDHWM, 0)  # the IOPub sockets made now: no bound
        try:
            super().init_iopub(context)
        finally:
            context.sockopts.pop(zmq.SNDHWM, None)

    def start(self) -> None:
        try:
            super().start()
        finally:
            self.stop_channel_threads()

    def stop_channel_threads(self) -> None:
        threads: list[Any] = [
            getattr(self, "control_thread", None),
            getattr(self, "shell_channel_thread", None),
        ]
        for thread in threads:
            if thread is not None and thread.is_alive():
                thread.stop()  # thread-safe; a loop already stopping stops once
        for thread in threads:
            if thread is not None and thread.is_alive():
                thread.join(CHANNEL_JOIN_SECONDS)


def main() -> None:
    from ..agent import guard_kernel_tree
    from .kernel import LogicianKernel

    # Before anything is started: every process of this kernel, `setsid` or not, dies with it.
    guard_kernel_tree()
    IPKernelApp.launch_instance(kernel_class=LogicianKernel)
