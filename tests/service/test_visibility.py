"""The visibility rule of docs/security.md, by hand."""

from mosaic.service.visibility import ANOTHER_JOB, sentence, shown_load, shown_other

OTHER = {"job_id": "81", "group_key": "1001:/bin/ior", "bytes": 7e9, "share": 0.71}
LOAD = {
    "fs": "/scratch",
    "read_rate": 0.0,
    "write_rate": 861111.0,  # 3.1 GB/h
    "meta_rate": 0.0,
    "other_jobs": 14,
    "io_seconds": 40.0,
    "computed_at": 1.0,
    "others": [OTHER, {"job_id": "82", "group_key": "1002:/bin/x", "bytes": 3e9, "share": 0.29}],
}


def test_the_operator_sees_identities():
    assert shown_other(OTHER, operator=True, uid=None) == {
        "job": "81",
        "uid": 1001,
        "application": "/bin/ior",
        "bytes": 7e9,
        "share": 0.71,
        "own": False,
    }


def test_the_read_token_sees_another_job_and_its_share():
    assert shown_other(OTHER, operator=False, uid=None) == {
        "job": ANOTHER_JOB,
        "bytes": 7e9,
        "share": 0.71,
        "own": False,
    }
    assert shown_other(OTHER, operator=False, uid=1002)["job"] == ANOTHER_JOB


def test_the_callers_own_jobs_are_named_to_it():
    own = shown_other(OTHER, operator=False, uid=1001)
    assert own["job"] == "81" and own["own"] is True and own["application"] == "/bin/ior"


def test_the_sentence():
    read = shown_load(LOAD, operator=False, uid=None)
    assert (
        read["summary"]
        == "while it did I/O (40 s), 14 other jobs moved 3.1 GB/h on /scratch, 71% of it from one job"
    )
    assert "81" not in str(read)
    operator = shown_load(LOAD, operator=True, uid=None)
    assert operator["summary"].endswith("71% of it from job 81")
    alone = {**LOAD, "other_jobs": 0, "write_rate": 0.0, "others": []}
    assert sentence(alone, []) == "while it did I/O (40 s), no other job moved data on /scratch"
    half = {**LOAD, "others": [{**OTHER, "share": 0.49}]}
    assert sentence(half, shown_load(half, True, None)["others"]).endswith(
        "on /scratch"
    )  # no one job dominates
