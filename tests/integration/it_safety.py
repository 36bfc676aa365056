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
