"""`%logician WORDS`: commands, prompts and typos told apart before anything reaches a model."""

from __future__ import annotations

import pytest

from logician_kernel.jupyter.magic_parts import classify, unknown_command
from logician_kernel.jupyter.magic_words import MANAGEMENT_COMMANDS, protect_prompt_lines


@pytest.mark.parametrize(
    ("line", "kind", "text"),
    [
        ("rewind 3", "command", "rewind 3"),
        ("--bogus", "command", "--bogus"),
        ("rewnd 3", "unknown", "rewnd 3"),  # close to a command: never a prompt
        ("zebra", "unknown", "zebra"),  # one word that is no command
        ("mcp", "command", "mcp"),
        ("Status?", "unknown", "Status?"),
        ("ask Status?", "prompt", "Status?"),
        ("ask rewind the plan", "prompt", "rewind the plan"),
        ("What is in data.csv?", "prompt", "What is in data.csv?"),
        ("thread use nb-1", "command", "thread use nb-1"),
        ("thred use nb-1", "unknown", "thred use nb-1"),
        ("read the data", "prompt", "read the data"),  # a tool's name, not a typo of `thread`
    ],
)
def test_classify(line: str, kind: str, text: str) -> None:
    assert classify(line, MANAGEMENT_COMMANDS) == (kind, text)


def test_unknown_commands_suggest_the_close_one_and_say_how_to_prompt() -> None:
    message = str(unknown_command("rewnd", MANAGEMENT_COMMANDS))
    assert "unknown command 'rewnd' — did you mean rewind?" in message
    assert "%logician ask" in message
    assert "commands: " in str(unknown_command("zebra", MANAGEMENT_COMMANDS))


def test_only_prompts_become_agent_calls() -> None:
    typo, prompt = protect_prompt_lines(["%logician rewnd 3\n", "%logician ask hi\n"])
    assert "run_line_magic('logician', 'rewnd 3')" in typo
    assert "run_agent_cell(get_ipython(), '', 'hi')" in prompt
    (fix,) = protect_prompt_lines(["%logician fix keep the column names\n"])
    assert "run_fix_cell(get_ipython(), 'keep the column names')" in fix


def test_the_stdin_prompt_offers_every_approval_choice() -> None:
    from logician_kernel.jupyter.agent import STDIN_CHOICES
    from logician_kernel.types.approvals import APPROVAL_CHOICES

    assert sorted(STDIN_CHOICES.values()) == sorted(APPROVAL_CHOICES)


def test_the_command_names_are_the_handler_tables_and_the_help_names_only_those() -> None:
    import re

    from logician_kernel.jupyter.display import help_text
    from logician_kernel.jupyter.magics import COMMANDS, LogicianMagics

    assert MANAGEMENT_COMMANDS == frozenset(COMMANDS)
    assert all(getattr(LogicianMagics, h.__name__) is h for h in COMMANDS.values())
    assert len(COMMANDS) == 24 and COMMANDS[""] is LogicianMagics.handle_control
    helped = set(re.findall(r"%logician (\w+)", help_text().text))
    # `ask` and `fix` run the agent: frames, not management commands
    assert helped - {"ask", "fix"} <= MANAGEMENT_COMMANDS, helped - MANAGEMENT_COMMANDS
    # `branch merge|discard ID` is told on the `branches` line; `%logician` alone is the control
    assert MANAGEMENT_COMMANDS - helped == {"", "help", "branch"}
