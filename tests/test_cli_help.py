"""Every command's --help documents its exit statuses, and the ones scripts test say what they mean."""

from __future__ import annotations

import click
import pytest
from click.testing import CliRunner

from mosaic.cli import EXIT_STATUSES, USUAL_STATUSES, main


def every_command() -> list[list[str]]:
    """Each command's words, the subcommands of groups (`synth year`) included."""
    context = click.Context(main)
    words = []
    for name in main.list_commands(context):
        command = main.get_command(context, name)
        words.append([name])
        if isinstance(command, click.Group):
            words += [[name, sub] for sub in command.commands]
    return words


@pytest.mark.parametrize("words", every_command(), ids=" ".join)
def test_every_help_ends_with_its_exit_statuses(words):
    result = CliRunner().invoke(main, [*words, "--help"])
    assert result.exit_code == 0
    lines = result.output.split("Exit status:\n", 1)[1].splitlines()
    statuses = {int(code): meaning for code, meaning in (line.split(maxsplit=1) for line in lines)}
    assert statuses == {0: "done", **EXIT_STATUSES.get(words[0], USUAL_STATUSES)}


def test_the_statuses_scripts_test_are_documented():
    assert set(EXIT_STATUSES["categorize"]) == {1, 2} and "evicted" in EXIT_STATUSES["categorize"][1]
    assert "no traces.jsonl nor evicted.jsonl" in EXIT_STATUSES["eval"][1]
    assert "unknown" in EXIT_STATUSES["lookup"][1] and 130 in EXIT_STATUSES["run"]
