"""`mosaic apps` and ``GET /v1/applications`` without ``app``: the same page from a store
file, a results folder and a real server (token rules as for lookups); `mosaic lookup`
with a bare name lists the matching paths; a one-run profile does not claim a stability."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from mosaic.corpus.store import Store
from mosaic.service.commands import apps, lookup
from mosaic_testing.stored import PERIODIC, trace

from .conftest import TOKEN, launch, stop_server, wait_ready, write_secret

LMP, GMX, HOME_GMX = "/bin/lmp", "/opt/gromacs/bin/gmx_mpi", "/home/u7/gmx_mpi"


def stored_runs():
    """(42, lmp): 3 runs, periodic in 2 with periods 100 and 300 (class 2); (42, gmx): 1 run,
    periodic every 50 s (class 1); (7, gmx): 2 runs, not periodic."""
    specs = [
        (42, LMP, 1e9, 100.0),
        (42, LMP, 4e9, 300.0),
        (42, LMP, 2e9, None),
        (42, GMX, 8e9, 50.0),
        (7, HOME_GMX, 1e9, None),
        (7, HOME_GMX, 1e9, None),
    ]
    return [
        trace(
            f"run{i}",
            nbytes,
            period and (period, 0.1, 1e6),
            categories=PERIODIC if period else ["write_on_end"],
            job_id=str(i),
            uid=uid,
            application=app,
        )
        for i, (uid, app, nbytes, period) in enumerate(specs)
    ]


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    """A results folder holding a store of the runs above."""
    folder = tmp_path_factory.mktemp("results")
    with Store(folder / "store.sqlite") as store:
        for result in stored_runs():
            store.record(result)
    return folder


@pytest.fixture(scope="module")
def listing_server(results, tmp_path_factory):
    started = launch(tmp_path_factory.mktemp("listing"), TOKEN, store=results / "store.sqlite")
    try:
        yield wait_ready(started)
    finally:
        stop_server(started)


@pytest.fixture(scope="module")
def token_file(tmp_path_factory):
    return str(write_secret(tmp_path_factory.mktemp("client") / "token", TOKEN))


def names(answer):
    return [(item["uid"], item["application"]) for item in answer["applications"]]


def test_the_endpoint_lists_filters_sorts_and_pages(listing_server):
    with listing_server.client() as client:
        every = client.get("/v1/applications").json()
        assert (every["total"], every["sort"], every["offset"], every["limit"]) == (3, "runs", 0, 50)
        assert names(every) == [(42, LMP), (7, HOME_GMX), (42, GMX)]  # 3, 2, 1 runs
        lmp = every["applications"][0]
        assert (lmp["period_class"], lmp["period_direction"], lmp["heaviest_bytes"]) == (2, "write", 4e9)
        assert lmp["label_shares"]["write_periodic"] == pytest.approx(2 / 3)
        by_bytes = client.get("/v1/applications", params={"sort": "bytes"}).json()
        assert names(by_bytes) == [(42, GMX), (42, LMP), (7, HOME_GMX)]  # 8, 4, 1 GB
        page = client.get("/v1/applications", params={"sort": "period_class", "offset": 1, "limit": 1}).json()
        assert (page["total"], names(page)) == (3, [(42, GMX)])  # classes 2, 1, none
        found = client.get("/v1/applications", params={"uid": 42, "match": "gmx"}).json()
        assert names(found) == [(42, GMX)]
        periodic = client.get("/v1/applications", params={"periodic": "false"}).json()
        assert names(periodic) == [(7, HOME_GMX)]
        labelled = client.get("/v1/applications", params={"label": "write_on_end", "sort": "app"}).json()
        assert names(labelled) == [(42, LMP), (7, HOME_GMX)]
        # with app, the lookup as before
        one = client.get("/v1/applications", params={"uid": 42, "app": LMP}).json()
        assert one["runs"] == 3 and one["profile"]["period_class"] == 2


@pytest.mark.parametrize(
    "params, detail",
    [
        ({"sort": "size"}, "sort by 'size'"),
        ({"label": "often"}, "label 'often'"),
        ({"app": LMP}, "app needs uid"),
        ({"limit": 0}, None),
        ({"limit": 1001}, None),
        ({"offset": -1}, None),
        ({"offset": 1 << 63}, "0 <= offset <= 9223372036854775807"),  # SQLite's int64: a 500 before
    ],
)
def test_bad_parameters_are_422(listing_server, params, detail):
    with listing_server.client() as client:
        response = client.get("/v1/applications", params=params)
    assert response.status_code == 422 and response.json()["error"] == "invalid_request"
    if detail:
        assert detail in response.json()["detail"]


def test_the_list_needs_the_token_as_lookups_do(listing_server):
    with listing_server.client(token=None) as client:
        assert client.get("/v1/applications").status_code == 401
        assert client.get("/v1/applications", params={"uid": 42, "app": LMP}).status_code == 401
    with listing_server.client(token="wrong-token-of-enough-length") as client:
        assert client.get("/v1/applications").status_code == 401


def test_the_command_reads_a_folder_a_store_and_a_server_alike(results, listing_server, token_file):
    args = ["--sort", "bytes", "--json"]
    folder = CliRunner().invoke(apps, [str(results), *args])
    store = CliRunner().invoke(apps, ["--store", str(results / "store.sqlite"), *args])
    served = CliRunner().invoke(apps, ["--server", listing_server.url, "--token-file", token_file, *args])
    assert folder.exit_code == store.exit_code == served.exit_code == 0, served.output
    assert json.loads(folder.output) == json.loads(store.output) == json.loads(served.output)
    assert names(json.loads(served.output)) == [(42, GMX), (42, LMP), (7, HOME_GMX)]


def test_the_command_prints_a_table_and_exits_1_when_nothing_matches(results):
    shown = CliRunner().invoke(apps, [str(results), "--sort", "write_periodic", "--limit", "2"])
    assert shown.exit_code == 0, shown.output
    lines = [" ".join(line.split()) for line in shown.output.splitlines()]
    assert lines[0] == "uid runs heaviest run's bytes period write_periodic application"
    assert lines[2:] == [
        # shares 1, 2/3, 0; one notation for the period: 50 s and 200 s are both minutes
        "42 1 8 GB write, minute: 30 s-30 min (median 50 s) 100% /opt/gromacs/bin/gmx_mpi",
        "42 3 4 GB write, minute: 30 s-30 min (median 3.33 min) 67% /bin/lmp",
        "applications 1-2 of 3 (by write_periodic); --offset 2 for the next",
    ]
    last = CliRunner().invoke(apps, [str(results), "--offset", "2"])
    assert last.output.splitlines()[-1] == "applications 3-3 of 3 (by runs)"
    pairs = CliRunner().invoke(apps, [str(results), "--pairs", "--sort", "uid"])
    assert pairs.output == f"7\t{HOME_GMX}\n42\t{LMP}\n42\t{GMX}\n"
    none = CliRunner().invoke(apps, [str(results), "--uid", "9"])
    assert (none.exit_code, none.output) == (1, "no application matches\n")
    farthest = CliRunner().invoke(apps, [str(results), "--offset", str((1 << 63) - 1)])
    assert (farthest.exit_code, farthest.output) == (0, "no application on this page: 3 match\n")


def test_the_command_refuses_bad_usage(results, listing_server, tmp_path):
    both = CliRunner().invoke(apps, [str(results), "--server", listing_server.url])
    assert both.exit_code == 2 and "give exactly one of OUT, --store and --server" in both.output
    neither = CliRunner().invoke(apps, [])
    assert neither.exit_code == 2
    not_a_run = CliRunner().invoke(apps, [str(tmp_path)])
    assert not_a_run.exit_code == 2 and "store.sqlite not found" in not_a_run.output
    too_far = CliRunner().invoke(apps, [str(results), "--offset", str(1 << 63)])  # a traceback before
    assert too_far.exit_code == 2 and "0 <= offset <= 9223372036854775807" in too_far.output
    bad_sort = CliRunner().invoke(apps, [str(results), "--sort", "size"])
    assert bad_sort.exit_code == 2 and "sort by 'size': choose from runs, bytes" in bad_sort.output
    unauthorized = CliRunner().invoke(apps, ["--server", listing_server.url])
    assert unauthorized.exit_code == 3 and "answered 401" in unauthorized.output
    down = CliRunner().invoke(apps, ["--server", "http://127.0.0.1:9"])
    assert down.exit_code == 3 and "cannot reach http://127.0.0.1:9" in down.output


@pytest.mark.parametrize("source", ["store", "server"])
def test_lookup_of_a_bare_name_lists_the_matching_paths(results, listing_server, token_file, source):
    where = (
        ["--store", str(results / "store.sqlite")]
        if source == "store"
        else ["--server", listing_server.url, "--token-file", token_file]
    )
    bare = CliRunner().invoke(lookup, ["--uid", "42", "--app", "gmx_mpi", *where])
    assert bare.exit_code == 1
    assert bare.output == (
        "no application 'gmx_mpi' for uid 42 in the store\ndid you mean:\n  --app /opt/gromacs/bin/gmx_mpi\n"
    )
    # another folder, the same name: the uid's path; another uid's path is not offered
    moved = CliRunner().invoke(lookup, ["--uid", "7", "--app", "/usr/bin/gmx_mpi", *where])
    assert moved.output.endswith("did you mean:\n  --app /home/u7/gmx_mpi\n")
    nothing = CliRunner().invoke(lookup, ["--uid", "7", "--app", "vasp", *where])
    assert nothing.output == "no application 'vasp' for uid 7 in the store\n"


def test_a_one_run_profile_does_not_claim_a_stability(results):
    one = CliRunner().invoke(lookup, ["--uid", "42", "--app", GMX, "--store", str(results / "store.sqlite")])
    assert one.exit_code == 0
    assert "stability unknown: one run, nothing to compare it with (its categories: " in one.output
    assert "stability 100%" not in one.output
    two = CliRunner().invoke(
        lookup, ["--uid", "7", "--app", HOME_GMX, "--store", str(results / "store.sqlite")]
    )
    assert "stability 100%: runs with the usual categories (write_on_end)" in two.output
