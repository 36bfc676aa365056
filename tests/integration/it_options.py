# One option grammar (issue 17): every command's options come from one table
# (tracer/base/opts.c), so each form of an option is read alike by every
# command, what --help lists is what is accepted, and sizes and durations go
# through the parsers the shim uses (common/parse.c).  Table-driven: commands
# x option forms.  Loaded by itest.py, which provides test, need, Fail,
# base_env, rig_env, cutrace_run, cleanup, CUTRACE, PROBE ...
import os
import re
import shutil
import subprocess
import tempfile

COMMANDS = ["run", "probe", "show", "doctor", "replay", "pack", "scenarios"]
ESC = "\x1b["

# every way of saying --color, and whether it means colour into a pipe
COLOR_FORMS = [
    (["--color"], True),
    (["--color=always"], True),
    (["--color", "always"], True),
    (["--color=never"], False),
    (["--color", "never"], False),
    (["--color=auto"], False),  # auto: a pipe is not a terminal
    (["--color", "auto"], False),
    (["--colo=never"], False),  # a unique prefix of a long name
]

# a value each option's metavariable accepts (the rest get "x")
GOOD_VALUE = {"SIZE": "4MiB", "DURATION": "1.5s", "FORMAT": "text", "LIST": "dl", "NAME": "no-driver-library"}


def opt(args, env=None, timeout=60):
    return subprocess.run([CUTRACE] + list(args), capture_output=True, text=True,
                          env=env if env is not None else base_env(), timeout=timeout)


def one_usage_line(p, cmd, frag, what):
    lines = p.stderr.splitlines()
    need(p.returncode == 2, "%s: exit 2, not %d" % (what, p.returncode), p.stderr)
    need(len(lines) == 1, "%s: one line" % what, p.stderr)
    need(lines[0].startswith("cutrace: %s: " % cmd) and lines[0].endswith("(try 'cutrace %s --help')" % cmd),
         "%s: 'cutrace: %s: ... (try ...)'" % (what, cmd), lines[0])
    need(frag in lines[0], "%s: says %r" % (what, frag), lines[0])
    need(p.stdout == "", "%s: nothing on stdout" % what, p.stdout)
    return lines[0]


def help_rows(cmd):
    """(short letter or None, long name, metavariable or None, takes [=WHEN]) of each row of --help"""
    p = opt([cmd, "--help"])
    need(p.returncode == 0 and p.stdout.startswith("usage: cutrace %s" % cmd), "%s --help" % cmd, p.stdout, p.stderr)
    rows = []
    for m in re.finditer(r"^  (?:-(\w), )?--([\w-]+)(\[=\w+\])?(?: ([A-Z]+))?", p.stdout, re.M):
        rows.append((m.group(1), m.group(2), m.group(4), bool(m.group(3))))
    need(len(rows) >= 2, "%s --help lists its options" % cmd, p.stdout)
    return rows


@test
def t_options_color_forms_every_command():
    """--color, --color=WHEN, --color WHEN: accepted by every command alike;
    a bad WHEN is the same one line in each."""
    for cmd in COMMANDS:
        for form, _ in COLOR_FORMS:
            p = opt([cmd] + form + ["--help"])
            need(p.returncode == 0 and p.stdout.startswith("usage: cutrace %s" % cmd) and p.stderr == "",
                 "%s %s --help: accepted" % (cmd, " ".join(form)), p.returncode, p.stderr)
        one_usage_line(opt([cmd, "--color=sometimes"]), cmd, "--color takes auto, always or never, not 'sometimes'",
                       "%s --color=sometimes" % cmd)
        one_usage_line(opt([cmd, "--frob"]), cmd, "unknown option '--frob'", "%s --frob" % cmd)
        one_usage_line(opt([cmd, "--help=x"]), cmd, "--help takes no value", "%s --help=x" % cmd)
        # a prefix of two long names is said as such, naming both
        rows = [r[1] for r in help_rows(cmd)]
        for i, a in enumerate(rows):
            for b in rows[i + 1:]:
                k = 0
                while k < min(len(a), len(b)) and a[k] == b[k]:
                    k += 1
                if k and not any(r.startswith(a[:k]) for r in rows if r not in (a, b)) and a[:k] not in rows:
                    line = one_usage_line(opt([cmd, "--" + a[:k]]), cmd, "'--%s' is ambiguous: " % a[:k],
                                          "%s --%s" % (cmd, a[:k]))
                    need("--" + a in line and "--" + b in line, "names both", line)


@test
def t_options_help_lists_what_is_accepted():
    """Each row of a command's --help, in each of its forms, is accepted; a
    value-taking one without its value, or a flag with one, is one line."""
    for cmd in COMMANDS:
        rows = help_rows(cmd)
        names = [r[1] for r in rows]
        need("color" in names and "help" in names, "%s --help lists --color and --help" % cmd, names)
        # the synopsis (hand-written, before the first blank line) names only options the table has
        synopsis = opt([cmd, "--help"]).stdout.split("\n\n")[0]
        extra = [n for n in re.findall(r"--([\w-]+)", synopsis) if n not in names]
        need(not extra, "%s --help: the synopsis names options the command does not take: %s" % (cmd, extra), synopsis)
        for short, name, meta, optional in rows:
            if name in ("help", "help-inject"):
                continue
            if optional:  # --color: COLOR_FORMS
                continue
            if meta is None:
                forms = [["--" + name]] + ([["-" + short]] if short else [])
            else:
                v = GOOD_VALUE.get(meta, "x")
                forms = [["--" + name + "=" + v], ["--" + name, v]]
                if short:
                    forms += [["-" + short, v], ["-" + short + v]]
            for f in forms:
                p = opt([cmd] + f + ["--help"])
                need(p.returncode == 0 and p.stdout.startswith("usage: cutrace %s" % cmd),
                     "%s %s: accepted" % (cmd, " ".join(f)), p.returncode, p.stderr)
            if meta is None:
                one_usage_line(opt([cmd, "--%s=x" % name]), cmd, "--%s takes no value" % name,
                               "%s --%s=x" % (cmd, name))
            else:
                one_usage_line(opt([cmd, "--" + name]), cmd, "--%s needs a value" % name, "%s --%s" % (cmd, name))
                empty = ("--%s ''" % name) if meta in ("SIZE", "DURATION") else \
                    ("--%s needs a %s, not ''" % (name, meta.lower()))
                one_usage_line(opt([cmd, "--%s=" % name]), cmd, empty, "%s --%s=" % (cmd, name))


# (value, what every command says of it)
BAD_SIZES = [("2G", "is more than 1024M, the largest trace file"),
             ("1025M", "is more than 1024M"),
             ("255K", "is not a size of at least 256K"),
             ("abc", "is not a size of at least 256K"),
             ("4Mi", "is not a size"),
             ("100T", "is not a size")]
BAD_DURATIONS = ["soon", "1.s", "-1s", "5d", "2 s"]


@test
def t_options_sizes_and_durations_alike():
    """--size and --timeout: the same values refused with the same words by
    every command that takes them; none clamped or ignored."""
    size_cmds = [c for c in COMMANDS if any(r[1] == "size" for r in help_rows(c))]
    time_cmds = [c for c in COMMANDS if any(r[1] == "timeout" for r in help_rows(c))]
    need(set(size_cmds) == {"run", "probe", "replay"}, "commands with --size", size_cmds)
    need(set(time_cmds) == {"run", "probe", "replay", "doctor"}, "commands with --timeout", time_cmds)
    for cmd in size_cmds:
        for val, frag in BAD_SIZES:
            for f in (["--size", val], ["--size=" + val]):
                one_usage_line(opt([cmd] + f), cmd, "--size '%s' %s" % (val, frag), "%s %s" % (cmd, " ".join(f)))
    for cmd in time_cmds:
        for val in BAD_DURATIONS:
            for f in (["--timeout", val], ["--timeout=" + val]):
                one_usage_line(opt([cmd] + f), cmd, "--timeout '%s' is not a duration" % val,
                               "%s %s" % (cmd, " ".join(f)))
    # the rule grammar's delay= is read by the same duration parser: the
    # same values refused there
    for val in BAD_DURATIONS:
        p = opt(["run", "--inject", "cuInit:delay=%s" % val, "--", "true"])
        need(p.returncode == 2 and ("delay=%s" % val) in p.stderr, "delay=%s refused as --timeout is" % val, p.stderr)


@test
def t_options_inherited_size_checked_as_size():
    """CUTRACE_SIZE from the environment (no --size) is refused by run and
    probe with the words --size gets, not clamped or replaced by 16M
    silently; a --size given wins over it."""
    for val, frag in BAD_SIZES + [("", "is not a size")]:
        for cmd in ("run", "probe"):
            args = [cmd, "-q"] + (["--", "true"] if cmd == "run" else [])
            p = opt(args, env=base_env(CUTRACE_SIZE=val))
            lines = p.stderr.splitlines()
            need(p.returncode == 2 and len(lines) == 1 and
                 ("CUTRACE_SIZE (from the environment): '%s' %s" % (val, frag)) in lines[0],
                 "%s with CUTRACE_SIZE=%r: one line, exit 2" % (cmd, val), p.returncode, p.stderr)
    d = tempfile.mkdtemp(prefix="ct_it_")
    p = opt(["run", "-o", d, "-q", "--size", "1M", "--", PROBE], env=rig_env(CUTRACE_SIZE="2G"))
    need(p.returncode == 0 and trace_size(d) == 1 << 20, "--size 1M wins over CUTRACE_SIZE=2G", p.stderr)
    shutil.rmtree(d, ignore_errors=True)
    d = tempfile.mkdtemp(prefix="ct_it_")
    p = opt(["run", "-o", d, "-q", "--", PROBE], env=rig_env(CUTRACE_SIZE="2MiB"))
    need(p.returncode == 0 and trace_size(d) == 2 << 20, "CUTRACE_SIZE=2MiB kept", p.stderr)
    shutil.rmtree(d, ignore_errors=True)


def trace_size(d):
    files = [os.path.join(r, f) for r, _, fs in os.walk(d) for f in fs if f.endswith(".cutrace")]
    need(len(files) == 1, "one trace file in %s" % d, files)
    return os.path.getsize(files[0])


@test
def t_options_size_is_what_the_shim_writes():
    """The size the CLI accepted is the size of the file the shim writes, in
    every form and unit, for run and probe."""
    for cmd, form, want in [("run", ["--size", "4MiB"], 4 << 20),
                            ("run", ["--size=512k"], 512 << 10),
                            ("run", ["--size", "64MB"], 64 << 20),
                            ("probe", ["--size=4M"], 4 << 20),
                            ("probe", ["--size", "262144"], 256 << 10)]:
        d = tempfile.mkdtemp(prefix="ct_it_")
        args = [cmd, "-o", d, "-q"] + form + (["--", PROBE] if cmd == "run" else [])
        p = opt(args, env=rig_env())
        need(p.returncode == 0, "%s %s: rc %d" % (cmd, " ".join(form), p.returncode), p.stderr[-1500:])
        got = trace_size(d)
        need(got == want, "%s %s: the shim wrote %d bytes, not %d" % (cmd, " ".join(form), got, want))
        shutil.rmtree(d, ignore_errors=True)


def on_terminal(argv, env):
    """argv with stdout and stderr on a pseudo-terminal: (rc, output)"""
    import pty
    master, slave = pty.openpty()
    p = subprocess.Popen(argv, stdout=slave, stderr=slave, env=env)
    os.close(slave)
    out = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
    os.close(master)
    return p.wait(timeout=60), out.decode("utf-8", "replace")


@test
def t_options_color_forms_take_effect():
    """Each --color form does what it says in every command that colours;
    NO_COLOR and TERM=dumb turn auto off on a terminal, not an explicit
    --color."""
    r = cutrace_run([PROBE], rig_env(FAKENV_MISSING="/dev/nvidiactl"))
    bad = rig_env(FAKENV_MISSING="/dev/nvidiactl")
    runs = {
        "show": lambda f: opt(["show"] + f + [r.dir]),
        "replay": lambda f: opt(["replay", "--print"] + f + [r.dir]),
        "doctor": lambda f: opt(["doctor", "--no-probe"] + f),
        "probe": lambda f: opt(["probe", "-o", tempfile.mkdtemp(prefix="ct_it_")] + f, env=bad),
        "run": lambda f: opt(["run", "-o", tempfile.mkdtemp(prefix="ct_it_")] + f + ["--", PROBE], env=bad),
    }
    for cmd, go in sorted(runs.items()):
        forms = COLOR_FORMS if cmd == "show" else [COLOR_FORMS[0], COLOR_FORMS[2], COLOR_FORMS[4]]
        for form, colour in forms:
            p = go(form)
            out = p.stdout + p.stderr
            need(p.returncode in (0, 1), "%s %s: rc %d" % (cmd, " ".join(form), p.returncode), p.stderr[-800:])
            need((ESC in out) == colour, "%s %s into a pipe: colour %s" % (cmd, " ".join(form), colour), out[-800:])
    def term(**kv):  # a terminal's environment, without a NO_COLOR the test runner may have set
        env = base_env(**kv)
        if "NO_COLOR" not in kv:
            env.pop("NO_COLOR", None)
        return env
    for env, form, colour, what in [(term(TERM="xterm"), [], True, "auto on a terminal"),
                                    (term(TERM="dumb"), [], False, "TERM=dumb"),
                                    (term(TERM="xterm", NO_COLOR="1"), [], False, "NO_COLOR=1"),
                                    (term(TERM="dumb"), ["--color"], True, "TERM=dumb --color"),
                                    (term(TERM="xterm", NO_COLOR="1"), ["--color", "always"], True,
                                     "NO_COLOR=1 --color always"),
                                    (term(TERM="xterm"), ["--color", "never"], False, "--color never")]:
        rc, out = on_terminal([CUTRACE, "show"] + form + [r.dir], env)
        need(rc == 1 and "FAILED" in out, "show on a terminal (%s)" % what, rc, out[-500:])
        need((ESC in out) == colour, "show on a terminal, %s: colour %s" % (what, colour), out[-500:])
    cleanup(r)


@test
def t_options_man_page_names_every_option():
    """Every option a command's --help lists (from its table) is in that
    command's section of man/cutrace.1 or its Common options, and in the
    README."""
    man = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "man", "cutrace.1")
    need(os.path.exists(man), "man/cutrace.1 next to the tests", man)
    text = open(man).read().replace("\\-", "-")
    secs = re.split(r"^\.S[SH] ", text, flags=re.M)
    common = [s for s in secs if s.startswith('"Common options"')]
    need(len(common) == 1, "one Common options section")
    for cmd in COMMANDS:
        sec = [s for s in secs if s.startswith('"cutrace %s ' % cmd) or s.startswith('"cutrace %s"' % cmd)]
        need(len(sec) == 1, "one man section for %s" % cmd, [s[:40] for s in secs])
        where = sec[0] + common[0]
        missing = [("-" + short) if short and ("--" + name) not in where else "--" + name
                   for short, name, _, _ in help_rows(cmd)
                   if ("--" + name) not in where and not (short and re.search(r"\B-%s\b" % short, where))]
        need(not missing, "man page, cutrace %s: options not named: %s" % (cmd, " ".join(missing)))
    # and the README names every one somewhere
    readme = open(os.path.join(os.path.dirname(man), "..", "README.md")).read()
    for cmd in COMMANDS:
        missing = ["--" + r[1] for r in help_rows(cmd) if "--" + r[1] not in readme]
        need(not missing, "README.md: options of cutrace %s not named: %s" % (cmd, " ".join(missing)))


@test
def t_options_nothing_silently_ignored():
    """An option that would change nothing is refused, not ignored: --pids
    without --no-time, in every command that takes it."""
    cmds = [c for c in COMMANDS if any(r[1] == "pids" for r in help_rows(c))]
    need(set(cmds) == {"run", "probe", "show", "doctor", "replay"}, "commands with --pids", cmds)
    for cmd in cmds:
        tail = {"run": ["--", "true"], "show": ["/nonexistent"], "replay": ["/nonexistent"]}.get(cmd, [])
        one_usage_line(opt([cmd, "--pids"] + tail), cmd, "--pids keeps the real pids under --no-time",
                       "%s --pids without --no-time" % cmd)
    p = opt(["run", "--no-time", "--pids", "-q", "--", "true"])
    need(p.returncode == 0, "run --no-time --pids is accepted", p.stderr)
