# shellcheck shell=bash
# Sourced by the tests that run in the Debian 11 root (oldroot.sh).
#
# oldroot_require: exit 77 (ctest's skip) with the one-line reason when the
#   root could not be built; otherwise set
#     OLDROOT    the root, seen from here
#     W          a fresh work directory inside it, seen from here (removed
#                when the test exits)
#     WIN        the same directory seen from inside the root
# oldroot_run [NAME=VALUE...] CMD [ARGS...]: run CMD inside the root (chroot,
#   in a private mount namespace with /proc mounted) with a clean environment
#   (PATH, HOME, LC_ALL=C) plus the given variables; its exit status is CMD's.
oldroot_require() {
	local st=${CUTRACE_OLDROOT_DIR:?CUTRACE_OLDROOT_DIR not set}/STATUS
	if [ ! -f "$st" ]; then
		echo "SKIP: $st missing (the portability_oldroot fixture did not run)"
		exit 77
	fi
	case $(head -1 "$st") in
	ok*) ;;
	*) echo "SKIP: no Debian 11 root: $(head -1 "$st" | cut -d' ' -f2-)"; exit 77 ;;
	esac
	OLDROOT=$CUTRACE_OLDROOT_DIR/root
	WIN=/work/$(basename "$0" .sh)-$$
	W=$OLDROOT$WIN
	rm -rf "$W"
	mkdir -p "$W"
	[ -n "${CUTRACE_KEEP:-}" ] || trap 'rm -rf "$W"' EXIT
}

oldroot_run() {
	unshare -m --propagation private /bin/sh -c \
		'r=$1; shift; mount -t proc proc "$r/proc" && exec chroot "$r" /usr/bin/env -i \
		 PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LC_ALL=C "$@"' \
		sh "$OLDROOT" "$@"
}
