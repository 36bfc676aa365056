# A CLI people trust with their only copy of a trace (issue 17): outputs
# never destroy inputs or existing files, hostile traces never act, shared
# traces (compressed, piped, bundled) are read, damage is reported.
import gzip
import os
import shutil
import subprocess
import tempfile

SAFETY_FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "h200-580")


def fixture_copy(name, d, as_name=None):
    out = os.path.join(d, as_name or (name + ".cutrace"))
    with gzip.open(os.path.join(SAFETY_FIXTURES, name + ".cutrace.gz"), "rb") as f, open(out, "wb") as g:
        shutil.copyfileobj(f, g)
    return out


def ct(*args, **kw):
    return subprocess.run([CUTRACE] + list(args), capture_output=True, timeout=kw.pop("timeout", 60), **kw)


def sha(path):
    import hashlib
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


@test
def t_out_never_an_input():
    """show -o naming one of the inputs (by name, by hard link, or a trace
    inside a directory given) is refused before anything is written."""
    d = tempfile.mkdtemp(prefix="ct_it_")
    try:
        v = fixture_copy("probe", d, "v.cutrace")
        before = sha(v)
        for extra in (["--json"], [], ["--format=chrome"]):
            p = ct("show", *extra, "-o", v, v)
            need(p.returncode == 2, "show -o INPUT INPUT rc=%d" % p.returncode, p.stderr)
            need(b"also an input" in p.stderr, "no refusal message", p.stderr)
            need(sha(v) == before, "the input was changed by show %s -o v v" % extra)
        os.link(v, os.path.join(d, "hard.json"))
        p = ct("show", "--json", "-o", os.path.join(d, "hard.json"), d)
        need(p.returncode == 2 and b"the same file" in p.stderr, "hard link to an input in a DIR", p.returncode, p.stderr)
        need(sha(v) == before, "the input was changed through its hard link")
        need(sorted(os.listdir(d)) == ["hard.json", "v.cutrace"], "files left behind", os.listdir(d))
    finally:
        shutil.rmtree(d, ignore_errors=True)


@test
def t_out_replaced_only_when_written():
    """-o writes a temporary file next to the target and renames it: a run
    with no readable input, or a write that fails, leaves the old file whole;
    a good run replaces it (mode kept)."""
    d = tempfile.mkdtemp(prefix="ct_it_")
    try:
        keep = os.path.join(d, "keep.json")
        with open(keep, "w") as f:
            f.write('{"keep": 1}\n')
        os.chmod(keep, 0o640)
        p = ct("show", "-o", keep, os.path.join(d, "nonexistent"))
        need(p.returncode == 2, "rc %d" % p.returncode, p.stderr)
        need(open(keep).read() == '{"keep": 1}\n', "keep.json changed by a show of nothing")
        need(b"left as it was" in p.stderr, "no word that the output was not written", p.stderr)
        v = fixture_copy("probe", d, "v.cutrace")
        # a write that fails half way (file size limit: EFBIG)
        p = subprocess.run(["sh", "-c", "trap '' XFSZ; ulimit -f 8; exec \"$0\" show --json -o \"$1\" \"$2\"",
                            CUTRACE, keep, v], capture_output=True, timeout=60)
        need(p.returncode == 2, "show under ulimit -f rc=%d" % p.returncode, p.stderr)
        need(b"left as it was" in p.stderr, "no word that the file was kept", p.stderr)
        need(open(keep).read() == '{"keep": 1}\n', "keep.json changed by a failed write")
        p = ct("show", "--json", "-o", keep, v)
        need(p.returncode in (0, 1), "show --json -o rc=%d" % p.returncode, p.stderr)
        need(open(keep).read().startswith("{") and "processes" in open(keep).read(), "keep.json not replaced")
        need(os.stat(keep).st_mode & 0o777 == 0o640, "mode not kept: %o" % os.stat(keep).st_mode)
        # a symbolic link to the output: the file it points to is replaced, the link stays
        os.symlink("keep.json", os.path.join(d, "link.json"))
        p = ct("show", "-o", os.path.join(d, "link.json"), v)
        need(p.returncode in (0, 1) and os.path.islink(os.path.join(d, "link.json")), "link replaced", p.stderr)
        need(open(keep).read().startswith("cutrace") or "cuInit" in open(keep).read(), "link target not written")
        left = sorted(f for f in os.listdir(d) if f.startswith("."))
        need(not left, "temporary files left behind", left)
        p = ct("show", "-o", "/dev/null", v)
        need(p.returncode in (0, 1), "show -o /dev/null rc=%d" % p.returncode, p.stderr)
    finally:
        shutil.rmtree(d, ignore_errors=True)


@test
def t_replay_hostile_path():
    """A recorded path that spells rules ('...:error=EPERM;open:path=FILE')
    becomes one literal path= glob, never extra rules: cat FILE still works
    under the replay; glob characters in a recorded path are escaped."""
    d = tempfile.mkdtemp(prefix="ct_it_")
    try:
        victim = os.path.join(d, "victim.txt")
        with open(victim, "w") as f:
            f.write("still readable\n")
        tr = os.path.join(d, "h.cutrace")
        hostile = "/dev/nvidia0:error=EPERM;open:path=" + victim
        p = subprocess.run([E["MKSYNTH"], tr, "fail-path=" + hostile], capture_output=True)
        need(p.returncode == 0, "ct_mksynth", p.stderr)
        p = ct("replay", "-o", os.path.join(d, "run"), tr, "--", "cat", victim)
        out = p.stdout.decode(errors="replace")
        rules = [l for l in out.splitlines() if l.startswith("rules:")]
        need(len(rules) == 1 and ";" not in rules[0], "one rule, no ';'", out, p.stderr)
        need("still readable" in out, "cat of the file named in the recorded path failed under replay", out,
             p.stderr)
        need(b"Permission denied" not in p.stderr, "the recorded text acted as a rule", p.stderr)
        for path, want in (("/dev/nvidia*[x]", r"open:path=/dev/nvidia\*\[x\]:error=EACCES"),
                           ("/dev/nvidia0\\;x", r"open:path=/dev/nvidia0\\?x:error=EACCES")):
            os.unlink(tr)
            subprocess.run([E["MKSYNTH"], tr, "fail-path=" + path], check=True)
            p = ct("replay", "--print", tr)
            need(p.returncode == 0 and ("rules:    " + want).encode() in p.stdout, "escaped rule for %r" % path,
                 p.stdout, p.stderr)
    finally:
        shutil.rmtree(d, ignore_errors=True)


@test
def t_fifo_and_devices_refused():
    """A FIFO named as a trace (nobody writing) or a device is one line of
    error at once, never a wait; show and replay alike."""
    import time
    d = tempfile.mkdtemp(prefix="ct_it_")
    try:
        fifo = os.path.join(d, "x.cutrace")
        os.mkfifo(fifo)
        for argv in (["show", fifo], ["show", "--json", fifo], ["replay", "--print", fifo]):
            t0 = time.monotonic()
            p = ct(*argv, timeout=20)
            took = time.monotonic() - t0
            need(p.returncode == 2, "%s rc=%d" % (argv, p.returncode), p.stderr)
            need(b"is a FIFO" in p.stderr, "no FIFO message for %s" % argv, p.stderr)
            need(len(p.stderr.strip().split(b"\n")) == 1, "more than one line", p.stderr)
            need(took < 10, "%s took %.1f s" % (argv, took))
        p = ct("show", "/dev/zero", timeout=20)
        need(p.returncode == 2 and b"character device" in p.stderr, "/dev/zero", p.returncode, p.stderr)
        p = subprocess.run([CUTRACE, "show", "-"], stdin=open("/dev/null"), capture_output=True, timeout=20)
        need(p.returncode == 2, "show - < /dev/null rc=%d" % p.returncode, p.stderr)
    finally:
        shutil.rmtree(d, ignore_errors=True)


@test
def t_show_reads_what_people_share():
    """.cutrace.gz and .cutrace.zst files, standard input (raw and gzip),
    /dev/stdin, <(zcat ...), a directory of compressed traces and a tar.gz
    of a job all show the same verdicts as the plain files."""
    d = tempfile.mkdtemp(prefix="ct_it_")
    try:
        plain = fixture_copy("t1", d, "t1.cutrace")
        gz = os.path.join(SAFETY_FIXTURES, "t1.cutrace.gz")

        def verdicts(*args, **kw):
            p = ct("show", "--json", *args, **kw)
            need(p.returncode in (0, 1), "show --json %s rc=%d" % (args, p.returncode), p.stderr)
            import json
            doc = json.loads(p.stdout)
            return [(pr["verdict"]["layer"], pr["verdict"]["summary"]) for pr in doc["processes"]]

        want = verdicts(plain)
        need(want and want[0][0] == "device-node", "plain t1 verdict", want)
        need(verdicts(gz) == want, ".gz differs")
        need(verdicts("-", input=open(gz, "rb").read()) == want, "gzip on stdin differs")
        need(verdicts("-", input=open(plain, "rb").read()) == want, "raw trace on stdin differs")
        need(verdicts("/dev/stdin", input=open(plain, "rb").read()) == want, "/dev/stdin differs")
        p = subprocess.run(["bash", "-c", '"$0" show --json <(zcat "$1")', CUTRACE, gz], capture_output=True,
                           timeout=60)
        need(p.returncode in (0, 1) and b'"device-node"' in p.stdout, "<(zcat ...)", p.returncode, p.stderr)
        if shutil.which("zstd"):
            zst = os.path.join(d, "t1z.cutrace.zst")
            subprocess.run(["zstd", "-q", "-o", zst, plain], check=True)
            p = ct("show", "--json", zst)
            if b"built without libzstd" not in p.stderr:
                need(verdicts(zst) == want, ".zst differs", p.stderr)
            else:
                print("skip: this cutrace reads no .zst (built without libzstd)")
        else:
            print("skip: no zstd tool")
        job = os.path.join(d, "job")
        os.makedirs(os.path.join(job, "node1"))
        shutil.copy(gz, os.path.join(job, "node1", "a.cutrace.gz"))
        fixture_copy("probe", os.path.join(job, "node1"), "b.cutrace")
        got = verdicts(job)
        need(len(got) == 2 and want[0] in got, "directory with a .gz", got)
        tgz = os.path.join(d, "job.tar.gz")
        subprocess.run(["tar", "czf", tgz, "-C", job, "."], check=True)
        got_tar = verdicts(tgz)
        need(sorted(got_tar) == sorted(got), "tar.gz bundle differs", got_tar, got)
        p = ct("show", tgz)
        need(b"job.tar.gz:node1/a.cutrace.gz" in p.stdout, "member names", p.stdout[:2000])
        need(verdicts("-", input=open(tgz, "rb").read()) == got_tar, "bundle on stdin differs")
    finally:
        shutil.rmtree(d, ignore_errors=True)


@test
def t_pack_bundle_reads_back():
    """cutrace pack DIR -o job.tar.gz stores each trace as written (not the
    preallocated zeros), and show reads the bundle with the same verdicts."""
    import json
    d = tempfile.mkdtemp(prefix="ct_it_")
    try:
        job = os.path.join(d, "job")
        os.makedirs(os.path.join(job, "node1"))
        os.makedirs(os.path.join(job, "node2"))
        for n in ("t1", "probe"):
            fixture_copy(n, os.path.join(job, "node1"))
        shutil.copy(os.path.join(SAFETY_FIXTURES, "i01.cutrace.gz"), os.path.join(job, "node2"))
        out = os.path.join(d, "job.tar.gz")
        p = ct("pack", job, "-o", out)
        need(p.returncode == 0, "pack rc=%d" % p.returncode, p.stderr)
        size = os.path.getsize(out)
        need(size < 1 << 20, "bundle of 3 x 16 MiB traces is %d bytes" % size)
        names = subprocess.run(["tar", "tzf", out], capture_output=True, text=True).stdout.split()
        need("cutrace-pack.txt" in names and "node1/t1.cutrace" in names and "node2/i01.cutrace" in names,
             "members", names)
        listing = subprocess.run(["tar", "tzvf", out], capture_output=True, text=True).stdout
        need(" 16777216 " not in listing, "a member stored at full size", listing)

        def procs(arg):
            r = ct("show", "--json", arg)
            need(r.returncode in (0, 1), "show %s rc=%d" % (arg, r.returncode), r.stderr)
            return sorted((pr["pid"], pr["verdict"]["summary"], len(pr["events"]))
                          for pr in json.loads(r.stdout)["processes"])

        need(procs(out) == procs(job), "bundle and directory differ")
        # the bundle never replaces an input, and a second pack replaces the first whole
        p = ct("pack", job, "-o", os.path.join(job, "node1", "t1.cutrace"))
        need(p.returncode == 2 and b"refusing" in p.stderr, "pack -o INPUT", p.returncode, p.stderr)
        p = ct("pack", os.path.join(job, "node1", "t1.cutrace"), "-o", out)
        need(p.returncode == 0 and procs(out)[0][1] == procs(os.path.join(job, "node1", "t1.cutrace"))[0][1],
             "second pack", p.stderr)
    finally:
        shutil.rmtree(d, ignore_errors=True)


@test
def t_unreadable_inputs_count():
    """show GOOD /nonexistent: the unreadable input is counted in the JSON
    summary and the exit status is 2 (bad input), in text and JSON; GOOD
    alone exits 0 with nothing unreadable."""
    import json
    d = tempfile.mkdtemp(prefix="ct_it_")
    try:
        good = fixture_copy("probe", d, "good.cutrace")
        missing = os.path.join(d, "nonexistent.cutrace")
        p = ct("show", "--json", good)
        need(p.returncode == 0, "show --json GOOD rc=%d" % p.returncode, p.stderr)
        need(json.loads(p.stdout)["summary"]["unreadable"] == 0, "GOOD alone: unreadable 0", p.stdout[:400])
        p = ct("show", "--json", good, missing)
        need(p.returncode == 2, "show --json GOOD MISSING rc=%d (want 2)" % p.returncode, p.stderr)
        need(json.loads(p.stdout)["summary"]["unreadable"] == 1, "GOOD MISSING: unreadable 1", p.stdout[:400])
        need(b"nonexistent.cutrace" in p.stderr, "the missing input is named", p.stderr)
        p = ct("show", good, missing)
        need(p.returncode == 2, "show GOOD MISSING (text) rc=%d (want 2)" % p.returncode, p.stderr)
    finally:
        shutil.rmtree(d, ignore_errors=True)


@test
def t_cutrace_size_said():
    """CUTRACE_SIZE that is not a size, or is clamped, is said as a note in
    the trace (show, JSON) with the size used; a good one is not."""
    import json
    for val, size, frag in (("abc", 16 << 20, "is not a size: using 16M"),
                            ("1K", 256 << 10, "is below the smallest trace file: using 256K"),
                            ("8M", 8 << 20, None)):
        d = tempfile.mkdtemp(prefix="ct_it_")
        try:
            env = base_env(LD_LIBRARY_PATH=FAKECUDA, LD_PRELOAD=SHIM + ":" + FAKENV,
                           CUTRACE_DIR=d, CUTRACE_SIZE=val)
            subprocess.run([PROBE], env=env, capture_output=True, timeout=60)
            fs = [os.path.join(d, f) for f in os.listdir(d) if f.endswith(".cutrace")]
            need(len(fs) == 1, "CUTRACE_SIZE=%s: one trace" % val, os.listdir(d))
            need(os.path.getsize(fs[0]) == size, "CUTRACE_SIZE=%s: size %d, want %d" % (val, os.path.getsize(fs[0]), size))
            p = ct("show", "--json", fs[0])
            notes = json.dumps(json.loads(p.stdout))
            if frag:
                need(("CUTRACE_SIZE='%s' %s" % (val, frag)) in notes, "CUTRACE_SIZE=%s: no note" % val, notes[:600])
                need(frag in ct("show", fs[0]).stdout.decode(), "CUTRACE_SIZE=%s: show prints no note" % val)
            else:
                need("CUTRACE_SIZE='" not in notes, "CUTRACE_SIZE=%s: a note for a good size" % val)
        finally:
            shutil.rmtree(d, ignore_errors=True)
