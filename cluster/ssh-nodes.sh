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
# ~/.config/mosaic/node-secret) must be readable on each host by you alone: a
# shared home does it. A host without it is refused before anything starts there.
# The node's PID is kept in $MOSAIC_NODE_DIR/dispynode.pid on each host.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
action="${1:?usage: $0 start|stop HOST...}"; shift
cpus="${CPUS:-0}"
port="${PORT:-9700}"
venv="${MOSAIC_VENV:-$here/../.venv}"
secret=""
if [ -n "${MOSAIC_NODE_SECRET_FILE:-}" ]; then
  secret="MOSAIC_NODE_SECRET_FILE=$(printf %q "$MOSAIC_NODE_SECRET_FILE")"
fi
for host in "$@"; do
  case "$action" in
    start)
      ssh "$host" "set -e; $secret '$venv/bin/python' -m mosaic.corpus.node --check; \
        d=\${TMPDIR:-/tmp}/mosaic-dispynode-\$USER; mkdir -p \$d; \
        $secret MOSAIC_VENV='$venv' MOSAIC_NODE_DIR=\$d nohup '$here/start-node.sh' \
        \"\$(hostname -I | awk '{print \$1}')\" $cpus $port > \$d/dispynode.log 2>&1 < /dev/null & \
        echo \$! > \$d/dispynode.pid"
      echo "started dispynode on $host" ;;
    stop)
      ssh "$host" "d=\${TMPDIR:-/tmp}/mosaic-dispynode-\$USER; \
        kill \$(cat \$d/dispynode.pid) && rm -f \$d/dispynode.pid"
      echo "stopped dispynode on $host" ;;
    *) echo "unknown action $action (start|stop)" >&2; exit 2 ;;
  esac
done
