"""Kernel launch: IPKernelApp with our kernel class, as ipykernel's own launcher does."""

from __future__ import annotations


def main() -> None:
    from ipykernel.kernelapp import IPKernelApp

    from .kernel import LogicianKernel

    IPKernelApp.launch_instance(kernel_class=LogicianKernel)
