#!/usr/bin/env python3
"""The house rules a newcomer would trip over, checked on the repository:

  - README.md has at most --readme-max lines (160): it is the front page,
    the details live in docs/;
  - no file under README.md, CHANGELOG.md, docs/, bench/, test/, compiler/,
    dialects/, runtime/, tools/, python/ or the Makefile names an issue
    by its number (the word, maybe a `#`, then digits): a reader outside the
    tracker learns nothing from it, so the text says what is meant;
  - `make bench` reads nothing outside the repository (no `../shared` in
    the Makefile or bench/);
  - each tool's `--help` lists its own options, not LLVM's (they stay
    behind `--help-hidden`);
  - no C or C++ source under compiler/, dialects/, graphs/, runtime/,
    tools/ or python/ has more than --file-max lines (600) or a function
    of more than --function-max lines (120): a file holds one thing and a
    function one step, so that a newcomer can read either at once.

Prints one line per problem and `N files, M tools: ok` or `... K problems`;
exits 1 on a problem.
"""

import argparse
import os
import re
import subprocess
import sys

# Built from pieces so that this file does not match itself.
ISSUE = re.compile(r"\b" + "iss" + r"ues?[ _-]?#?[0-9]", re.IGNORECASE)
SHARED = "../" + "shared"
SCANNED = ["README.md", "CHANGELOG.md", "Makefile", "docs", "bench", "test",
           "compiler", "dialects", "graphs", "runtime", "tools", "python"]
# The folders whose C and C++ sources the size rules hold.
SOURCES = ("compiler", "dialects", "graphs", "runtime", "tools", "python")
SOURCE_SUFFIXES = (".c", ".cpp", ".h")
# A line that opens a statement's block, not a function's.
CONTROL = re.compile(r"^\s*(if|for|while|switch|else|do|namespace|class|"
                     r"struct|enum|union|try|catch|return|case|default)\b")
SKIPPED_DIRS = {".git", "__pycache__", "build"}
# LLVM's own options that a tool linking LLVM shows unless it hides them.
LLVM_OPTIONS = ["--abort-on-max-devirt-iterations-reached",
                "--lto-pass-remarks-output", "--x86-asm-syntax",
                "--print-pipeline-passes", "--enable-name-compression",
                "--rng-seed"]


def text_files(root):
    for entry in SCANNED:
        path = os.path.join(root, entry)
        if os.path.isfile(path):
            yield path
        for dirpath, dirnames, filenames in os.walk(path):
            dirnames[:] = sorted(d for d in dirnames if d not in SKIPPED_DIRS)
            for name in sorted(filenames):
                yield os.path.join(dirpath, name)


def read_text(path):
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return None
    if b"\0" in data[:4096]:
        return None
    return data.decode("utf-8", errors="replace")


def function_lengths(lines):
    """(first line, line count, header) of each function body in the
    source `lines`, as clang-format lays them out: a header (maybe over
    several lines) ending in `{`, the body closed by `}` at the header's
    indentation. Blocks of statements, lambdas and initializers are not
    functions."""
    for i, line in enumerate(lines):
        if not line.rstrip().endswith("{"):
            continue
        start = i
        while start > 0:
            previous = lines[start - 1].rstrip()
            if (not previous or previous.lstrip().startswith(("//", "#"))
                    or previous.endswith((";", "{", "}"))
                    or (previous.endswith(":") and
                        not previous.endswith("::"))):
                break
            start -= 1
        header = " ".join(text.strip() for text in lines[start:i + 1])
        if (CONTROL.match(lines[start]) or "(" not in header
                or header.startswith(("[", "{", "}", ")", "<<", '"'))
                or re.match(r"^[^(]*=", header)
                or re.search(r"\[[&=a-zA-Z, ]*\]\s*\(", header)
                or header.endswith(("= {", "({", "[&] {"))):
            continue
        indent = len(lines[start]) - len(lines[start].lstrip())
        for end in range(i + 1, len(lines)):
            closing = lines[end]
            if (closing.strip().startswith("}") and
                    len(closing) - len(closing.lstrip()) == indent):
                yield start + 1, end - start + 1, header
                break


def size_problems(rel, text, file_max, function_max):
    """The size rules' problems of the source `text` at `rel`."""
    if (not rel.endswith(SOURCE_SUFFIXES) or
            rel.split(os.sep)[0] not in SOURCES):
        return []
    lines = text.splitlines()
    problems = []
    if len(lines) > file_max:
        problems.append(f"{rel}: {len(lines)} lines, more than {file_max}")
    for first, count, header in function_lengths(lines):
        if count > function_max:
            words = header.split("(")[0].split()
            name = words[-1] if words else header
            problems.append(f"{rel}:{first}: {name} has {count} lines, more "
                            f"than {function_max}")
    return problems


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", required=True)
    parser.add_argument("--bin", help="folder of the tools")
    parser.add_argument("--tool", action="append", default=[],
                        help="a tool whose --help is checked (repeatable)")
    parser.add_argument("--readme-max", type=int, default=160)
    parser.add_argument("--file-max", type=int, default=600)
    parser.add_argument("--function-max", type=int, default=120)
    args = parser.parse_args()

    problems = []
    readme = read_text(os.path.join(args.root, "README.md")) or ""
    lines = readme.count("\n")
    if lines > args.readme_max:
        problems.append(f"README.md: {lines} lines, more than "
                        f"{args.readme_max}")

    files = 0
    for path in text_files(args.root):
        text = read_text(path)
        if text is None:
            continue
        files += 1
        rel = os.path.relpath(path, args.root)
        problems += size_problems(rel, text, args.file_max,
                                  args.function_max)
        for number, line in enumerate(text.splitlines(), 1):
            match = ISSUE.search(line)
            if match:
                problems.append(f"{rel}:{number}: names an issue number: "
                                f"{match.group(0)!r}")
            if SHARED in line and (rel == "Makefile" or
                                   rel.startswith("bench" + os.sep)):
                problems.append(f"{rel}:{number}: reads {SHARED}, outside "
                                "the repository")

    for tool in args.tool:
        exe = os.path.join(args.bin, tool) if args.bin else tool
        try:
            out = subprocess.run([exe, "--help"], capture_output=True,
                                 text=True, timeout=60)
        except (OSError, subprocess.TimeoutExpired) as err:
            problems.append(f"{tool} --help: {err}")
            continue
        shown = out.stdout + out.stderr
        for option in LLVM_OPTIONS:
            if re.search(re.escape(option) + r"\b", shown):
                problems.append(f"{tool} --help shows LLVM's {option}")

    for problem in problems:
        print(problem)
    summary = f"{files} files, {len(args.tool)} tools"
    if problems:
        print(f"{summary}: {len(problems)} problems")
        return 1
    print(f"{summary}: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
