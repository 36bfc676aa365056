# A short trace file (a cut download, a full disk, a copy still running)
# decodes what is intact and says what is missing (issue 17, "Damage is
# reported, not hidden"): how many records, or that their number is unknown
# when the tag area itself is cut, and a healthy-looking verdict says that a
# failure may be among what is missing.  Loaded by itest.py (test, need).
import gzip
import json
import os
import shutil
import struct
import subprocess
import tempfile

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "h200-580")
HDR_HEAD = 96  # struct cutrace_header.head (format.h)


def show_json(path):
    p = subprocess.run([CUTRACE, "show", "--json", path], capture_output=True, text=True, timeout=60)
    need(p.returncode in (0, 1), "show --json", p.returncode, p.stderr)
    return json.loads(p.stdout)["processes"][0]


def prefix(src, d, n):
    dst = os.path.join(d, "p%d.cutrace" % n)
    with open(src, "rb") as f, open(dst, "wb") as o:
        o.write(f.read(n))
    return dst


@test
def t_truncated_prefix_says_missing():
    d = tempfile.mkdtemp(prefix="ct_tr_")
    full = os.path.join(d, "torch.cutrace")
    with gzip.open(os.path.join(FIXTURES, "torch.cutrace.gz")) as f, open(full, "wb") as o:
        o.write(f.read())
    b = open(full, "rb").read(4096)
    head = struct.unpack_from("<Q", b, HDR_HEAD)[0]
    size = os.path.getsize(full)
    need(size == 16 << 20 and head > 1000, "the 16 MiB torch fixture", size, head)
    whole = show_json(full)
    need(whole["verdict"]["ok"] and not whole["flags"]["degraded"], "the whole file is healthy", whole["verdict"])

    # 5 MB of 16: every slot written lies before the cut; all of it decodes
    p = show_json(prefix(full, d, 5000000))
    dmg = p["stats"]["damage"] or ""
    need(p["flags"]["degraded"], "a short file is degraded", p["flags"])
    need("truncated: 5000000 of 16777216 bytes present, no record missing" in dmg, "nothing missing said", dmg)
    need(p["stats"]["records"] == whole["stats"]["records"] and p["stats"]["events"] == whole["stats"]["events"],
         "every record decodes", p["stats"], whole["stats"])
    need(p["verdict"]["ok"] and p["verdict"]["summary"] == whole["verdict"]["summary"], "the same verdict",
         p["verdict"]["summary"], whole["verdict"]["summary"])

    # cut in the slots: the records past the end are counted, the verdict is
    # not a plain "nothing failed"
    p = show_json(prefix(full, d, 200000))
    dmg = p["stats"]["damage"] or ""
    missing = whole["stats"]["records"] - p["stats"]["records"]
    need(missing > 0 and "%d records past the end missing" % missing in dmg, "missing records counted",
         missing, dmg)
    need("a failure may be among them" in p["verdict"]["summary"], "the verdict says what it cannot know",
         p["verdict"]["summary"])

    # cut in the tag area: not "0 records missing", but the written slots
    # whose tags are gone
    p = show_json(prefix(full, d, 20000))
    dmg = p["stats"]["damage"] or ""
    need("0 records past the end missing (" not in dmg and "the tags of %d more written slots" % head in dmg
         and "unknown" in dmg, "an unknown number of records said", head, dmg)
    need(p["stats"]["records"] == 0 and "a failure may be among them" in p["verdict"]["summary"],
         "nothing decoded, and nothing concluded", p["stats"], p["verdict"]["summary"])
    t = subprocess.run([CUTRACE, "show", prefix(full, d, 20000)], capture_output=True, text=True, timeout=60)
    need("** damaged: truncated: 20000 of 16777216 bytes present" in t.stdout, "text says it too", t.stdout[-2000:])
    shutil.rmtree(d, ignore_errors=True)
