#!/usr/bin/env bash
# Take a Debian 12 machine to a cutrace build: install what the build and the
# tests need, find the CUDA Toolkit headers, configure and build into build/.
# Products: build/bin/cutrace and build/lib/libcutrace.so.  Safe to re-run.
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"

# the build: compiler, cmake, Check, libelf (libelf.a and zlib's libz.a for
# the one-file cutrace)
packages=(cmake make gcc pkg-config check libsubunit-dev libelf-dev zlib1g-dev python3 file)
# the test suite: the sanitizer build and the fuzzer (clang + its runtimes),
# valgrind, static analysis, the tools the reliability tests drive, and
# debootstrap for the Debian 11 root of the portability tests, and what the
# install tests use (dpkg-shlibdeps for the .deb's Depends, groff and man)
packages+=(clang libclang-rt-14-dev valgrind cppcheck clang-tidy clang-format git gzip util-linux
	debootstrap dpkg-dev groff-base man-db)

missing=()
for p in "${packages[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	echo "setup: installing ${missing[*]}"
	sudo=""
	[ "$(id -u)" -eq 0 ] || sudo="sudo"
	$sudo apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# optional: the engines of the cluster tests (ctest -L cluster): a real
# Prometheus with node-exporter's textfile collector, a single-node Slurm
# (slurmctld, slurmd, munge) and Slurm's spank.h (libslurm-dev) for the
# SPANK plugin; CPython's regression tests (libpython3.11-testsuite) for
# rel_python_suite (ctest -L long).  Not installable (no network, another distribution): one
# line, and those tests skip.  CUTRACE_NO_OPTIONAL=1 leaves them out.
optional=(prometheus prometheus-node-exporter slurmctld slurmd slurm-client munge libslurm-dev
	libpython3.11-testsuite)
if [ "${CUTRACE_NO_OPTIONAL:-0}" != 1 ]; then
	omissing=()
	for p in "${optional[@]}"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || omissing+=("$p")
	done
	if [ ${#omissing[@]} -gt 0 ]; then
		sudo=""
		[ "$(id -u)" -eq 0 ] || sudo="sudo"
		if { $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq \
			--no-install-recommends "${omissing[@]}"; } >/dev/null 2>&1; then
			echo "setup: installed (optional, cluster tests, Python test suite) ${omissing[*]}"
		else
			echo "setup: optional ${omissing[*]} not installed (no network or no such package): the tests that need them will skip"
		fi
	fi
fi

# optional: reading .zst traces (libzstd-dev: the shared and the static
# library, for the one-file cutrace) and the zstd tool the tests use; a
# machine without them still builds, without .zst
zoptional=(libzstd-dev zstd)
zmissing=()
for p in "${zoptional[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || zmissing+=("$p")
done
if [ ${#zmissing[@]} -gt 0 ]; then
	sudo=""
	[ "$(id -u)" -eq 0 ] || sudo="sudo"
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${zmissing[@]}" >/dev/null 2>&1 ||
		echo "setup: optional ${zmissing[*]} not installed: .zst traces will not be readable"
fi

# --- the CUDA Toolkit headers -------------------------------------------------
find_cuda_include() {
	local c
	for c in "${CUTRACE_CUDA_INCLUDE_DIR:-}" \
		 ${CUDA_HOME:+"$CUDA_HOME/include"} ${CUDAToolkit_ROOT:+"$CUDAToolkit_ROOT/include"} \
		 ${CUDA_PATH:+"$CUDA_PATH/include"} /usr/local/cuda/include \
		 /usr/local/cuda/targets/x86_64-linux/include /usr/local/cuda/targets/sbsa-linux/include \
		 /usr/include; do
		[ -n "$c" ] && [ -f "$c/cuda.h" ] && { echo "$c"; return 0; }
	done
	# pip's nvidia packages (nvidia-cuda-runtime, cuda-toolkit wheels) keep
	# their headers under site-packages/nvidia/*/include
	local py sp
	for py in python3 python; do
		command -v "$py" >/dev/null 2>&1 || continue
		for sp in $("$py" -c 'import site,sys; print("\n".join(site.getsitepackages()+[site.getusersitepackages()]))' 2>/dev/null); do
			c=$(ls -d "$sp"/nvidia/*/include 2>/dev/null | while read -r d; do [ -f "$d/cuda.h" ] && echo "$d"; done | head -1)
			[ -n "$c" ] && { echo "$c"; return 0; }
		done
	done
	return 1
}

if ! cuda_inc=$(find_cuda_include); then
	echo "setup: cuda.h not found: install the CUDA Toolkit (https://developer.nvidia.com/cuda-downloads, or Debian non-free's nvidia-cuda-toolkit, or pip install nvidia-cuda-runtime) or set CUDA_HOME to where it is installed." >&2
	exit 1
fi

cmake -S . -B build -DCUTRACE_CUDA_INCLUDE_DIR="$cuda_inc" ${CMAKE_BUILD_TYPE:+-DCMAKE_BUILD_TYPE=$CMAKE_BUILD_TYPE} >/dev/null
cmake --build build -j"$(nproc)"
onefile=""
[ -x build/onefile/cutrace ] && onefile=", build/onefile/cutrace (one file to copy)"
echo "setup: built build/bin/cutrace and build/lib/libcutrace.so$onefile (CUDA headers: $cuda_inc)"
