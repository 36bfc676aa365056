#!/usr/bin/env bash
# lint_format: the C lines a change touches are formatted as .clang-format
# says.  "The change" is the last commit and whatever the work tree adds to
# it (git diff against CUTRACE_FORMAT_BASE, default HEAD~1); lines nobody
# touched keep their hand layout: whole files are never checked, so older
# code is not reformatted under other people's feet.  Fix a failure with
#   git clang-format HEAD~1        (or: git diff -U0 HEAD~1 | clang-format-diff -p1 -i)
# Skips (77) without clang-format-diff, outside a git checkout, when the
# base commit is missing (a shallow clone) and when HEAD is a merge.
#   format.sh SOURCE_DIR
set -u
src=$1
skip() { echo "lint_format skipped: $*"; exit 77; }
cd "$src" || exit 2
cfd=$(command -v clang-format-diff || command -v clang-format-diff-14 || true)
[ -n "$cfd" ] || skip "clang-format-diff not installed"
command -v git > /dev/null || skip "git not installed"
git rev-parse --git-dir > /dev/null 2>&1 || skip "$src is not a git checkout"
base=${CUTRACE_FORMAT_BASE:-}
if [ -z "$base" ]; then
	# a merge brings in commits that were checked on their own branch
	[ -z "$(git rev-parse -q --verify HEAD^2 2> /dev/null)" ] || skip "HEAD is a merge (its branch was checked commit by commit)"
	base=HEAD~1
fi
git rev-parse -q --verify "$base^{commit}" > /dev/null || skip "no commit $base here (a shallow clone?)"
out=$(git diff -U0 --no-color "$base" -- '*.c' '*.h' | "$cfd" -p1 -style=file)
n=$(git diff -U0 --no-color "$base" -- '*.c' '*.h' | grep -c '^+[^+]')
if [ -n "$out" ]; then
	printf '%s\n' "$out"
	echo "lint_format: lines changed since $base are not formatted as .clang-format says (of $n changed);"
	echo "fix them with: git clang-format $base"
	exit 1
fi
echo "lint_format: the $n C lines changed since $base are formatted"
