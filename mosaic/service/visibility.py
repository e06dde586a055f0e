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
    """A stored load (:func:`mosaic.corpus.timeline.job_load`) under the rule."""
    return {
        **{k: v for k, v in load.items() if k != "others"},
        "others": [shown_other(o, operator, uid) for o in load["others"]],
    }
