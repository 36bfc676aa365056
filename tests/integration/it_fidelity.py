"""glibc fidelity under the shim (issue 15): what tests/programs/fidelity.c
prints is the same with and without libcutrace.so, and a vfork child's
close() does not take the parent's fd out of its trace.  Loaded by itest.py
(test, need, preload_run, rig_env, base_env, events, PROGS in scope)."""
import os
import shutil
import subprocess
import tempfile


def _fidelity():
    return os.path.join(PROGS, "fidelity")


@test
def t_fidelity_dlerror_errno_and_rtld_next():
    """errno after dlerror() of a failed dlopen("libcuda.so.1") is glibc's (2
    on 2.36; the old tree left the program's 77), and dlsym(RTLD_NEXT,
    "cuInit") from the main program is NULL with glibc's text (the old tree
    returned the shim's own export)."""
    env = base_env()
    plain = subprocess.run([_fidelity()], env=env, capture_output=True, text=True, timeout=60)
    need(plain.returncode == 0, "fidelity runs", plain.stdout, plain.stderr)
    r = preload_run([_fidelity()], env)
    need((r.rc, r.out, r.err) == (plain.returncode, plain.stdout, plain.stderr),
         "same output with the shim", "with:\n" + r.out, "without:\n" + plain.stdout)
    cleanup(r)


@test
def t_fidelity_posix_spawn_old_version():
    """A program built before glibc 2.15 (posix_spawn@GLIBC_2.2.5 and
    posix_spawnp@GLIBC_2.2.5) spawns a script without "#!": the old versions
    run it through /bin/sh, and still do under the shim (the shim's export
    takes the old references and forwards each to the version its caller
    named; before, the default one failed it with ENOEXEC, r=8)."""
    prog = os.path.join(PROGS, "spawn_old")
    if not os.path.exists(prog):
        print("skip: spawn_old is built on x86-64 only")
        return
    work = tempfile.mkdtemp(prefix="ct_spawn_")
    script = os.path.join(work, "noshebang")
    with open(script, "w") as f:
        f.write("echo ran-by-sh\n")
    os.chmod(script, 0o755)
    env = base_env()
    plain = subprocess.run([prog, script], env=env, capture_output=True, text=True, timeout=60)
    need(plain.returncode == 0 and plain.stdout.count("ran-by-sh") == 2
         and plain.stdout.count("r=0 status=0") == 2,
         "the old versions run the script through /bin/sh", plain.stdout, plain.stderr)
    r = preload_run([prog, script], env)
    need((r.rc, r.out, r.err) == (plain.returncode, plain.stdout, plain.stderr),
         "same output with the shim", "with:\n" + r.out, "without:\n" + plain.stdout)
    cleanup(r)
    shutil.rmtree(work, ignore_errors=True)


@test
def t_fidelity_vfork_child_close():
    """A vfork child closes its copy of an NVIDIA fd and exits; the parent's
    later ioctl on the fd is in the parent's trace (the old tree cleared the
    shared fd map in the child: the ioctl vanished)."""
    r = preload_run([_fidelity(), "vfork"], rig_env())
    need(r.rc == 0 and "open ok" in r.out, "fidelity vfork runs", r.out, r.err)
    p = r.proc("fidelity")
    io = events(p, "ioctl")
    need(len(io) == 1, "the parent's ioctl after the vfork child's close is traced",
         [(e["call"], e["target"]) for e in p["events"]])
    closes = [e for e in events(p, "close")]
    need(len(closes) == 1, "one close of the NVIDIA fd: the parent's (the child's is not the parent's)",
         [(e["call"], e["target"]) for e in p["events"]])
    cleanup(r)


def _rawfork_case(mode):
    """The program's parent and child by their printed pids; the child's steps
    in a trace of its own (forked, its pid), none of them in the parent's."""
    r = preload_run([_fidelity(), mode], rig_env())
    need(r.rc == 0 and "child pid" in r.out and "parent ioctl" in r.out,
         "fidelity %s runs" % mode, r.out, r.err)
    ppid = int(r.out.split("parent pid ")[1].split(":")[0])
    cpid = int(r.out.split("child pid ")[1].split(":")[0])
    by_pid = {p["pid"]: p for p in r.procs}
    steps = lambda p: [(e["call"], e["target"]) for e in p["events"] if e["call"] in ("open", "openat", "ioctl", "close")]
    need(set(by_pid) == {ppid, cpid}, "one trace for the parent and one for the %s child (pids %d, %d)" % (mode, ppid, cpid),
         sorted(by_pid), [steps(p) for p in r.procs])
    par, child = by_pid[ppid], by_pid[cpid]
    need([c for c, _ in steps(par)] == ["openat", "ioctl", "ioctl", "close"]
         or [c for c, _ in steps(par)] == ["open", "ioctl", "ioctl", "close"],
         "the parent's trace holds its own open, 2 ioctls and close, nothing of the child's", steps(par))
    need(sorted(c for c, _ in steps(child)) == sorted(["ioctl", "ioctl", "close", "close", steps(par)[0][0]]),
         "the child's trace holds its open, 2 ioctls and 2 closes", steps(child))
    need(child["flags"]["forked"] and child["ppid"] == ppid and not par["flags"]["forked"],
         "the child's trace is a fork child's", child["flags"], child.get("ppid"))
    need(all(e["tid"] == cpid for e in child["events"] if "tid" in e),
         "the child's steps carry its own thread id", [e.get("tid") for e in child["events"]])
    cleanup(r)


@test
def t_fidelity_rawfork_child_own_trace():
    """A child of syscall(SYS_fork) (no pthread_atfork handler runs) records
    into a trace of its own, with its own pid; the old tree wrote its open,
    ioctls and closes into the parent's trace as the parent."""
    _rawfork_case("rawfork")


@test
def t_fidelity_clone_child_own_trace():
    """The same for a child of clone() without CLONE_VM."""
    _rawfork_case("clone")


def _which_file(kind):
    """The bytes of one candidate libcuda.so.1: the rig's fake libcuda, a
    text file (glibc: "invalid ELF header"), 10 bytes ("file too short"), the
    fake with its ELF class byte turned to 32-bit (glibc passes it over)."""
    fake = open(os.path.join(FAKECUDA, "libcuda.so.1"), "rb").read()
    if kind == "cuda":
        return fake
    if kind == "text":
        return b"this is not a shared object, but it is longer than an ELF header\n" * 4
    if kind == "short":
        return b"\x7fELF\x02\x01\x01\x00\x00\x00"
    if kind == "class32":
        return fake[:4] + b"\x01" + fake[5:]
    raise ValueError(kind)


def _which_case(layout, llp=False, recorded=True, name=None, **extra):
    """tests/programs/dlwhich (DT_RUNPATH $ORIGIN/rp1:$ORIGIN/rp2) copied into
    a directory of its own with the files of layout ({path: kind}) beside it,
    llp/ on LD_LIBRARY_PATH when llp; run without and with the shim: the same
    output (what the link map and /proc/self/maps say glibc loaded, or the
    dlerror text), and the trace's dlopen says the same.  Returns the output."""
    d = tempfile.mkdtemp(prefix="ct_it_which_")
    prog = os.path.join(d, "dlwhich")
    shutil.copy(os.path.join(PROGS, "dlwhich"), prog)
    for sub in ("rp1", "rp2", "llp"):
        os.makedirs(os.path.join(d, sub), exist_ok=True)
    for rel, kind in layout.items():
        path = os.path.join(d, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(_which_file(kind))
    env = base_env(**dict(extra, **({"LD_LIBRARY_PATH": os.path.join(d, "llp")} if llp else {})))
    argv = [prog] + ([name] if name else [])
    plain = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60)
    need(plain.returncode == 0, "dlwhich runs", plain.stdout, plain.stderr)
    r = preload_run(argv, env)
    need(r.rc == 0 and r.out == plain.stdout,
         "with the shim the caller's dlopen takes what glibc takes without it",
         "without:\n" + plain.stdout, "with:\n" + r.out, r.err)
    if recorded is None:
        cleanup(r)
        shutil.rmtree(d, ignore_errors=True)
        return plain.stdout
    p = r.proc("dlwhich")
    if not recorded:
        # passed through as the caller made it: not in the trace, a note says so
        need(not events(p, "dlopen") and any("libcuda.so.1" in (e.get("target") or "") + json.dumps(e.get("args", {}))
                                            for e in p["events"] if e["call"] == "note"),
             "the dlopen passed through, with a note", [(e["call"], e["target"], e.get("args")) for e in p["events"]])
        cleanup(r)
        shutil.rmtree(d, ignore_errors=True)
        return plain.stdout
    dl = first(p, "dlopen", target="libcuda.so.1")
    if plain.stdout.startswith("failed: "):
        text = plain.stdout[len("failed: "):].rstrip("\n")
        need(not dl["ok"] and dl["args"].get("dlerror") == text, "the trace's dlopen failed as glibc's did", dl)
    else:
        loaded = plain.stdout.split("link_map: ")[1].split("\n")[0]
        need(dl["ok"] and dl["args"].get("realpath") == os.path.realpath(loaded),
             "the trace's dlopen names the file glibc loaded", loaded, dl)
        need(("maps: " + loaded) in plain.stdout, "maps and link map agree", plain.stdout)
    cleanup(r)
    shutil.rmtree(d, ignore_errors=True)
    return plain.stdout


def _has_hwcaps_v2():
    ld = "/lib64/ld-linux-x86-64.so.2"
    if not os.path.exists(ld):
        return False
    h = subprocess.run([ld, "--help"], capture_output=True, text=True).stdout
    return "x86-64-v2 (supported, searched)" in h


@test
def t_fidelity_which_hwcaps_on_library_path():
    """A directory on LD_LIBRARY_PATH holds glibc-hwcaps/x86-64-v2/libcuda.so.1
    and a plain libcuda.so.1, the caller's DT_RUNPATH another one: glibc
    takes the x86-64-v2 one; the old tree's emulation took the plain one."""
    if not _has_hwcaps_v2():
        print("skipped: glibc-hwcaps x86-64-v2 not searched here (glibc < 2.33, or not x86-64-v2)")
        return
    out = _which_case({"llp/glibc-hwcaps/x86-64-v2/libcuda.so.1": "cuda", "llp/libcuda.so.1": "cuda",
                       "rp1/libcuda.so.1": "cuda"}, llp=True)
    need("/llp/glibc-hwcaps/x86-64-v2/libcuda.so.1" in out, "glibc took the hwcaps one", out)


@test
def t_fidelity_which_hwcaps_in_runpath():
    """The caller's own DT_RUNPATH directory holds glibc-hwcaps/x86-64-v2/ and
    x86-64-v3/ copies and a plain one: the shim predicts glibc's choice (from
    glibc's own view of the CPU) and records the dlopen; the old tree took
    the plain one."""
    if not _has_hwcaps_v2():
        print("skipped: glibc-hwcaps x86-64-v2 not searched here (glibc < 2.33, or not x86-64-v2)")
        return
    levels = {"rp1/glibc-hwcaps/x86-64-v2/libcuda.so.1": "cuda", "rp1/glibc-hwcaps/x86-64-v3/libcuda.so.1": "cuda",
              "rp1/libcuda.so.1": "cuda"}
    _which_case(levels)
    _which_case(dict(levels, **{"rp1/glibc-hwcaps/x86-64-v4/libcuda.so.1": "cuda"}))
    # glibc's own view: AVX2 masked by the tunable takes x86-64-v3 away
    out = _which_case(levels, GLIBC_TUNABLES="glibc.cpu.hwcaps=-AVX2")
    need("/x86-64-v2/" in out, "with AVX2 masked glibc takes x86-64-v2", out)


@test
def t_fidelity_which_legacy_hwcaps_passed_through():
    """A legacy hwcaps subdirectory (tls/, searched up to glibc 2.36) of the
    caller's DT_RUNPATH holds libcuda.so.1: the shim cannot be sure which file
    glibc takes, so the call goes through as the caller made it (the same
    file is loaded) and a note in the trace says it was not recorded."""
    ld = "/lib64/ld-linux-x86-64.so.2"
    h = subprocess.run([ld, "--help"], capture_output=True, text=True).stdout if os.path.exists(ld) else ""
    if "tls (supported, searched)" not in h:
        print("skipped: this glibc searches no legacy tls/ subdirectory (2.37 and later)")
        return
    out = _which_case({"rp1/tls/libcuda.so.1": "cuda", "rp1/libcuda.so.1": "cuda"}, recorded=False)
    need("/rp1/tls/libcuda.so.1" in out, "glibc took the tls/ one", out)


@test
def t_fidelity_which_invalid_file():
    """An invalid libcuda.so.1 before a good one: on LD_LIBRARY_PATH (text: glibc
    fails with "invalid ELF header") and in the caller's first DT_RUNPATH
    directory (10 bytes: "file too short"): the dlopen fails as glibc's does
    (the old tree skipped the file and loaded the next one); one of the wrong
    ELF class is passed over by both."""
    out = _which_case({"llp/libcuda.so.1": "text", "rp1/libcuda.so.1": "cuda"}, llp=True)
    need("invalid ELF header" in out, "glibc failed on the text file", out)
    out = _which_case({"rp1/libcuda.so.1": "short", "rp2/libcuda.so.1": "cuda"})
    need("file too short" in out, "glibc failed on the short file", out)
    out = _which_case({"rp1/libcuda.so.1": "class32", "rp2/libcuda.so.1": "cuda"})
    need("/rp2/libcuda.so.1" in out, "glibc passed the 32-bit file over", out)


@test
def t_fidelity_which_origin_passed_through():
    """dlopen("$ORIGIN/rp2/libcuda.so.1"): $ORIGIN is the caller's directory.
    The shim passes such a name through with a jump, so glibc sees the
    caller (the old tree called the real dlopen from the shim after planning:
    $ORIGIN became the shim's directory and the dlopen failed)."""
    out = _which_case({"rp2/libcuda.so.1": "cuda"}, recorded=None, name="$ORIGIN/rp2/libcuda.so.1")
    need("/rp2/libcuda.so.1" in out, "glibc loaded the caller's $ORIGIN one", out)
