#!/usr/bin/env bash
# The .deb that CPack makes (cpack --config BUILD/CPackConfig.cmake): its
# contents and Depends, then dpkg -i into a private root (its own dpkg
# database: the machine's packages are untouched; --force-depends, since
# that database has no libc6; maintainer scripts outside a chroot, with a
# stub ldconfig first on PATH), the installed tree works, and dpkg -r leaves
# nothing behind.  Not root: dpkg-deb -x in place of dpkg -i.
#
#   deb.sh CPACK BUILD_DIR FAKENV FAKECUDA_DIR
set -uo pipefail
cpack=${1:?usage: deb.sh CPACK BUILD_DIR FAKENV FAKECUDA_DIR}
build=${2:?} fakenv=${3:?} fakecuda=${4:?}
command -v dpkg-deb >/dev/null || { echo "SKIP: no dpkg-deb (not a Debian system)"; exit 77; }
installed_summary=""
. "$(dirname "$0")/installed.sh" # check_installed sets installed_summary
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }

(cd "$t" && "$cpack" --config "$build/CPackConfig.cmake" -G DEB -B "$t/pkg") >"$t/cpack.log" 2>&1 ||
	{ echo "FAIL: cpack: $(tail -5 "$t/cpack.log")"; exit 1; }
deb=$(ls "$t"/pkg/*.deb 2>/dev/null | head -1)
[ -n "$deb" ] || { echo "FAIL: cpack made no .deb: $(tail -3 "$t/cpack.log")"; exit 1; }

list=$(dpkg-deb -c "$deb" | awk '{ print $6 }')
for f in ./usr/bin/cutrace ./usr/lib/cutrace/libcutrace.so ./usr/libexec/cutrace/cutrace-probe \
	./usr/share/man/man1/cutrace.1.gz ./usr/share/doc/cutrace/README.md; do
	grep -qx -- "$f" <<<"$list" || bad "$f is not in $(basename "$deb")"
done
grep -q '^\./usr/local/\|^\./build\|^\./tmp' <<<"$list" && bad "stray paths in the package: $(grep -m3 '^\./usr/local\|^\./build\|^\./tmp' <<<"$list")"
dep=$(dpkg-deb -f "$deb" Depends)
grep -q 'libc6' <<<"$dep" && grep -q 'libelf1' <<<"$dep" || bad "Depends is '$dep' (expected libc6 and libelf1)"
[ "$(dpkg-deb -f "$deb" Package)" = cutrace ] || bad "Package is '$(dpkg-deb -f "$deb" Package)'"

r=$t/root
mkdir -p "$r/var/lib/dpkg/info" "$r/var/lib/dpkg/updates" "$r/var/lib/dpkg/triggers" "$t/stub"
touch "$r/var/lib/dpkg/status" "$r/var/lib/dpkg/available"
printf '#!/bin/sh\necho "ldconfig $*" >>"%s/ldconfig.log"\n' "$t" >"$t/stub/ldconfig"
chmod +x "$t/stub/ldconfig"
how="dpkg-deb -x"
if [ "$(id -u)" -eq 0 ] && command -v dpkg >/dev/null; then
	how="dpkg -i/-r in a private root"
	PATH=$t/stub:$PATH dpkg --root="$r" --force-depends --force-script-chrootless -i "$deb" >"$t/dpkg.log" 2>&1 ||
		bad "dpkg -i: $(grep -v 'depends on\|not installed\|dependency problems' "$t/dpkg.log" | tail -3)"
	dpkg --root="$r" -s cutrace 2>/dev/null | grep -qx 'Status: install ok installed' ||
		bad "dpkg -i: the private database does not say cutrace is installed"
else
	dpkg-deb -x "$deb" "$r" || bad "dpkg-deb -x failed"
fi
check_installed "$r/usr" "$fakenv" "$fakecuda" "$t/work" || fail=1
if [ "$how" != "dpkg-deb -x" ]; then
	PATH=$t/stub:$PATH dpkg --root="$r" --force-script-chrootless -r cutrace >>"$t/dpkg.log" 2>&1 || bad "dpkg -r failed: $(tail -3 "$t/dpkg.log")"
	left=$(find "$r/usr" -type f 2>/dev/null | head -3)
	[ -z "$left" ] || bad "dpkg -r left files: $left"
fi
[ $fail -eq 0 ] && echo "ok: $(basename "$deb") ($(stat -c %s "$deb") bytes, Depends: $dep), $how; $installed_summary"
exit $fail
