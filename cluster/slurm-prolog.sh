#!/bin/sh
# Slurm PrologSlurmctld: tell `mosaic serve` that a job started (POST /v1/running/start), so
# that it knows what runs now: job id, uid, the application the cli_filter found (the
# "mosaic_app=" word it wrote in the job's comment; none when the job bypassed the filter),
# start, time limit (UNLIMITED included), nodes and task count. The epilog (`mosaic epilog
# post`) tells it the job's end.
#
# Install it as PrologSlurmctld (once per job, on the controller) through a site wrapper
# that exports the settings, as for the epilog (cluster/README.md). POSIX sh and curl, no
# Python: it holds the job's start, so it must be quick (benchmarks/bench_slurm.py).
#
# Settings, from the environment:
#   MOSAIC_URL             base URL of the service                  [http://127.0.0.1:8420]
#   MOSAIC_TOKEN_FILE      write token file (SlurmUser's own, chmod 600)
#   MOSAIC_SPOOL_DIR       the epilog's private spool; posts the service could not take wait
#                          in the folder beside it, its name + .running [/var/spool/mosaic-epilog]
#   MOSAIC_PROLOG_TIMEOUT  seconds allowed for the post (then spooled)                   [1]
#   MOSAIC_PROLOG_DRAIN    spooled posts retried after a post the service took          [4]
#   MOSAIC_PROLOG_LOG      append messages to this file instead of syslog
# Slurm provides SLURM_JOB_ID, SLURM_JOB_UID, SLURM_JOB_COMMENT, SLURM_JOB_NODELIST and
# SLURM_JOB_NTASKS; the time limit (and task count) come from squeue (fixed fields: nothing
# a user named the job can pass for them).
#
# A post the service cannot take now (down, slow past the timeout, 503) is spooled as one
# file, ${MOSAIC_SPOOL_DIR}.running/EPOCH.JOB.1.start holding its query, and posted later by
# the next prologs (MOSAIC_PROLOG_DRAIN each), the next epilogs and `mosaic epilog drain`;
# posting one twice is harmless (the service answers "duplicate"). A post refused for what
# it is (409: another uid's job, or a start after its end; 422) is logged and dropped.
#
# Messages go to syslog (tag mosaic-prolog, `journalctl -t mosaic-prolog`) or to
# MOSAIC_PROLOG_LOG. A prolog must never fail a job nor drain a node: it always exits 0.

set -f # the comment's words are never globbed
PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export PATH
umask 077

job=${SLURM_JOB_ID:-}
url=${MOSAIC_URL:-http://127.0.0.1:8420}
url=${url%/}
timeout=${MOSAIC_PROLOG_TIMEOUT:-1}
drain=${MOSAIC_PROLOG_DRAIN:-4}
spool=${MOSAIC_SPOOL_DIR:-/var/spool/mosaic-epilog}
spool=${spool%/}.running

say() {
    if [ -n "${MOSAIC_PROLOG_LOG:-}" ]; then
        printf '%s mosaic-prolog: job %s: %s\n' "$(date +%FT%T%z)" "${job:-?}" "$*" >>"$MOSAIC_PROLOG_LOG"
    else
        logger -t mosaic-prolog ${MOSAIC_SYSLOG_SOCKET:+--socket "$MOSAIC_SYSLOG_SOCKET"} -- "job ${job:-?}: $*"
    fi
}

token=
if [ -n "${MOSAIC_TOKEN_FILE:-}" ] && ! read -r token <"$MOSAIC_TOKEN_FILE"; then
    [ -n "$token" ] || say "cannot read the token file $MOSAIC_TOKEN_FILE"
fi

# post KIND QUERY: sets $code (000: no answer) and $answer (the body).
post() {
    answer=$(printf 'Authorization: Bearer %s\n' "$token" |
        curl --silent --globoff --max-time "$timeout" -X POST -H @- -w '\n%{http_code}' \
            "$url/v1/running/$1?$2" 2>/dev/null)
    code=${answer##*
}
    answer=${answer%"$code"}
    case $code in [0-9][0-9][0-9]) ;; *) code=000 ;; esac
}

# Whether the service could not take it now (the post waits in the spool), by status.
later() {
    case $1 in 000 | 401 | 403 | 408 | 429 | 502 | 503 | 504) return 0 ;; esac
    return 1
}

keep() { # keep KIND QUERY EPOCH: spool the post, atomically
    if { [ -d "$spool" ] || mkdir -p "$spool"; } && [ ! -L "$spool" ] && [ -O "$spool" ] &&
        printf '%s\n' "$2" >"$spool/.partial.$$" && mv -f "$spool/.partial.$$" "$spool/$3.$job.1.$1"; then
        say "$1 kept in the spool: ${4:-no answer}"
    else
        rm -f "$spool/.partial.$$" 2>/dev/null
        say "$1 lost: ${4:-no answer}, and the spool $spool failed"
    fi
}

retry_spooled() { # up to $drain spooled posts, oldest first; stop at one the service cannot take
    [ "$drain" -gt 0 ] 2>/dev/null && [ -d "$spool" ] && [ -O "$spool" ] || return 0
    set +f
    set -- "$spool"/[0-9]*.start "$spool"/[0-9]*.end
    set -f
    [ -e "$1" ] || [ -e "$2" ] || [ "$#" -gt 2 ] || return 0 # nothing spooled: no fork
    left=$drain
    for entry in $(printf '%s\n' "$@" | sort); do
        [ "$left" -gt 0 ] || break
        [ -f "$entry" ] || continue
        taken="$entry.taken.$$"
        mv "$entry" "$taken" 2>/dev/null || continue # another prolog or epilog took it
        read -r query <"$taken" || query=
        kind=${entry##*.}
        post "$kind" "$query"
        if later "$code"; then
            mv "$taken" "$entry"
            return 0
        fi
        rm -f "$taken"
        say "spooled $kind ${entry##*/}: $code $(printf '%s' "$answer" | head -c 200)"
        left=$((left - 1))
    done
}

main() {
    uid=${SLURM_JOB_UID:-}
    case $job in '' | *[!0-9]*)
        say "SLURM_JOB_ID is not a job id: nothing posted"
        return
        ;;
    esac
    case $uid in '' | *[!0-9]*)
        say "SLURM_JOB_UID is not a uid: nothing posted"
        return
        ;;
    esac
    start=$(date +%s)
    query="job_id=$job&uid=$uid&start=$start"
    app=
    for word in ${SLURM_JOB_COMMENT:-}; do
        case $word in mosaic_app=*) app=${word#mosaic_app=} ;; esac
    done
    case $app in
    '') say "no mosaic_app= in the job's comment (the cli_filter did not run): posted without application" ;;
    *[!A-Za-z0-9/._~%-]*) say "the comment's mosaic_app= is not the cli_filter's encoding: posted without application" ;;
    *) query="$query&application=$app" ;;
    esac
    nodes=${SLURM_JOB_NODELIST:-}
    case $nodes in '' | *[!A-Za-z0-9._,[\]-]*) ;; *) query="$query&nodes=$nodes" ;; esac
    read -r limit tasks <<EOF
$(timeout 5 squeue --noheader --jobs="$job" --Format=TimeLimit:32,NumTasks:12 2>/dev/null)
EOF
    case ${limit:-} in '' | *[!A-Za-z0-9:-]*) say "no time limit from squeue: posted as unknown" ;; *) query="$query&time_limit=$limit" ;; esac
    case ${tasks:-} in '' | *[!0-9]* | 0) tasks=${SLURM_JOB_NTASKS:-} ;; esac # the prep plugin's
    case ${tasks:-} in '' | *[!0-9]* | 0) ;; *) query="$query&tasks=$tasks" ;; esac
    post start "$query"
    if later "$code"; then
        keep start "$query" "$start" "service answered $code"
        return
    fi
    case $code in
    2??) ;;
    *) say "start refused: $code $(printf '%s' "$answer" | head -c 300)" ;;
    esac
    retry_spooled
}

main
exit 0
