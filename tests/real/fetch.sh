#!/usr/bin/env bash
# Fetch NVIDIA's own user-space libraries from Debian's non-free component,
# as test oracles: libcuda1 + libnvidia-ml1 (the 535 branch in bookworm) and
# libcudart11.0 (11.8), the newest the release and its security archive have.  The system's apt sources are not touched: apt runs
# with a sources list, a state directory and an archive cache of its own,
# all under DEST.  Idempotent and safe to run from parallel ctest jobs.
#
#   tests/real/fetch.sh DEST
#
# Leaves DEST/root (the packages extracted with dpkg -x) and DEST/STATUS:
#   "ok VERSION..."           the libraries are there
#   "skip REASON"             they could not be fetched (no network, not Debian)
# Exits 0 either way; tests read STATUS and exit 77 with the reason on "skip"
# (tests/real/real.sh has the helper for that).
set -uo pipefail
dest=${1:?usage: fetch.sh DEST}
mkdir -p "$dest" && dest=$(cd "$dest" && pwd) || exit 1 # apt reads relative paths from /etc/apt
exec 9>"$dest/.lock"
flock 9

if [ -f "$dest/STATUS" ] && grep -q '^ok' "$dest/STATUS"; then
	cat "$dest/STATUS"
	exit 0
fi

skip() {
	echo "skip $*" >"$dest/STATUS"
	echo "fetch.sh: skip: $*" >&2
	exit 0
}

command -v apt-get >/dev/null && command -v dpkg >/dev/null || skip "no apt-get/dpkg on this machine"
. /etc/os-release 2>/dev/null || true
[ "${ID:-}" = debian ] || skip "not a Debian system (ID=${ID:-unknown}): Debian's non-free archive is the source"
suite=${VERSION_CODENAME:-bookworm}
mirror=${CUTRACE_DEBIAN_MIRROR:-http://deb.debian.org/debian}

apt="$dest/apt"
rm -rf "$apt"
mkdir -p "$apt/lists/partial" "$apt/archives/partial" "$apt/parts" "$dest/debs"
security=${CUTRACE_DEBIAN_SECURITY:-http://deb.debian.org/debian-security}
{
	echo "deb $mirror $suite main non-free"
	echo "deb $mirror $suite-updates main non-free"
	echo "deb $security $suite-security main non-free"
} >"$apt/sources.list"
opts=(-o "Dir::Etc::SourceList=$apt/sources.list" -o "Dir::Etc::SourceParts=$apt/parts"
      -o "Dir::State::Lists=$apt/lists" -o "Dir::Cache::Archives=$apt/archives"
      -o "Debug::NoLocking=1" -o "APT::Sandbox::User=root"
      -o "Acquire::Retries=2" -o "Acquire::http::Timeout=20")
timeout 300 apt-get "${opts[@]}" -qq update >"$dest/apt.log" 2>&1 ||
	skip "apt-get update against $mirror failed (no network?): $(grep -m1 -E '^(E|W):' "$dest/apt.log")"
pkgs=(libcuda1 libnvidia-ml1 libcudart11.0)
(cd "$dest/debs" && rm -f ./*.deb && timeout 300 apt-get "${opts[@]}" -qq download "${pkgs[@]}") >>"$dest/apt.log" 2>&1 ||
	skip "apt-get download ${pkgs[*]} failed: $(grep -m1 -E '^(E|W):' "$dest/apt.log")"

rm -rf "$dest/root"
mkdir -p "$dest/root"
vers=()
for f in "$dest"/debs/*.deb; do
	dpkg -x "$f" "$dest/root" || skip "dpkg -x $f failed"
	vers+=("$(dpkg-deb -f "$f" Package)=$(dpkg-deb -f "$f" Version)")
done
echo "ok ${vers[*]}" >"$dest/STATUS"
cat "$dest/STATUS"
