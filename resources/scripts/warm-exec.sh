#!/bin/sh
# Every exec in the warm container: $1 the state folder, $2 the idle seconds (the idle loop
# reads them; kept so every caller passes the same arguments), $3 a token, then the
# command. Records its pid (the exec's process group) in busy.TOKEN (the idle loop removes
# it once that process is gone) and moves the deadline on before and after (a truncation:
# no process started). SIGINT is trapped, not ignored (children get the default back), so
# the wrapper outlives the command and reports its exit.
state=$1; token=$3; shift 3
echo $$ > "$state/busy.$token"
: > "$state/deadline"
trap : INT TERM
"$@"
rc=$?
: > "$state/deadline"
exit $rc
