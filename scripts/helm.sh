#!/usr/bin/env bash
# Builds the helm binary that the chart tests (test/deploy/helm.test.ts) run, from its Go module at a pinned version
# through the Go module proxy (Debian ships no helm; nothing prebuilt is downloaded, nothing is vendored). The binary
# lands in the tools cache outside the git clone (shared by every test tool built from Go), so a fresh clone on the
# same machine (CI) reuses it:
#
#   ${HERALD_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/herald/tools}/helm-<version>
#
# Usage:
#   scripts/helm.sh build   build it when missing (reuses it when present), print the build time
#   scripts/helm.sh path    print its path; exit 3 when it is not built, 4 when Go is missing
#   scripts/helm.sh check   exit 0 when Go can build it (prints the Go version), 4 when it cannot
#
# Helm 4 (the maintained major line; charts with apiVersion v2 render the same under Helm 3). Needs Go >= 1.26.
# The build runs under `nice -n 10` with at most 2 jobs.
set -euo pipefail

HELM_VERSION=v4.3.1     # helm.sh/helm/v4
GO_MIN_MINOR=26         # go1.26 or newer

# shellcheck source=scripts/go-tools.sh
. "$(dirname "$0")/go-tools.sh"
HELM_BIN=$CACHE/helm-$HELM_VERSION

build() {
  local problem
  problem=$(go_problem)
  if [ -n "$problem" ]; then
    echo "helm: cannot build: $problem" >&2
    exit 4
  fi
  mkdir -p "$CACHE"
  exec 9>"$CACHE/.helm-build.lock"
  flock 9 # one build at a time per cache folder (CI and a developer on the same machine)
  if [ -x "$HELM_BIN" ]; then
    echo "helm: reusing $HELM_BIN ($("$HELM_BIN" version --short 2>/dev/null || echo '?'))"
    return
  fi
  local start=$SECONDS
  # A script-level variable, not a local: the EXIT trap runs after build() has returned, and under `set -u` a local
  # would then be unset and fail the script after a good build.
  build_dir=$(mktemp -d "$CACHE/.helm-build.XXXXXX")
  trap 'rm -rf "$build_dir"' EXIT
  echo "helm: building $HELM_VERSION (helm.sh/helm/v4/cmd/helm) with $("$GO" env GOVERSION)"
  GOBIN=$build_dir nice -n 10 "$GO" install -p 2 -trimpath \
    -ldflags="-s -w -X helm.sh/helm/v4/internal/version.version=$HELM_VERSION" \
    "helm.sh/helm/v4/cmd/helm@$HELM_VERSION"
  mv "$build_dir/helm" "$HELM_BIN"
  echo "helm: built $HELM_BIN in $((SECONDS - start)) s ($("$HELM_BIN" version --short))"
}

case "${1:-}" in
  build) build ;;
  path)
    problem=$(go_problem)
    if [ -x "$HELM_BIN" ]; then echo "$HELM_BIN"
    elif [ -n "$problem" ]; then echo "helm: $problem" >&2; exit 4
    else echo "helm: $HELM_BIN is not built (run: bash scripts/helm.sh build)" >&2; exit 3
    fi ;;
  check)
    problem=$(go_problem)
    if [ -n "$problem" ]; then echo "helm: $problem" >&2; exit 4; fi
    "$GO" env GOVERSION ;;
  *) echo "usage: scripts/helm.sh build|path|check" >&2; exit 2 ;;
esac
