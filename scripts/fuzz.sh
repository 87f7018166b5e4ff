#!/usr/bin/env bash
# Builds the libFuzzer targets (archive reader, document decoder, ULID parser, readiness maths,
# the closure pipeline) with AddressSanitizer and runs each, seeded from Archives/.
#
#   scripts/fuzz.sh                  # each target for 60 s
#   scripts/fuzz.sh --time 600       # each target for 10 minutes
#   scripts/fuzz.sh --runs 1000000   # each target for a million executions
#   scripts/fuzz.sh --only closure-pipeline --runs 200000 --no-asan
#                                    # one target; without AddressSanitizer (libFuzzer's own
#                                    # instrumentation only: Swift still traps on overflow and
#                                    # the targets trap on every violation), several times faster
#
# Exits non-zero when a target finds a crash, a leak or a timeout (the input is saved under
# .build/fuzz/artifacts/).
set -euo pipefail
cd "$(dirname "$0")/.."
limit=(-max_total_time=60)
sanitize=fuzzer,address
only=""
usage() { echo "usage: scripts/fuzz.sh [--time SECONDS | --runs N] [--only TARGET] [--no-asan]" >&2; exit 64; }
while [ $# -gt 0 ]; do
    case "$1" in
        --time) [ $# -ge 2 ] || usage; limit=(-max_total_time="$2"); shift 2 ;;
        --runs) [ $# -ge 2 ] || usage; limit=(-runs="$2"); shift 2 ;;
        --only) [ $# -ge 2 ] || usage; only=$2; shift 2 ;;
        --no-asan) sanitize=fuzzer; shift ;;
        *) usage ;;
    esac
done
case "$only" in
    ""|archive-reader|document-decoder|ulid-parser|readiness|closure-pipeline) ;;
    *) echo "unknown target: $only" >&2; usage ;;
esac
wanted() { [ -z "$only" ] || [ "$only" = "$1" ]; }

# The two builds live apart, so one never runs the other's binary by mistake.
out=.build/fuzz
[ "$sanitize" = fuzzer ] && out=.build/fuzz-noasan
mkdir -p "$out/artifacts"
build() {
    local name=$1; shift
    wanted "$name" || return 0
    echo "building $name ($sanitize)"
    # One module: the library sources and the target file. The libraries' imports of
    # PulseArchive then name the module being built, which swiftc ignores with a warning.
    swiftc -sanitize="$sanitize" -parse-as-library -O -module-name PulseArchive -I Sources/CZlib \
        -suppress-warnings "$@" -lz -o "$out/$name"
}
build archive-reader Sources/PulseArchive/*.swift Tests/Fuzz/ArchiveReaderFuzz.swift
build document-decoder Sources/PulseArchive/*.swift Sources/PulseDocuments/*.swift Tests/Fuzz/DocumentDecoderFuzz.swift
build ulid-parser Sources/PulseArchive/*.swift Tests/Fuzz/ULIDFuzz.swift
build readiness Sources/PulseArchive/*.swift Sources/Readiness/*.swift Tests/Fuzz/ReadinessFuzz.swift
# The closure pipeline needs four libraries in the one module: their imports of each other are
# dropped from copies of the sources (swiftc ignores only the self-import of PulseArchive).
if wanted closure-pipeline; then
    closure_src="$out/closure-src"
    rm -rf "$closure_src" && mkdir -p "$closure_src"
    for file in Sources/PulseArchive/*.swift Sources/PulseDocuments/*.swift Sources/Readiness/*.swift Sources/PulseStore/*.swift; do
        module=$(basename "$(dirname "$file")")
        sed -E '/^import (PulseDocuments|Readiness|PulseStore)$/d' "$file" > "$closure_src/$module-$(basename "$file")"
    done
    build closure-pipeline "$closure_src"/*.swift Tests/Fuzz/ClosureFuzz.swift -I Sources/CSQLite -lsqlite3
fi

run() {
    local name=$1 seeds=$2 length=$3; shift 3
    wanted "$name" || return 0
    local corpus="$out/corpus-$name"
    mkdir -p "$corpus"
    echo "fuzzing $name (${limit[*]})"
    # The fuzzer's own exit status decides; the filter only shortens what is printed. Swift's
    # backtracer is off: on a trap it kept the output pipe open past the fuzzer's exit.
    SWIFT_BACKTRACE=enable=no "$out/$name" "${limit[@]}" -max_len="$length" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 "$@" \
        -artifact_prefix="$out/artifacts/$name-" "$corpus" "$seeds" 2>&1 | tee "$out/$name.log" \
        | { grep -E "^(stat::number_of_executed_units|==[0-9]+==ERROR|SUMMARY|Done|INFO: a leak)" || true; }
    local code=${PIPESTATUS[0]}
    [ "$code" -eq 0 ] || echo "$name FAILED (exit $code); the input is in $out/artifacts/" >&2
    return "$code"
}
status=0
run archive-reader Archives/fuzz-seeds/archives 16384 || status=1
run document-decoder Archives/fuzz-seeds/documents 8192 || status=1
run ulid-parser Archives/fuzz-seeds/ulid 64 || status=1
run readiness Archives/fuzz-seeds/readiness 4096 || status=1
run closure-pipeline Archives/fuzz-seeds/closure 12288 -dict=Archives/fuzz-seeds/closure.dict || status=1
exit $status
