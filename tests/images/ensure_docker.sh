#!/bin/sh
# Make sure a Docker engine answers on this machine (idempotent, non-interactive).
#
#   1. `docker info` answers      -> exit 0 at once.
#   2. running as root            -> install docker.io if dockerd is missing, start dockerd in
#                                    the background (log: /var/log/dockerd.log), poll up to 60 s.
#   3. otherwise                  -> exit 1 with a message saying what is missing.
set -u

export DEBIAN_FRONTEND=noninteractive
WAIT_S="${TFW_DOCKER_WAIT_S:-60}"

say() { printf 'ensure_docker: %s\n' "$*" >&2; }

docker_answers() {
    command -v docker >/dev/null 2>&1 && docker info >/dev/null 2>&1
}

if docker_answers; then
    exit 0
fi

if [ "$(id -u)" != "0" ]; then
    if command -v docker >/dev/null 2>&1; then
        say "docker is installed but the engine does not answer, and this user ($(id -un)) is not root, so dockerd cannot be started here."
        say "Start the engine (e.g. 'sudo systemctl start docker') or add this user to the 'docker' group."
    else
        say "docker is not installed and this user is not root; install docker.io (Debian/Ubuntu) first."
    fi
    exit 1
fi

if ! command -v dockerd >/dev/null 2>&1 || ! command -v docker >/dev/null 2>&1; then
    say "dockerd not found; installing docker.io with apt-get"
    if ! command -v apt-get >/dev/null 2>&1; then
        say "apt-get not available; install Docker by hand."
        exit 1
    fi
    apt-get update </dev/null || { say "apt-get update failed"; exit 1; }
    apt-get install -y --no-install-recommends docker.io </dev/null \
        || { say "apt-get install docker.io failed"; exit 1; }
fi

# A daemon may be starting already (another job ran us a moment ago): give it a few seconds
# before starting a second one.
if command -v pgrep >/dev/null 2>&1 && pgrep -x dockerd >/dev/null 2>&1; then
    say "dockerd is running but does not answer yet; waiting"
else
    say "starting dockerd (log: /var/log/dockerd.log)"
    setsid nohup dockerd </dev/null >>/var/log/dockerd.log 2>&1 &
fi

i=0
while [ "$i" -lt "$WAIT_S" ]; do
    if docker_answers; then
        say "docker engine ready after ${i}s"
        exit 0
    fi
    sleep 1
    i=$((i + 1))
done

say "the docker engine did not answer within ${WAIT_S}s; last lines of /var/log/dockerd.log:"
tail -n 20 /var/log/dockerd.log >&2 2>/dev/null || true
exit 1
