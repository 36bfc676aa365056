# The text timeline prints untrusted bytes (paths, symbol names from the
# traced program) with control characters escaped, whatever their position
# in a line (quoted strings escape a tab too).
import re


@test
def t_show_text_escapes_control_bytes():
    name = b"/dev/nvidia-\x1b[31mred\x01\x7f\xff\tend-of-a-longer-name-" + b"x" * 40 + b"\x02"
    prog = ("import os\n"
            "try:\n    os.open(%r, os.O_RDONLY)\nexcept OSError:\n    pass\n" % name)
    r = preload_run([PY, "-c", prog], base_env())
    need(r.rc == 0, "program failed", r.err)
    p = subprocess.run([CUTRACE, "show", "--color=never", r.dir], capture_output=True)
    need(p.returncode in (0, 1), "show rc=%d" % p.returncode, p.stderr)
    lines = [l for l in p.stdout.split(b"\n") if re.match(rb"\s+\+\d", l) and b"open" in l]
    need(len(lines) == 1, "one open line", p.stdout[-2000:])
    line = lines[0]
    need(not re.search(rb"[\x00-\x08\x0a-\x1f\x7f-\xff]", line), "raw control bytes in the line", line)
    want = b'"/dev/nvidia-\\x1b[31mred\\x01\\x7f\\xff\\x09end-of-a-longer-name-' + b"x" * 40 + b'\\x02"'
    need(want in line, "escaped name", line)
    cleanup(r)
