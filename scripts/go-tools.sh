# Shared by the scripts that build test-time tools from their Go modules (scripts/helm.sh, scripts/control-plane.sh):
# the tools cache outside the git clone, the Go toolchain to use, and why it cannot build. Source it; set
# GO_MIN_MINOR first (the oldest go1.N that builds the pinned versions).
#
#   ${HERALD_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/herald/tools}/<name>-<version>

CACHE=${HERALD_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/herald/tools}

GO=${GO:-$(command -v go || { [ -x /usr/local/go/bin/go ] && echo /usr/local/go/bin/go; } || true)}
# The installed toolchain only: never fetch another one behind the caller's back.
export GOTOOLCHAIN=${GOTOOLCHAIN:-local}
export CGO_ENABLED=0

# Prints why Go cannot build the pinned versions (empty when it can).
go_problem() {
  if [ -z "$GO" ]; then
    echo "Go is not installed (need go1.$GO_MIN_MINOR or newer at /usr/local/go or on PATH)"
    return
  fi
  local v minor
  v=$("$GO" env GOVERSION 2>/dev/null || true)
  minor=${v#go1.}
  minor=${minor%%.*}
  if ! [[ "$minor" =~ ^[0-9]+$ ]] || [ "$minor" -lt "$GO_MIN_MINOR" ]; then
    echo "Go '$v' at $GO is too old (need go1.$GO_MIN_MINOR or newer)"
  fi
}
