"""Layered merge: precedence, per-key list merge rules, survival of lower-layer keys, and one
validation per snapshot - by example and as properties over random layer stacks."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any
from unittest import mock

import tomlkit
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from logician_kernel.config import _resolve, load_effective_config
from logician_kernel.config._gated import GATED_KEYS
from logician_kernel.config._keys import format_key, to_toml_literal
from logician_kernel.config._merge import merge_layers
from logician_kernel.config._sources import Layer, set_path
from logician_kernel.config.commands import trust

ORDER = ("default", "user", "project", "env", "session")
UPPER = ("user", "project", "env", "session")

# --- examples ---------------------------------------------------------------------------


def test_precedence_by_example(sandbox) -> None:
    sandbox.write_user('[model]\nname = "user-model"\n[budget]\nmax_turns = 7\n')
    sandbox.write_project('[model]\nname = "project-model"\n[ui]\ncoalesce_hz = 3\n')
    sandbox.trust()
    cfg = sandbox.load(env={"LOGICIAN_MODEL__NAME": "env-model"})
    assert cfg.settings.model.name == "env-model"
    assert cfg.provenance("model.name") == "env"
    assert (cfg.settings.budget.max_turns, cfg.provenance("budget.max_turns")) == (7, "user")
    assert (cfg.settings.ui.coalesce_hz, cfg.provenance("ui.coalesce_hz")) == (3, "project")
    assert cfg.provenance("compaction.enabled") == "default"
    session = cfg.with_session({"model.name": "session-model"})
    assert (session.settings.model.name, session.provenance("model.name")) == (
        "session-model",
        "session",
    )
    assert cfg.settings.model.name == "env-model"  # the old snapshot is untouched


def test_union_and_replace_lists(sandbox) -> None:
    sandbox.write_user(
        '[permissions]\ndeny = ["bash(rm*)"]\nallow = ["read(**)"]\n'
        '[ui]\nstatus_fields = ["phase", "cost"]\n'
    )
    sandbox.write_project('[permissions]\ndeny = ["write(.env*)", "bash(rm*)"]\n')
    sandbox.trust()
    cfg = sandbox.load(env={"LOGICIAN_UI__STATUS_FIELDS": '["tokens"]'})
    assert cfg.settings.permissions.deny == ("bash(rm*)", "write(.env*)")
    assert cfg.sources("permissions.deny") == ("user", "project")
    assert cfg.provenance("permissions.deny") == "project"
    assert cfg.settings.permissions.allow == ("read(**)",)
    assert cfg.settings.ui.status_fields == ("tokens",)
    assert cfg.provenance("ui.status_fields") == "env"


def test_tables_merge_key_by_key(sandbox) -> None:
    sandbox.write_user(
        "[budget.prices.m]\ninput_per_mtok = 1.0\noutput_per_mtok = 2.0\n"
        "[budget.prices.n]\ninput_per_mtok = 5.0\noutput_per_mtok = 6.0\n"
    )
    cfg = sandbox.load(env={"LOGICIAN_BUDGET__PRICES__M__OUTPUT_PER_MTOK": "3"})
    prices = cfg.settings.budget.prices
    assert (prices["m"].input_per_mtok, prices["m"].output_per_mtok) == (1.0, 3.0)
    assert prices["n"].input_per_mtok == 5.0
    assert cfg.provenance("budget.prices.m.input_per_mtok") == "user"
    assert cfg.provenance("budget.prices.m.output_per_mtok") == "env"
    assert cfg.provenance("budget.prices.m") == "env"


def test_session_overrides_accumulate_and_replace_within_the_layer(sandbox) -> None:
    cfg = sandbox.load(session={"permissions.allow": ["read(**)"]})
    cfg = cfg.with_session({"budget.max_turns": 3})
    cfg = cfg.with_session({"permissions.allow": ["bash(ls*)"]})
    assert cfg.settings.budget.max_turns == 3
    assert cfg.settings.permissions.allow == ("bash(ls*)",)


def test_validation_happens_once_per_snapshot(sandbox) -> None:
    sandbox.write_user('[model]\nname = "a"\n')
    with mock.patch.object(_resolve, "_validate", wraps=_resolve._validate) as validate:
        cfg = sandbox.load(env={"LOGICIAN_BUDGET__MAX_TURNS": "4"}, session={"ui.coalesce_hz": 2})
        assert validate.call_count == 1
        cfg.with_session({"model.name": "b"})
        assert validate.call_count == 2


def test_reading_never_writes(sandbox) -> None:
    sandbox.write_user('[model]\nname = "a"\n')
    sandbox.write_project('[model]\nname = "b"\n')
    sandbox.trust()

    def tree() -> dict[str, bytes]:
        return {str(p): p.read_bytes() for p in sandbox.root.rglob("*") if p.is_file()}

    before = tree()
    cfg = sandbox.load()
    cfg.with_session({"model.name": "c"})
    assert tree() == before
    empty = sandbox.root / "nothing-here"
    load_effective_config(sandbox.ws, env={"LOGICIAN_CONFIG_DIR": str(empty)})
    assert not empty.exists()


# --- properties ---------------------------------------------------------------------------

SCALARS: dict[tuple[str, ...], st.SearchStrategy[Any]] = {
    ("model", "name"): st.text("abcxyz019-._", min_size=1, max_size=8),
    ("budget", "max_turns"): st.integers(1, 10_000),
    ("ui", "coalesce_hz"): st.integers(1, 120),
    ("compaction", "threshold_fraction"): st.floats(0.01, 0.99),
    ("permissions", "mode"): st.sampled_from(["ask", "read-only", "auto-edit", "full-auto"]),
    ("checkpoints", "max_file_bytes"): st.integers(1, 10**9),
}
RULE = st.builds(
    lambda t, p: f"{t}({p})", st.sampled_from(["bash", "write"]), st.sampled_from("ab*")
)
UNIONS: dict[tuple[str, ...], st.SearchStrategy[Any]] = {
    ("checkpoints", "ignore"): st.lists(
        st.sampled_from(["*.log", "a/**", "b", "*.tmp"]), max_size=3
    ),
    ("permissions", "allow"): st.lists(RULE, max_size=3),
    ("permissions", "deny"): st.lists(RULE, max_size=3),
}
REPLACES: dict[tuple[str, ...], st.SearchStrategy[Any]] = {
    ("ui", "status_fields"): st.lists(st.sampled_from(["phase", "model", "cost"]), max_size=3),
}
PRICE = st.fixed_dictionaries(
    {"input_per_mtok": st.integers(0, 50), "output_per_mtok": st.integers(0, 50)},
    optional={"cached_input_per_mtok": st.integers(0, 5)},
)
ALL = {**SCALARS, **UNIONS, **REPLACES}


@st.composite
def layer_data(draw: st.DrawFn) -> dict[str, Any]:
    data: dict[str, Any] = {}
    for path in draw(st.sets(st.sampled_from(sorted(ALL)))):
        set_path(data, path, draw(ALL[path]))
    for model in draw(st.sets(st.sampled_from(["m", "n"]))):
        set_path(data, ("budget", "prices", model), draw(PRICE))
    return data


STACKS = st.fixed_dictionaries({name: layer_data() for name in UPPER})


def leaves(data: dict[str, Any], prefix: tuple[str, ...] = ()) -> dict[tuple[str, ...], Any]:
    out: dict[tuple[str, ...], Any] = {}
    for key, value in data.items():
        if isinstance(value, dict):
            out.update(leaves(value, prefix + (key,)))
        else:
            out[prefix + (key,)] = value
    return out


def expected(
    stack: dict[str, dict[str, Any]], path: tuple[str, ...], default: Any
) -> tuple[Any, str]:
    """The reference model: union lists concatenate without repeats in layer order; anything
    else comes from the highest layer that sets it."""
    value, origin = default, "default"
    for name in UPPER:
        flat = leaves(stack[name])  # small dicts; recomputing keeps the model obviously right
        if path not in flat:
            continue
        if path in UNIONS:
            value = list(dict.fromkeys([*value, *flat[path]]))
        else:
            value = flat[path]
        origin = name
    return value, origin


def current(settings_dump: dict[str, Any], path: tuple[str, ...]) -> Any:
    node: Any = settings_dump
    for part in path:
        node = node[part]
    return list(node) if isinstance(node, tuple) else node


def check(cfg: Any, stack: dict[str, dict[str, Any]]) -> None:
    dump = cfg.settings.model_dump()
    defaults = load_effective_config.__globals__["LogicianSettings"]().model_dump()
    for path in ALL:
        default = current(defaults, path)
        want, origin = expected(stack, path, default)
        assert current(dump, path) == want, path
        assert cfg.provenance(path) == origin, path
    for model in ("m", "n"):
        for field in ("input_per_mtok", "output_per_mtok", "cached_input_per_mtok"):
            path = ("budget", "prices", model, field)
            setters = [n for n in UPPER if path in leaves(stack[n])]
            if setters:
                assert dump["budget"]["prices"][model][field] == leaves(stack[setters[-1]])[path]
                assert cfg.provenance(path) == setters[-1]
            elif any(
                ("budget", "prices", model, "input_per_mtok") in leaves(stack[n]) for n in UPPER
            ):
                assert dump["budget"]["prices"][model][field] is None  # optional, never set
            else:
                assert model not in dump["budget"]["prices"]


@settings(max_examples=150, deadline=None)
@given(STACKS)
def test_merge_of_plain_layers_follows_the_rules(stack: dict[str, dict[str, Any]]) -> None:
    layers = [Layer(name, data) for name, data in stack.items()]  # type: ignore[arg-type]
    merged = merge_layers(layers[::-1])  # input order does not matter
    flat = leaves(merged.data)
    for path in ALL:
        want, origin = expected(stack, path, [] if path in UNIONS else None)
        if origin == "default":
            assert path not in flat
        else:
            assert flat[path] == want and merged.provenance[path] == origin


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(STACKS)
def test_loading_a_random_stack_follows_the_rules(stack: dict[str, dict[str, Any]]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        user_dir, ws = root / "user", root / "ws"
        (ws / ".logician").mkdir(parents=True)
        user_dir.mkdir()
        (user_dir / "config.toml").write_text(tomlkit.dumps(stack["user"]))
        (ws / ".logician" / "config.toml").write_text(tomlkit.dumps(stack["project"]))
        set_in_project = {format_key(path) for path in leaves(stack["project"])}
        gated = [
            k for k in GATED_KEYS if any(s == k or s.startswith(k + ".") for s in set_in_project)
        ]
        trust(ws, user_dir=user_dir, allow=gated)  # the user allowed what the project sets
        env = {"LOGICIAN_CONFIG_DIR": str(user_dir), "GIT_CEILING_DIRECTORIES": tmp}
        for path, value in leaves(stack["env"]).items():
            env["LOGICIAN_" + "__".join(p.upper() for p in path)] = to_toml_literal(value)
        session = {format_key(path): value for path, value in leaves(stack["session"]).items()}
        with mock.patch.object(_resolve, "_validate", wraps=_resolve._validate) as validate:
            cfg = load_effective_config(ws, env=env, session=session)
        # A project may lower capture (a random stack often does): applied, with its notice.
        assert all("lowers capture" in notice for notice in cfg.notices), cfg.notices
        assert validate.call_count == 1
        check(cfg, stack)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.sampled_from(UPPER), min_size=1, unique=True), st.integers(1, 500))
def test_a_key_set_only_in_a_lower_layer_survives(setters: list[str], turns: int) -> None:
    """budget.max_turns set only in the lowest of some layers survives every higher layer
    setting other keys."""
    lowest = min(setters, key=ORDER.index)
    layers = [Layer("default", {"budget": {"max_turns": 50}})]
    for name in setters:
        data: dict[str, Any] = {"ui": {"coalesce_hz": 5}, "permissions": {"allow": ["bash(x)"]}}
        if name == lowest:
            data["budget"] = {"max_turns": turns}
        layers.append(Layer(name, data))  # type: ignore[arg-type]
    merged = merge_layers(layers)
    assert merged.data["budget"]["max_turns"] == turns
    assert merged.provenance[("budget", "max_turns")] == lowest
