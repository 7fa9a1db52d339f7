"""The public surface of `logician_kernel.durable`: the journal, its scan, redaction, private
modes, fsync, the state key and the test hooks. A name joins `__all__` when another package
needs it; the others import it from here."""

from __future__ import annotations

import inspect

import logician_kernel.durable as durable_pkg

DURABLE_API = {
    "BlobKey",
    "Damage",
    "Journal",
    "JournalError",
    "KeyFileError",
    "MAC_BYTES",
    "MASK",
    "PRIVATE_DIR",
    "PRIVATE_FILE",
    "Resume",
    "Scan",
    "TailRecovery",
    "decode_record",
    "durable_fsync",
    "durable_replace",
    "durable_write",
    "encode_record",
    "fsync_dir",
    "hold_full_scan",
    "pid_alive",
    "read_json_lines",
    "is_credential_name",
    "is_maskable_value",
    "mask_values",
    "open_private",
    "private_dir",
    "redact",
    "redact_data",
    "scan",
    "seq_ranges",
    "seqs_named_in",
    "state_path",
    "stop_inside_call",
    "write_durably",
    "write_private",
}


def test_exported_names_are_what_we_mean_to_export() -> None:
    assert set(durable_pkg.__all__) == DURABLE_API
    assert len(durable_pkg.__all__) == len(DURABLE_API)  # no name listed twice


def test_every_exported_name_is_defined_in_the_package() -> None:
    for name in durable_pkg.__all__:
        value = getattr(durable_pkg, name)
        home = getattr(value, "__module__", None)
        # constants (AUDIT, MASK) and Literal aliases carry no home module
        if inspect.isclass(value) or inspect.isfunction(value):
            assert home is not None and home.startswith("logician_kernel.durable."), (name, home)
