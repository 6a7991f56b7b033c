#!/usr/bin/env bash
# Builds the OpenTelemetry Collector of the tracing tests (OTLP receiver, debug exporter) with the
# collector builder from the Go module proxy, once per manifest, under ~/.cache/modelkeeper, and
# prints the binary's path. Needs Go 1.24+.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILDER_VERSION=v0.165.0
MANIFEST=modelkeeper-interop/src/test/otelcol/builder.yaml
command -v go >/dev/null || {
  echo "otelcol.sh: Go is not installed; the tracing tests build their collector with it (https://go.dev/dl/, or Debian: apt-get install golang)" >&2
  exit 1
}
KEY=$( (echo "$BUILDER_VERSION"; cat "$MANIFEST") | sha256sum | cut -c1-12)
DIR="$HOME/.cache/modelkeeper/otelcol-$KEY"
BIN="$DIR/build/otelcol-modelkeeper"
if [ -x "$BIN" ]; then
  echo "$BIN"
  exit 0
fi
mkdir -p "$DIR"
export GOBIN="$DIR/bin"
echo "otelcol.sh: building the collector builder $BUILDER_VERSION (once)" >&2
timeout 600 go install "go.opentelemetry.io/collector/cmd/builder@$BUILDER_VERSION" >&2
cp "$MANIFEST" "$DIR/builder.yaml"
echo "otelcol.sh: building the collector in $DIR (once; a few minutes)" >&2
(cd "$DIR" && timeout 1200 "$GOBIN/builder" --config builder.yaml >&2)
[ -x "$BIN" ] || { echo "otelcol.sh: the build ended without $BIN" >&2; exit 1; }
echo "$BIN"
