#!/usr/bin/env bash
# Builds the real Kubernetes control plane that test/control-plane/ runs against: etcd, kube-apiserver and
# kube-controller-manager, from their Go modules at pinned versions, through the Go module proxy. Nothing prebuilt is
# downloaded and nothing is vendored: a throw-away Go module in the cache folder requires the pinned release (with the
# `replace` lines that point k8s.io/kubernetes's staging modules at their matching v0.x tags) and `go build` compiles
# the commands. The binaries land in the cache folder outside the git clone, so a fresh clone on the same machine
# (CI) reuses them:
#
#   ${HERALD_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/herald/tools}/<name>-<version>
#
# Usage:
#   scripts/control-plane.sh build   build what is missing (reuses what is there), print the build time
#   scripts/control-plane.sh paths   print name=path lines; exit 3 when a binary is missing, 4 when Go is missing
#   scripts/control-plane.sh check   exit 0 when Go is installed (prints its version), 4 when it is not
#
# Needs Go >= 1.26 (the `go` line of k8s.io/kubernetes v1.37.2). Builds run under `nice -n 10` with at most 2 jobs.
set -euo pipefail

K8S_VERSION=v1.37.2      # k8s.io/kubernetes: kube-apiserver, kube-controller-manager
K8S_STAGING=v0.37.2      # its staging modules (k8s.io/api, apimachinery, apiserver, client-go, ...)
ETCD_VERSION=v3.7.3      # go.etcd.io/etcd/server/v3: etcd
GO_MIN_MINOR=26          # go1.26 or newer

# The staging modules k8s.io/kubernetes replaces with ./staging/src/k8s.io/<name> in its own go.mod.
STAGING=(api apiextensions-apiserver apimachinery apiserver cli-runtime client-go cloud-provider cluster-bootstrap
  code-generator component-base component-helpers controller-manager cri-api cri-client cri-streaming
  csi-translation-lib dynamic-resource-allocation endpointslice externaljwt kms kube-aggregator
  kube-controller-manager kube-proxy kube-scheduler kubectl kubelet metrics mount-utils pod-security-admission
  sample-apiserver sample-cli-plugin sample-controller streaming)

# shellcheck source=scripts/go-tools.sh
. "$(dirname "$0")/go-tools.sh"
ETCD_BIN=$CACHE/etcd-$ETCD_VERSION
APISERVER_BIN=$CACHE/kube-apiserver-$K8S_VERSION
KCM_BIN=$CACHE/kube-controller-manager-$K8S_VERSION

print_paths() {
  echo "etcd=$ETCD_BIN"
  echo "kube-apiserver=$APISERVER_BIN"
  echo "kube-controller-manager=$KCM_BIN"
  echo "k8s-version=$K8S_VERSION"
  echo "etcd-version=$ETCD_VERSION"
}

# Writes a throw-away module `dir` with go.mod requiring `require...` (module@version words) and, for Kubernetes, the
# staging replace lines.
write_module() {
  local dir=$1 with_staging=$2
  shift 2
  mkdir -p "$dir"
  {
    echo "module herald.test/control-plane-build"
    echo
    echo "go 1.$GO_MIN_MINOR"
    echo
    for r in "$@"; do echo "require ${r%@*} ${r#*@}"; done
    if [ "$with_staging" = yes ]; then
      echo
      echo "replace ("
      for s in "${STAGING[@]}"; do echo "	k8s.io/$s => k8s.io/$s $K8S_STAGING"; done
      echo ")"
    fi
  } >"$dir/go.mod"
}

build() {
  local problem
  problem=$(go_problem)
  if [ -n "$problem" ]; then
    echo "control-plane: cannot build: $problem" >&2
    exit 4
  fi
  mkdir -p "$CACHE"
  exec 9>"$CACHE/.build.lock"
  flock 9 # one build at a time per cache folder (CI and a developer on the same machine)

  local total_start=$SECONDS
  local ldver="-X k8s.io/component-base/version.gitVersion=$K8S_VERSION"
  ldver+=" -X k8s.io/component-base/version.gitMajor=$(echo "$K8S_VERSION" | sed -E 's/^v([0-9]+)\..*/\1/')"
  ldver+=" -X k8s.io/component-base/version.gitMinor=$(echo "$K8S_VERSION" | sed -E 's/^v[0-9]+\.([0-9]+)\..*/\1/')"
  ldver+=" -X k8s.io/component-base/version.gitTreeState=clean"

  if [ -x "$ETCD_BIN" ]; then
    echo "control-plane: reusing $ETCD_BIN"
  else
    local start=$SECONDS dir=$CACHE/build/etcd-$ETCD_VERSION
    echo "control-plane: building etcd $ETCD_VERSION (go.etcd.io/etcd/server/v3) with $("$GO" env GOVERSION)"
    write_module "$dir" no "go.etcd.io/etcd/server/v3@$ETCD_VERSION"
    (cd "$dir" && nice -n 10 "$GO" build -mod=mod -p 2 -trimpath -ldflags="-s -w" -o "$ETCD_BIN.tmp" go.etcd.io/etcd/server/v3)
    mv "$ETCD_BIN.tmp" "$ETCD_BIN"
    echo "control-plane: built etcd in $((SECONDS - start)) s"
  fi

  if [ -x "$APISERVER_BIN" ] && [ -x "$KCM_BIN" ]; then
    echo "control-plane: reusing $APISERVER_BIN and $KCM_BIN"
  else
    local start=$SECONDS dir=$CACHE/build/kubernetes-$K8S_VERSION
    echo "control-plane: building kube-apiserver and kube-controller-manager $K8S_VERSION (k8s.io/kubernetes, staging $K8S_STAGING) with $("$GO" env GOVERSION)"
    write_module "$dir" yes "k8s.io/kubernetes@$K8S_VERSION"
    mkdir -p "$dir/out"
    (cd "$dir" && nice -n 10 "$GO" build -mod=mod -p 2 -trimpath -ldflags="-s -w $ldver" -o out/ \
      k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager)
    mv "$dir/out/kube-apiserver" "$APISERVER_BIN"
    mv "$dir/out/kube-controller-manager" "$KCM_BIN"
    echo "control-plane: built kube-apiserver and kube-controller-manager in $((SECONDS - start)) s"
  fi
  echo "control-plane: build time $((SECONDS - total_start)) s (cache $CACHE)"
}

case "${1:-}" in
  build) build ;;
  paths)
    print_paths
    problem=$(go_problem)
    for b in "$ETCD_BIN" "$APISERVER_BIN" "$KCM_BIN"; do
      if [ ! -x "$b" ]; then
        [ -n "$problem" ] && { echo "reason=$problem" ; exit 4; }
        echo "reason=$b is not built: run scripts/control-plane.sh build"
        exit 3
      fi
    done
    ;;
  check)
    problem=$(go_problem)
    [ -z "$problem" ] || { echo "$problem"; exit 4; }
    "$GO" env GOVERSION
    ;;
  *)
    sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
    ;;
esac
