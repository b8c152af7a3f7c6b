#!/usr/bin/env bash
# Installs stripe-mock (Stripe's local API server, validated against Stripe's OpenAPI spec) for the billing tests, once
# per machine, into ${SVC_TOOLS_BIN:-~/.cache/svc-gateway/bin} (outside the repo): `go install` from the Go module
# proxy, about 20 s cold, a no-op after. SVC_STRIPE_MOCK names another binary for the tests.
set -euo pipefail
STRIPE_MOCK_VERSION=v0.197.0
bin="${SVC_TOOLS_BIN:-${XDG_CACHE_HOME:-$HOME/.cache}/svc-gateway/bin}"
stamp="$bin/stripe-mock.version"
if [ -x "$bin/stripe-mock" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$STRIPE_MOCK_VERSION" ]; then
  echo "stripe-mock $STRIPE_MOCK_VERSION: $bin/stripe-mock"
  exit 0
fi
command -v go >/dev/null 2>&1 || { echo "Go is needed to install stripe-mock (https://go.dev/dl/), or set SVC_STRIPE_MOCK to a stripe-mock binary" >&2; exit 1; }
mkdir -p "$bin"
echo "Installing stripe-mock $STRIPE_MOCK_VERSION into $bin (go install)..."
GOBIN="$bin" GOFLAGS="-mod=mod ${GOFLAGS:--p=2}" go install "github.com/stripe/stripe-mock@$STRIPE_MOCK_VERSION"
echo "$STRIPE_MOCK_VERSION" > "$stamp"
echo "stripe-mock $STRIPE_MOCK_VERSION: $bin/stripe-mock"
