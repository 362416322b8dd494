#!/bin/sh
# Cancel: $1 the signal, $2 the busy file; signals the process group it records.
pid=$(cat "$2" 2>/dev/null) && [ -n "$pid" ] && kill -s "$1" -- "-$pid"
