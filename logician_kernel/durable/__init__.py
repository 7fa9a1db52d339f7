"""The ground floor of everything durable: the journal (append, fsync, torn-tail scan),
redaction, private file modes, fsync and the durable-write choke point, the state key, and the
test-only fault hooks.

Imports nothing of ours but its own modules; anything may import it. `__all__` is what the
other packages use (`tests/unit/durable/test_durable_surface.py` holds it to that)."""

from .blob_key import MAC_BYTES, BlobKey, KeyFileError
from .fsync import durable_fsync, durable_replace, durable_write, fsync_dir
from .journal import (
    Journal,
    JournalError,
    Resume,
    TailRecovery,
    decode_record,
    encode_record,
    write_durably,
)
from .journal_scan import Damage, Scan, read_json_lines, scan, seq_ranges, seqs_named_in
from .lease import pid_alive
from .private import PRIVATE_DIR, PRIVATE_FILE, open_private, private_dir, write_private
from .redact import MASK, is_credential_name, is_maskable_value, mask_values, redact, redact_data
from .state_dir import state_path
from .test_hooks import hold_full_scan, stop_inside_call

__all__ = [
    "MAC_BYTES",
    "MASK",
    "PRIVATE_DIR",
    "PRIVATE_FILE",
    "BlobKey",
    "Damage",
    "Journal",
    "JournalError",
    "KeyFileError",
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
]
