#!/usr/bin/env bash
# The address other machines reach this one at, for a dispynode to listen on.
#
#   cluster/node-address.sh [PEER]
#
# With PEER (an IPv4 address of the machine that runs `mosaic run`), the source
# address of this machine's route to PEER: the interface that faces it, whatever
# else the machine has (a docker bridge, a second network listed first by
# `hostname -I`); on PEER itself, PEER. Without PEER, or when no route or only a
# loopback one is found: the first address of `hostname -I`.
set -euo pipefail
address=""
if [ -n "${1:-}" ]; then
  address=$(ip -o route get "$1" 2>/dev/null | sed -n 's/.* src \([0-9.]*\).*/\1/p') || true
fi
case "$address" in "" | 127.*) address=$(hostname -I | awk '{print $1}') ;; esac
echo "$address"
