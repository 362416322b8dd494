#!/bin/sh
# A shell function the configure scripts start with: `ours HASH_FILE WANT OUTPUT KEPT NOTE`
# succeeds when OUTPUT is this workspace's own configure output (its inputs' hash kept, the
# file equal to the kept copy); prints NOTE when the inputs are the same but the file is
# not (another build's answers). `cmp` missing counts as "not ours": configure runs again,
# nothing is wrong.
ours() {
  have=
  [ -f "$1" ] && read -r have < "$1"
  [ -n "$have" ] && [ "$have" = "$2" ] || return 1
  [ -e "$3" ] && cmp -s "$3" "$4" 2>/dev/null && return 0
  [ -e "$4" ] && echo "$5"
  return 1
}
