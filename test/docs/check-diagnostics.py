#!/usr/bin/env python3
"""Checks that every diagnostic in the table of docs/dialect.md is tested.

The table ("| # | message ... | op | kind | test case(s) ... |") lists each
message with `…` standing for the sizes and types found, and names its cases
in test/dialect/invalid.mlir. A row passes when each case it names exists
(`func.func @name`) and, within that case's `// -----` chunk, an
`expected-error` carries the message. A row that names no case passes when
some test under TEST_DIR has the message on an expected-error or CHECK line.

  check-diagnostics.py DIALECT_MD TEST_DIR

Prints one line per untested row and exits 1 if there is any.
"""
import os
import re
import sys


def table_rows(markdown):
    """Yields (number, message, cases) of the diagnostics table."""
    in_table = False
    for line in markdown.splitlines():
        if line.startswith("| # | message"):
            in_table = True
            continue
        if not in_table:
            continue
        if not line.startswith("|"):
            break
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if not cells[0].isdigit():
            continue  # the |---| separator
        message = re.match(r"`(.*)`$", cells[1])
        if not message:
            sys.exit("docs row %s: no `message` in %r" % (cells[0], cells[1]))
        yield int(cells[0]), message.group(1), re.findall(r"@([\w.$-]+)", cells[-1])


def message_pattern(message):
    """The message as a regex: each `…` matches whatever was found."""
    return re.compile(".*?".join(re.escape(part) for part in message.split("…")))


def test_lines(test_dir):
    """Yields (path, text) of every test file under test_dir."""
    for root, dirs, files in os.walk(test_dir):
        dirs[:] = [d for d in dirs if d not in ("vectors", "Output")]
        for name in files:
            if name.endswith((".mlir", ".test")):
                path = os.path.join(root, name)
                with open(path, encoding="utf-8") as f:
                    yield path, f.read()


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    with open(sys.argv[1], encoding="utf-8") as f:
        rows = list(table_rows(f.read()))
    if not rows:
        sys.exit("%s: no diagnostics table found" % sys.argv[1])
    tests = list(test_lines(sys.argv[2]))
    invalid = dict(tests).get(os.path.join(sys.argv[2], "dialect", "invalid.mlir"), "")
    chunks = {}
    for chunk in invalid.split("// -----"):
        for name in re.findall(r"func\.func @([\w.$-]+)", chunk):
            chunks[name] = chunk
    checked = [
        line
        for _, text in tests
        for line in text.splitlines()
        if "expected-error" in line or "CHECK" in line or re.match(r"#\s*\w+:", line)
    ]

    untested = []
    for number, message, cases in rows:
        pattern = message_pattern(message)
        if not cases:
            if not any(pattern.search(line) for line in checked):
                untested.append("row %d: `%s` appears in no test" % (number, message))
            continue
        for case in cases:
            chunk = chunks.get(case)
            if chunk is None:
                untested.append("row %d: case @%s is not in dialect/invalid.mlir" % (number, case))
            elif not any(
                "expected-error" in line and pattern.search(line) for line in chunk.splitlines()
            ):
                untested.append(
                    "row %d: case @%s has no expected-error with `%s`" % (number, case, message)
                )
    for line in untested:
        print("untested diagnostic: " + line)
    if untested:
        return 1
    print("all %d documented diagnostics are tested" % len(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
