"""Dump what pydarshan reads from logs, for the reader's oracle tests.

Run as a script in a subprocess (pydarshan can crash the process):
``python pydarshan_oracle.py OUT.pkl LOG...`` writes {path: dump or error}.
"""

import pickle
import sys

import numpy as np

MODULES = ("POSIX", "STDIO", "MPI-IO")


def dump(path: str) -> dict:
    import darshan

    report = darshan.DarshanReport(path, read_all=True)
    out = {
        "job": dict(report.metadata["job"]),
        "exe": report.metadata["exe"],
        "mounts": list(report.mounts),
        "names": dict(report.name_records),
        "modules": {},
        "counter_names": {},
    }
    for mod in MODULES:
        if mod not in report.records:
            continue
        recs = report.records[mod].to_numpy()
        out["modules"][mod] = dict(
            ids=np.array([r["id"] for r in recs], dtype=np.uint64),
            ranks=np.array([r["rank"] for r in recs], dtype=np.int64),
            counters=np.array([r["counters"] for r in recs], dtype=np.int64),
            fcounters=np.array([r["fcounters"] for r in recs], dtype=np.float64),
        )
        out["counter_names"][mod] = report.counters[mod]
    for module, key in (("DXT_POSIX", "dxt"), ("DXT_MPIIO", "dxt_mpiio")):
        if module in report.records:
            out[key] = [
                (r["id"], r["rank"], is_write, s["offset"], s["length"], s["start_time"], s["end_time"])
                for r in report.records[module].to_numpy()
                for is_write, side in ((True, "write_segments"), (False, "read_segments"))
                for s in r[side]
            ]
    if "HEATMAP" in report.data["modules"]:
        # (API, rank, bin width, write bins, read bins), API as pydarshan names it.
        out["heatmaps"] = [
            (api, rank, h._bin_width_seconds, h._data["write"][rank], h._data["read"][rank])
            for api, h in report.heatmaps.items()
            for rank in sorted(h._ranks)
        ]
    return out


def main() -> None:
    result = {}
    for path in sys.argv[2:]:
        try:
            result[path] = dump(path)
        except Exception as exc:  # recorded, compared by the test
            result[path] = {"error": f"{type(exc).__name__}: {exc}"}
    with open(sys.argv[1], "wb") as fh:
        pickle.dump(result, fh)


if __name__ == "__main__":
    main()
