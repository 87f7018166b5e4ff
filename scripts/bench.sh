#!/usr/bin/env bash
# The benchmark (docs/performance.md): reference stores of 1 and 10 years of a ring with raw
# packets; wall time and peak RSS (/usr/bin/time -v) of export, import (without and with the
# readiness backfill), verify, diff (the archive against its own plain JSON: every row read,
# keyed, digested and joined), readiness --backfill, and export, import and verify of the same
# archive encrypted with age to a public key; the peers gzip -6 and a Python
# standard-library importer on the same data; the ratios ours / peer. Then import, verify and
# export of the 1-year archive with 200 MB of attachments added (scripts/add_attachments.py),
# and of a 30-day archive with one attachment of 10 MB and one of 300 MB
# (scripts/add_large_attachment.py; LARGE_ATTACHMENT_MB="300" for one size).
# The floor: `read-floor` reads the archive through the codec and keeps nothing, the least any
# command that reads a whole archive can take.
#
# One more night in a restic repository: how much the gzip export, the plain export
# (`--compression none`) and `export --rsyncable` of the 1-year reference add after one more day
# of ring data, as a percentage of the gzip archive (docs/backups.md); and the same night in
# chunks of about 8 KiB (scripts/chunk_growth.py), where a change that stays local shows.
#
#   scripts/bench.sh                 # 1 and 10 years
#   YEARS="1" scripts/bench.sh       # 1 year only
#   ONLY=nightly scripts/bench.sh    # the restic rows alone
#   PULSE_ARCHIVE_BINARY=… scripts/bench.sh   # that binary, not a release build made here
#
# Measurements, not tests: CI does not run this. Reference stores are kept in .build/bench/.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v /usr/bin/time >/dev/null || { echo "needs GNU time: apt-get install time" >&2; exit 1; }
if [ -n "${PULSE_ARCHIVE_BINARY:-}" ]; then
    bin=$PULSE_ARCHIVE_BINARY
else
    swift build -c release --product pulse-archive >/dev/null
    bin=$PWD/.build/release/pulse-archive
fi
work=${WORK:-$PWD/.build/bench}
packets=${RAW_PACKETS_PER_DAY:-200}
mkdir -p "$work"

# One more night, restic (issue 25). Night 1 is the 1-year reference; night 2 is a copy of it
# with the next day merged in: the demo is generated day by day from one seed, so a 366-day
# demo ending a day later repeats the 365 days and adds one, and `import --merge` of its export
# inserts the new day's rows. What the demo re-generates under new keys when its last day moves
# (the 90 backfilled readiness rows, the profile, the goal, the documents named by their
# instant) is taken out again but the new day's readiness row: a night of a real ring adds its
# day and no copies. Each form of both nights goes into a repository (restic's own compression,
# repository v2) through `--stdin`; the growth is the repository's bytes on disk after the
# second backup minus after the first. restic's chunk boundaries depend on a polynomial drawn
# per repository, so the figure varies from repository to repository: each form is measured in
# the same $NIGHTLY_REPOS (default 5) repositories (copies of one `restic init` each) and the
# mean printed. `export --rsyncable` only where this binary has it.
nightly_growth() {
    command -v restic >/dev/null && command -v jq >/dev/null || { echo "  (restic rows skipped: needs restic and jq)"; return; }
    local store="$work/ref-1y" next="$work/next-day" night2="$work/night2-1y"
    if [ ! -f "$store/pulse.sqlite" ]; then
        "$bin" demo --store "$store" --days 365 --seed 7 --end 2026-03-15 --timezone UTC --raw-packets-per-day "$packets" >/dev/null
    fi
    if [ ! -f "$night2/pulse.sqlite" ]; then
        rm -rf "$next" "$night2" "$work/next-day.json.gz"
        "$bin" demo --store "$next" --days 366 --seed 7 --end 2026-03-16 --timezone UTC --raw-packets-per-day "$packets" >/dev/null
        "$bin" export --store "$next" -o "$work/next-day.json.gz" --quiet >/dev/null 2>&1
        cp -a "$store" "$night2"
        "$bin" import "$work/next-day.json.gz" --store "$night2" --merge --as-of 2026-03-16 --timezone UTC --quiet >/dev/null 2>&1
        sqlite3 "$night2/pulse.sqlite" "ATTACH '$store/pulse.sqlite' AS night1;
            DELETE FROM readinessDailies WHERE id NOT IN (SELECT id FROM night1.readinessDailies)
                AND date < (SELECT max(date) FROM readinessDailies);
            DELETE FROM userProfiles WHERE id NOT IN (SELECT id FROM night1.userProfiles);
            DELETE FROM userGoals WHERE id NOT IN (SELECT id FROM night1.userGoals);"
        (cd "$night2" && find Splits Stubs Workouts -type f 2>/dev/null) | while read -r document; do
            [ -e "$store/$document" ] || rm "$night2/$document"
        done
    fi
    local forms=("gzip:--compression gzip" "plain:--compression none")
    if "$bin" export --help 2>&1 | grep -q -- '--rsyncable'; then
        forms+=("rsyncable:--rsyncable")
    else
        echo "  (the export --rsyncable row skipped: this binary has no --rsyncable)"
    fi
    local repos=${NIGHTLY_REPOS:-5} gzip_bytes="" form name flags night repo grown total
    for form in "${forms[@]}"; do
        name=${form%%:*}; flags=${form#*:}
        for night in 1 2; do
            local source=$store; [ "$night" = 2 ] && source=$night2
            # shellcheck disable=SC2086
            SOURCE_DATE_EPOCH=$((1773619200 + 86400 * night)) "$bin" export --store "$source" -o - $flags --quiet > "$work/night$night-$name.out" 2>/dev/null
        done
    done
    echo
    echo "One more night in restic $(restic version | awk '{print $2}') (1-year reference; $("$bin" diff "$work/night1-gzip.out" "$work/night2-gzip.out" | tail -n 1 | sed 's/^diff: //'))"
    for form in "${forms[@]}"; do
        name=${form%%:*}
        total=0
        for repo in $(seq "$repos"); do
            # The same repository (its chunker polynomial) for every form: a copy of one init.
            [ -d "$work/restic-init-$repo" ] || RESTIC_PASSWORD=bench restic init -q -r "$work/restic-init-$repo" >/dev/null
            rm -rf "$work/restic-$name"
            cp -a "$work/restic-init-$repo" "$work/restic-$name"
            RESTIC_PASSWORD=bench restic -r "$work/restic-$name" backup -q --stdin --stdin-filename pulseloop.json < "$work/night1-$name.out" >/dev/null
            grown=$(du -sb "$work/restic-$name" | cut -f1)
            RESTIC_PASSWORD=bench restic -r "$work/restic-$name" backup -q --stdin --stdin-filename pulseloop.json < "$work/night2-$name.out" >/dev/null
            total=$((total + $(du -sb "$work/restic-$name" | cut -f1) - grown))
        done
        rm -rf "$work/restic-$name"
        [ "$name" = gzip ] && gzip_bytes=$(stat -c %s "$work/night2-gzip.out")
        printf "  %-28s %10s bytes a night (mean of %s repositories)   %s of the gzip archive (%s bytes); this file %s bytes\n" "$name" "$((total / repos))" "$repos" \
            "$(awk -v a="$((total / repos))" -v b="$gzip_bytes" 'BEGIN { printf "%.1f %%", 100 * a / b }')" "$gzip_bytes" "$(stat -c %s "$work/night2-$name.out")"
    done
    # The same two nights in chunks of about 8 KiB (scripts/chunk_growth.py): whether a night's
    # change stays local in each form, apart from restic's ~1 MiB chunks (an rsync-like delta,
    # or a backup tool with small chunks).
    echo "The same night in ~8 KiB content-defined chunks (new bytes / this file)"
    for form in "${forms[@]}"; do
        name=${form%%:*}
        read -r grown total percent < <(python3 scripts/chunk_growth.py "$work/night1-$name.out" "$work/night2-$name.out")
        printf "  %-28s %10s of %s bytes new: %s %%\n" "$name" "$grown" "$total" "$percent"
    done
    rm -f "$work"/night[12]-*.out
}
if [ "${ONLY:-}" = nightly ]; then nightly_growth; exit 0; fi

swift build -c release --product read-floor >/dev/null
floor=$PWD/.build/release/read-floor

# Runs a command under /usr/bin/time -v; prints "seconds peak-MB".
measure() {
    local log="$work/time.log"
    /usr/bin/time -v "$@" > /dev/null 2> "$log" || { cat "$log" >&2; exit 1; }
    local wall rss
    wall=$(grep "Elapsed (wall clock)" "$log" | awk '{print $NF}' | awk -F: '{ if (NF == 3) print $1 * 3600 + $2 * 60 + $3; else print $1 * 60 + $2 }')
    rss=$(grep "Maximum resident set size" "$log" | awk '{printf "%.1f", $NF / 1024}')
    echo "$wall $rss"
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
row() { printf "  %-28s %9s s %9s MB   %s\n" "$1" "$2" "$3" "${4:-}"; }

for years in ${YEARS:-1 10}; do
    store="$work/ref-${years}y"
    if [ ! -f "$store/pulse.sqlite" ]; then
        echo "generating the ${years}-year reference store ($packets raw packets a day)…"
        "$bin" demo --store "$store" --days $((365 * years)) --seed 7 --end 2026-03-15 --timezone UTC --raw-packets-per-day "$packets" >/dev/null
    fi
    archive="$work/ref-${years}y.json.gz"
    rm -f "$archive" "$work/ref-${years}y.json" "$work/peer.json.gz"
    echo
    echo "${years}-year reference: $(sqlite3 "$store/pulse.sqlite" 'SELECT (SELECT count(*) FROM measurements) + (SELECT count(*) FROM rawPackets)') measurements and raw packets"

    "$bin" export --store "$store" -o "$archive" --quiet >/dev/null
    gzip -dc "$archive" > "$work/ref-${years}y.json"
    # export against gzip -6 and pigz -6 -p 2 of the same JSON, and the plain export
    # (--compression none, JSON only) against gzip -6: three rounds, the order turned each
    # round, the disk synced before each run (an export flushes its file to disk before it
    # renames it into place; the peers do not, and a run must not pay for the last one's
    # writeback), each figure the median of its three.
    median() { printf '%s\n' "$@" | sort -n | sed -n 2p; }
    se=(); sg=(); sn=(); sp=()
    speed_export() { sync; rm -f "$work/speed.json.gz"; se+=("$(measure "$bin" export --store "$store" -o "$work/speed.json.gz" --quiet)"); }
    speed_gzip() { sync; sg+=("$(measure sh -c "gzip -6 -c '$work/ref-${years}y.json' > '$work/peer.json.gz'")"); }
    speed_plain() { sync; rm -f "$work/plain-export.json"; sn+=("$(measure "$bin" export --store "$store" --compression none -o "$work/plain-export.json" --quiet)"); }
    speed_pigz() { command -v pigz >/dev/null || return 0; sync; sp+=("$(measure sh -c "pigz -6 -p 2 -c '$work/ref-${years}y.json' > '$work/pigz.json.gz'")"); }
    for round in 1 2 3; do
        case $round in
            1) speed_export; speed_gzip; speed_plain; speed_pigz ;;
            2) speed_pigz; speed_plain; speed_gzip; speed_export ;;
            3) speed_gzip; speed_export; speed_pigz; speed_plain ;;
        esac
    done
    rm -f "$work/plain-export.json" "$work/speed.json.gz"
    read -r export_s export_mb < <(median "${se[@]}"); read -r gzip_s gzip_mb < <(median "${sg[@]}")
    read -r none_s none_mb < <(median "${sn[@]}")
    pigz_s="" pigz_mb="" pigz_bytes=""
    if command -v pigz >/dev/null; then
        read -r pigz_s pigz_mb < <(median "${sp[@]}")
        pigz_bytes=$(stat -c %s "$work/pigz.json.gz")
        rm -f "$work/pigz.json.gz"
    fi
    json_bytes=$(stat -c %s "$work/ref-${years}y.json")
    ours_bytes=$(stat -c %s "$archive")
    peer_bytes=$(stat -c %s "$work/peer.json.gz")

    rm -rf "$work/import"
    read -r import_s import_mb < <(measure "$bin" import "$archive" --store "$work/import" --no-backfill --quiet)
    rm -rf "$work/import-backfill"
    read -r backfill_import_s backfill_import_mb < <(measure "$bin" import "$archive" --store "$work/import-backfill" --as-of 2026-03-15 --timezone UTC --quiet)
    rm -f "$work/peer.sqlite"
    read -r python_s python_mb < <(measure python3 scripts/python_peer_import.py "$archive" "$work/peer.sqlite")
    read -r verify_s verify_mb < <(measure "$bin" verify "$archive" --quiet)
    read -r diff_s diff_mb < <(measure "$bin" diff "$archive" "$work/ref-${years}y.json" --exit-code)
    # diff's target is against verify of the larger of its two archives: the plain JSON here.
    read -r verify_plain_s verify_plain_mb < <(measure "$bin" verify "$work/ref-${years}y.json" --quiet)
    read -r floor_s floor_mb < <(measure "$floor" "$archive")
    # Encrypted (age, X25519): export, import and verify of the .age file against the plain
    # ones, run in pairs three times (the medians), the order of each pair swapped every round
    # and the disk synced before each run: the store an import writes is still being flushed
    # while the next command runs, which otherwise always slows the second of a pair.
    [ -f "$work/bench-key.txt" ] || "$bin" keygen -o "$work/bench-key.txt" >/dev/null
    recipient=$("$bin" keygen -y "$work/bench-key.txt")
    sealed="$work/ref-${years}y.json.gz.age"
    pe=(); ae=(); pi=(); ai=(); pv=(); av=()
    plain_export() { sync; pe+=("$(measure "$bin" export --store "$store" -o "$work/pair.json.gz" --quiet)"); }
    age_export() { sync; ae+=("$(measure "$bin" export --store "$store" -o "$sealed" --recipient "$recipient" --quiet)"); }
    plain_import() { sync; pi+=("$(measure "$bin" import "$archive" --store "$work/import-pair" --no-backfill --quiet)"); }
    age_import() { sync; ai+=("$(measure "$bin" import "$sealed" -i "$work/bench-key.txt" --store "$work/import-age" --no-backfill --quiet)"); }
    plain_verify() { sync; pv+=("$(measure "$bin" verify "$archive" --quiet)"); }
    age_verify() { sync; av+=("$(measure "$bin" verify "$sealed" -i "$work/bench-key.txt" --quiet)"); }
    for round in 1 2 3; do
        rm -f "$work/pair.json.gz" "$sealed"
        rm -rf "$work/import-pair" "$work/import-age"
        if [ "$round" = 2 ]; then
            age_export; plain_export; age_import; plain_import; age_verify; plain_verify
        else
            plain_export; age_export; plain_import; age_import; plain_verify; age_verify
        fi
    done
    read -r pe_s pe_mb < <(median "${pe[@]}"); read -r ae_s ae_mb < <(median "${ae[@]}")
    read -r pi_s pi_mb < <(median "${pi[@]}"); read -r ai_s ai_mb < <(median "${ai[@]}")
    read -r pv_s pv_mb < <(median "${pv[@]}"); read -r av_s av_mb < <(median "${av[@]}")
    sqlite3 "$work/import/pulse.sqlite" "DELETE FROM readinessDailies"
    read -r readiness_s readiness_mb < <(measure "$bin" readiness --store "$work/import" --backfill --days 90 --as-of 2026-03-15 --timezone UTC)

    echo "  JSON $((json_bytes / 1000000)) MB; archive $((ours_bytes / 1000000)) MB; gzip -6 $((peer_bytes / 1000000)) MB (ours/gzip size $(ratio "$ours_bytes" "$peer_bytes"))"
    row "export, median of 3" "$export_s" "$export_mb" "ours/gzip -6 time $(ratio "$export_s" "$gzip_s")"
    row "gzip -6 (peer), median" "$gzip_s" "$gzip_mb"
    if [ -n "$pigz_s" ]; then
        row "pigz -6 -p 2 (peer), median" "$pigz_s" "$pigz_mb" "export/pigz time $(ratio "$export_s" "$pigz_s"), size ours/pigz $(ratio "$ours_bytes" "$pigz_bytes")"
    else
        echo "  (pigz -6 -p 2 row skipped: no pigz)"
    fi
    row "export --compression none, median" "$none_s" "$none_mb" "plain/gzip -6 time $(ratio "$none_s" "$gzip_s")"
    row "import --no-backfill" "$import_s" "$import_mb" "ours/python $(ratio "$import_s" "$python_s")"
    row "python importer (peer)" "$python_s" "$python_mb"
    row "import with backfill" "$backfill_import_s" "$backfill_import_mb"
    row "verify" "$verify_s" "$verify_mb" "verify/import $(ratio "$verify_s" "$import_s")"
    row "verify of the plain JSON" "$verify_plain_s" "$verify_plain_mb"
    row "diff (gzip vs its plain JSON)" "$diff_s" "$diff_mb" "diff/verify of the larger $(ratio "$diff_s" "$verify_plain_s"), of the gzip $(ratio "$diff_s" "$verify_s")"
    row "read floor (codec only)" "$floor_s" "$floor_mb" "floor/import $(ratio "$floor_s" "$import_s")"
    delta() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%+.1f", a - b }'; }
    row "export (age pair), median" "$pe_s" "$pe_mb"
    row "export --recipient (age), median" "$ae_s" "$ae_mb" "age/plain $(ratio "$ae_s" "$pe_s"), RSS $(delta "$ae_mb" "$pe_mb") MB"
    row "import, median of 3" "$pi_s" "$pi_mb"
    row "import of the .age, median" "$ai_s" "$ai_mb" "age/plain $(ratio "$ai_s" "$pi_s"), RSS $(delta "$ai_mb" "$pi_mb") MB"
    row "verify, median of 3" "$pv_s" "$pv_mb"
    row "verify of the .age, median" "$av_s" "$av_mb" "age/plain $(ratio "$av_s" "$pv_s"), RSS $(delta "$av_mb" "$pv_mb") MB"
    row "readiness --backfill (90 d)" "$readiness_s" "$readiness_mb"
done

# Attachments: memory must not grow with them either. The 1-year archive plus 200 attachments
# of 1 MiB (random, so incompressible).
if [ -f "$work/ref-1y.json.gz" ]; then
    attachments="$work/attachments.json.gz"
    [ -f "$attachments" ] || python3 scripts/add_attachments.py "$work/ref-1y.json.gz" "$attachments" 200 1048576
    echo
    echo "1-year reference with 200 attachments of 1 MiB ($(($(stat -c %s "$attachments") / 1000000)) MB archive)"
    rm -rf "$work/attachments-store"
    read -r a_import_s a_import_mb < <(measure "$bin" import "$attachments" --store "$work/attachments-store" --no-backfill --quiet)
    read -r a_verify_s a_verify_mb < <(measure "$bin" verify "$attachments" --quiet)
    rm -f "$work/attachments-export.json.gz"
    read -r a_export_s a_export_mb < <(measure "$bin" export --store "$work/attachments-store" -o "$work/attachments-export.json.gz" --quiet)
    row "import --no-backfill" "$a_import_s" "$a_import_mb"
    row "verify" "$a_verify_s" "$a_verify_mb"
    row "export" "$a_export_s" "$a_export_mb"
fi

# One large attachment (issue 24): the app writes coach photos of any size, and each command
# must stay flat in memory (docs/reliability.md, "Attachments and document files in pieces").
# A 30-day archive with one attachment of 10 MB and one of 300 MB (random, escaped as the app
# escapes), each imported, exported and verified with default options.
small="$work/small-30d"
[ -f "$small/pulse.sqlite" ] || "$bin" demo --store "$small" --days 30 --seed 7 --end 2026-03-15 --timezone UTC >/dev/null
[ -f "$work/small-30d.json.gz" ] || "$bin" export --store "$small" -o "$work/small-30d.json.gz" --quiet >/dev/null 2>&1
for size_mb in ${LARGE_ATTACHMENT_MB:-10 300}; do
    large="$work/attachment-${size_mb}mb.json.gz"
    [ -f "$large" ] || python3 scripts/add_large_attachment.py "$work/small-30d.json.gz" "$large" $((size_mb * 1000000))
    echo
    echo "30-day archive with one attachment of ${size_mb} MB ($(($(stat -c %s "$large") / 1000000)) MB archive)"
    rm -rf "$work/large-store"
    read -r l_import_s l_import_mb < <(measure "$bin" import "$large" --store "$work/large-store" --no-backfill --quiet)
    rm -f "$work/large-export.json.gz"
    read -r l_export_s l_export_mb < <(measure "$bin" export --store "$work/large-store" -o "$work/large-export.json.gz" --quiet)
    read -r l_verify_s l_verify_mb < <(measure "$bin" verify "$large" --quiet)
    row "import --no-backfill" "$l_import_s" "$l_import_mb"
    row "export" "$l_export_s" "$l_export_mb"
    row "verify" "$l_verify_s" "$l_verify_mb"
done

# tables (docs/analysis.md): every table of each reference archive as CSV and as NDJSON, and of
# its store, against an export of that store. Target: ≤ 1.5 × export, peak RSS ≤ 100 MB.
for years in ${YEARS:-1 10}; do
    [ -f "$work/ref-${years}y.json.gz" ] || continue
    echo
    echo "tables of the ${years}-year reference"
    rm -rf "$work/tables-csv" "$work/tables-ndjson" "$work/tables-store" "$work/tables-export.json.gz"
    read -r t_export_s t_export_mb < <(measure "$bin" export --store "$work/ref-${years}y" -o "$work/tables-export.json.gz" --quiet)
    read -r t_csv_s t_csv_mb < <(measure "$bin" tables "$work/ref-${years}y.json.gz" -o "$work/tables-csv" --quiet)
    read -r t_ndjson_s t_ndjson_mb < <(measure "$bin" tables "$work/ref-${years}y.json.gz" -o "$work/tables-ndjson" --format ndjson --quiet)
    read -r t_store_s t_store_mb < <(measure "$bin" tables --store "$work/ref-${years}y" -o "$work/tables-store" --quiet)
    row "export" "$t_export_s" "$t_export_mb"
    row "tables (csv)" "$t_csv_s" "$t_csv_mb" "tables/export $(ratio "$t_csv_s" "$t_export_s")"
    row "tables --format ndjson" "$t_ndjson_s" "$t_ndjson_mb" "tables/export $(ratio "$t_ndjson_s" "$t_export_s")"
    row "tables --store (csv)" "$t_store_s" "$t_store_mb" "tables/export $(ratio "$t_store_s" "$t_export_s")"
    rm -rf "$work/tables-csv" "$work/tables-ndjson" "$work/tables-store" "$work/tables-export.json.gz"
done

# One more night in restic (defined above, with the reasons).
nightly_growth

# A year of Gadgetbridge history (issue 27, docs/gadgetbridge.md): HR every 5 minutes, the other
# COLMI tables at their rates (scripts/gadgetbridge-year.sh), imported into a new store, against
# the PulseLoop archive of the same rows (that store exported) imported the same way; then the
# same file again with --merge (every row a duplicate). Target: the ratio ≤ 1.0, peak RSS ≤ 100 MB.
gb="$work/gadgetbridge-year"
[ -f "$gb" ] || scripts/gadgetbridge-year.sh "$gb" 365
rm -rf "$work/gb-store" "$work/gb-archive-store" "$work/gb-archive.json.gz"
echo
echo "Gadgetbridge, 1 year ($(($(stat -c %s "$gb") / 1000)) kB database)"
read -r g_import_s g_import_mb < <(measure "$bin" import "$gb" --store "$work/gb-store" --no-backfill --quiet --timezone UTC)
"$bin" export --store "$work/gb-store" -o "$work/gb-archive.json.gz" --quiet >/dev/null 2>&1
read -r p_import_s p_import_mb < <(measure "$bin" import "$work/gb-archive.json.gz" --store "$work/gb-archive-store" --no-backfill --quiet)
read -r g_merge_s g_merge_mb < <(measure "$bin" import "$gb" --store "$work/gb-store" --merge --no-backfill --quiet --timezone UTC)
row "import --no-backfill" "$g_import_s" "$g_import_mb" "ratio to the archive $(ratio "$g_import_s" "$p_import_s")"
row "archive of the same rows" "$p_import_s" "$p_import_mb"
row "import --merge (all present)" "$g_merge_s" "$g_merge_mb"
