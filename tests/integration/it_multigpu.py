# Several GPUs and several ranks on the rig (issue: traces and verdicts for
# every GPU and every rank).  The fake kernel simulates FAKENV_GPUS H200s
# (/dev/nvidia0..N-1, CARD_INFO with N entries); a launcher starts one probe
# per rank with RANK/LOCAL_RANK/WORLD_SIZE set and CUDA_VISIBLE_DEVICES=rank,
# the Slurm-style mapping of one GPU per rank.  The same checks ran on one
# real H200 with torchrun (tests/fixtures/h200-580/torchrun4); a machine with
# several GPUs was not available.
import re

NGPU = 4

LAUNCHER = r"""
import os, subprocess, sys
probe, n = sys.argv[1], int(sys.argv[2])
procs = []
for r in range(n):
    env = dict(os.environ, RANK=str(r), LOCAL_RANK=str(r), WORLD_SIZE=str(n),
               CUDA_VISIBLE_DEVICES=str(r))
    procs.append(subprocess.Popen([probe, "-n", "1"], env=env, stdout=subprocess.DEVNULL))
sys.exit(max(p.wait() for p in procs))
"""


def job(inject=()):
    return cutrace_run([PY, "-c", LAUNCHER, PROBE, str(NGPU)], rig_env(FAKENV_GPUS=NGPU), inject=inject)


def rank_of(p):
    return int(p["env"]["RANK"])


def card_minors(p):
    """The minor numbers of the GPUs NV_ESC_CARD_INFO returned."""
    ci = [e for e in events(p, "ioctl") if e.get("name", "").startswith("NV_ESC_CARD_INFO")]
    need(ci, "no CARD_INFO in rank %d" % rank_of(p))
    m = re.match(r"(\d+) GPUs?: (.*)", ci[0]["detail"])
    need(m, "CARD_INFO not decoded", ci[0])
    minors = [int(x) for x in re.findall(r"minor (\d+)", m.group(2))]
    need(int(m.group(1)) == len(minors), "CARD_INFO count and entries disagree", ci[0]["detail"])
    return minors


def gpu_opens(p):
    """/dev/nvidiaN nodes the rank opened, N only."""
    return sorted({int(e["target"][len("/dev/nvidia"):]) for e in p["events"]
                   if e["call"].startswith("open") and re.fullmatch(r"/dev/nvidia\d+", e["target"])})


@test
def t_multigpu_every_rank():
    r = job()
    need(r.rc == 0, "job failed rc=%d" % r.rc, r.err)
    ps = r.procs
    # one trace per rank, the launcher (no CUDA) leaves none
    need(sorted(rank_of(p) for p in ps) == list(range(NGPU)), "one trace per rank",
         [(p["pid"], p["env"].get("RANK")) for p in ps])
    need(len({p["file"] for p in ps}) == NGPU, "each rank its own file")
    for p in ps:
        rk = rank_of(p)
        need(card_minors(p) == list(range(NGPU)), "rank %d: CARD_INFO minors" % rk, card_minors(p))
        need(gpu_opens(p) == [rk], "rank %d opened /dev/nvidia%s, its visible device is %d"
             % (rk, gpu_opens(p), rk))
        need(p["env"]["CUDA_VISIBLE_DEVICES"] == str(rk), "CUDA_VISIBLE_DEVICES recorded")
        expect_verdict(p, "none")
    s = r.doc["summary"]
    need(s["processes"] == NGPU and s["healthy"] == NGPU and s["failed"] == 0 and not s["groups"],
         "job summary", s)
    txt = subprocess.run([CUTRACE, "show", r.dir], capture_output=True, text=True)
    need(txt.returncode == 0, "show DIR of a healthy job exits 0", txt.stderr)
    need(txt.stdout.startswith("%d processes traced: %d healthy, 0 failed" % (NGPU, NGPU)),
         "one summary line first", txt.stdout[:300])
    cleanup(r)


def one_failed_rank(r, want_rank, node):
    need(r.rc == 1, "the failing rank's status comes through (rc %d)" % r.rc, r.err)
    s = r.doc["summary"]
    need(s["processes"] == NGPU and s["healthy"] == NGPU - 1 and s["failed"] == 1, "summary counts", s)
    need(len(s["groups"]) == 1, "one group", s)
    g = s["groups"][0]
    need(g["layer"] == "device-node" and g["injected"] is True, "group verdict", g)
    need([m["rank"] for m in g["members"]] == [want_rank], "the group names exactly rank %d" % want_rank, g)
    need(node in g["summary"], "summary names %s" % node, g)
    for p in r.procs:
        if rank_of(p) == want_rank:
            expect_verdict(p, "device-node", step_call="open", injected=True, summary_has=node)
        else:
            expect_verdict(p, "none")
    txt = subprocess.run([CUTRACE, "show", r.dir], capture_output=True, text=True)
    need(txt.returncode == 1, "show exits 1 when a rank failed", txt.stderr)
    head = txt.stdout.split("\n\n", 1)[0]
    need(re.search(r"1 process: host \S+ rank %d pid \d+" % want_rank, head), "text summary names the rank", head)
    need(not re.search(r"rank (?!%d\b)\d+" % want_rank, head), "no other rank named", head)


@test
def t_multigpu_one_rank_denied_by_rank():
    # every GPU node denied, but only in the process whose RANK is 2
    r = job(inject=["open:path=/dev/nvidia[0-9]*:error=EPERM:rank=2"])
    one_failed_rank(r, 2, "/dev/nvidia2")
    cleanup(r)


@test
def t_multigpu_one_gpu_denied_by_minor():
    # the node of GPU minor 1 denied in every process: only rank 1 uses it
    r = job(inject=["open:dev=nvidia1:error=EPERM"])
    one_failed_rank(r, 1, "/dev/nvidia1")
    cleanup(r)
