#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Every man page against what its program says and its parser accepts.

For each program: the options and subcommands its man page names (in the
SYNOPSIS, and in the tags of OPTIONS and COMMANDS) against those of its
--help (and, for tlsctl, of each `tlsctl COMMAND --help`), both ways. For
tlsd.conf(5): the settings it documents against the keys tlsd's parser
accepts (the tables of known names in tcd/config.c and tcd/config_trust.c),
both ways, and its example checked by `tlsd --check-config`; the sample
config/tlsd.conf shows every setting (set or commented out).

Usage: check_docs.py BUILD_DIR. Prints one line per check ("ok: ..." or
"FAIL: ..." with what differs) and exits 1 if any failed.
"""
import os
import re
import subprocess
import sys
import tempfile

TOP = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", ".."))
OUT = sys.argv[1] if len(sys.argv) > 1 else "build"
BIN = OUT if os.path.isabs(OUT) else os.path.join(TOP, OUT)

# program, its man page, its subcommands' per-command help (tlsctl only)
PAGES = [
    ("tlsd", "tcd/tlsd.8", False),
    ("tlsctl", "tools/tlsctl.8", True),
    ("tls-classifier", "tools/tls-classifier.8", False),
    ("psemu", "tests/emu/psemu.1", False),
]
# tls-emu is a test tool without a page; a page of its own joins the check.
if os.path.exists(os.path.join(TOP, "tests/emu/tls-emu.1")):
    PAGES.append(("tls-emu", "tests/emu/tls-emu.1", False))

OPT_RE = re.compile(r"(?<![\w-])(--[A-Za-z][\w-]*|-[A-Za-z])(?![\w])")
failures = 0


def report(ok, what, detail=""):
    global failures
    if ok:
        print(f"ok: {what}")
    else:
        failures += 1
        print(f"FAIL: {what}: {detail}")


def unroff(line):
    """Roff source to plain text: escapes, fonts, .B/.BR quoting."""
    line = re.sub(r"\\f(\[[^\]]*\]|.)", "", line)
    line = line.replace("\\-", "-").replace("\\e", "\\").replace("\\ ", " ")
    line = line.replace("\\&", "").replace("\\(em", "-")
    if line.startswith("."):
        # a macro line: drop the macro name, keep its arguments' text
        parts = line.split(None, 1)
        line = parts[1] if len(parts) > 1 else ""
        line = line.replace('"', "")
    return line.strip()


def sections(path):
    """{section name: [raw lines]}; .SS subsections stay in their section."""
    out, cur = {}, None
    with open(os.path.join(TOP, path)) as f:
        for raw in f.read().splitlines():
            if raw.startswith(".SH"):
                cur = raw[3:].strip().strip('"')
                out[cur] = []
            elif cur:
                out[cur].append(raw)
    return out


def tags(lines):
    """The tag lines of .TP paragraphs (the line after each .TP, and after
    each .TQ: a further tag of the same paragraph)."""
    return [lines[i + 1] for i, l in enumerate(lines[:-1])
            if l.startswith(".TP") or l.startswith(".TQ")]


def man_names(prog, path):
    secs = sections(path)
    opts, cmds = set(), set()
    synopsis = [unroff(l) for l in secs.get("SYNOPSIS", [])]
    for l in synopsis:
        opts.update(OPT_RE.findall(l))
        m = re.match(re.escape(prog) + r" ([a-z][\w-]*)", l)
        if m:
            cmds.add(m.group(1))
    for l in tags(secs.get("OPTIONS", [])):
        opts.update(OPT_RE.findall(unroff(l)))
    for l in tags(secs.get("COMMANDS", [])):
        text = unroff(l)
        opts.update(OPT_RE.findall(text))
        # "pid PID JOB, unpid PID": each command of a shared tag
        for part in text.split(", "):
            m = re.match(r"([a-z][\w-]*)", part)
            if m:
                cmds.add(m.group(1))
    return opts, cmds


def run_help(argv):
    p = subprocess.run(argv, capture_output=True, text=True, timeout=10)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} exited {p.returncode}: {p.stderr.strip()}")
    return p.stdout


def help_names(prog, text):
    """Options and commands of a --help text: its Usage lines, the leading
    column of its option lines and the lines of its Commands block; and
    the options each line of that block gives its command."""
    opts, cmds, cmd_opts = set(), set(), {}
    in_cmds = in_usage = False
    for line in text.splitlines():
        s = line.strip()
        if line.startswith("Usage:"):
            in_usage = True
        elif in_usage and not (line.startswith(" ") and (s.startswith(prog) or s.startswith("["))):
            in_usage = False
        if in_usage:
            u = s[len("Usage:"):].strip() if s.startswith("Usage:") else s
            opts.update(OPT_RE.findall(u))
            m = re.match(re.escape(prog) + r"(?: \[-\w\])* ([a-z][\w-]*)", u)
            if m:
                cmds.add(m.group(1))
            continue
        if line.startswith("Commands"):
            in_cmds = True
            continue
        if not s:
            in_cmds = False
            continue
        head = re.split(r"\s{2,}", s)[0]
        if s.startswith("-"):
            opts.update(OPT_RE.findall(head))
        elif in_cmds and re.match(r"  [a-z]", line):
            found = set(OPT_RE.findall(head))
            opts |= found
            cmds.add(head.split()[0])
            cmd_opts.setdefault(head.split()[0], set()).update(found)
    return opts, cmds, cmd_opts


def compare(what, man, code, man_side="the man page", code_side="--help"):
    only_man = sorted(man - code)
    only_code = sorted(code - man)
    detail = []
    if only_man:
        detail.append(f"only in {man_side}: {' '.join(only_man)}")
    if only_code:
        detail.append(f"only in {code_side}: {' '.join(only_code)}")
    report(not detail, what, "; ".join(detail))


def check_program(prog, page, per_command):
    exe = os.path.join(BIN, prog)
    hopts, hcmds, cmd_opts = help_names(prog, run_help([exe, "--help"]))
    mopts, mcmds = man_names(prog, page)
    compare(f"{prog}: options of {page} and --help", mopts, hopts)
    compare(f"{prog}: commands of {page} and --help", mcmds, hcmds)
    if not per_command:
        return
    # Each command's own help against its line in the overview; the global
    # options its Usage line repeats ([-j] [-p]) are no command's own.
    glob = hopts - set().union(*cmd_opts.values())
    for c in sorted(hcmds):
        o, _, _ = help_names(prog, run_help([exe, c, "--help"]))
        compare(f"{prog}: options of `{prog} {c} --help` and of `{c}` in --help",
                o - glob, cmd_opts.get(c, set()),
                man_side=f"{prog} {c} --help", code_side=f"{prog} --help")


# --- tlsd.conf(5) against the parser ---

TABLE_RE = re.compile(r"static const char \*const (\w+)\[\] = \{(.*?)\};", re.S)
FUNC_RE = re.compile(r"^(?:static )?int (\w+)\(", re.M)
# the table (file, function it is in or None, its name) -> the settings' prefix
TABLES = {
    ("tcd/config.c", None, "known"): "",
    ("tcd/config.c", "parse_jobs", "members"): "jobs.",
    ("tcd/config.c", "parse_discovery", "members"): "discovery.",
    ("tcd/config.c", "parse_rule_list", "members"): "discovery.rules.",
    ("tcd/config_trust.c", "tls_parse_trust", "trust_m"): "discovery.trust.",
    ("tcd/config_trust.c", "tls_parse_trust", "limits_m"): "discovery.limits.",
}


def parser_keys():
    keys, seen = set(), set()
    for path in sorted({t[0] for t in TABLES}):
        src = open(os.path.join(TOP, path)).read()
        funcs = [(m.start(), m.group(1)) for m in FUNC_RE.finditer(src)]
        for m in TABLE_RE.finditer(src):
            # the function a table is in: the last one that starts before it
            # and whose body has not ended (a table at file level has none)
            fn = None
            for start, name in funcs:
                if start < m.start() and "\n}\n" not in src[start : m.start()]:
                    fn = name
            key = (path, fn, m.group(1))
            if key not in TABLES:
                continue
            seen.add(key)
            for name in re.findall(r'"([\w]+)"', m.group(2)):
                keys.add(TABLES[key] + name)
    missing = set(TABLES) - seen
    report(not missing, "the parser's tables of settings found",
           f"not found (renamed or moved?): {sorted(missing)}")
    return keys


def conf_page_keys(path):
    """Settings named by the tags of SETTINGS: a .SS names the group its
    tags belong to, an .RS block after a tag holds that tag's members."""
    keys = set()
    lines = sections(path).get("SETTINGS", [])
    group, parent, last = "", None, None
    for i, l in enumerate(lines):
        if l.startswith(".SS"):
            group, parent = unroff(l) + ".", None
        elif l.startswith(".RS"):
            parent = last
        elif l.startswith(".RE"):
            parent = None
        elif l.startswith(".TP") and i + 1 < len(lines):
            m = re.match(r"(\w+)", unroff(lines[i + 1]))
            if not m:
                continue
            name = (parent + "." if parent else group) + m.group(1)
            if parent is None:
                last = name
            keys.add(name)
    # a group documented under its own .SS is named by it too
    return keys


def check_conf():
    page = "config/tlsd.conf.5"
    keys = parser_keys()
    compare("tlsd.conf(5): settings against the parser's", conf_page_keys(page),
            keys, code_side="the parser")
    # The commented sample shows every setting too, set or commented out.
    sample = open(os.path.join(TOP, "config/tlsd.conf")).read()
    shown = set(re.findall(r"(\w+) =", sample))
    missing = sorted(k for k in keys if k.rsplit(".", 1)[-1] not in shown)
    report(not missing, "config/tlsd.conf shows every setting of the parser",
           f"not in it: {' '.join(missing)}")
    # Its example must be a file tlsd accepts.
    lines = sections(page).get("EXAMPLES", [])
    try:
        a = lines.index(".nf")
        b = lines.index(".fi", a)
    except ValueError:
        report(False, "tlsd.conf(5): an example", "no .nf/.fi block in EXAMPLES")
        return
    text = "\n".join(l.replace("\\-", "-").replace("\\e", "\\") for l in lines[a + 1 : b])
    with tempfile.NamedTemporaryFile("w", suffix=".conf") as f:
        f.write(text + "\n")
        f.flush()
        for conf in (f.name, os.path.join(TOP, "config/tlsd.conf")):
            p = subprocess.run([os.path.join(BIN, "tlsd"), "--check-config", "-c", conf],
                               capture_output=True, text=True, timeout=10)
            name = "the example of tlsd.conf(5)" if conf == f.name else "config/tlsd.conf"
            report(p.returncode == 0, f"tlsd --check-config accepts {name}",
                   (p.stdout + p.stderr).strip())


for prog, page, per_cmd in PAGES:
    try:
        check_program(prog, page, per_cmd)
    except (OSError, RuntimeError, subprocess.TimeoutExpired) as e:
        report(False, f"{prog}: --help", str(e))
check_conf()
sys.exit(1 if failures else 0)
