# Sourced by tests that run NVIDIA's real libraries (tests/real/fetch.sh).
# real_require: exit 77 (ctest's skip) with the one-line reason when the
# libraries could not be fetched; otherwise set
#   REAL_ROOT        the extracted packages
#   REAL_LIBCUDA_DIR directory of libcuda.so.1 / libnvidia-ml.so.1 (535)
#   REAL_CUDART_DIR  directory of libcudart.so.11.0 (11.8)
#   REAL_VERSION     the driver packages' upstream version (535.x.y)
real_require() {
	local st=${CUTRACE_REAL_DIR:?CUTRACE_REAL_DIR not set}/STATUS
	if [ ! -f "$st" ]; then
		echo "SKIP: $st missing (the real_fetch fixture did not run)"
		exit 77
	fi
	case $(head -1 "$st") in
	ok*) ;;
	*) echo "SKIP: NVIDIA's Debian libraries unavailable: $(head -1 "$st" | cut -d' ' -f2-)"; exit 77 ;;
	esac
	REAL_ROOT=$CUTRACE_REAL_DIR/root
	REAL_LIBCUDA_DIR=$(dirname "$(find "$REAL_ROOT" -name 'libcuda.so.1' | head -1)")
	REAL_CUDART_DIR=$(dirname "$(find "$REAL_ROOT" -name 'libcudart.so.11.0' | head -1)")
	REAL_VERSION=$(sed -n 's/.*libcuda1=\([0-9.]*\).*/\1/p' "$st")
	# as root with no NVIDIA module, the real libcuda creates /dev/nvidiactl
	# (mknodat): a test that runs it removes what it created
	REAL_NODES_BEFORE=$(ls -d /dev/nvidia* 2>/dev/null | tr '\n' ' ')
}

# real_cleanup_nodes: remove /dev/nvidia* nodes that appeared since real_require
real_cleanup_nodes() {
	local n
	for n in /dev/nvidia*; do
		[ -e "$n" ] || continue
		case " $REAL_NODES_BEFORE " in *" $n "*) ;; *) rm -f "$n" ;; esac
	done
}
