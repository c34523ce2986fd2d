#!/usr/bin/env bash
# Installs what Herald's demo and tests need on Debian 12: the reference BGP daemons and tools from Debian,
# and the npm dependencies (which bring Node.js 24 for every npm script). Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."

pkgs=(bird2 gobgpd exabgp frr bgpdump iproute2)
missing=()
for p in "${pkgs[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
# Debian starts these daemons as system services on install; Herald's tests run private instances only.
for svc in bird frr exabgp gobgpd; do
  if command -v systemctl >/dev/null 2>&1; then systemctl disable --now "$svc" >/dev/null 2>&1 || true; fi
done
npm ci --no-audit --no-fund
