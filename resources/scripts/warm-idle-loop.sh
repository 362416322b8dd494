#!/bin/sh
# The warm container's command: $1 the state folder, $2 the idle timeout in seconds, $3
# Bazel's output root, $4 how often to look (seconds). It exits when the deadline (the
# deadline file's mtime + the idle timeout) has passed and no busy.* file names a live
# process; it removes the busy files of ended execs. The user bazelrc it writes gives a
# plain `bazel` (`tfwizard shell`) the builds' output root, hence their server.
state=$1; idle=$2; poll=$4
mkdir -p "$HOME" && echo "startup --output_user_root=$3" > "$HOME/.bazelrc"
: > "$state/deadline"
while :; do
  busy=
  for f in "$state"/busy.*; do
    [ -e "$f" ] || continue
    if kill -0 "$(cat "$f" 2>/dev/null)" 2>/dev/null; then busy=1; else rm -f "$f"; fi
  done
  deadline=$(( $(stat -c %Y "$state/deadline" 2>/dev/null || echo 0) + idle ))
  if [ -z "$busy" ] && [ "$(date +%s)" -ge "$deadline" ]; then exit 0; fi
  sleep "$poll"
done
