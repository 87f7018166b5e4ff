#!/usr/bin/env bash
# Builds the libFuzzer targets (archive reader, document decoder, ULID parser, readiness maths,
# the closure pipeline, the age decryptor, the Gadgetbridge reader) with SwiftPM and AddressSanitizer and runs each, seeded from
# Archives/fuzz-seeds/ (the age target also from files our encrypting sink writes at start).
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
    ""|archive-reader|document-decoder|ulid-parser|readiness|closure-pipeline|age-decryptor|gadgetbridge-reader) ;;
    *) echo "unknown target: $only" >&2; usage ;;
esac
wanted() { [ -z "$only" ] || [ "$only" = "$1" ]; }

# The two builds live apart, so one never runs the other's binary by mistake. Each is a SwiftPM
# build of the package's own fuzz targets (`fuzz-<target>` in Package.swift, Tests/Fuzz/<target>/)
# in a scratch path of its own: optimized, with -enable-testing (the targets' checks use the
# modules' internals through @testable imports) and -DPULSE_FUZZ (without it a target is a stub,
# so the plain `swift build` neither links libFuzzer nor fails). SwiftPM parses an executable
# target as a library under --sanitize=fuzzer, and libFuzzer's main() calls the target's
# LLVMFuzzerTestOneInput. The binary is linked as $out/<target>, to replay an input with.
out=.build/fuzz
[ "$sanitize" = fuzzer ] && out=.build/fuzz-noasan
mkdir -p "$out/artifacts"
sanitizers=(--sanitize=fuzzer)
[ "$sanitize" = fuzzer,address ] && sanitizers+=(--sanitize=address)
build() {
    local name=$1
    wanted "$name" || return 0
    echo "building $name ($sanitize)"
    swift build -c release --scratch-path "$out" "${sanitizers[@]}" -Xswiftc -enable-testing -Xswiftc -DPULSE_FUZZ \
        --product "fuzz-$name" 2>&1 | { grep -vE "warning: Cannot export local symbol|^\[[0-9]+/[0-9]+\]" || true; }
    [ "${PIPESTATUS[0]}" -eq 0 ] || { echo "building $name failed" >&2; exit 1; }
    ln -sf "release/fuzz-$name" "$out/$name"
}
for target in archive-reader document-decoder ulid-parser readiness closure-pipeline age-decryptor gadgetbridge-reader; do build "$target"; done

# SEEDS: one or more seed directories, separated by spaces (our paths have none).
run() {
    local name=$1 seeds=$2 length=$3; shift 3
    wanted "$name" || return 0
    local corpus="$out/corpus-$name"
    mkdir -p "$corpus"
    echo "fuzzing $name (${limit[*]})"
    # The fuzzer's own exit status decides; the filter only shortens what is printed. Swift's
    # backtracer is off: on a trap it kept the output pipe open past the fuzzer's exit.
    SWIFT_BACKTRACE=enable=no "$out/$name" "${limit[@]}" -max_len="$length" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 "$@" \
        -artifact_prefix="$out/artifacts/$name-" "$corpus" $seeds 2>&1 | tee "$out/$name.log" \
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
# The age target's seeds: the age test kit's vectors (headers stripped, inflated; those over 8 KiB
# left out) in Archives/fuzz-seeds/age/, and files our own encrypting sink writes into
# $out/seeds-age/ when the target starts (PULSE_FUZZ_AGE_SEEDS; X25519 and scrypt at work
# factors 1 and 10, around the 64 KiB chunk). 140000 bytes hold two chunks and a header.
if wanted age-decryptor; then
    rm -rf "$out/seeds-age" && mkdir -p "$out/seeds-age"
    PULSE_FUZZ_AGE_SEEDS="$out/seeds-age" run age-decryptor "Archives/fuzz-seeds/age $out/seeds-age" 140000 || status=1
fi
# A Gadgetbridge database (or backup ZIP) as bytes, read as import reads it (seeds: a small
# database of schema 141 and its backup ZIP).
run gadgetbridge-reader Archives/fuzz-seeds/gadgetbridge 16384 || status=1
exit $status
