#!/bin/bash
# Build the two local Docker images of tfwizard's test world, without any registry.
#
#   tfwizard-test/bazel:bookworm   Debian bookworm (debootstrap) + python3, g++, git, Debian's
#                                  bazel-bootstrap (4.2.3) set up to build offline: one small
#                                  layer (bazel-offline/, bazel.bazelrc) on top of
#   tfwizard-test/bazel-base:bookworm  the Debian system alone (debootstrap + apt, ~900 MB).
#   tfwizard-test/busybox:latest   busybox-static alone (2 MB), for fast container tests.
#
# Idempotent: each image carries the label org.tfwizard.test.content=<sha256 of this script
# and of the files it copies>; an image whose label matches is kept, anything else is rebuilt.
# The base's hash covers this script only, so editing bazel.bazelrc or bazel-offline/ rebuilds
# just the top layer (seconds, no network); editing this script rebuilds both.
# Needs root, debootstrap, busybox-static (installed with apt-get when missing), a running
# Docker engine (see ensure_docker.sh) and the Debian archive. Non-interactive (CI=true).
#
# Environment:
#   TFW_DEBIAN_MIRROR   Debian mirror for debootstrap (default http://deb.debian.org/debian)
#   TFW_IMAGES_ONLY     "bazel" or "busybox" to build just one of them
#   TFW_IMAGES_FORCE=1  rebuild even when the label matches
set -euo pipefail

export DEBIAN_FRONTEND=noninteractive
export LC_ALL=C

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
MIRROR="${TFW_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
SUITE=bookworm
BAZEL_IMAGE="tfwizard-test/bazel:bookworm"
BAZEL_BASE_IMAGE="tfwizard-test/bazel-base:bookworm"
BUSYBOX_IMAGE="tfwizard-test/busybox:latest"
LABEL_KEY="org.tfwizard.test.content"
ONLY="${TFW_IMAGES_ONLY:-}"
FORCE="${TFW_IMAGES_FORCE:-0}"
PACKAGES="python3 python3-pip python3-venv python-is-python3 g++ bazel-bootstrap zip unzip ca-certificates git"
BUSYBOX_APPLETS="sh echo sleep cat seq yes head printf kill true false ls wc dd"

T0=$(date +%s)
log() { printf '[build_images %4ss] %s\n' "$(( $(date +%s) - T0 ))" "$*"; }
die() { printf 'build_images: ERROR: %s\n' "$*" >&2; exit 1; }

[ "$(id -u)" = "0" ] || die "must run as root (debootstrap, chroot and mounts need it)"
docker info >/dev/null 2>&1 || die "the Docker engine does not answer; run ensure_docker.sh first"

# One builder at a time on this machine (parallel test sessions call this script too); the
# labels are checked after the lock is taken, so a waiting run finds the images done.
LOCK_FILE=/var/tmp/tfwizard-test-images.lock
if command -v flock >/dev/null 2>&1; then
    exec 9>"$LOCK_FILE"
    if ! flock -n 9; then
        log "another build_images.sh is running; waiting for it (lock $LOCK_FILE)"
        flock 9
    fi
fi

# ---------------------------------------------------------------- content hashes
hash_files() {  # prints one sha256 over the given files (name + content, sorted by name)
    local f
    for f in "$@"; do
        printf '%s\n' "${f#"$HERE"/}"
        sha256sum <"$f"
    done | sha256sum | cut -c1-64
}
BAZEL_BASE_HASH=$(hash_files "$HERE/build_images.sh")
BAZEL_HASH=$(hash_files "$HERE/build_images.sh" "$HERE/bazel.bazelrc" \
    $(find "$HERE/bazel-offline" -type f | LC_ALL=C sort))

label_of() {
    docker image inspect -f "{{ index .Config.Labels \"$LABEL_KEY\" }}" "$1" 2>/dev/null || true
}
up_to_date() {  # image hash
    [ "$FORCE" != "1" ] && [ "$(label_of "$1")" = "$2" ]
}
want() { [ -z "$ONLY" ] || [ "$ONLY" = "$1" ]; }

ensure_host_tool() {  # command package
    command -v "$1" >/dev/null 2>&1 && return 0
    log "installing $2 (for $1)"
    apt-get update </dev/null >/dev/null
    apt-get install -y --no-install-recommends "$2" </dev/null >/dev/null
}

# ---------------------------------------------------------------- work dir and cleanup
WORK=""
ROOTFS=""
unmount_all() {
    [ -n "$ROOTFS" ] || return 0
    local m
    # deepest mount points first
    for m in $(awk -v r="$ROOTFS" 'index($2, r) == 1 {print $2}' /proc/mounts | sort -r); do
        umount -l "$m" 2>/dev/null || umount -f "$m" 2>/dev/null || true
    done
}
cleanup() {
    local rc=$?
    unmount_all
    if [ -n "$WORK" ] && [ -d "$WORK" ]; then
        if awk -v r="$WORK" 'index($2, r) == 1 {found=1} END {exit !found}' /proc/mounts; then
            printf 'build_images: WARNING: mounts remain under %s; not deleting it\n' "$WORK" >&2
        else
            rm -rf --one-file-system "$WORK"
        fi
    fi
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

new_work() {
    if [ -z "$WORK" ]; then
        WORK=$(mktemp -d /var/tmp/tfwizard-images.XXXXXX)
    fi
}

# ---------------------------------------------------------------- busybox image
build_busybox() {
    ensure_host_tool busybox busybox-static
    local bb
    bb=$(command -v busybox)
    # A dynamically linked busybox would not run in an empty image.
    if ! file_is_static "$bb"; then
        [ -x /bin/busybox ] && file_is_static /bin/busybox && bb=/bin/busybox \
            || die "$bb is not statically linked; install busybox-static"
    fi
    local h
    h=$(hash_files "$HERE/build_images.sh" "$bb")
    if up_to_date "$BUSYBOX_IMAGE" "$h"; then
        log "$BUSYBOX_IMAGE is up to date ($LABEL_KEY=${h:0:12}...)"
        return 0
    fi
    local t=$(date +%s)
    new_work
    local dir="$WORK/busybox"
    mkdir -p "$dir/bin" "$dir/tmp" "$dir/etc"
    chmod 1777 "$dir/tmp"
    cp "$bb" "$dir/bin/busybox"
    local a
    for a in $BUSYBOX_APPLETS; do
        ln -s busybox "$dir/bin/$a"
    done
    printf 'root:x:0:0:root:/:/bin/sh\n' >"$dir/etc/passwd"
    printf 'root:x:0:\n' >"$dir/etc/group"
    tar --numeric-owner -C "$dir" -c . | docker import \
        -c 'ENV PATH=/bin' -c 'CMD ["/bin/sh"]' \
        -c "LABEL $LABEL_KEY=$h" \
        - "$BUSYBOX_IMAGE" >/dev/null
    log "built $BUSYBOX_IMAGE in $(( $(date +%s) - t ))s"
}

file_is_static() {
    # ldd says "not a dynamic executable" for static binaries
    ! ldd "$1" >/dev/null 2>&1
}

# ---------------------------------------------------------------- bazel image
build_bazel() {
    if up_to_date "$BAZEL_IMAGE" "$BAZEL_HASH"; then
        log "$BAZEL_IMAGE is up to date ($LABEL_KEY=${BAZEL_HASH:0:12}...)"
        return 0
    fi
    build_bazel_base
    build_bazel_layer
}

# The Debian system: debootstrap, apt, trimmed, imported as one layer.
build_bazel_base() {
    if up_to_date "$BAZEL_BASE_IMAGE" "$BAZEL_BASE_HASH"; then
        log "$BAZEL_BASE_IMAGE is up to date ($LABEL_KEY=${BAZEL_BASE_HASH:0:12}...)"
        return 0
    fi
    ensure_host_tool debootstrap debootstrap
    new_work
    ROOTFS="$WORK/rootfs"
    mkdir -p "$ROOTFS"

    local t=$(date +%s)
    log "debootstrap --variant=minbase $SUITE ($MIRROR)"
    # Keep docs, man pages and locales out of the image from the very first package.
    mkdir -p "$ROOTFS/etc/dpkg/dpkg.cfg.d"
    cat >"$ROOTFS/etc/dpkg/dpkg.cfg.d/01-tfwizard-nodoc" <<'CFG'
path-exclude=/usr/share/doc/*
path-include=/usr/share/doc/*/copyright
path-exclude=/usr/share/man/*
path-exclude=/usr/share/info/*
path-exclude=/usr/share/locale/*
path-exclude=/usr/share/lintian/*
CFG
    debootstrap --variant=minbase "$SUITE" "$ROOTFS" "$MIRROR" >"$WORK/debootstrap.log" 2>&1 \
        || { tail -n 30 "$WORK/debootstrap.log" >&2; die "debootstrap failed"; }
    log "debootstrap done in $(( $(date +%s) - t ))s"

    t=$(date +%s)
    printf '#!/bin/sh\nexit 101\n' >"$ROOTFS/usr/sbin/policy-rc.d"
    chmod 755 "$ROOTFS/usr/sbin/policy-rc.d"
    cp /etc/resolv.conf "$ROOTFS/etc/resolv.conf"
    cat >"$ROOTFS/etc/apt/apt.conf.d/90-tfwizard" <<'CFG'
APT::Install-Recommends "false";
APT::Install-Suggests "false";
Acquire::Retries "3";
CFG
    mount -t proc proc "$ROOTFS/proc"
    mount -t sysfs sysfs "$ROOTFS/sys"
    mount --rbind /dev "$ROOTFS/dev"
    mount --make-rslave "$ROOTFS/dev"

    log "chroot apt-get install $PACKAGES"
    chroot "$ROOTFS" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
        DEBIAN_FRONTEND=noninteractive LC_ALL=C \
        sh -c "apt-get update -q && apt-get install -y -q --no-install-recommends $PACKAGES \
               && apt-get clean" </dev/null >"$WORK/apt.log" 2>&1 \
        || { tail -n 40 "$WORK/apt.log" >&2; die "apt-get install in the chroot failed"; }
    unmount_all
    log "packages installed in $(( $(date +%s) - t ))s"

    # Any uid may run here: /tmp (and HOME=/tmp/home below it) and /cache (a disk-cache
    # mount point; a fresh named volume copies these permissions) are world-writable.
    chmod 1777 "$ROOTFS/tmp"
    mkdir -p "$ROOTFS/cache" "$ROOTFS/src" "$ROOTFS/opt"
    chmod 1777 "$ROOTFS/cache" "$ROOTFS/src"

    # Trim: apt lists and caches, the resolv.conf of this host, the policy-rc.d stays
    # (no services should start in a build container).
    rm -rf "$ROOTFS/var/lib/apt/lists/"* "$ROOTFS/var/cache/apt/"*.bin \
        "$ROOTFS/var/cache/apt/archives/"*.deb "$ROOTFS/var/log/"*.log
    : >"$ROOTFS/etc/resolv.conf"

    t=$(date +%s)
    log "docker import $BAZEL_BASE_IMAGE"
    tar --numeric-owner -C "$ROOTFS" -c . | docker import \
        -c 'WORKDIR /src' \
        -c 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
        -c 'ENV LANG=C.UTF-8' \
        -c 'CMD ["/bin/bash"]' \
        -c "LABEL $LABEL_KEY=$BAZEL_BASE_HASH" \
        - "$BAZEL_BASE_IMAGE" >/dev/null
    log "imported in $(( $(date +%s) - t ))s"
    rm -rf --one-file-system "$ROOTFS"
    ROOTFS=""
}

# Bazel offline support, one layer on the base: docker create + cp + commit (no builder,
# no registry, nothing runs). /etc/bazel.bazelrc keeps whatever Debian put there, then ours.
build_bazel_layer() {
    local t=$(date +%s)
    new_work
    local layer="$WORK/layer" cid
    mkdir -p "$layer"
    cp -a "$HERE/bazel-offline" "$layer/bazel-offline"
    chown -R 0:0 "$layer/bazel-offline"
    chmod -R a+rX "$layer/bazel-offline"
    cid=$(docker create --network none "$BAZEL_BASE_IMAGE" true)
    if docker cp "$cid:/etc/bazel.bazelrc" "$layer/system.bazelrc" 2>/dev/null \
            && [ -s "$layer/system.bazelrc" ]; then
        { cat "$layer/system.bazelrc"; printf '\n'; cat "$HERE/bazel.bazelrc"; } \
            >"$layer/bazel.bazelrc"
    else
        cp "$HERE/bazel.bazelrc" "$layer/bazel.bazelrc"
    fi
    chmod 644 "$layer/bazel.bazelrc"
    docker cp "$layer/bazel-offline" "$cid:/opt/bazel-offline" \
        && docker cp "$layer/bazel.bazelrc" "$cid:/etc/bazel.bazelrc" \
        && docker commit \
            -c 'CMD ["/bin/bash"]' \
            -c "LABEL $LABEL_KEY=$BAZEL_HASH" \
            "$cid" "$BAZEL_IMAGE" >/dev/null \
        || { docker rm -f "$cid" >/dev/null 2>&1; die "committing the $BAZEL_IMAGE layer failed"; }
    docker rm -f "$cid" >/dev/null
    log "built $BAZEL_IMAGE (layer on $BAZEL_BASE_IMAGE) in $(( $(date +%s) - t ))s"
}

if want busybox; then build_busybox; fi
if want bazel; then build_bazel; fi
log "done: $(docker image ls --format '{{.Repository}}:{{.Tag}} {{.Size}}' | grep '^tfwizard-test/' | tr '\n' ' ')"
