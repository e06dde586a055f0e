#!/usr/bin/env bash
# Start (or stop) dispynode on several machines over ssh, one per host.
#
#   cluster/ssh-nodes.sh start HOST [HOST...]
#   cluster/ssh-nodes.sh stop  HOST [HOST...]
#
# Each host must see this repository and its .venv at the same path (a shared
# file system, the HPC norm) and the logs at the paths given to `mosaic run`
# (or use `mosaic run --ship-logs`). CPUS and PORT as in start-node.sh.
# The nodes' secret file (MOSAIC_NODE_SECRET_FILE, default
# ~/.config/mosaic/node-secret) must be a file of yours on each host that you
# alone may read: a shared home does it. A host without it is refused before
# anything starts there.
# Each start gets a fresh private folder on its host (mktemp -d: a fixed name in
# a shared /tmp could be created first by another user, and dispynode runs what
# it finds in its folder), ${TMPDIR:-/tmp}/mosaic-dispynode-$USER.XXXXXX, which
# holds the node's files (node/: start-node.sh takes only a new or empty folder),
# its log (dispynode.log) and its PID (dispynode.pid).
# `stop` stops the nodes of such folders that are yours and private, and removes
# the folders. The hosts run these functions with bash (`bash -s`).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
action="${1:?usage: $0 start|stop HOST...}"; shift
cpus="${CPUS:-0}"
port="${PORT:-9700}"
venv="${MOSAIC_VENV:-$here/../.venv}"

# On the host: check the secret, then start a node in a fresh private folder.
start_here() {
  local here="$1" venv="$2" cpus="$3" port="$4" folder
  if [ -n "$5" ]; then export MOSAIC_NODE_SECRET_FILE="$5"; fi
  "$venv/bin/python" -m mosaic.corpus.node --check
  folder=$(mktemp -d "${TMPDIR:-/tmp}/mosaic-dispynode-${USER:-$(id -un)}.XXXXXX")
  # setsid: the node leads a process group of its own (this shell has no job control, so
  # setsid does not fork and $! is the leader), which `stop` ends whole.
  MOSAIC_VENV="$venv" MOSAIC_NODE_DIR="$folder/node" setsid nohup "$here/start-node.sh" \
    "$(hostname -I | awk '{print $1}')" "$cpus" "$port" > "$folder/dispynode.log" 2>&1 < /dev/null &
  echo $! > "$folder/dispynode.pid"
}

# On the host: stop the node of each folder start_here made (one of yours, mode 700:
# no one else could have put a PID there), its whole process group (dispynode, its
# setup and job processes, their children): SIGTERM, SIGKILL to what is left after
# 10 s; then remove the folder.
stop_here() {
  local folder pid waited
  for folder in "${TMPDIR:-/tmp}/mosaic-dispynode-${USER:-$(id -un)}".*; do
    if [ -L "$folder" ] || [ ! -O "$folder" ] || [ "$(stat -c %a "$folder")" != 700 ] \
      || [ ! -f "$folder/dispynode.pid" ]; then
      continue
    fi
    pid=$(cat "$folder/dispynode.pid")
    kill -s TERM -- "-$pid" 2>/dev/null || true
    for ((waited = 0; waited < 60; waited++)); do
      kill -0 -- "-$pid" 2>/dev/null || break
      if [ "$waited" = 50 ]; then kill -s KILL -- "-$pid" 2>/dev/null || true; fi
      sleep 0.2
    done
    if kill -0 -- "-$pid" 2>/dev/null; then
      echo "dispynode $pid of $folder did not end even with SIGKILL: its folder is kept" >&2
    else
      rm -rf "$folder"
    fi
  done
}

secret_file="${MOSAIC_NODE_SECRET_FILE:-}"
for host in "$@"; do
  case "$action" in
    start)
      ssh "$host" bash -s <<< "set -eu; $(declare -f start_here)
start_here $(printf '%q ' "$here" "$venv" "$cpus" "$port" "$secret_file")"
      echo "started dispynode on $host" ;;
    stop)
      ssh "$host" bash -s <<< "set -eu; $(declare -f stop_here)
stop_here"
      echo "stopped dispynode on $host" ;;
    *) echo "unknown action $action (start|stop)" >&2; exit 2 ;;
  esac
done
