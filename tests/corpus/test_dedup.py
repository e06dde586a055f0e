"""SPEC 3.2: the heaviest run represents its group (bytes, then run time, then name)."""

import pytest

from mosaic.corpus.dedup import Group, Run, groups, representative


def test_most_bytes_wins_even_when_shorter():
    runs = [Run("a", "1:app", 100.0, 50.0), Run("b", "1:app", 101.0, 1.0)]
    assert representative(runs).file == "b"


def test_equal_bytes_longer_run_time_wins():
    runs = [Run("a", "1:app", 100.0, 10.0), Run("b", "1:app", 100.0, 10.5)]
    assert representative(runs).file == "b"


def test_equal_bytes_and_run_time_first_name_wins():
    runs = [
        Run("z.darshan", "1:app", 5.0, 3.0),
        Run("m.darshan", "1:app", 5.0, 3.0),
        Run("y.darshan", "1:app", 5.0, 3.0),
    ]
    assert representative(runs).file == "m.darshan"


def test_groups_count_runs_and_pick_per_key():
    runs = [
        Run("a", "1:lmp", 10.0, 1.0),
        Run("b", "1:lmp", 30.0, 1.0),
        Run("c", "1:lmp", 30.0, 2.0),
        Run("d", "2:lmp", 0.0, 1.0),
    ]
    assert list(groups(runs)) == [Group("1:lmp", 3, "c"), Group("2:lmp", 1, "d")]


def test_no_runs_no_groups_and_no_representative():
    assert list(groups([])) == []
    with pytest.raises(ValueError):
        representative([])
