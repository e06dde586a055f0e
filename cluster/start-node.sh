#!/usr/bin/env bash
# Start one dispynode on this machine for `mosaic run --nodes`.
#
#   cluster/start-node.sh [ADDRESS] [CPUS] [PORT]
#
# ADDRESS: the address other machines reach this one on (default: first
# address of `hostname -I`); CPUS: default all; PORT: dispynode's -p
# (default 9700; it listens on PORT+1, `mosaic run` on PORT).
# Runs in the foreground; stop with Ctrl-C (or kill its PID).
# MOSAIC_VENV: the project's virtualenv (default: .venv beside this folder).
# MOSAIC_NODE_SECRET_FILE: the nodes' secret (default ~/.config/mosaic/node-secret,
# `node_secret_file` in mosaic/config.py): readable by you alone, 16+ characters.
# Without it the node is not started (exit 2): a dispynode without a secret
# runs whatever any client that reaches its port sends it. The secret reaches
# dispynode in memory, never on a command line (mosaic/corpus/node.py).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
venv="${MOSAIC_VENV:-$here/../.venv}"
address="${1:-$(hostname -I | awk '{print $1}')}"
cpus="${2:-0}"
port="${3:-9700}"
workdir="${MOSAIC_NODE_DIR:-${TMPDIR:-/tmp}/mosaic-dispynode-$USER}"
"$venv/bin/python" -m mosaic.corpus.node --check  # refuse early, with the fix
mkdir -p "$workdir"
echo "dispynode on $address:$((port + 1)) (cpus: ${cpus/#0/all}), files in $workdir" >&2
exec "$venv/bin/python" -m mosaic.corpus.node -- "$venv/bin/dispynode.py" --cpus "$cpus" -i "$address" \
    -p "$port" --daemon --clean --dest_path_prefix "$workdir"
