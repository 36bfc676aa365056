#!/usr/bin/env bash
# The shim and the probe are loaded in every userland from glibc 2.17 up:
# fail if the file (libcutrace.so, cutrace-probe) needs a newer GLIBC_x.y
# version than FLOOR, or leaves a dl* lookup without libdl.so.2 (where dlsym
# lives before glibc 2.34).
#   glibc_floor.sh LIB [FLOOR]
set -euo pipefail
lib=${1:?usage: glibc_floor.sh LIB [FLOOR]}
floor=${2:-2.17}
command -v readelf >/dev/null || { echo "SKIP: readelf not installed"; exit 77; }
# every version the library asks of libc/libdl (the .gnu.version_r section)
need=$(readelf -V --wide "$lib" | sed -n 's/.*Name: GLIBC_\([0-9.]*\).*/\1/p' | sort -uV)
[ -n "$need" ] || { echo "FAIL: no GLIBC version needs found in $lib (readelf -V)"; exit 1; }
bad=0
for v in $need; do
	if [ "$(printf '%s\n%s\n' "$v" "$floor" | sort -V | tail -1)" != "$floor" ]; then
		echo "FAIL: $lib needs GLIBC_$v (floor $floor):"
		readelf --dyn-syms --wide "$lib" | grep "@GLIBC_$v\b" | awk '{print "    " $8}'
		bad=1
	fi
done
if ! readelf -d "$lib" | grep -q 'NEEDED.*\[libdl\.so\.2\]'; then
	echo "FAIL: $lib has no NEEDED libdl.so.2: before glibc 2.34 a program that does not link libdl leaves the shim no dlsym"
	bad=1
fi
[ $bad -eq 0 ] && echo "ok: $lib needs GLIBC $(echo $need | tr ' ' ',') (highest $(echo "$need" | tail -1), floor $floor)"
exit $bad
