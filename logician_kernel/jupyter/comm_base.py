"""What every `logician` comm message is built on: the protocol version, the comm target, the
shared field types and the four base models (a frontend's request; a part of an answer; a
kernel message; an answer, which echoes its request's `id` as `re`). The messages themselves
are in `comm_requests.py`, `comm_frames.py` and `comm_answers.py`; `comm_messages.py` unites
them.

Every model's validator is built when a message of its kind is first read or sent
(`defer_build`; `comm.py` validates by the message's own model, the union only for an
error's wording): a page's sidebar uses a few kinds of the sixty.

Must never: do I/O or talk to a comm (the models are plain data; `comm.py` owns the wire).
"""

from __future__ import annotations

from typing import Annotated, Literal, get_args

from pydantic import MISSING, BaseModel, ConfigDict, Field, StrictInt, StrictStr

from ..types.field_docs import FIELD_DOCS

Version = Literal[1]
"""The protocol's version: every message carries it as `v`."""


SCHEMA_VERSION: int = get_args(Version)[0]


TARGET = "logician"
"""The comm target a frontend opens."""


RequestId = StrictStr | StrictInt
"""A request's id: a string or an integer (never a boolean), echoed as `re`."""


Count = Annotated[int, Field(ge=0)]


NonEmpty = Annotated[str, Field(min_length=1)]


class _Request(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        strict=True,
        frozen=True,
        use_attribute_docstrings=FIELD_DOCS,
        defer_build=True,
    )

    v: Version
    """The schema version the frontend speaks."""
    id: RequestId | None = None
    """Echoed as `re` in the answer."""


class _Part(BaseModel):
    # Extra keys pass: a newer kernel may add a field an older frontend ignores.
    model_config = ConfigDict(extra="allow", use_attribute_docstrings=FIELD_DOCS, defer_build=True)


class _Kernel(_Part):
    v: Version
    """The schema version the kernel speaks."""


class _Answer(_Kernel):
    re: RequestId | MISSING = MISSING
    """The `id` of the request answered, when it had one."""
