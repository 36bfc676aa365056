#!/usr/bin/env bash
# lint_clang_tidy: clang-tidy over shim/, common/ and tracer/ with the repository's
# .clang-tidy, clean or fail.  The path-sensitive analyzer (clang-analyzer-*)
# costs about 6 s a file, so by default it runs on shim/*.c (preloaded into
# every traced process) and tracer/read/*.c (parses untrusted files), and the
# other checks run everywhere; CUTRACE_LINT_FULL=1 runs everything
# everywhere (about 3 minutes on 2 cores).  Skips with 77 without clang-tidy.
#   clang-tidy.sh SOURCE_DIR GEN_DIR
set -u
src=$1 gen=$2
tidy=$(command -v clang-tidy || command -v clang-tidy-14 || true)
[ -n "$tidy" ] || { echo "clang-tidy not installed"; exit 77; }
cd "$src" || exit 2
jobs=$(nproc 2>/dev/null || echo 2)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
deep=" $(echo shim/*.c common/*.c tracer/read/*.c) "
[ "${CUTRACE_LINT_FULL:-0}" = 1 ] && deep=" $(echo shim/*.c common/*.c tracer/*/*.c) "
# one line per file: FILE and the checks override ("" = .clang-tidy as it is)
incs=$(for d in tracer/*/; do printf -- '-I%s ' "${d%/}"; done)
for f in shim/*.c common/*.c tracer/*/*.c tracer/main.c; do
	case $f in tracer/probe/*) continue ;; esac
	case $deep in *" $f "*) printf '%s\n' "$f" ;; *) printf '%s -clang-analyzer-*\n' "$f" ;; esac
done | GEN=$gen OUT=$out INCS=$incs xargs -P "$jobs" -L 1 bash -c '
	f=$1 x=${2:-}
	"$0" --quiet ${x:+--checks=$x} "$f" -- -std=gnu11 -D_GNU_SOURCE -DCUTRACE_VERSION="\"0.1.0\"" \
		-Ishim/include -Ishim -Icommon $INCS -I"$GEN" > "$OUT/${f//\//_}.log" 2>&1' "$tidy"
n=$(cat "$out"/*.log | grep -c 'warning:\|error:')
cat "$out"/*.log | grep -A3 'warning:\|error:' | sed "s|$src/||"
echo "clang-tidy: $n finding(s); analyzer on$(echo $deep | wc -w | sed 's/^/ /') file(s)"
[ "$n" -eq 0 ]
