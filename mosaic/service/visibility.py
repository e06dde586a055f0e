"""Who may see whom in an answer about concurrent jobs (docs/security.md, "Who may see whom").

The read token is no secret from the center's users (the submission filter carries it),
so an answer to it never names another user's job: another run is "another job", with its
bytes and share. The operator's token (the write token, which only the epilog and the
operator hold) sees every identity. A request that names its uid (``?uid=U``) sees its own
jobs named: the uid is the caller's claim, checked against nothing, so what it reveals is
kept to that uid's own job ids and executables, never another uid's.
"""

from __future__ import annotations

from typing import Any

ANOTHER_JOB = "another job"


def shown_other(other: dict[str, Any], operator: bool, uid: int | None) -> dict[str, Any]:
    """One other run of an overlap as the caller may see it: ``other`` has ``job_id``,
    ``group_key`` ("uid:application"), ``bytes`` and ``share``."""
    key = other.get("group_key") or ""
    owner, _, application = key.partition(":")
    own = uid is not None and owner == str(uid)
    if operator or own:
        return {
            "job": other.get("job_id"),
            "uid": int(owner) if owner.lstrip("-").isdigit() else None,
            "application": application or None,
            "bytes": other["bytes"],
            "share": other["share"],
            "own": own,
        }
    return {"job": ANOTHER_JOB, "bytes": other["bytes"], "share": other["share"], "own": False}


def shown_load(load: dict[str, Any], operator: bool, uid: int | None) -> dict[str, Any]:
    """A stored load (:func:`mosaic.corpus.timeline.job_load`) under the rule, with its sentence."""
    others = [shown_other(o, operator, uid) for o in load["others"]]
    return {
        **{k: v for k, v in load.items() if k != "others"},
        "others": others,
        "summary": sentence(load, others),
    }


def _rate(value: float) -> str:
    per_hour = value * 3600.0
    for scale, prefix in ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if per_hour >= scale:
            return f"{per_hour / scale:.2g} {prefix}B/h"
    return f"{per_hour:.2g} B/h"


def sentence(load: dict[str, Any], others: list[dict[str, Any]]) -> str:
    """E.g. "while it did I/O (5.2 s), 3 other jobs moved 97 GB/h on /scratch, 71 % of it from
    one job": the other jobs as the caller may see them."""
    fs, count = load["fs"], int(load["other_jobs"])
    io = float(load["io_seconds"])
    seconds = f"{io:,.0f} s" if io >= 100 else f"{io:.3g} s"
    if count == 0:
        return f"while it did I/O ({seconds}), no other job moved data on {fs}"
    moved = _rate(float(load["read_rate"]) + float(load["write_rate"]))
    jobs = "1 other job" if count == 1 else f"{count} other jobs"
    text = f"while it did I/O ({seconds}), {jobs} moved {moved} on {fs}"
    top = max(others, key=lambda o: o["share"], default=None)
    if top is not None and count > 1 and top["share"] >= 0.5:
        who = top["job"] if top["job"] != ANOTHER_JOB else "one job"
        text += f", {top['share']:.0%} of it from {'job ' + who if who != 'one job' else who}"
    return text
