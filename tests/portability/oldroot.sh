#!/usr/bin/env bash
# Build (once per build tree) the old userland the portability tests chroot
# into: Debian 11 "bullseye" (glibc 2.31, Python 3.9: the generation of
# Ubuntu 20.04 and of many nvidia/cuda images), minbase plus python3 (for
# ctypes; python3-minimal has no ctypes), from Debian's own mirror.
# Idempotent and safe to run from parallel ctest jobs (flock).
#
#   tests/portability/oldroot.sh DEST
#
# Leaves DEST/root and DEST/STATUS:
#   "ok bullseye glibc 2.31 ..."   the root is there
#   "skip REASON"                  it could not be built (not root, no
#                                  debootstrap, no network)
# Exits 0 either way; the tests read STATUS and exit 77 with the reason on
# "skip" (oldroot_lib.sh has the helper).
set -uo pipefail
dest=${1:?usage: oldroot.sh DEST}
mkdir -p "$dest"
exec 9>"$dest/.lock"
flock 9

if [ -f "$dest/STATUS" ] && grep -q '^ok' "$dest/STATUS" && [ -x "$dest/root/bin/sh" ]; then
	cat "$dest/STATUS"
	exit 0
fi

skip() {
	echo "skip $*" >"$dest/STATUS"
	echo "oldroot.sh: skip: $*" >&2
	exit 0
}

[ "$(id -u)" -eq 0 ] || skip "not root: debootstrap and chroot need root"
command -v debootstrap >/dev/null || skip "debootstrap not installed (scripts/setup.sh installs it)"
command -v unshare >/dev/null && command -v chroot >/dev/null || skip "no unshare/chroot (util-linux, coreutils)"
unshare -m --propagation private true 2>/dev/null || skip "cannot make a mount namespace (unshare -m) here"
mirror=${CUTRACE_DEBIAN_MIRROR:-http://deb.debian.org/debian}

rm -rf "$dest/root" "$dest/root.new"
start=$(date +%s)
if ! timeout 900 debootstrap --variant=minbase --include=python3 bullseye "$dest/root.new" "$mirror" \
	>"$dest/debootstrap.log" 2>&1; then
	rm -rf "$dest/root.new"
	skip "debootstrap bullseye from $mirror failed (no network?): $(grep -m1 -E '^E:' "$dest/debootstrap.log" || tail -1 "$dest/debootstrap.log")"
fi
mv "$dest/root.new" "$dest/root"
glibc=$(ls "$dest"/root/lib/x86_64-linux-gnu/libc-*.so "$dest"/root/lib/*/libc-*.so 2>/dev/null |
	sed -n 's/.*libc-\([0-9.]*\)\.so/\1/p' | head -1)
py=$(chroot "$dest/root" python3 -c 'import ctypes, platform; print(platform.python_version())' 2>&1) ||
	skip "python3 with ctypes does not run in the new root: $py"
echo "ok bullseye glibc ${glibc:-?} python $py ($(du -sm "$dest/root" | cut -f1) MB, $(($(date +%s) - start)) s)" >"$dest/STATUS"
cat "$dest/STATUS"
