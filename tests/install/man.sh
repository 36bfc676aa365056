#!/usr/bin/env bash
# cutrace(1) stays true: it renders without a groff warning, names every
# command of `cutrace --help` and every option of each `cutrace CMD --help`,
# every CUTRACE_* variable the shim and the CLI read (in ENVIRONMENT), the
# trace format version of format.h, and cutrace's own version.
#
#   man.sh MANPAGE CUTRACE SOURCE_DIR
set -uo pipefail
page=${1:?usage: man.sh MANPAGE CUTRACE SOURCE_DIR}
cutrace=${2:?} src=${3:?}
command -v groff >/dev/null || { echo "SKIP: groff not installed (groff-base)"; exit 77; }
fail=0
bad() { echo "FAIL: $*"; fail=1; }

w=$(groff -man -ww -z -Tutf8 "$page" 2>&1)
[ -z "$w" ] || bad "groff warns: $w"
# one line per paragraph, no hyphenation, plain ASCII
txt=$(groff -man -Tascii -P -cbu -rLL=2000n -rHY=0 "$page" 2>/dev/null)
has() { grep -qF -- "$1" <<<"$txt"; }

cmds=$("$cutrace" --help | sed -n '/^commands:/,/^$/p' | awk 'NR > 1 && NF { print $1 }')
[ -n "$cmds" ] || bad "no commands in 'cutrace --help'"
nopt=0
for c in $cmds; do
	has "cutrace $c" || bad "command '$c' is not in the page"
	for o in $("$cutrace" "$c" --help | grep -oE '(^|[ [,])--?[a-z][a-z-]*' | sed 's/^[ [,]//' | sort -u); do
		nopt=$((nopt + 1))
		has "$o" || bad "option $o of 'cutrace $c' is not in the page"
	done
done

envsec=$(sed -n '/^ENVIRONMENT/,/^FILES/p' <<<"$txt")
vars=$(grep -rhoE 'getenv\("CUTRACE_[A-Z_]+"\)' "$src/shim" "$src/tracer" | sed 's/getenv("\(.*\)")/\1/' | sort -u)
[ -n "$vars" ] || bad "found no getenv(\"CUTRACE_...\") in the sources"
for v in $vars; do
	grep -qw -- "$v" <<<"$envsec" || bad "$v is read by the code but not under ENVIRONMENT"
done

fmt=$src/shim/include/cutrace/format.h
maj=$(sed -n 's/^#define CUTRACE_VERSION_MAJOR *\([0-9]*\).*/\1/p' "$fmt")
min=$(sed -n 's/^#define CUTRACE_VERSION_MINOR *\([0-9]*\).*/\1/p' "$fmt")
has "version $maj.$min of the format" || bad "the page does not say 'version $maj.$min of the format' (format.h)"
ver=$("$cutrace" --version | awk '{ print $2 }')
head -5 <<<"$txt" | grep -q "cutrace $ver" || grep -q "\"cutrace $ver\"" "$page" || bad "the page is not of cutrace $ver"

[ $fail -eq 0 ] && echo "ok: cutrace(1) of $ver: $(wc -w <<<"$cmds") commands, $nopt options, $(wc -w <<<"$vars") CUTRACE_* variables, format $maj.$min; no groff warning"
exit $fail
