"""Issue 19 on the CPU rig, groups 1, 3 and 4 (failure catalog Part C: G1 the
container runtime, G3 WSL2, G4 stale driver files, G5 interposers and
sandboxes): the process snapshot the shim writes (format 1.3), and the
verdicts built on it.  Loaded by itest.py (test, need, cutrace_run, rig_env,
base_env, events, first, expect_verdict, verdict, cleanup, ...)."""
import json
import os
import shutil
import subprocess
import tempfile

VGPU = os.path.join(os.path.dirname(FAKENV), "interposer", "libvgpu.so")


def snapshot(p):
    notes = [e for e in p["events"] if e["call"] == "note" and e["target"] == "process snapshot"]
    need(len(notes) == 1, "one process snapshot note", [(e["call"], e["target"]) for e in p["events"]][:40])
    return notes[0]["args"]


@test
def t_snapshot_recorded():
    """a healthy rig probe: the note names the fake libcuda, the preloaded fake
    kernel, libcuda's mount and what ld.so.cache says; the context the loader"""
    r = cutrace_run([PROBE], rig_env())
    p = r.proc()
    need(verdict(p)["ok"], "healthy", verdict(p))
    a = snapshot(p)
    mapped = a["mapped"].split("\n")
    need(os.path.join(FAKECUDA, "libcuda.so.1") in mapped, "libcuda mapped", mapped)
    need(FAKENV in mapped, "the preloaded fake kernel named", mapped)
    need(not any("libcutrace" in m for m in mapped), "the shim itself is not named", mapped)
    mp = a["libcuda_mount"].split(" ")
    need(len(mp) == 4 and FAKECUDA.startswith(mp[0]), "libcuda's mount: point root fstype source", a)
    cache = dict(l.split("=", 1) for l in a["ld_so_cache"].split("\n"))
    need(set(cache) == {"libcuda.so.1", "libcuda.so"}, "ld.so.cache lookups of both names", a)
    need("ld-linux" in (p["interp"] or ""), "the program's interpreter", p["interp"])
    need(isinstance(p["ld_conf_dropins"], list), "drop-ins listed", p)
    # the snapshot comes before cuInit, once
    seqs = [e["seq"] for e in p["events"] if e["call"] in ("note", "cuInit")]
    need(len(seqs) == 2 and seqs == sorted(seqs), "snapshot, then cuInit", seqs)
    need("interposer" not in (verdict(p)["notes"] or ""), "no interposer note on the rig", verdict(p))
    cleanup(r)


@test
def t_snapshot_failed_dlopen():
    """no libcuda at all: the snapshot is taken at the failed dlopen"""
    r = cutrace_run([PROBE], rig_env(), inject=["dlopen:lib=libcuda.so*:error=ENOENT"])
    p = r.proc()
    a = snapshot(p)
    need(not any("libcuda.so" in m.rsplit("/", 1)[-1] for m in a["mapped"].split("\n")), "no libcuda mapped", a)
    need("libcuda_mount" not in a, "no mount without a libcuda", a)
    expect_verdict(p, "loader", "dlopen")
    cleanup(r)


@test
def t_interposer_hami():
    """a HAMi-core-like libvgpu.so answers cuInit 100 by itself: named, not the driver"""
    need(os.path.exists(VGPU), "fake interposer built: " + VGPU)
    r = cutrace_run([os.path.join(PROGS, "probe_linked")], base_env(LD_LIBRARY_PATH=FAKECUDA, LD_PRELOAD=FAKENV + ":" + VGPU))
    p = one_failed_proc(r)
    expect_verdict(p, "driver-api", "cuInit", 100, "libvgpu.so", injected=False)
    v = verdict(p)
    need("no NVIDIA ioctl was made at all" in v["summary"], "no ioctl under it", v["summary"])
    need("LD_PRELOAD" in v["fix"], "fix: run without it", v["fix"])
    need(VGPU in snapshot(p)["mapped"].split("\n"), "interposer in the snapshot", snapshot(p))
    need("FAILED [driver-api]" in r.err, "run prints it", r.err)
    cleanup(r)


@test
def t_interposer_note_on_lower_failure():
    """the interposer passes cuInit on and the driver fails below it: that failure
    is the verdict, and the interposer a note"""
    r = cutrace_run([os.path.join(PROGS, "probe_linked")],
                    base_env(LD_LIBRARY_PATH=FAKECUDA, LD_PRELOAD=FAKENV + ":" + VGPU, FAKEVGPU_CUINIT="pass",
                            FAKENV_DENY="/dev/nvidiactl=EPERM"))
    p = one_failed_proc(r)
    expect_verdict(p, "device-node", "open", 100, "device cgroup")
    need("libvgpu.so was in the process" in (verdict(p)["notes"] or ""), "interposer note", verdict(p))
    cleanup(r)


@test
def t_doctor_names_preloaded_interposer():
    """doctor names what LD_PRELOAD puts between programs and the driver, with the
    calls it defines (read from its .dynsym); doctor's own mapped copy is the same
    object, named once"""
    need(os.path.exists(VGPU), "fake interposer built: " + VGPU)
    p = subprocess.run([CUTRACE, "doctor", "--no-probe", "--json"], env=base_env(LD_PRELOAD=VGPU + ":" + FAKENV),
                       capture_output=True, text=True, timeout=120)
    doc = json.loads(p.stdout)
    fs = [f for f in doc["findings"] if VGPU in f["summary"]]
    need(len(fs) == 1, "one finding names the interposer", [f["summary"] for f in doc["findings"]])
    f = fs[0]
    need(f["severity"] == "warn" and f["section"] == "environment" and
         ("LD_PRELOAD loads %s (HAMi-core's GPU-sharing interposer) into every program; it defines cuInit" % VGPU)
         in f["summary"] and "unset LD_PRELOAD" in f["fix"], "the interposer finding", f)
    # the rig's fake kernel defines ioctl and open: an interposer of libc, named as one
    fk = [f for f in doc["findings"] if FAKENV in f["summary"]]
    need(len(fk) == 1 and "ioctl" in fk[0]["summary"] and "open" in fk[0]["summary"], "fake kernel named", fk)
    p = subprocess.run([CUTRACE, "doctor", "--no-probe"], env=base_env(LD_PRELOAD=VGPU), capture_output=True,
                       text=True, timeout=120)
    need("[warn]    loader: LD_PRELOAD loads %s (HAMi-core's GPU-sharing interposer)" % VGPU in p.stdout,
         "the text names it", p.stdout)


def one_failed_proc(r):
    ps = [p for p in r.procs if not verdict(p)["ok"]]
    need(len(ps) == 1, "one failed process", r.err, [verdict(p)["summary"] for p in r.procs])
    return ps[0]


DELETED_PROG = r"""
import ctypes, os, shutil, sys
d = sys.argv[1]
lib = os.path.join(d, "libcuda.so.1")
shutil.copy(os.path.join(sys.argv[2], "libcuda.so.1"), lib)
cu = ctypes.CDLL(lib)
os.unlink(lib)            # the driver upgraded under the running process
print("cuInit", cu.cuInit(0))
"""


def deleted_run(**env):
    d = tempfile.mkdtemp(prefix="ct_del_")
    prog = os.path.join(d, "prog.py")
    with open(prog, "w") as f:
        f.write(DELETED_PROG)
    lib = os.path.join(d, "lib")
    os.mkdir(lib)
    r = cutrace_run([PY, prog, lib, FAKECUDA], rig_env(**env))
    shutil.rmtree(d, ignore_errors=True)
    return r, lib


@test
def t_libcuda_deleted():
    """libcuda deleted after it was loaded (catalog G4), then cuInit fails (803):
    the verdict names the deleted file and says restart"""
    r, lib = deleted_run(FAKENV_KERNEL_VERSION="590.48.01")
    p = one_failed_proc(r)
    a = snapshot(p)
    need(os.path.join(lib, "libcuda.so.1") + " (deleted)" in a["mapped"].split("\n"), "deleted mapping", a)
    expect_verdict(p, "loader", "note", 803, "was deleted from disk after it was loaded", injected=False)
    need("restart" in verdict(p)["fix"], "fix restarts", verdict(p)["fix"])
    cleanup(r)
    # healthy: a note
    r, lib = deleted_run()
    p = r.proc()
    need(verdict(p)["ok"], "healthy", verdict(p))
    need("was deleted after it was loaded" in (verdict(p)["notes"] or ""), "note", verdict(p))
    cleanup(r)


@test
def t_sandbox_scenario_text():
    """gVisor's signature: an RM control refused with -1 EINVAL and no RM status"""
    r = cutrace_run([PROBE], rig_env(), scenario="sandbox-rejected")
    p = one_failed_proc(r)
    expect_verdict(p, "resource-manager", "ioctl", 100, "returned -1 EINVAL with no RM status")
    need("gVisor" in verdict(p)["summary"] and "runsc" in verdict(p)["fix"], "names gVisor", verdict(p))
    cleanup(r)
    # the real driver's answer for the same call (a status in the block) is not the sandbox text
    r = cutrace_run([PROBE], rig_env(FAKENV_RM_CONTROL_STATUS="0x215=0x1b"))
    p = one_failed_proc(r)
    need("no RM status" not in verdict(p)["summary"], "a status is not the sandbox", verdict(p))
    cleanup(r)


@test
def t_caps_no_compute_scenario_text():
    r = cutrace_run([PROBE], rig_env(), scenario="caps-no-compute")
    p = one_failed_proc(r)
    expect_verdict(p, "loader", "dlopen", None, "NVIDIA_DRIVER_CAPABILITIES=utility has no 'compute'")
    need("NVIDIA_DRIVER_CAPABILITIES=compute,utility" in verdict(p)["fix"], "fix", verdict(p)["fix"])
    cleanup(r)


# ---- WSL2 (group 3, catalog G3) on the rig: libfakewsl.so gives a WSL kernel
# release, a /dev/dxg node and its ioctls; the WSL libraries are files under a
# temporary .../usr/lib/wsl/lib/ (a test double, documented in tests/rig/README.md)
FAKEWSL = os.path.join(os.path.dirname(FAKENV), "libfakewsl.so")
WSL_REL = "5.15.167.4-microsoft-standard-WSL2"

WSL_PROG = r"""
import ctypes, fcntl, os, shutil, sys
root, fake, dxcore = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
try:
    fd = os.open("/dev/dxg", os.O_RDWR)
    try:
        fcntl.ioctl(fd, 0xC0104714, bytearray(16))   # LX_DXENUMADAPTERS2
    except OSError as e:
        print("enum", e.errno)
except OSError as e:
    print("open", e.errno)
if dxcore:
    try:
        ctypes.CDLL("libdxcore.so")
    except OSError:
        print("no libdxcore")
lib = os.path.join(root, "usr/lib/wsl/lib")
os.makedirs(lib)
shutil.copy(os.path.join(fake, "libcuda.so.1"), os.path.join(lib, "libcuda.so.1"))
print("cuInit", ctypes.CDLL(os.path.join(lib, "libcuda.so.1")).cuInit(0))
"""


def wsl_env(**extra):
    return base_env(LD_LIBRARY_PATH=FAKECUDA, LD_PRELOAD=FAKENV + ":" + FAKEWSL,
                    FAKENV_MISSING="/dev/nvidiactl", **extra)


def wsl_prog_run(dxcore=False, **env):
    d = tempfile.mkdtemp(prefix="ct_wsl_")
    prog = os.path.join(d, "prog.py")
    with open(prog, "w") as f:
        f.write(WSL_PROG)
    r = cutrace_run([PY, prog, os.path.join(d, "root"), FAKECUDA, "1" if dxcore else "0"], wsl_env(**env))
    shutil.rmtree(d, ignore_errors=True)
    return r


@test
def t_wsl_linux_libcuda_shadows():
    """on WSL2 a Linux driver's libcuda (the rig's, outside /usr/lib/wsl) gives 100:
    the verdict names the shadowing library, not the missing /dev/nvidiactl"""
    need(os.path.exists(FAKEWSL), "libfakewsl.so built: " + FAKEWSL)
    r = cutrace_run([PROBE], wsl_env())
    p = one_failed_proc(r)
    need(p["kernel"] == WSL_REL, "the WSL kernel release recorded", p["kernel"])
    expect_verdict(p, "loader", "dlopen", 100, "on WSL2 (kernel %s)" % WSL_REL, injected=False)
    v = verdict(p)
    need("a Linux driver's libcuda" in v["summary"] and "/usr/lib/wsl/lib" in v["summary"], "names it", v)
    need("dpkg -S" in v["fix"] and "ldconfig" in v["fix"], "fix", v["fix"])
    cleanup(r)


@test
def t_wsl_dxg_recorded_and_failed():
    """the /dev/dxg open and its ioctls are recorded with their names; a failing
    one is the root; a missing node too"""
    r = wsl_prog_run(FAKEWSL_DXG_ERRNO="0x14=EINVAL")
    need("enum 22" in r.out, "the fake dxg ioctl failed", r.out, r.err)
    p = one_failed_proc(r)
    o = first(p, "openat", target="/dev/dxg") if any(e["call"] == "openat" and e["target"] == "/dev/dxg"
                                                     for e in p["events"]) else first(p, "open64", target="/dev/dxg")
    need(o["ok"] and o["args"].get("node") == "dxg", "dxg open recorded", o)
    io = [e for e in p["events"] if e["call"] == "ioctl" and "LX_DXENUMADAPTERS2" in (e.get("name") or e["target"])]
    need(io and io[0]["errno_name"] == "EINVAL", "the named ioctl with its errno",
         [(e["call"], e["target"], e.get("name")) for e in p["events"] if e["call"] == "ioctl"])
    expect_verdict(p, "device-node", "ioctl", 100, "ioctl(/dev/dxg, LX_DXENUMADAPTERS2) failed with -1 EINVAL")
    need("wsl --update" in verdict(p)["fix"], "fix", verdict(p)["fix"])
    cleanup(r)
    r = wsl_prog_run(FAKEWSL_NO_DXG="1")
    p = one_failed_proc(r)
    expect_verdict(p, "device-node", "open", 100, "open(/dev/dxg) failed with ENOENT: WSL2's GPU node does not exist")
    cleanup(r)


@test
def t_wsl_dxcore_missing():
    """libdxcore.so not found (a container on WSL without /usr/lib/wsl): its own verdict"""
    r = wsl_prog_run(dxcore=True)
    need("no libdxcore" in r.out, "libdxcore not loadable on the rig", r.out, r.err)
    p = one_failed_proc(r)
    expect_verdict(p, "loader", "dlopen", 100, "libdxcore.so could not be loaded")
    need("/usr/lib/wsl" in verdict(p)["fix"], "fix", verdict(p)["fix"])
    cleanup(r)
