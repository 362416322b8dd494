#!/bin/sh
# Configure when needed, in an exec of its own (after warm-ours.sh): $1 the hash file, $2
# the new hash, $3 configure's output, $4 the kept copy, $5 the note, then the configure
# command. Prints the skip line (__SKIP__ is replaced by it) and exits 0 when the output is
# this workspace's own.
hash_file=$1; want=$2; output=$3; kept=$4
if ours "$@"; then echo "__SKIP__"; exit 0; fi
shift 5
rm -f "$hash_file"
"$@" || exit $?
cp "$output" "$kept" && echo "$want" > "$hash_file"
