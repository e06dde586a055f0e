#!/usr/bin/env bash
# Example Slurm epilog: post a finished job's Darshan log(s) to `mosaic serve`,
# so that schedulers can look the job and its application up right away.
#
# Install it as EpilogSlurmctld (runs once per job, on the controller, which
# must see DARSHAN_LOGDIR), or as Epilog (runs on every node of the job; the
# service counts a log posted twice only once, but the work is repeated).
#
# Settings, from the environment (e.g. exported by a wrapper):
#   DARSHAN_LOGDIR        root of Darshan's log tree (YEAR/MONTH/DAY/...)  [required]
#   MOSAIC_URL            base URL of the service          [http://127.0.0.1:8420]
#   MOSAIC_TOKEN_FILE     write token file (recording in the store needs it, loopback
#                         or not; chmod 600)
#   MOSAIC_EPILOG_DAYS    day folders to search, back from today (a job's log sits
#                         under its start day)                             [2]
#   MOSAIC_EPILOG_TIMEOUT seconds allowed for each post                     [10]
# Slurm provides SLURM_JOB_ID and SLURM_JOB_USER.
#
# An epilog must never fail a job or drain a node: every problem is reported on
# stderr (Slurm logs it) and the script always exits 0.

set -u

say() { echo "mosaic-epilog: job ${SLURM_JOB_ID:-?}: $*" >&2; }

main() {
    local job="${SLURM_JOB_ID:-}" user="${SLURM_JOB_USER:-}"
    local logdir="${DARSHAN_LOGDIR:-}" url="${MOSAIC_URL:-http://127.0.0.1:8420}"
    local days="${MOSAIC_EPILOG_DAYS:-2}" timeout="${MOSAIC_EPILOG_TIMEOUT:-10}"
    if [[ -z "$job" || -z "$user" ]]; then
        say "SLURM_JOB_ID and SLURM_JOB_USER must be set"; return
    fi
    if [[ -z "$logdir" || ! -d "$logdir" ]]; then
        say "DARSHAN_LOGDIR '${logdir}' is not a directory"; return
    fi

    # Darshan names a log USER_EXE_idJOBID_MONTH-DAY-SECONDS-HASH_N.darshan in
    # LOGDIR/YEAR/MONTH/DAY (no zero padding), the day the job started.
    local day folders=()
    for ((day = 0; day < days; day++)); do
        folders+=("$logdir/$(date -d "-$day day" +%Y/%-m/%-d)")
    done
    local logs=()
    mapfile -t logs < <(find "${folders[@]}" -maxdepth 1 -type f \
        -name "${user}_*_id${job}_*.darshan" 2>/dev/null | sort)
    if [[ ${#logs[@]} -eq 0 ]]; then
        say "no Darshan log under ${folders[*]}"; return
    fi

    local log status
    for log in "${logs[@]}"; do
        status=$(post "$log" "$url" "$timeout")
        case "$status" in
            200) say "categorized $(basename "$log")" ;;
            *) say "$(basename "$log"): service answered ${status:-nothing}" ;;
        esac
    done
}

# POST one log with ?store=true; prints the HTTP status. The token travels on
# stdin (-H @-), never on a command line that `ps` would show.
post() {
    local log="$1" url="$2" timeout="$3" header=""
    if [[ -n "${MOSAIC_TOKEN_FILE:-}" ]]; then
        header="Authorization: Bearer $(<"$MOSAIC_TOKEN_FILE")"
    fi
    printf '%s\n' "$header" | curl --silent --output /dev/null --write-out '%{http_code}' \
        --max-time "$timeout" -H @- -H "Content-Type: application/octet-stream" \
        --data-binary "@$log" "$url/v1/categorize?store=true"
}

main
exit 0
