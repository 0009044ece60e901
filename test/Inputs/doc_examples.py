#!/usr/bin/env python3
"""Runs the examples of a Markdown page: doc_examples.py [options] PAGE.md

A fenced code block preceded (blank lines allowed) by an HTML comment

    <!-- doc-test -->                      run it
    <!-- doc-test: expect=REGEX -->        run it; its output must match
    <!-- doc-test: excerpt=PATH -->        it is an excerpt of PATH
    <!-- doc-test: long -->                run it only with --long
    <!-- doc-test: args='--pass' -->       (mlir) conv3d-opt's arguments

is checked according to its language:

  sh, console  run by bash (-e -o pipefail) from a scratch copy of the
               repository root: every top-level entry of --src linked in,
               `build` linked to --build, so commands read as they would
               from a checkout (`build/bin/conv3d-opt examples/...`);
               files they write land in the scratch folder
  python       run by the interpreter running this script, with
               PYTHONPATH=python and CONV3D_LIB pointing at the build
  mlir         parsed and verified by conv3d-opt
  other        only with excerpt= (C++, CMake: the code lives in a file that
               a test compiles; the page must not drift from it)

An excerpt's lines (stripped, blank ones ignored) must occur in PATH in
order and contiguously; a line `...` or `// ...` or `# ...` in the block
marks an elision, and the pieces between elisions must occur in order.
Options of one comment combine, in shell quoting:
`<!-- doc-test: long expect='rel_l2 = .*: PASS' -->`.

`doc_examples.py --untested DOCS TESTS` lists the pages of DOCS (top level,
DESIGN.md aside: it holds no examples) without a TESTS/<page>.test, and
exits 1 if there is one.

Blocks without a marker are not run (GPU examples, set-up commands). The
page's blocks run in order in one scratch folder, so a later block may use
files an earlier one wrote. Prints one line per checked block and, on a
failure, the block's output; exits 1 if any block failed, 2 if the page has
no marked block (a page whose examples are never checked is an error).
"""

import argparse
import os
import re
import shlex
import subprocess
import sys
import tempfile

MARKER = re.compile(r"^\s*<!--\s*doc-test(?::(?P<opts>.*?))?\s*-->\s*$")
FENCE = re.compile(r"^(?P<indent>\s*)(?P<fence>```+|~~~+)\s*(?P<info>[^`]*)$")
ELISION = {"...", "// ...", "# ..."}


class Block:
    def __init__(self, line, lang, text, opts):
        self.line = line
        self.lang = lang
        self.text = text
        self.opts = opts


OPTIONS = {"expect", "excerpt", "long", "args"}


def parse_opts(text, where):
    opts = {}
    for word in shlex.split(text or ""):
        key, sep, value = word.partition("=")
        if key not in OPTIONS:
            sys.exit("%s: unknown doc-test option %r (quote values with "
                     "spaces: expect='a b')" % (where, word))
        opts[key] = value if sep else True
    return opts


def marked_blocks(path):
    """The page's fenced blocks that a doc-test comment precedes."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    blocks = []
    pending = None
    i = 0
    while i < len(lines):
        m = MARKER.match(lines[i])
        if m:
            pending = (i + 1, parse_opts(m.group("opts"),
                                         "%s:%d" % (path, i + 1)))
            i += 1
            continue
        m = FENCE.match(lines[i])
        if m:
            fence, indent = m.group("fence"), len(m.group("indent"))
            lang = m.group("info").strip().split(" ")[0].lower()
            start = i + 1
            i += 1
            body = []
            while i < len(lines) and not lines[i].strip().startswith(fence):
                # A fence indented (in a list item) indents its body too.
                line = lines[i]
                body.append(line[indent:] if line[:indent].strip() == ""
                            else line.lstrip())
                i += 1
            if pending:
                blocks.append(Block(start, lang, "\n".join(body) + "\n",
                                    pending[1]))
            pending = None
            i += 1
            continue
        if lines[i].strip() and pending:
            sys.exit("%s:%d: doc-test marker not followed by a code block"
                     % (path, pending[0]))
        i += 1
    return blocks


def check_excerpt(block, src):
    target = os.path.join(src, block.opts["excerpt"])
    try:
        with open(target, encoding="utf-8") as f:
            haystack = [l.strip() for l in f.read().split("\n") if l.strip()]
    except OSError as e:
        return False, "cannot read %s: %s" % (target, e)
    pieces, piece = [], []
    for l in block.text.split("\n"):
        l = l.strip()
        if l in ELISION:
            pieces.append(piece)
            piece = []
        elif l:
            piece.append(l)
    pieces.append(piece)
    at = 0
    for piece in pieces:
        if not piece:
            continue
        found = -1
        for j in range(at, len(haystack) - len(piece) + 1):
            if haystack[j:j + len(piece)] == piece:
                found = j
                break
        if found < 0:
            return False, ("not an excerpt of %s (in order); first line not "
                           "matched: %s" % (block.opts["excerpt"], piece[0]))
        at = found + len(piece)
    return True, ""


def make_scratch(src, build):
    scratch = tempfile.mkdtemp(prefix="doc-examples-")
    for entry in os.listdir(src):
        if entry in (".git", "build"):
            continue
        os.symlink(os.path.join(src, entry), os.path.join(scratch, entry))
    os.symlink(build, os.path.join(scratch, "build"))
    return scratch


def run_block(block, scratch, build, env, timeout):
    if block.lang in ("sh", "bash", "console", "shell"):
        cmd = ["bash", "-e", "-o", "pipefail", "-c", block.text]
    elif block.lang in ("python", "py"):
        cmd = [sys.executable, "-c", block.text]
    elif block.lang == "mlir":
        path = os.path.join(scratch, "doc-block-%d.mlir" % block.line)
        with open(path, "w", encoding="utf-8") as f:
            f.write(block.text)
        cmd = [os.path.join(build, "bin", "conv3d-opt"), path]
        cmd += shlex.split(block.opts.get("args", "") or "")
    else:
        return False, "no way to run a %r block (use excerpt=)" % block.lang
    try:
        proc = subprocess.run(cmd, cwd=scratch, env=env, timeout=timeout,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    except subprocess.TimeoutExpired:
        return False, "timed out after %d s" % timeout
    out = proc.stdout.decode(errors="replace")
    if proc.returncode != 0:
        return False, "exit status %d\n%s" % (proc.returncode, out)
    expect = block.opts.get("expect")
    if expect and not re.search(expect, out, re.MULTILINE):
        return False, "output does not match %r\n%s" % (expect, out)
    return True, out


def untested(docs, tests):
    missing = [page for page in sorted(os.listdir(docs))
               if page.endswith(".md") and page != "DESIGN.md" and
               not os.path.exists(os.path.join(tests, page[:-3] + ".test"))]
    for page in missing:
        print("no test runs the examples of %s" % os.path.join(docs, page))
    return 1 if missing else 0


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--untested":
        return untested(sys.argv[2], sys.argv[3])
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("page")
    parser.add_argument("--src", required=True, help="the source root")
    parser.add_argument("--build", required=True, help="the build tree")
    parser.add_argument("--long", action="store_true",
                        help="also run the blocks marked long")
    parser.add_argument("--timeout", type=int, default=300)
    parser.add_argument("--keep", action="store_true",
                        help="keep the scratch folder")
    args = parser.parse_args()

    blocks = marked_blocks(args.page)
    if not blocks:
        print("%s: no block marked <!-- doc-test -->" % args.page)
        return 2
    src, build = os.path.abspath(args.src), os.path.abspath(args.build)
    scratch = make_scratch(src, build)
    env = dict(os.environ)
    # `python3` in a shell block is the interpreter running this script
    # (the one the build was configured with, which has NumPy).
    env["PATH"] = os.pathsep.join([os.path.join(build, "bin"),
                                   os.path.dirname(sys.executable),
                                   env.get("PATH", "")])
    env["PYTHONPATH"] = os.path.join(scratch, "python")
    env["CONV3D_LIB"] = os.path.join(build, "lib", "libConv3d.so")
    page = os.path.relpath(args.page, src)
    failed = 0
    for block in blocks:
        where = "%s:%d (%s)" % (page, block.line, block.lang)
        if block.opts.get("long") and not args.long:
            print("skipped (long): " + where)
            continue
        if "excerpt" in block.opts:
            ok, detail = check_excerpt(block, src)
        else:
            ok, detail = run_block(block, scratch, build, env, args.timeout)
        print(("ok: " if ok else "FAILED: ") + where)
        if not ok:
            failed += 1
            print("  " + detail.rstrip().replace("\n", "\n  "))
    if not args.keep:
        subprocess.run(["rm", "-rf", scratch])
    print("%d of %d blocks failed" % (failed, len(blocks)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
