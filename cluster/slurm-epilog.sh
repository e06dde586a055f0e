#!/usr/bin/env bash
# Slurm epilog: post a finished job's Darshan log(s) to `mosaic serve` (`mosaic epilog
# post`), so that schedulers can look the job and its application up right away; what the
# service cannot take now (down, slow, 503) waits in a spool, posted by the next job's
# epilog or by `mosaic epilog drain`.
#
# Install it as EpilogSlurmctld (runs once per job, on the controller, which must read
# DARSHAN_LOGDIR); as a per-node Epilog it works too (a log posted twice counts once).
#
# Settings, from the environment (exported by a wrapper: Slurm gives an epilog no other):
#   DARSHAN_LOGDIR         root of Darshan's log tree (YEAR/MONTH/DAY/...)       [required]
#   MOSAIC_URL             base URL of the service                  [http://127.0.0.1:8420]
#   MOSAIC_TOKEN_FILE      write token file (the epilog user's own, chmod 600)
#   MOSAIC_SPOOL_DIR       private folder of the posts to retry  [/var/spool/mosaic-epilog]
#   MOSAIC_DARSHAN_UID     uid(s) the site's Darshan writes logs as, if not the job's user
#   MOSAIC_EPILOG_TIMEOUT  seconds allowed for each post                              [10]
#   MOSAIC_EPILOG_LOG      append messages to this file instead of syslog
#   MOSAIC_BIN             the mosaic command      [../.venv/bin/mosaic beside this script]
# Slurm provides SLURM_JOB_ID, SLURM_JOB_USER and SLURM_JOB_UID; the start time comes from
# scontrol (or SLURM_JOB_START_TIME where Slurm sets it).
#
# slurmctld keeps nothing an EpilogSlurmctld prints: every message goes to syslog (tag
# mosaic-epilog, `journalctl -t mosaic-epilog`) or to MOSAIC_EPILOG_LOG. An epilog must
# never fail a job or drain a node: the script always exits 0.

set -u
# Slurm runs an epilog with no PATH at all.
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
umask 077

here=$(dirname "$(readlink -f "$0")")
mosaic=${MOSAIC_BIN:-$here/../.venv/bin/mosaic}

report() {
    if [[ -n "${MOSAIC_EPILOG_LOG:-}" ]]; then
        local line
        while IFS= read -r line; do
            printf '%s mosaic-epilog: %s\n' "$(date +%FT%T%z)" "$line"
        done >>"$MOSAIC_EPILOG_LOG"
    else
        logger -t mosaic-epilog ${MOSAIC_SYSLOG_SOCKET:+--socket "$MOSAIC_SYSLOG_SOCKET"}
    fi
}

{
    if [[ -x "$mosaic" ]]; then
        "$mosaic" epilog post
    else
        echo "job ${SLURM_JOB_ID:-?}: no mosaic command at $mosaic (set MOSAIC_BIN)"
    fi
} 2>&1 | report
exit 0
