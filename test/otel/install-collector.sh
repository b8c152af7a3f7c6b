#!/usr/bin/env bash
# Builds an OpenTelemetry Collector for the tracing tests, once per machine, into
# ${SVC_TOOLS_BIN:-~/.cache/svc-gateway/bin}/otelcol-svc: the collector builder (ocb) from the Go module proxy, with
# the OTLP receiver and the OTLP/HTTP exporter only (manifest below; core modules: contrib's file exporter pulls test
# modules the proxy does not serve). The tests export to a listener of their own, in OTLP/JSON. Minutes cold on 2 cores, a no-op after. Users with a
# collector of their own set SVC_OTELCOL to its binary (it needs the otlp receiver and the otlphttp exporter).
set -euo pipefail
OTELCOL_VERSION=0.165.0
bin="${SVC_TOOLS_BIN:-${XDG_CACHE_HOME:-$HOME/.cache}/svc-gateway/bin}"
stamp="$bin/otelcol-svc.version"
if [ -x "$bin/otelcol-svc" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$OTELCOL_VERSION" ]; then
  echo "otelcol-svc $OTELCOL_VERSION: $bin/otelcol-svc"
  exit 0
fi
command -v go >/dev/null 2>&1 || { echo "Go is needed to build the collector (https://go.dev/dl/), or set SVC_OTELCOL to an otelcol binary" >&2; exit 1; }
mkdir -p "$bin"
exec 9>"$bin/otelcol-svc.lock"
flock 9
if [ -x "$bin/otelcol-svc" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$OTELCOL_VERSION" ]; then exit 0; fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
echo "Building otelcol-svc $OTELCOL_VERSION into $bin (collector builder, minutes cold)..."
GOBIN="$work" GOFLAGS="${GOFLAGS:--p=2}" go install "go.opentelemetry.io/collector/cmd/builder@v$OTELCOL_VERSION"
cat > "$work/manifest.yaml" <<YAML
dist:
  name: otelcol-svc
  description: OpenTelemetry Collector for the svc-gateway tracing tests
  output_path: $work/dist
receivers:
  - gomod: go.opentelemetry.io/collector/receiver/otlpreceiver v$OTELCOL_VERSION
exporters:
  - gomod: go.opentelemetry.io/collector/exporter/otlphttpexporter v$OTELCOL_VERSION
YAML
GOFLAGS="${GOFLAGS:--p=2}" "$work/builder" --config "$work/manifest.yaml"
cp "$work/dist/otelcol-svc" "$bin/otelcol-svc"
echo "$OTELCOL_VERSION" > "$stamp"
echo "otelcol-svc $OTELCOL_VERSION: $bin/otelcol-svc"
