#!/usr/bin/env bash
# Installs what Herald's demo and tests need on Debian 12: the reference BGP daemons and tools from Debian,
# and the npm dependencies (which bring Node.js 24 for every npm script). Safe to run again.
#
# The tests and the demo run private BIRD/FRR/GoBGP/ExaBGP instances on their own addresses. Debian starts a system
# service when it installs one of these daemons; this script stops and disables only the services of the packages it
# has just installed itself — a daemon that was already installed (say, the BIRD of your lab router) is left alone.
set -euo pipefail
cd "$(dirname "$0")/.."

pkgs=(bird2 gobgpd exabgp frr bgpdump iproute2)
missing=()
for p in "${pkgs[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  echo "setup: installing ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  if command -v systemctl >/dev/null 2>&1 && [ -d /run/systemd/system ]; then
    for p in "${missing[@]}"; do
      case "$p" in
        bird2) svc=bird ;;
        frr | exabgp | gobgpd) svc=$p ;;
        *) continue ;;
      esac
      $SUDO systemctl disable --now "$svc" >/dev/null 2>&1 || true
    done
  fi
fi
npm ci --no-audit --no-fund --loglevel=error
