"""The epilog's job times for array tasks, from the real Slurm's scontrol: asked for an
array's job id, scontrol shows every task's record, one a line, and the epilog used to take
the last line's times, another task's (a task of a long throttled array then had its log
searched in another task's day folders)."""

from __future__ import annotations

import re

import pytest

from mosaic.service.epilog import scontrol_times
from mosaic_testing.slurm import SlurmCluster, wait_for

pytestmark = pytest.mark.slow
SCRIPT = "#!/bin/bash\nsleep $((1 + SLURM_ARRAY_TASK_ID))\n"  # no two tasks end in the same second


def test_each_array_task_gets_its_own_start_and_end(slurm_cluster: SlurmCluster, monkeypatch):
    cluster = slurm_cluster
    array, _ = cluster.submit(SCRIPT, uid=65534, options=("--array=0-1",))
    wait_for(lambda: not cluster.queued(), 90, "the array's tasks to end", step=0.2)
    monkeypatch.setenv("SLURM_CONF", str(cluster.conf))
    monkeypatch.setenv("PATH", cluster.env["PATH"])
    shown = cluster.show(array)
    tasks = re.findall(r"^JobId=(\d+) ArrayJobId=" + str(array), shown, re.MULTILINE)
    assert len(tasks) == 2 and str(array) in tasks, shown  # the last task keeps the array's id
    times = {task: scontrol_times(task) for task in tasks}
    assert len({end for _, end in times.values()}) == 2, times
    for task, (start, end) in times.items():
        assert re.search(rf"^JobId={task} .* StartTime={start} EndTime={end} ", shown, re.MULTILINE)
