#!/usr/bin/env bash
# rel_setuid: in a secure-execution process (AT_SECURE: setuid, setgid or
# file capabilities) the shim must stay inert: no trace, nothing on stderr,
# the program unharmed.  rel_secure is linked against libcutrace.so, since the
# loader drops LD_PRELOAD paths in such processes.  Needs root (to make a
# setuid-nobody copy, or a copy with file capabilities run as nobody); skips
# with 77 otherwise, or when the file system ignores setuid bits (nosuid).
here=$(cd "$(dirname "$0")" && pwd)
. "$here/common.sh"
if [ "$(id -u)" != 0 ]; then
	echo "not root: cannot make a setuid copy here"
	exit 77
fi
chmod 711 "$T"

# control: the same binary, not setuid, traces
mkdir -p "$T/ctl/d" && chmod 700 "$T/ctl/d"
cp "$REL_BIN/rel_secure" "$T/ctl/"
run3 "$T/c" env CUTRACE_DIR="$T/ctl/d" "$T/ctl/rel_secure"
if grep -q "AT_SECURE=0" "$T/c.out" && one_trace "$T/ctl/d" > /dev/null; then
	ok "control (not setuid): AT_SECURE=0 and a trace"
else
	bad "control run: $(cat "$T/c.out" "$T/c.err" | tr '\n' '|'), files: $(ls "$T/ctl/d")"
fi

secure_case() { # NAME DIR-OWNER RUNNER... (the binary is $T/s/rel_secure)
	local name=$1 owner=$2
	shift 2
	rm -rf "$T/s/d" && mkdir -p "$T/s/d" && chown "$owner" "$T/s/d" && chmod 700 "$T/s/d"
	run3 "$T/r" "$@" env CUTRACE_DIR="$T/s/d" CUTRACE_DEBUG=2 "$T/s/rel_secure"
	if ! grep -q "AT_SECURE=1" "$T/r.out"; then
		skip "$name: AT_SECURE is not set (nosuid mount?): $(head -1 "$T/r.out")"
		return
	fi
	if [ -s "$T/r.err" ]; then
		bad "$name: the shim wrote to stderr: $(head -2 "$T/r.err" | tr '\n' '|')"
	elif [ -n "$(ls -A "$T/s/d")" ]; then
		bad "$name: the shim wrote $(ls "$T/s/d")"
	elif [ "$(cat "$T/r.rc")" != 0 ] || ! grep -q "open=-1 errno=2 dlopen=NULL" "$T/r.out"; then
		bad "$name: the program changed: $(cat "$T/r.out" | tr '\n' '|') rc $(cat "$T/r.rc")"
	else
		ok "$name: AT_SECURE=1, no trace, no output (CUTRACE_DEBUG=2 set)"
	fi
}

mkdir -p "$T/s" && chmod 755 "$T/s"
cp "$REL_BIN/rel_secure" "$T/s/" && chown 65534:65534 "$T/s/rel_secure" && chmod 4755 "$T/s/rel_secure"
secure_case "setuid-nobody binary run by root" 65534

if command -v setcap > /dev/null && command -v setpriv > /dev/null; then
	cp "$REL_BIN/rel_secure" "$T/s/rel_secure.cap" && chmod 755 "$T/s/rel_secure.cap" && rm -f "$T/s/rel_secure" &&
		mv "$T/s/rel_secure.cap" "$T/s/rel_secure"
	if setcap cap_net_bind_service+ep "$T/s/rel_secure" 2> /dev/null; then
		secure_case "file capabilities, run as nobody" 65534 setpriv --reuid=65534 --regid=65534 --clear-groups
	else
		skip "file capabilities: setcap failed here"
	fi
else
	skip "file capabilities: no setcap/setpriv"
fi
finish
