#!/bin/sh
# End to end: `cutrace doctor` on this machine.  --json gives one valid JSON
# document whose verdict agrees with the exit status; without /dev/nvidiactl
# (the GPU-less build machine) the exit status is 1 with a device-node or
# loader problem.  Also the CLI contract: --help 0, bad usage 2, colour only
# when asked for or on a terminal.
set -u
CUTRACE=$1
dir=$(mktemp -d) || exit 2
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

"$CUTRACE" doctor --no-probe --json >"$dir/out.json" 2>"$dir/err"
rc=$?
[ "$rc" -eq 0 ] || [ "$rc" -eq 1 ] || fail "doctor --json exited $rc: $(cat "$dir/err")"
python3 -m json.tool "$dir/out.json" >/dev/null || fail "doctor --json is not valid JSON"
python3 - "$dir/out.json" "$rc" <<'PY' || fail "JSON content"
import json, os, sys
doc = json.load(open(sys.argv[1]))
rc = int(sys.argv[2])
problems = [f for f in doc["findings"] if f["severity"] == "problem"]
assert doc["verdict"]["exit_code"] == rc, (doc["verdict"], rc)
assert (rc == 1) == bool(problems), (rc, problems)
assert doc["probe"]["status"] == "skipped"
for f in doc["findings"]:
    assert f["severity"] in ("ok", "info", "warn", "problem"), f
    assert f["layer"] in ("loader", "device-node", "kernel-handshake", "resource-manager",
                          "uvm", "driver-api", "runtime", "none"), f
for k in ("device_nodes", "kernel_module", "libraries", "container", "environment", "contract"):
    assert k in doc, k
assert "libcuda.so.1" in doc["libraries"]
if not os.path.exists("/dev/nvidiactl"):
    assert rc == 1, rc
    assert any(f["layer"] in ("device-node", "loader") for f in problems), problems
PY

# text: sections and a verdict line, no escape codes into a pipe
"$CUTRACE" doctor --no-probe >"$dir/out.txt" 2>&1
trc=$?
[ "$trc" -eq "$rc" ] || fail "text exit $trc differs from JSON exit $rc"
grep -q '^verdict: ' "$dir/out.txt" || fail "no verdict line"
grep -q '^Device nodes' "$dir/out.txt" || fail "no Device nodes section"
grep -q "$(printf '\033')" "$dir/out.txt" && fail "colour codes into a pipe"
"$CUTRACE" doctor --no-probe --color=always >"$dir/col.txt" 2>&1
grep -q "$(printf '\033')\[" "$dir/col.txt" || fail "--color=always gave no colour"
NO_COLOR=1 "$CUTRACE" doctor --no-probe --color=auto >"$dir/nc.txt" 2>&1
grep -q "$(printf '\033')" "$dir/nc.txt" && fail "NO_COLOR ignored"

# the probe step without --no-probe: the weak default (or the lead's
# probe) reports something, the document stays valid
"$CUTRACE" doctor --json >"$dir/probe.json" 2>/dev/null
prc=$?
[ "$prc" -eq 0 ] || [ "$prc" -eq 1 ] || fail "doctor (with probe) exited $prc"
python3 -m json.tool "$dir/probe.json" >/dev/null || fail "doctor --json with probe: invalid JSON"

"$CUTRACE" doctor --help >/dev/null || fail "--help"
"$CUTRACE" doctor --color=sometimes >/dev/null 2>&1; [ $? -eq 2 ] || fail "bad --color not 2"
"$CUTRACE" doctor --bogus >/dev/null 2>&1; [ $? -eq 2 ] || fail "unknown option not 2"
"$CUTRACE" doctor ./a.out >/dev/null 2>"$dir/e"; [ $? -eq 2 ] || fail "argument not 2"
[ "$(wc -l <"$dir/e")" -eq 1 ] || fail "usage error is not one line"
echo "doctor e2e: ok (exit $rc)"
