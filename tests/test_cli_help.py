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


def test_serve_help_lists_every_endpoint():
    """Each route's every method on a line of serve's --help: METHOD[|METHOD] PATH..."""
    import re

    from mosaic.service.routes import router

    lines = [line.split() for line in CliRunner().invoke(main, ["serve", "--help"]).output.splitlines()]
    listed = [
        (words[0].split("|"), words[1]) for words in lines if len(words) > 1 and words[1].startswith("/")
    ]
    for route in router.routes:
        path = route.path.replace("{job_id}", "JOB_ID")
        for method in route.methods:
            assert any(
                method in methods and re.match(re.escape(path) + r"(?![\w/])", shown)
                for methods, shown in listed
            ), (method, path)
    assert (["GET"], "/docs,") in listed and any("/openapi.json" in words for words in lines)


def test_lookup_help_tells_the_client_side_of_the_token():
    lookup_help = " ".join(CliRunner().invoke(main, ["lookup", "--help"]).output.split())
    serve_help = CliRunner().invoke(main, ["serve", "--help"]).output
    assert "loopback" not in lookup_help and "the bearer token the server asks for" in lookup_help
    assert "required to bind a non-loopback address" in " ".join(serve_help.split())
