#!/usr/bin/env python3
"""Runs the shell commands of a Markdown page and checks what they print.

So that a tutorial cannot rot, every fenced block marked ```sh is run, in
order, from the repository root, by `bash -e -o pipefail`; it must exit 0.
The page marks what the reader should see:

  <!-- expect: TEXT -->      (right after a ```sh block, any number of them)
      TEXT must occur in what the block printed (stdout and stderr);
  <!-- output -->            (right before a fenced block after a ```sh block)
      every line of that block, stripped, must occur in one line of what the
      block printed, in order; "..." in a line matches anything, and a line
      that is only "..." is skipped;
  <!-- skip-test: REASON -->  (right before a ```sh block)
      the block is not run (a long benchmark, an optional dependency);
  <!-- requires: FEATURE -->  (right before a ```sh block)
      the block runs only where --available FEATURE is given (e.g.
      python-mha: the build has the Python package; the sanitizer build
      does not), and is reported skipped otherwise.

The commands are written as a reader types them from the repository root:
`build/bin/` is replaced by --bin (`build/python` by its sibling python/) and `/tmp/mha-tutorial` by --tmp, so the
test runs the tools it built and leaves nothing behind. Standard library
only. Exit code 0 when every block passes, 1 at the first that does not.

  doc_commands.py PAGE.md --root DIR --bin DIR --tmp DIR
"""
import argparse
import os
import re
import subprocess
import sys

FENCE = re.compile(r"^```(\S*)\s*$")
EXPECT = re.compile(r"^<!--\s*expect:\s*(.*?)\s*-->\s*$")
SKIP = re.compile(r"^<!--\s*skip-test:\s*(.*?)\s*-->\s*$")
REQUIRES = re.compile(r"^<!--\s*requires:\s*(\S+)\s*-->\s*$")
OUTPUT = re.compile(r"^<!--\s*output\s*-->\s*$")


class Block:
    def __init__(self, line, text, skip):
        self.line = line  # where the block starts on the page, 1-based
        self.text = text
        self.skip = skip
        self.expects = []  # substrings
        self.output = []  # lines of an <!-- output --> block


def parse(lines):
    """The ```sh blocks of the page with what they expect."""
    blocks = []
    i = 0
    marker = None  # the comment line just before a fence, if any
    while i < len(lines):
        fence = FENCE.match(lines[i])
        if not fence:
            stripped = lines[i].strip()
            if stripped:
                marker = stripped
            i += 1
            continue
        language, start = fence.group(1), i
        body = []
        i += 1
        while i < len(lines) and not FENCE.match(lines[i]):
            body.append(lines[i])
            i += 1
        i += 1  # the closing fence
        if language == "sh":
            skip = SKIP.match(marker or "")
            requires = REQUIRES.match(marker or "")
            block = Block(start + 1, "\n".join(body), skip.group(1) if skip else None)
            block.requires = requires.group(1) if requires else None
            blocks.append(block)
        elif marker and OUTPUT.match(marker) and blocks:
            blocks[-1].output = [line.strip() for line in body if line.strip()]
        marker = None
        # The expectations that follow a block belong to it.
        while i < len(lines) and (EXPECT.match(lines[i]) or not lines[i].strip()):
            expect = EXPECT.match(lines[i])
            if expect and language == "sh":
                blocks[-1].expects.append(expect.group(1))
            i += 1
    return blocks


def line_matches(pattern, line):
    """Whether `line` contains the parts of `pattern` between "..." in order."""
    position = 0
    for part in pattern.split("..."):
        found = line.find(part.strip(), position)
        if found < 0:
            return False
        position = found + len(part.strip())
    return True


def check_output(block, printed):
    """The first expectation of `block` that `printed` does not meet."""
    for text in block.expects:
        if text not in printed:
            return "expected to see: " + text
    lines = printed.splitlines()
    position = 0
    for pattern in block.output:
        if pattern == "...":
            continue
        while position < len(lines) and not line_matches(pattern, lines[position]):
            position += 1
        if position == len(lines):
            return "expected a line like: " + pattern
        position += 1
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("page")
    parser.add_argument("--root", required=True, help="where the commands run")
    parser.add_argument("--bin", required=True, help="replaces build/bin/")
    parser.add_argument("--tmp", required=True, help="replaces /tmp/mha-tutorial")
    parser.add_argument("--available", action="append", default=[],
                        metavar="FEATURE",
                        help="a feature that `requires:` blocks may need")
    args = parser.parse_args()

    with open(args.page) as f:
        blocks = parse(f.read().splitlines())
    os.makedirs(args.tmp, exist_ok=True)
    env = dict(os.environ)
    env["PATH"] = args.bin + os.pathsep + env.get("PATH", "")
    name = os.path.relpath(args.page, args.root)
    commands = expectations = 0
    for block in blocks:
        if block.skip:
            print("%s:%d: skipped (%s)" % (name, block.line, block.skip))
            continue
        if block.requires and block.requires not in args.available:
            print("%s:%d: skipped (needs %s)" % (name, block.line, block.requires))
            continue
        script = block.text.replace("build/bin/", args.bin.rstrip("/") + "/")
        # The Python package sits beside the tools' folder (python/).
        script = script.replace("build/python", os.path.join(os.path.dirname(args.bin.rstrip("/")), "python"))
        script = script.replace("/tmp/mha-tutorial", args.tmp)
        result = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", script],
                                cwd=args.root, env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True, timeout=600)
        commands += sum(1 for line in block.text.splitlines()
                        if line.strip() and not line.strip().startswith("#")
                        and not line.rstrip().endswith("\\"))
        problem = None
        if result.returncode != 0:
            problem = "exit code %d" % result.returncode
        else:
            problem = check_output(block, result.stdout)
        if problem:
            print("%s:%d: FAILED: %s\n--- the block:\n%s\n--- what it printed:\n%s"
                  % (name, block.line, problem, block.text, result.stdout[-4000:]))
            return 1
        expectations += len(block.expects) + len(block.output)
        print("%s:%d: ok" % (name, block.line))
    print("%s: %d blocks, %d commands, %d expected outputs: ok"
          % (name, len(blocks), commands, expectations))
    return 0


if __name__ == "__main__":
    sys.exit(main())
