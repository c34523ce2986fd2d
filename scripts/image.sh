#!/usr/bin/env bash
# Builds Herald's container image, and the BIRD image of docker-compose.yml, from Debian and npm packages only: no base
# image is pulled from anywhere. Reproducible: the same inputs give the same image digest.
#
#   herald  a root filesystem extracted from the Debian packages of deploy/image/debian-packages (mmdebstrap), the
#           Node.js 24 binary of the `node` npm package (the devDependency setup.sh installs, symbols stripped),
#           `npm ci --omit=dev` (pruned of what Node never loads: type declarations, source maps, docs, tests; without
#           LEFT_OUT below), the
#           application (the files git tracks under bin/ bgp/ src/ tools/) and Node's compile cache, filled at build
#           time through the entrypoint deploy/herald as the DaemonSet's user (uid 1000). Four layers, the ones that
#           change least first: Debian, Node, node_modules, the application.
#   bird    Debian's bird2, installed with its dependencies (mmdebstrap --variant=essential).
#
# Reproducible: every file time is SOURCE_DATE_EPOCH (default: the last commit's time), layers are tarred in sorted
# order with numeric owners, buildah commits with --timestamp, gzip is deterministic. The inputs are the git tree, the
# npm lockfile and the Debian packages the archive serves (their versions are in the SBOM); Node's V8 code cache is
# left out because its bytes differ on every run (deploy/warm-compile-cache.js --reproducible).
#
# Writes, in ${HERALD_IMAGE_OUT:-dist/image} (git ignores dist/):
#   IMAGE.oci.tar          the image as an OCI archive (gzip layers): load it with `podman load -i`, push it with
#                          `skopeo copy oci-archive:IMAGE.oci.tar docker://REGISTRY/herald:VERSION` (docs/operations.md)
#   IMAGE.digest           sha256:... of its manifest: the digest a registry serves it under after that copy
#   IMAGE.sbom.spdx.json   SPDX 2.3: every Debian package (and herald: the npm packages and Node) with its version
#   IMAGE.summary          digest, sizes and package counts (what .ci/run prints)
# and loads the image into the local podman storage as localhost/herald:VERSION (localhost/herald-bird:VERSION).
#
# Usage: scripts/image.sh [herald|bird|all]      (default all; as root, or it re-runs itself with sudo)
#        scripts/image.sh check                  exit 0 when this machine can build (prints why not otherwise)
#        scripts/image.sh pin [REPOSITORY]       the release step: the manifests take the image just built by digest
#                                                (scripts/image-pin.ts writes IMAGE.digest into deploy/kubernetes's
#                                                kustomization `images:` and the chart's `image.digest`; REPOSITORY,
#                                                default ghcr.io/herald-bgp/herald, where it was pushed; no root
#                                                needed; HERALD_DEPLOY_DIR edits another copy of deploy/)
#
# Caches outside the clone, in ${HERALD_IMAGE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/herald/image}: the downloaded
# .deb files and the pruned node_modules (per lockfile). Warm, a build takes well under a minute per image.
# podman and buildah run with a private containers.conf (scripts/containers.conf: runc, cgroupfs, no default rlimits),
# never the machine's.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

if [ "${1:-}" = pin ]; then
  OUT=${HERALD_IMAGE_OUT:-$ROOT/dist/image}
  [ -s "$OUT/herald.digest" ] || { echo "image pin: no $OUT/herald.digest: build the image first (sudo bash scripts/image.sh herald)" >&2; exit 1; }
  exec "$ROOT/node_modules/node/bin/node" "$ROOT/scripts/image-pin.ts" --digest "$(cat "$OUT/herald.digest")" \
    ${2:+--repository "$2"} --deploy "${HERALD_DEPLOY_DIR:-$ROOT/deploy}"
fi

if [ "$(id -u)" -ne 0 ]; then
  exec sudo --preserve-env=SOURCE_DATE_EPOCH,HERALD_IMAGE_OUT,HERALD_IMAGE_CACHE,XDG_CACHE_HOME,HOME bash "$0" "$@"
fi

export CONTAINERS_CONF=$ROOT/scripts/containers.conf
OUT=${HERALD_IMAGE_OUT:-$ROOT/dist/image}
CACHE=${HERALD_IMAGE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/herald/image}
PACKAGES=$ROOT/deploy/image/debian-packages
VERSION=$(sed -n 's/^  "version": "\(.*\)",$/\1/p' package.json | head -1)
NODE=$ROOT/node_modules/node/bin/node
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || echo 0)}
# Production dependencies the image leaves out (docs/decisions.md "The image leaves @kubernetes/client-node out"):
# client-node reads only the kubeconfigs whose credential plugins (exec, auth-provider) are not in the image either;
# in a pod Herald uses the ServiceAccount. About 34 MiB with the 71 packages only it needs. The SBOM lists what is in.
LEFT_OUT=(@kubernetes/client-node)
# Debian packages this script needs on the building machine.
TOOLS=(podman buildah mmdebstrap runc uidmap containernetworking-plugins skopeo binutils)

log() { echo "image: $*" >&2; }

# The apt sources file that names Debian 12 (the machine's own mirror): mmdebstrap pastes it into the build.
debian_sources() {
  local f
  for f in ${HERALD_DEBIAN_SOURCES:-/etc/apt/sources.list.d/debian.sources /etc/apt/sources.list}; do
    if [ -f "$f" ] && grep -q 'bookworm' "$f"; then echo "$f"; return; fi
  done
  echo "image: no apt sources for Debian 12 (bookworm) in /etc/apt/sources.list.d/debian.sources or /etc/apt/sources.list; set HERALD_DEBIAN_SOURCES to such a file" >&2
  return 1
}

# The packages of IMAGE in deploy/image/debian-packages, one per line.
packages_of() {
  sed -n "s/^$1:[[:space:]]*//p" "$PACKAGES" | tr -s ' \t' '\n' | sed '/^$/d'
}

install_tools() {
  local missing=() p
  for p in "${TOOLS[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
  if [ ${#missing[@]} -gt 0 ]; then
    log "installing ${missing[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  fi
}

# mmdebstrap VARIANT PACKAGES(comma-separated) TARGET_DIR: the .deb files are kept in the cache between builds.
debian_rootfs() {
  local variant=$1 include=$2 target=$3 sources
  sources=$(debian_sources)
  mkdir -p "$CACHE/debs"
  local hook=--customize-hook
  [ "$variant" = extract ] && hook=--extract-hook # the extract variant runs no customize hooks
  mmdebstrap --quiet --variant="$variant" --include="$include" --skip=download/empty --skip=essential/unlink \
    --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/locale/*' \
    --dpkgopt='path-exclude=/usr/share/info/*' --dpkgopt='path-exclude=/usr/share/doc/*' \
    --dpkgopt='path-include=/usr/share/doc/*/copyright' \
    --setup-hook='mkdir -p "$1"/var/cache/apt/archives/' \
    --setup-hook="sync-in $CACHE/debs /var/cache/apt/archives/" \
    "$hook=sync-out /var/cache/apt/archives $CACHE/debs" \
    "$hook=dpkg-query --admindir=\"\$1\"/var/lib/dpkg -W -f '\${Package}\\t\${Version}\\t\${Architecture}\\t\${source:Package}\\t\${source:Version}\\n' >\"\$1\"/../debian-packages.tsv 2>/dev/null || true" \
    bookworm "$target" "$sources"
}

# Writes ROOTFS/var/lib/dpkg/status for an extracted root filesystem (no dpkg ran there) from the .deb files of the
# cache, so that image scanners see the Debian packages; prints Package, Version, Architecture, Source lines.
register_extracted() {
  local rootfs=$1 status=$1/var/lib/dpkg/status p deb
  mkdir -p "$rootfs/var/lib/dpkg"
  : >"$status"
  for p in $(packages_of herald | sort); do
    # The version apt chose is the one extracted: the newest .deb of that package in the cache.
    deb=$(ls "$CACHE"/debs/"${p}"_*.deb 2>/dev/null | while read -r d; do printf '%s\t%s\n' "$(dpkg-deb -f "$d" Version)" "$d"; done |
      sort -t "$(printf '\t')" -k1,1 -V | tail -1 | cut -f2)
    [ -n "$deb" ] || { log "no .deb of $p in $CACHE/debs"; return 1; }
    dpkg-deb -f "$deb" | awk 'NR==1 { print; print "Status: install ok installed"; next } { print }' >>"$status"
    echo >>"$status"
    printf '%s\t%s\t%s\t%s\n' "$p" "$(dpkg-deb -f "$deb" Version)" "$(dpkg-deb -f "$deb" Architecture)" "$(dpkg-deb -f "$deb" Source | cut -d' ' -f1)"
  done
}

# Files and folders below DIR get the same owner, mode bits without group/other write, then the tarball: sorted
# names, numeric owners, one mtime, no atime/ctime.
layer_tar() {
  local dir=$1 tarball=$2
  tar --sort=name --numeric-owner --format=posix --pax-option=exthdr.name=%d/PaxHeaders/%f,delete=atime,delete=ctime \
    --mtime="@$SOURCE_DATE_EPOCH" --no-acls --no-xattrs --no-selinux -C "$dir" -cf "$tarball" .
}

# buildah: a container from scratch (or FROM), one layer per tarball, committed with the fixed timestamp.
commit_layers() {
  local name=$1 config_fn=$2 archive=$3
  shift 3
  local from=scratch ctr i=0 tarball stage
  for tarball in "$@"; do
    i=$((i + 1))
    ctr=$(buildah from --quiet "$from")
    buildah add --quiet "$ctr" "$tarball" / >/dev/null
    stage=localhost/$name-build:stage$i
    if [ "$i" -lt $# ]; then
      buildah commit --quiet --timestamp "$SOURCE_DATE_EPOCH" --rm "$ctr" "$stage" >/dev/null
      from=$stage
    fi
  done
  "$config_fn" "$ctr"
  rm -f "$archive"
  buildah commit --quiet --timestamp "$SOURCE_DATE_EPOCH" --format oci --disable-compression=false --rm "$ctr" "oci-archive:$archive" >/dev/null
  for ((i = 1; i < $#; i++)); do buildah rmi "localhost/$name-build:stage$i" >/dev/null 2>&1 || true; done
}

# The manifest digest of an OCI archive (its index.json names one manifest).
archive_digest() {
  tar -xOf "$1" index.json | "$NODE" -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).manifests[0].digest))'
}

node_modules_dir() {
  # The pruned production node_modules, built once per lockfile and pruning rules (PRUNE: bump it when they change).
  local key dir PRUNE=3
  key=$( (cat package-lock.json; echo "prune $PRUNE ${LEFT_OUT[*]}") | sha256sum | cut -c1-16)
  dir=$CACHE/node_modules-$key
  if [ ! -d "$dir/node_modules" ]; then
    log "npm ci --omit=dev (cached as $dir)"
    rm -rf "$dir.tmp" && mkdir -p "$dir.tmp"
    cp package.json package-lock.json "$dir.tmp/"
    (cd "$dir.tmp" && PATH=$(dirname "$NODE"):$PATH npm ci --omit=dev --no-audit --no-fund --loglevel=error >&2)
    # The dependencies the image leaves out, with the packages only they need (npm works that out from the
    # lockfile; --no-save leaves package.json and the lockfile as they are).
    log "leaving out ${LEFT_OUT[*]}"
    (cd "$dir.tmp" && PATH=$(dirname "$NODE"):$PATH npm uninstall --no-save --offline --omit=dev --no-audit --no-fund \
      --loglevel=error "${LEFT_OUT[@]}" >&2)
    # What Node never loads at run time: type declarations, source maps, TypeScript sources (Node strips no types
    # under node_modules), docs, the other libc's prebuilt koffi, tests and examples. Licence texts stay.
    find "$dir.tmp/node_modules" -type f \( -name '*.d.ts' -o -name '*.d.mts' -o -name '*.d.cts' -o -name '*.map' \
      -o -name '*.ts' -o -name '*.mts' -o -name '*.cts' -o -name '*.md' -o -name '*.markdown' \) \
      ! -iname 'licen[cs]e*' ! -iname 'copying*' ! -iname 'notice*' -delete
    find "$dir.tmp/node_modules" -depth -type d \( -name test -o -name tests -o -name __tests__ -o -name example \
      -o -name examples -o -name .github -o -name musl_x64 \) -exec rm -rf {} +
    # Prebuilt native addons for other systems (the bare-* packages ship thirteen; Node loads linux-x64 here).
    find "$dir.tmp/node_modules" -type d -name prebuilds -print0 |
      while IFS= read -r -d '' d; do find "$d" -mindepth 1 -maxdepth 1 ! -name 'linux-x64*' -exec rm -rf {} +; done
    rm -f "$dir.tmp/node_modules/.package-lock.json"
    rm -rf "$dir" && mv "$dir.tmp" "$dir"
    find "$CACHE" -maxdepth 1 -name 'node_modules-*' ! -path "$dir" -exec rm -rf {} + # older lockfiles
  fi
  echo "$dir/node_modules"
}

build_herald() {
  local work=$1 tag=localhost/herald:$VERSION
  [ -x "$NODE" ] || { log "no $NODE: run scripts/setup.sh (npm ci brings Node.js 24)"; return 1; }
  local node_version
  node_version=$("$NODE" --version)
  case "$node_version" in v24.*) ;; *) log "node_modules/node is $node_version, not Node.js 24"; return 1 ;; esac

  log "herald: Debian root filesystem ($(packages_of herald | tr '\n' ' '))"
  local debian=$work/debian
  debian_rootfs extract "$(packages_of herald | paste -sd, -)" "$debian"
  # The extract variant leaves apt's bookkeeping and the docs (dpkg's path-exclude applies only to dpkg installs).
  rm -rf "$debian"/var/cache/apt "$debian"/var/lib/apt "$debian"/etc/apt "$debian"/var/log/apt "$debian"/etc/dpkg
  find "$debian/usr/share/doc" -mindepth 2 ! -name copyright -exec rm -rf {} + 2>/dev/null || true
  rm -rf "$debian"/usr/share/man "$debian"/usr/share/info "$debian"/usr/share/locale "$debian"/usr/share/lintian \
    "$debian"/usr/share/bug "$debian"/usr/lib/x86_64-linux-gnu/gconv "$debian"/usr/share/gcc "$debian"/usr/share/gdb
  register_extracted "$debian" >"$work/debian-packages.tsv"
  # busybox's applets the image uses: sh and cat (deploy/herald), chown (the DaemonSet's init container).
  for applet in sh cat chown; do ln -sf busybox "$debian/bin/$applet"; done
  mkdir -p "$debian"/etc "$debian"/tmp "$debian"/proc "$debian"/sys "$debian"/dev "$debian"/etc/herald "$debian"/var/lib/herald
  chmod 1777 "$debian/tmp"
  printf 'root:x:0:0:root:/root:/bin/sh\nherald:x:1000:1000:herald:/nonexistent:/bin/false\n' >"$debian/etc/passwd"
  printf 'root:x:0:\nherald:x:1000:\n' >"$debian/etc/group"
  printf 'hosts: files dns\n' >"$debian/etc/nsswitch.conf"
  cp /etc/os-release "$debian/etc/os-release" 2>/dev/null || true
  find "$debian/dev" -mindepth 1 -delete # the runtime makes /dev

  log "herald: Node.js $node_version (node_modules/node), symbols stripped"
  local nodel=$work/node
  mkdir -p "$nodel/usr/local/bin"
  strip --strip-all -o "$nodel/usr/local/bin/node" "$NODE"

  local deps=$work/deps modules
  modules=$(node_modules_dir)
  mkdir -p "$deps/app"
  cp -a "$modules" "$deps/app/node_modules"

  log "herald: application ($(git rev-parse --short HEAD 2>/dev/null || echo 'no git'))"
  local app=$work/app
  mkdir -p "$app/app/deploy" "$app/usr/local/bin"
  git ls-files -z bin bgp src tools | (cd "$ROOT" && xargs -0 cp --parents -t "$app/app")
  cp package.json package-lock.json "$app/app/"
  cp deploy/warm-compile-cache.js "$app/app/deploy/"
  cp deploy/herald "$app/usr/local/bin/herald"
  for d in "$debian" "$nodel" "$deps" "$app"; do
    chown -R 0:0 "$d"
    chmod -R u+rwX,go+rX,go-w "$d"
  done
  chmod 1777 "$debian/tmp"

  log "herald: compile cache (herald warm-compile-cache --reproducible, as uid 1000)"
  local merged=$work/merged
  mkdir -p "$merged"
  for d in "$debian" "$nodel" "$deps" "$app"; do cp -al "$d/." "$merged/"; done
  mkdir -p "$merged/app/.compile-cache"
  chown 1000:1000 "$merged/app/.compile-cache"
  unshare --mount --fork sh -c '
    set -e
    mount -t proc proc "$1/proc"
    mount --rbind /dev "$1/dev"
    exec chroot --userspec=1000:1000 "$1" /bin/busybox env -i PATH=/usr/local/bin:/usr/bin:/bin HOME=/tmp HERALD_HOME=/app \
      NODE_ENV=production NODE_COMPILE_CACHE=/app/.compile-cache herald warm-compile-cache --reproducible
  ' sh "$merged" >&2
  # Every production dependency but the ones left out loads in the image (nothing the pruning removed was needed).
  unshare --mount --fork sh -c '
    set -e
    mount -t proc proc "$1/proc"
    exec chroot --userspec=1000:1000 "$1" /bin/busybox env -i PATH=/usr/local/bin:/usr/bin:/bin HOME=/tmp LEFT_OUT="$2" \
      node --input-type=module -e "
        import { readFileSync } from \"node:fs\";
        import { createRequire } from \"node:module\";
        const req = createRequire(\"/app/package.json\");
        const out = process.env.LEFT_OUT.split(\" \");
        const deps = Object.keys(JSON.parse(readFileSync(\"/app/package.json\", \"utf8\")).dependencies).filter((d) => !out.includes(d));
        for (const d of deps) await import(req.resolve(d));
        for (const d of out) { try { req.resolve(d); throw new Error(d + \" is in the image\"); } catch (e) { if (e.code !== \"MODULE_NOT_FOUND\") throw e; } }
        console.log(\"image: every production dependency loads (\" + deps.length + \"); left out: \" + out.join(\" \"));"
  ' sh "$merged" "${LEFT_OUT[*]}" >&2
  mkdir -p "$app/app"
  cp -a "$merged/app/.compile-cache" "$app/app/.compile-cache"

  local t
  for t in debian node deps app; do layer_tar "$work/$t" "$work/$t.tar"; done
  local archive=$OUT/herald.oci.tar
  commit_layers herald herald_config "$archive" "$work/debian.tar" "$work/node.tar" "$work/deps.tar" "$work/app.tar"
  finish herald "$tag" "$archive" "$work" "$node_version" "$modules"
}

herald_config() {
  local ctr=$1 revision
  revision=$(git rev-parse HEAD 2>/dev/null || echo unknown)
  buildah config --user 1000:1000 --workingdir /app \
    --env PATH=/usr/local/bin:/usr/bin:/bin --env NODE_ENV=production --env HERALD_HOME=/app \
    --env NODE_COMPILE_CACHE=/app/.compile-cache \
    --entrypoint '["herald"]' --cmd '["run", "--config", "/etc/herald/herald.yaml"]' \
    --label org.opencontainers.image.title=herald --label "org.opencontainers.image.version=$VERSION" \
    --label "org.opencontainers.image.revision=$revision" --label org.opencontainers.image.licenses=Apache-2.0 \
    --created-by 'scripts/image.sh' "$ctr"
}

build_bird() {
  local work=$1 tag=localhost/herald-bird:$VERSION
  log "bird: Debian root filesystem ($(packages_of bird | tr '\n' ' '))"
  local rootfs=$work/rootfs
  debian_rootfs essential "$(packages_of bird | paste -sd, -)" "$rootfs"
  mv "$work/debian-packages.tsv" "$work/bird-packages.tsv" 2>/dev/null || true
  # /run/bird: where BIRD writes its control socket, birdc's default (`podman exec CONTAINER birdc show route`); apt's
  # lists are not needed to run it.
  rm -rf "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/cache/apt/*.bin "$rootfs"/var/cache/apt/archives/*.deb
  mkdir -p "$rootfs/run/bird" "$rootfs/etc/bird"
  cut -f1-4 "$work/bird-packages.tsv" >"$work/debian-packages.tsv"
  layer_tar "$rootfs" "$work/rootfs.tar"
  local archive=$OUT/bird.oci.tar
  commit_layers herald-bird bird_config "$archive" "$work/rootfs.tar"
  finish bird "$tag" "$archive" "$work" "" ""
}

bird_config() {
  buildah config --entrypoint '["bird", "-f", "-c", "/etc/bird/bird.conf", "-s", "/run/bird/bird.ctl"]' --cmd '[]' \
    --label org.opencontainers.image.title=herald-bird --created-by 'scripts/image.sh' "$1"
}

# Writes IMAGE.digest, the SBOM and the summary; loads the archive as TAG.
finish() {
  local name=$1 tag=$2 archive=$3 work=$4 node_version=$5 modules=$6 digest
  digest=$(archive_digest "$archive")
  echo "$digest" >"$OUT/$name.digest"
  podman rmi --force "$tag" >/dev/null 2>&1 || true
  podman pull --quiet "oci-archive:$archive" >/dev/null
  local id size
  id=$(podman images --no-trunc --format '{{.ID}} {{.Digest}}' | awk -v d="$digest" '$2 == d { print $1; exit }')
  [ -n "$id" ] || { log "$name: the loaded image has no digest $digest"; return 1; }
  podman tag "$id" "$tag"
  size=$(podman image inspect --format '{{.Size}}' "$tag")
  "$NODE" "$ROOT/scripts/image-sbom.ts" --name "$name" --version "$VERSION" --digest "$digest" \
    --debian "$work/debian-packages.tsv" ${modules:+--node-modules "$modules"} ${node_version:+--node "$node_version"} \
    --out "$OUT/$name.sbom.spdx.json" --epoch "$SOURCE_DATE_EPOCH" >"$OUT/$name.summary.sbom"
  {
    echo "$name: $tag"
    echo "  digest: $digest"
    echo "  size: $((size / 1048576)) MiB uncompressed ($size bytes), $(($(stat -c %s "$archive") / 1048576)) MiB archive (gzip): $archive"
    echo "  layers: $(podman image inspect --format '{{len .RootFS.Layers}}' "$tag")"
    sed 's/^/  /' "$OUT/$name.summary.sbom"
    [ -z "$modules" ] || echo "  left out: ${LEFT_OUT[*]} (docs/decisions.md \"The image leaves @kubernetes/client-node out\")"
  } >"$OUT/$name.summary"
  rm -f "$OUT/$name.summary.sbom"
  cat "$OUT/$name.summary"
}

case "${1:-all}" in
  check)
    problems=()
    command -v apt-get >/dev/null || problems+=("not a Debian machine (apt-get missing)")
    debian_sources >/dev/null 2>&1 || problems+=("no Debian 12 apt sources")
    [ -x "$NODE" ] || problems+=("no node_modules/node (run scripts/setup.sh)")
    if [ ${#problems[@]} -gt 0 ]; then printf 'image: %s\n' "${problems[@]}" >&2; exit 4; fi
    echo "image: can build (SOURCE_DATE_EPOCH=$SOURCE_DATE_EPOCH)" ;;
  herald | bird | all)
    install_tools
    mkdir -p "$OUT" "$CACHE"
    exec 9>"$CACHE/.build.lock"
    flock 9 # one build at a time per cache folder
    start=$SECONDS
    for image in herald bird; do
      [ "${1:-all}" = all ] || [ "$1" = "$image" ] || continue
      work=$(mktemp -d "${TMPDIR:-/tmp}/herald-image-$image.XXXXXX")
      trap 'rm -rf "$work"' EXIT
      "build_$image" "$work"
      rm -rf "$work"
    done
    log "done in $((SECONDS - start)) s" ;;
  *) echo "usage: scripts/image.sh [herald|bird|all|check] | pin [REPOSITORY]" >&2; exit 2 ;;
esac
