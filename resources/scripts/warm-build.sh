#!/bin/sh
# One build in one exec (every exec costs a round trip), after warm-ours.sh: $1 this
# build's BEP file, $2 how many of the next arguments are the configure command (0: none),
# then that command, then the build command. Removes the BEP files (and wheel lists) of
# earlier builds whose exec is not busy, in one `rm`, runs the configure command (skipped
# behind __IF__ when the source's configure output is this workspace's own), and on its
# success the build. __IF__ and __SKIP__ are replaced by the flag and the skip line.
bep=$1; n=$2; shift 2
state=${bep%/*} old=
for f in "$state"/bep-*; do
  [ -e "$f" ] || continue
  t=${f##*/bep-}; t=${t%.*}
  [ -e "$state/busy.$t" ] || old="$old$f
"
done
# $old is split on newlines only, with globbing off: one word per file
# shellcheck disable=SC2086
[ -z "$old" ] || { IFS='
'; set -f; rm -f -- $old; set +f; unset IFS; }
if [ "$n" -gt 5 ] && [ "$1" = __IF__ ] && ours "$2" "$3" "$4" "$5" "$6"; then
  echo "__SKIP__"; shift "$n"; n=0
fi
if [ "$n" -gt 0 ]; then
  ( i=0; for a do if [ "$i" -lt "$n" ]; then set -- "$@" "$a"; fi; shift; i=$((i+1)); done
    [ "$1" = __IF__ ] || exec "$@"
    hash_file=$2; want=$3; output=$4; kept=$5; shift 6
    rm -f "$hash_file"
    "$@" || exit $?
    cp "$output" "$kept" && echo "$want" > "$hash_file" ) || exit $?
fi
shift "$n"
exec "$@"
