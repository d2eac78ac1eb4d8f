#!/bin/sh
# build-collector.sh builds the OpenTelemetry Collector described by
# deploy/builder-config.yaml into a cache directory and prints the binary's
# path on stdout (progress goes to stderr).
#
# The build runs only when the binary is missing or when the manifest, the
# builder version or the Go toolchain changed since the cached build: a stamp
# file next to the binary records a hash of all three.
#
# Usage:
#   deploy/build-collector.sh            # build if needed, print the path
#   deploy/build-collector.sh --force    # rebuild even when cached
#
# Environment:
#   MACPROF_CACHE     cache directory (default $HOME/.cache/macprof)
#   OCB_VERSION       builder version (default v0.159.0, matching the manifest)
#   MACPROF_COLLECTOR_MANIFEST  manifest to build (default: next to this script)
#
# Run the result with --feature-gates=service.profilesSupport:
#   "$(deploy/build-collector.sh)" --config deploy/otel-collector.yaml \
#       --feature-gates=service.profilesSupport
set -eu

here=$(cd "$(dirname "$0")" && pwd)
manifest=${MACPROF_COLLECTOR_MANIFEST:-$here/builder-config.yaml}
cache=${MACPROF_CACHE:-${HOME:?HOME is not set}/.cache/macprof}
ocb_version=${OCB_VERSION:-v0.159.0}
bin=$cache/otelcol-macprof
stamp=$bin.stamp
force=0
[ "${1:-}" = "--force" ] && force=1

say() { printf 'build-collector: %s\n' "$*" >&2; }
die() { say "$*"; exit 1; }

command -v go >/dev/null 2>&1 || die "go is not on PATH; install Go to build the collector"
[ -f "$manifest" ] || die "manifest $manifest not found"
mkdir -p "$cache" || die "cannot create cache directory $cache"

hash_of() {
	if command -v sha256sum >/dev/null 2>&1; then
		sha256sum | cut -d' ' -f1
	else
		shasum -a 256 | cut -d' ' -f1
	fi
}
want=$( { cat "$manifest"; echo "ocb=$ocb_version"; go env GOVERSION GOOS GOARCH; } | hash_of)

cached() { [ -x "$bin" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; }

if [ "$force" = 0 ] && cached; then
	echo "$bin"
	exit 0
fi

# One build at a time per cache directory: concurrent test packages may all
# ask for the collector. mkdir is atomic everywhere (flock is not on macOS).
lock=$cache/otelcol-macprof.lock
tries=0
until mkdir "$lock" 2>/dev/null; do
	tries=$((tries + 1))
	# A lock older than 30 minutes belongs to a build that died.
	if [ -n "$(find "$lock" -maxdepth 0 -mmin +30 2>/dev/null)" ]; then
		say "removing stale lock $lock"
		rmdir "$lock" 2>/dev/null || true
		continue
	fi
	[ "$tries" -gt 1200 ] && die "timed out waiting for $lock (another build?)"
	sleep 1
done
trap 'rm -rf "$lock"' EXIT INT TERM

# Another process may have finished the build while we waited.
if [ "$force" = 0 ] && cached; then
	echo "$bin"
	exit 0
fi

work=$cache/build
rm -rf "$work"
mkdir -p "$work/bin"

say "installing builder $ocb_version"
GOBIN=$work/bin go install "go.opentelemetry.io/collector/cmd/builder@$ocb_version" >&2 ||
	die "cannot install go.opentelemetry.io/collector/cmd/builder@$ocb_version (module proxy reachable?)"

# The builder has no flag for the output directory: build from a copy of the
# manifest whose output_path points into the work directory.
sed "s|^\([[:space:]]*output_path:\).*|\1 $work/out|" "$manifest" >"$work/manifest.yaml"
grep -q "output_path: $work/out" "$work/manifest.yaml" || die "manifest $manifest has no dist.output_path line"

say "building the collector (about 90 s on 2 vCPUs the first time)"
start=$(date +%s)
(cd "$work" && "$work/bin/builder" --config "$work/manifest.yaml") >&2 ||
	die "builder failed for $manifest (see output above)"
[ -x "$work/out/otelcol-macprof" ] || die "builder produced no $work/out/otelcol-macprof"

# Install atomically: a running collector keeps its old inode.
cp "$work/out/otelcol-macprof" "$bin.tmp"
mv -f "$bin.tmp" "$bin"
echo "$want" >"$stamp.tmp"
mv -f "$stamp.tmp" "$stamp"
rm -rf "$work"
say "built $bin in $(($(date +%s) - start)) s"
echo "$bin"
