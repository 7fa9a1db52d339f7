"""Whether our pydantic models read their fields' docstrings as descriptions.

`use_attribute_docstrings=True` makes pydantic read a model's source and parse it as the class
is created: most of the start-up cost of the kernel's models, and nothing a running kernel
shows. So these models read them only under `LOGICIAN_FIELD_DOCS=1` (the configuration's,
whose descriptions are `%logician config`'s help and `config.schema.json`, read theirs on
first use instead: `config/_field_docs.py`), which the comm schema's
writer (`python -m logician_kernel.jupyter.comm_schema`) and the tests set: the generated
schemas stay the same, descriptions included.

Must never: be read after the models are created (the flag is fixed at import).
"""

from __future__ import annotations

import os

FIELD_DOCS_ENV = "LOGICIAN_FIELD_DOCS"
"""Set it to `1` for field descriptions from docstrings (schema writers, tests)."""

FIELD_DOCS = os.environ.get(FIELD_DOCS_ENV) == "1"
"""`use_attribute_docstrings` of the models outside `config/`."""
