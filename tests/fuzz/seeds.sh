# Seed corpus from the real H200 traces (sourced by replay.sh and fuzz.sh).
#   make_seeds CROP FIXTURE_DIR OUT_DIR
# Each tests/fixtures/h200-580/*.cutrace.gz (16 MB, mostly an empty ring) is
# decompressed and cropped with ct_crop into three small traces: the first
# 200 records (48K), a wrapped ring (3000 records into 32K) and a window from
# the middle.  The result is cached in OUT_DIR until a fixture or ct_crop changes.
make_seeds() {
	local crop=$1 fix=$2 out=$3 f b tmp newest
	mkdir -p "$out"
	newest=$(ls -t "$fix"/*.cutrace.gz "$crop" 2>/dev/null | head -1)
	if [ -f "$out/.stamp" ] && [ -n "$newest" ] && [ "$out/.stamp" -nt "$newest" ]; then
		return 0
	fi
	tmp=$(mktemp -d)
	for f in "$fix"/*.cutrace.gz; do
		[ -f "$f" ] || continue
		b=$(basename "$f" .cutrace.gz)
		gzip -dc "$f" > "$tmp/in.cutrace" || { rm -rf "$tmp"; return 1; }
		"$crop" -n 200 -s 49152 "$tmp/in.cutrace" "$out/$b-head.cutrace" > /dev/null &&
		"$crop" -n 3000 -s 32768 "$tmp/in.cutrace" "$out/$b-wrap.cutrace" > /dev/null &&
		"$crop" -f 1000 -n 300 -s 65536 "$tmp/in.cutrace" "$out/$b-mid.cutrace" > /dev/null ||
			{ rm -rf "$tmp"; return 1; }
	done
	rm -rf "$tmp"
	touch "$out/.stamp"
}
