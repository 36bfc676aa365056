#!/usr/bin/env bash
# The shim in an old userland: programs of the Debian 11 root (glibc 2.31)
# run with and without libcutrace.so preloaded and must give the same
# stdout, stderr and exit status; those that touch CUDA (Python's ctypes
# loading the rig's fake libcuda, over the fake kernel) leave traces that
# the cutrace built here decodes, from outside the root, with the expected
# verdicts; those that do not leave none.
#
#   battery.sh CUTRACE SHIM FAKENV FAKECUDA_DIR
# (FAKENV and the fake libcuda built to load on glibc 2.17+; see tests.cmake)
set -uo pipefail
cutrace=${1:?usage: battery.sh CUTRACE SHIM FAKENV FAKECUDA_DIR}
shim=${2:?} fakenv=${3:?} fakecuda=${4:?}
. "$(dirname "$0")/oldroot_lib.sh"
oldroot_require

mkdir -p "$W/lib" "$W/cuda" "$W/traces" "$W/out"
cp "$shim" "$W/lib/libcutrace.so"
cp "$fakenv" "$W/lib/libfakenv.so"
cp -L "$fakecuda/libcuda.so.1" "$W/cuda/libcuda.so.1"
printf 'line %s\n' 3 1 2 >"$W/in.txt"

# the Python programs, written into the root
cat >"$W/cuda_init.py" <<'PY'
import ctypes, sys
l = ctypes.CDLL("libcuda.so.1")
r = l.cuInit(0)
v = ctypes.c_int(); n = ctypes.c_int()
print("cuInit", r, "version", l.cuDriverGetVersion(ctypes.byref(v)), v.value,
      "count", l.cuDeviceGetCount(ctypes.byref(n)), n.value)
sys.exit(0 if r == 0 else 10 + (r % 100))
PY
cat >"$W/fork_exec.py" <<'PY'
import ctypes, os, subprocess, sys
l = ctypes.CDLL("libcuda.so.1")
print("parent cuInit", l.cuInit(0), flush=True)
pid = os.fork()
if pid == 0:
    n = ctypes.c_int()
    print("child count", l.cuDeviceGetCount(ctypes.byref(n)), n.value, flush=True)
    os._exit(3)
_, st = os.waitpid(pid, 0)
print("child exit", os.WEXITSTATUS(st), flush=True)
# a fresh program that loads libcuda itself, with the fds closed (the default)
r = subprocess.run([sys.executable, sys.argv[1]], capture_output=True, text=True)
print("subprocess", r.returncode, r.stdout.strip(), repr(r.stderr), flush=True)
# a program with no CUDA, through the shell
print(subprocess.run("echo from-sh; ls /nonexistent-x 2>&1; exit 4", shell=True,
                     capture_output=True, text=True), flush=True)
os.execv("/bin/sh", ["sh", "-c", "echo exec-replaced; exit 6"])
PY
cat >"$W/threads.py" <<'PY'
import ctypes, threading
res = {}
def work(i):
    l = ctypes.CDLL("libcuda.so.1")
    n = ctypes.c_int()
    res[i] = (l.cuInit(0), l.cuDeviceGetCount(ctypes.byref(n)), n.value)
ts = [threading.Thread(target=work, args=(i,)) for i in range(8)]
for t in ts: t.start()
for t in ts: t.join()
print(sorted(res.items()))
PY

# name|expected traces|expected verdicts (OK, FAILED:layer)|command (run by
# bash inside the root, from $WIN; CUDA=1 cases get the fake kernel and
# libcuda).  fork_exec leaves five traces: the parent, its fork child, the
# subprocess's child before and after it execs python (one pid, two files),
# and the shell's child before exec (a fork child of a traced process is
# traced); the shell itself and the os.execv'd sh touch no CUDA: no file.
cases=(
"ls|0||ls -l /etc/apt /nonexistent"
"stat|0||stat -c '%n %s %F %a %U' /etc/passwd /bin /dev/null /nonexistent"
"coreutils|0||cp in.txt out/copy && sort out/copy | sha256sum && wc -c in.txt && mkdir -p out/d/e && rmdir out/d/e out/d && readlink -f /bin/sh && du -s /etc/apt | cut -f2 && touch out/t && test -e out/t && rm out/t && echo done"
"pipeline|0||set -o pipefail; seq 1 3000 | tr 0-9 a-j | sort | uniq -c | sort -rn | sed -n 1,3p; echo \"\${PIPESTATUS[*]}\"; false | true; echo \$?"
"bash|0||f() { return 3; }; f; echo \$?; (exit 7); echo \$?; x=\$(printf '%s-' a b c); echo \"\$x\"; cat <(echo procsubst); echo to-stderr >&2; exit 5"
"jobs|0||for i in 1 2 3; do (echo child \$i >out/o\$i; exit \$i) & p[\$i]=\$!; done; for i in 1 2 3; do wait \${p[\$i]}; echo child \$i status \$?; cat out/o\$i; done"
"python|0||python3 -c 'import os, sys, json; print(json.dumps(sorted(os.listdir(\"/etc/apt\")))); sys.exit(9)'"
"cuda_ok|1|OK|CUDA=1 python3 cuda_init.py"
"cuda_nonode|1|FAILED:device-node|CUDA=1 FAKENV_MISSING=/dev/nvidiactl python3 cuda_init.py"
"cuda_nolib|1|FAILED:loader|python3 cuda_init.py"
"fork_exec|5|OK OK OK OK OK|CUDA=1 python3 fork_exec.py cuda_init.py"
"threads|1|OK|CUDA=1 python3 threads.py"
)

fail=0
summary=()
for c in "${cases[@]}"; do
	IFS='|' read -r name ntr verdicts cmd <<<"$c"
	env_base=() env_shim=()
	if [[ $cmd == CUDA=1* ]]; then
		env_base=(LD_LIBRARY_PATH="$WIN/cuda" LD_PRELOAD="$WIN/lib/libfakenv.so")
		env_shim=(LD_LIBRARY_PATH="$WIN/cuda" LD_PRELOAD="$WIN/lib/libcutrace.so $WIN/lib/libfakenv.so")
		cmd=${cmd#CUDA=1 }
	else
		env_shim=(LD_PRELOAD="$WIN/lib/libcutrace.so")
	fi
	o=$W/out/$name
	rm -rf "$W/out/o"* 
	oldroot_run "${env_base[@]}" /bin/bash -c "cd $WIN && $cmd" >"$o.base.out" 2>"$o.base.err"
	rb=$?
	rm -rf "$W/out/o"*
	oldroot_run "${env_shim[@]}" CUTRACE_DIR="$WIN/traces/$name" /bin/bash -c "cd $WIN && $cmd" \
		>"$o.shim.out" 2>"$o.shim.err"
	rs=$?
	bad=""
	[ $rb -eq $rs ] || bad+=" exit status $rb without the shim, $rs with it;"
	cmp -s "$o.base.out" "$o.shim.out" || bad+=" stdout differs ($(diff "$o.base.out" "$o.shim.out" | head -4 | tr '\n' ' '));"
	cmp -s "$o.base.err" "$o.shim.err" || bad+=" stderr differs ($(diff "$o.base.err" "$o.shim.err" | head -4 | tr '\n' ' '));"
	# traces: as many as expected, decoded here with the expected verdicts
	got=$(ls "$W/traces/$name"/*.cutrace 2>/dev/null | wc -l)
	[ "$got" -eq "$ntr" ] || bad+=" $got trace files, expected $ntr;"
	if [ "$ntr" -gt 0 ] && [ "$got" -gt 0 ]; then
		"$cutrace" show --all --no-time --color=never "$W/traces/$name" >"$o.show" 2>&1
		rshow=$?
		want_rc=0
		[[ $verdicts == *FAILED* ]] && want_rc=1
		[ $rshow -eq $want_rc ] || bad+=" cutrace show exited $rshow, expected $want_rc ($(grep -m1 -i error "$o.show"));"
		have=$(sed -n 's/^  verdict  OK.*/OK/p; s/^  verdict  FAILED  layer \([a-z-]*\).*/FAILED:\1/p' "$o.show" | sort | paste -sd' ')
		want=$(tr ' ' '\n' <<<"$verdicts" | sort | paste -sd' ')
		[ "$have" = "$want" ] || bad+=" verdicts [$have], expected [$want];"
	fi
	if [ -n "$bad" ]; then
		echo "FAIL $name:$bad"
		echo "  command: $cmd"
		fail=1
	else
		summary+=("$name(exit $rs, $(wc -l <"$o.shim.out") lines, $got traces)")
	fi
done
echo "glibc $(sed -n 's/^ok bullseye glibc \([0-9.]*\).*/\1/p' "$CUTRACE_OLDROOT_DIR/STATUS"): ${#summary[@]} of ${#cases[@]} programs identical with the shim: ${summary[*]}"
exit $fail
