"""SPEC 4 trace objects as a store records them, built by hand (profiles, the listing)."""

UID, APP = 42, "/bin/lmp"
PERIODIC = ["write_periodic", "write_periodic_minute", "write_steady"]


def trace(
    file,
    write=0.0,
    periodic=None,
    run_time=100.0,
    start="2019-01-01T00:00:00Z",
    categories=("write_steady",),
    peak=10.0,
    job_id="1",
    fft_only=False,
    uid=UID,
    application=APP,
):
    """A SPEC 4 trace object; ``periodic`` = (period, busy fraction, bytes per occurrence) of
    the writes, found by mean shift (its one operation) or, with ``fft_only``, by the FFT."""
    periodicity = {}
    if periodic:
        period, busy, per_occurrence = periodic
        operation = {"period": period, "busy_fraction": busy, "bytes_per_occurrence": per_occurrence}
        periodicity = {
            "meanshift": {"periodic": not fft_only, "operations": [] if fft_only else [operation]},
            "fft": {"periodic": True, "period": period},
            "verdict": {"periodic": True, "period": period, "busy_fraction": busy, "source": "both"},
        }
    return {
        "file": file,
        "status": "ok",
        "job": {
            "uid": uid,
            "job_id": job_id,
            "application": application,
            "exe": f"{application} -in x",
            "run_time": run_time,
            "start": start,
        },
        "categories": list(categories),
        "read": {"bytes": 0.0, "periodicity": {}},
        "write": {"bytes": write, "periodicity": periodicity},
        "metadata": {"peak_per_second": peak},
    }
