#!/usr/bin/env bash
# Installs the chart tests' tools once per machine into ${SVC_TOOLS_BIN:-~/.cache/svc-gateway/bin} (outside the repo):
# helm (`go install` from the Go module proxy, helm v4 has no replace directives, a few minutes cold on 2 cores) and
# actionlint (the release workflow's linter, seconds). A no-op after. Tools already on PATH are not used by the tests
# unless SVC_HELM / SVC_ACTIONLINT name them.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=versions.env
source "$here/versions.env"
bin="${SVC_TOOLS_BIN:-${XDG_CACHE_HOME:-$HOME/.cache}/svc-gateway/bin}"

# $1 name, $2 version, $3 package
install_tool() {
  local stamp="$bin/$1.version"
  if [ -x "$bin/$1" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$2" ]; then
    echo "$1 $2: $bin/$1"
    return
  fi
  command -v go >/dev/null 2>&1 || { echo "Go is needed to install $1 (https://go.dev/dl/)" >&2; exit 1; }
  mkdir -p "$bin"
  echo "Installing $1 $2 into $bin (go install)..."
  GOBIN="$bin" GOFLAGS="${GOFLAGS:--p=2}" go install "$3@$2"
  echo "$2" >"$stamp"
  echo "$1 $2: $bin/$1"
}

install_tool helm "$HELM_VERSION" helm.sh/helm/v4/cmd/helm
install_tool actionlint "$ACTIONLINT_VERSION" github.com/rhysd/actionlint/cmd/actionlint
