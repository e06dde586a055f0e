"""Secret files (API tokens, the dispy nodes' secret) are the caller's own: the owner is
checked on the opened file, so a link to another user's file is refused too. The tests
run as root: "another user" is uid 65534 (chown)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from mosaic.secretfile import read_secret_file
from mosaic.service.commands import serve

NOBODY = 65534
SECRET = "0123456789abcdef"  # 16 characters: the shortest accepted


def secret_file(path: Path, owner: int | None = None) -> Path:
    path.write_text(SECRET + "\n")
    path.chmod(0o600)
    if owner is not None:
        os.chown(path, owner, owner)
    return path


def owner_refusal(path: Path) -> str:
    return f"{path} is owned by uid {NOBODY}, not by you (uid {os.geteuid()})"


def test_one_s_own_file_is_read_directly_or_through_a_link(tmp_path):
    mine = secret_file(tmp_path / "token")
    (tmp_path / "link").symlink_to(mine)  # e.g. a Kubernetes secret volume: links to the files
    assert read_secret_file(str(mine)) == read_secret_file(str(tmp_path / "link")) == SECRET


@pytest.mark.parametrize("through_a_link", [False, True])
def test_a_file_owned_by_another_user_is_refused(tmp_path, through_a_link):
    theirs = secret_file(tmp_path / "token", owner=NOBODY)
    path = tmp_path / "link" if through_a_link else theirs
    if through_a_link:
        path.symlink_to(theirs)  # the link is ours: what it leads to is checked
    with pytest.raises(ValueError) as refused:
        read_secret_file(str(path))
    assert owner_refusal(path) in str(refused.value)
    assert "links are followed, the file they lead to is checked" in str(refused.value)


def test_mosaic_serve_refuses_a_token_file_owned_by_another_user(tmp_path):
    theirs = secret_file(tmp_path / "token", owner=NOBODY)
    store = tmp_path / "nowhere" / "s.sqlite"  # were the token taken, the start would stop here, not serve
    result = CliRunner().invoke(
        serve, ["--store", str(store), "--host", "0.0.0.0", "--token-file", str(theirs)]
    )
    assert result.exit_code == 2 and owner_refusal(theirs) in result.output
    assert not store.exists()


def test_a_node_refuses_a_secret_file_owned_by_another_user(tmp_path):
    theirs = secret_file(tmp_path / "node-secret", owner=NOBODY)
    check = [sys.executable, "-m", "mosaic.corpus.node", "--secret-file", str(theirs), "--check"]
    done = subprocess.run(check, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert f"refusing to start dispynode: node secret file: {owner_refusal(theirs)}" in done.stderr
