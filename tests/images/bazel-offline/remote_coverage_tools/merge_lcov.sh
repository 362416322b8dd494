#!/bin/sh
# Offline stand-in for Bazel's coverage output generator (tfwizard test image).
#
# Called as the lcov merger after each test under `bazel coverage`
#   --coverage_dir=DIR --output_file=FILE [--filter_sources=RE ...] [--source_file_manifest=F]
# and as the report generator with --combined_report=lcov
#   --reports_file=LIST --output_file=FILE
# It writes FILE as the concatenation of the lcov tracefiles (*.dat) found in DIR, or of the
# files named in LIST. It does not merge records, filter sources, or convert gcov's own
# formats: enough for `bazel coverage` to finish offline, not a coverage tool.
set -u
out=""
dir=""
reports=""
for arg in "$@"; do
    case "$arg" in
        --output_file=*) out=${arg#--output_file=} ;;
        --coverage_dir=*) dir=${arg#--coverage_dir=} ;;
        --reports_file=*) reports=${arg#--reports_file=} ;;
    esac
done
if [ -z "$out" ]; then
    echo "remote_coverage_tools stand-in: no --output_file given" >&2
    exit 2
fi
tmp="$out.tfw-merge"
: >"$tmp"
if [ -n "$dir" ] && [ -d "$dir" ]; then
    find "$dir" -type f -name '*.dat' ! -path "$out" ! -path "$tmp" -exec cat {} + >>"$tmp"
fi
if [ -n "$reports" ] && [ -f "$reports" ]; then
    while IFS= read -r report; do
        if [ -f "$report" ]; then cat "$report" >>"$tmp"; fi
    done <"$reports"
fi
mv -f "$tmp" "$out"
