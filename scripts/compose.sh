#!/usr/bin/env bash
# The docker-compose.yml lab (BIRD and two Herald nodes) with plain podman, where `podman compose` is missing or
# cannot run the file (Debian 12: podman 4.3 has none, podman-compose 1.0.3 ignores the network's subnet and the
# services' addresses): scripts/compose.ts, as root, with scripts/containers.conf (runc, cgroupfs, no default rlimits)
# as scripts/image.sh uses it. Build the images first: sudo bash scripts/image.sh.
#
# Usage: scripts/compose.sh up|down|ps [-p PROJECT]      (PROJECT default: the clone's folder name)
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "$(id -u)" -ne 0 ]; then exec sudo bash "$0" "$@"; fi
export CONTAINERS_CONF=$PWD/scripts/containers.conf
exec "$PWD/node_modules/node/bin/node" "$PWD/scripts/compose.ts" "$@"
