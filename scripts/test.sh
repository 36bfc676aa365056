#!/usr/bin/env bash
# Build if needed and run the whole test suite through ctest.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
if [ ! -f build/CMakeCache.txt ]; then
	scripts/setup.sh
else
	cmake --build build -j"$(nproc)"
fi
cd build
ctest --output-on-failure -j"$(nproc)" --timeout 300 "$@"
