"""glibc fidelity under the shim (issue 15): what tests/programs/fidelity.c
prints is the same with and without libcutrace.so, and a vfork child's
close() does not take the parent's fd out of its trace.  Loaded by itest.py
(test, need, preload_run, rig_env, base_env, events, PROGS in scope)."""
import os
import subprocess


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
