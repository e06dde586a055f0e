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
# `node_secret_file` in mosaic/config.py): a file of yours that you alone may read,
# 16+ characters. Without it the node is not started (exit 2): a dispynode without
# a secret runs whatever any client that reaches its port sends it. The secret
# reaches dispynode in memory, never on a command line (mosaic/corpus/node.py).
# MOSAIC_NODE_DIR: the node's files (dispynode runs what it finds there, so it must
# be a new or empty folder of yours alone: a folder of another user's, one others
# may enter or one that holds anything is refused with exit 2). Default: a fresh
# private folder, mktemp -d under ${TMPDIR:-/tmp}.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
venv="${MOSAIC_VENV:-$here/../.venv}"
address="${1:-$("$here/node-address.sh")}"
cpus="${2:-0}"
port="${3:-9700}"
"$venv/bin/python" -m mosaic.corpus.node --check  # refuse early, with the fix
workdir="${MOSAIC_NODE_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/mosaic-dispynode-${USER:-$(id -un)}.XXXXXX")}"
echo "dispynode on $address:$((port + 1)) (cpus: ${cpus/#0/all}), files in $workdir" >&2
exec "$venv/bin/python" -m mosaic.corpus.node --node-dir "$workdir" -- "$venv/bin/dispynode.py" \
    --cpus "$cpus" -i "$address" -p "$port" --daemon --clean
