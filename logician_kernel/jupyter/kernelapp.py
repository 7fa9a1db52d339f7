"""Kernel launch: IPKernelApp with our kernel class, as ipykernel's own launcher does."""

from __future__ import annotations


def main() -> None:
    from ipykernel.kernelapp import IPKernelApp

    from ..agent.ui import guard_kernel_tree
    from .kernel import LogicianKernel

    # Before anything is started: every process of this kernel, `setsid` or not, dies with it.
    guard_kernel_tree()
    IPKernelApp.launch_instance(kernel_class=LogicianKernel)
