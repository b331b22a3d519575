#!/usr/bin/env python3
"""Checks that Markdown pages name only things that exist.

For each page it checks:
  - links `[text](path)`, `[text](path#anchor)` and `[text](#anchor)`: the
    file exists (relative to the page) and the anchor is one of its
    headings (GitHub's slugs: lower case, punctuation dropped, spaces to
    hyphens);
  - repository paths written in backticks, such as `runtime/Comparison.cpp`
    or `test/vectors/`: they exist under --root (paths under build/, /tmp,
    absolute paths and ones with placeholders such as NAME or <h> are not
    checked);
  - tool options `--something` on a line that names mha-run, mha-gen,
    mha-opt or mha-compile, or in a section whose heading names one: the
    option is in the --help of the tool the line names, else of one of the
    four (a line may name one tool and show another's option); mha-opt's
    --help-hidden counts, for MLIR's options.

Standard library only. Prints one line per problem, `PAGE:LINE: ...`, and
exits 1 if there is any.

  check_doc_refs.py PAGE.md... --root DIR --bin DIR
"""
import argparse
import os
import re
import subprocess
import sys

TOOLS = ["mha-run", "mha-gen", "mha-opt", "mha-compile"]
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
CODE = re.compile(r"`([^`]+)`")
OPTION = re.compile(r"(?<![\w-])--([a-z][a-z0-9-]*)")
FENCE = re.compile(r"^```")
TOP_FOLDERS = ("bench/", "compiler/", "dialects/", "docs/", "examples/",
               "runtime/", "test/", "tools/")


def slug(heading):
    """GitHub's anchor of a heading."""
    text = heading.strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path, cache={}):
    if path not in cache:
        found, fenced = set(), False
        with open(path) as f:
            for line in f:
                if FENCE.match(line):
                    fenced = not fenced
                elif not fenced and line.startswith("#"):
                    found.add(slug(line.lstrip("#")))
        cache[path] = found
    return cache[path]


def tool_options(bin_dir):
    options = {}
    for tool in TOOLS:
        flag = "--help-hidden" if tool == "mha-opt" else "--help"
        text = subprocess.run([os.path.join(bin_dir, tool), flag],
                              capture_output=True, text=True).stdout
        options[tool] = set(re.findall(r"^\s+--?([a-z][a-z0-9-]*)", text,
                                       re.M))
        options[tool] |= {"help", "help-hidden", "version"}
    return options


def check_page(page, root, options):
    problems = []
    with open(page) as f:
        lines = f.read().splitlines()
    page_dir = os.path.dirname(os.path.abspath(page))
    fenced = False
    section_tool = None
    for number, line in enumerate(lines, 1):
        where = "%s:%d: " % (os.path.relpath(page, root), number)
        if FENCE.match(line):
            fenced = not fenced
            continue
        if line.startswith("#"):
            named = [t for t in TOOLS if re.search(r"\b%s\b" % t, line)]
            section_tool = named[0] if len(named) == 1 else None
        # Links and anchors (not inside code blocks).
        if not fenced:
            for target in LINK.findall(line):
                if re.match(r"[a-z]+:", target):
                    continue  # http:, mailto:
                path, _, anchor = target.partition("#")
                full = os.path.normpath(os.path.join(page_dir, path)) \
                    if path else os.path.abspath(page)
                if not os.path.exists(full):
                    problems.append(where + "link to a missing file: " + target)
                elif anchor and full.endswith(".md") and \
                        anchor not in anchors(full):
                    problems.append(where + "link to a missing section: "
                                    + target)
        # Repository paths in backticks (also in sh blocks' commands).
        spans = [line] if fenced else CODE.findall(line)
        for span in spans:
            for word in re.split(r"[\s=,;()\"']+", span):
                word = word.rstrip(".:")
                if not word.startswith(TOP_FOLDERS) or \
                        re.search(r"[<>*{}]|NAME|\.\.\.", word) or \
                        re.search(r"[A-Z]{2,}", word.split("/")[-1].split(".")[0]):
                    continue
                if not os.path.exists(os.path.join(root, word)):
                    problems.append(where + "no such file in the repository: "
                                    + word)
        # Tool options: on a line that names one tool, or in its section.
        named = [t for t in TOOLS if re.search(r"(?<![\w-])%s(?![\w-])" % t,
                                               line)]
        context = named or ([section_tool] if section_tool else [])
        known = set().union(*options.values())
        for option in OPTION.findall(line) if context else []:
            if option not in known:
                problems.append(where + "%s has no option --%s"
                                % (" or ".join(context), option))
    return problems


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pages", nargs="+")
    parser.add_argument("--root", required=True, help="the repository")
    parser.add_argument("--bin", required=True, help="the tools' folder")
    args = parser.parse_args()
    options = tool_options(args.bin)
    problems = []
    for page in args.pages:
        problems += check_page(page, args.root, options)
    for problem in problems:
        print(problem)
    print("%d pages: %s" % (len(args.pages), "%d problems" % len(problems)
                            if problems else "ok"))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
