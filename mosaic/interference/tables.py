"""The store tables of SPEC 3.11 (no heavy import: mosaic.corpus.store takes them)."""

APP_CONTENTION = """
CREATE TABLE IF NOT EXISTS app_contention (
    group_key TEXT PRIMARY KEY, label TEXT, n INTEGER, rho REAL, p REAL, q REAL, slope REAL,
    slope_lo REAL, slope_hi REAL, traits TEXT, body TEXT, computed_at REAL);
"""
RUN_CONTENTION = """
CREATE TABLE IF NOT EXISTS run_contention (
    run INTEGER PRIMARY KEY, group_key TEXT, slowdown REAL, slow INTEGER, cause TEXT, computed_at REAL);
"""
LABEL_CONFLICTS = """
CREATE TABLE IF NOT EXISTS label_conflicts (
    victim TEXT, aggressor TEXT, coef REAL, lo REAL, hi REAL, runs INTEGER, conflicting INTEGER,
    reason TEXT, computed_at REAL, PRIMARY KEY (victim, aggressor)) WITHOUT ROWID;
"""
SCHEMA = APP_CONTENTION + RUN_CONTENTION + LABEL_CONFLICTS
NEEDED = ("run_performance", "run_load", "run_overlaps")
DROP_RUNS_SQL = "DELETE FROM run_contention WHERE run IN ({runs})"  # prune's one line (store._drop_runs)
