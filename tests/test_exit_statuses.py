"""The exit statuses each --help documents (mosaic.cli.EXIT_STATUSES), seen from real
processes where a script would see them: serve, plot and figures (categorize, eval,
lookup and apps have theirs beside their other tests)."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

from mosaic.cli import EXIT_STATUSES
from mosaic_testing.written import heatmap_log

MOSAIC = str(Path(sys.executable).with_name("mosaic"))


def status(*args: str, timeout: float = 120) -> tuple[int, str]:
    done = subprocess.run([MOSAIC, *args], capture_output=True, text=True, timeout=timeout)
    return done.returncode, done.stderr


def test_serve_exits_3_when_it_cannot_start(tmp_path):
    assert "could not start" in EXIT_STATUSES["serve"][3]
    garbage = tmp_path / "garbage.sqlite"
    garbage.write_bytes(b"not a database" * 100)
    code, err = status("serve", "--store", str(garbage), "--port", "0", "--workers", "1")
    assert code == 3, err
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        code, err = status(
            "serve", "--create", "--store", str(tmp_path / "new.sqlite"), "--port", port, "--workers", "1"
        )
    assert code == 3 and "address already in use" in err
    code, err = status("serve", "--store", str(tmp_path / "new.sqlite"), "--host", "0.0.0.0")
    assert code == 2 and "requires --token-file" in err


def test_serve_refuses_a_store_that_does_not_exist_unless_asked_to_create_it(tmp_path):
    """A typo (``--store typo.sqlite``) used to serve an empty store, "unknown application" to all."""
    typo = tmp_path / "typo.sqlite"
    code, err = status("serve", "--store", str(typo), "--port", "0", "--workers", "1")
    assert code == 2 and f"no store at {typo}" in err and "--create" in err
    assert not typo.exists()


def test_plot_exits_1_on_an_evicted_log_and_figures_without_a_run(tmp_path):
    truncated = tmp_path / "truncated.darshan"
    truncated.write_bytes(heatmap_log(4)[:100])
    code, err = status("plot", str(truncated), "-o", str(tmp_path / "t.png"))
    assert code == 1 and "evicted (" in err and not (tmp_path / "t.png").exists()
    code, err = status("figures", str(tmp_path))
    assert code == 1 and "summary.json not found" in err
