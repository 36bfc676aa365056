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
