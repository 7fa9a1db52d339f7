"""A key stored with *Connect a model* (`key_name`): sent instead of the environment's, its
absence said before any request naming the stored key, and a 401 says where the key came from,
never the key."""

from __future__ import annotations

from pydantic import SecretStr

from logician_kernel.providers import AuthenticationError, MissingStoredKeyError

from .support import KEY, run_stream
from .test_provider_transport import ok

STORED = "sk-stored-key-9f8e7d6c5b4a"


def test_a_stored_key_is_sent_instead_of_the_environments(server) -> None:
    server.require_key = STORED
    server.script(ok("openai"))
    outcome = run_stream("openai", server, key_name="local", stored_key=SecretStr(STORED))
    assert outcome.error is None, outcome.error
    assert server.requests[0].headers["authorization"] == f"Bearer {STORED}"
    assert KEY not in str(server.requests[0].headers)  # the environment's key stayed home


def test_a_missing_stored_key_is_said_before_any_request(server) -> None:
    outcome = run_stream("anthropic", server, key_name="work", stored_key=None)
    assert isinstance(outcome.error, MissingStoredKeyError)
    assert "'work'" in str(outcome.error) and "Connect a model" in str(outcome.error)
    assert server.requests == []


def test_a_refused_stored_key_names_where_it_came_from_never_the_key(server) -> None:
    server.require_key = "sk-the-right-one-000000"
    outcome = run_stream("openai", server, key_name="local", stored_key=SecretStr(STORED))
    assert isinstance(outcome.error, AuthenticationError)
    assert "the stored key 'local' (model.key_name)" in str(outcome.error)
    assert STORED not in str(outcome.error)
