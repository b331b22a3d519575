#!/usr/bin/env python3
"""Checks attention weights [B, H, T, S] written by mha-run --dump-attention.

Independently of the compiler: every row (one query of one head) must be a
probability distribution (its sum within 1e-5 of 1) or, where the query may
attend no key, all zeros. Optionally the values must equal given ones (within
1e-6), and with --causal every weight above the diagonal must be 0.

  check_attention.py attention.npy [--expect v0,v1,...] [--causal]

Prints what it found; exits 1 if a check fails. Standard library only.
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "pipeline", "Inputs"))
from mha_vectors import read_npy  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file")
    parser.add_argument("--expect", help="comma-separated values, C order")
    parser.add_argument("--causal", action="store_true")
    args = parser.parse_args()

    shape, values, _ = read_npy(args.file)
    print("shape [%s]" % ", ".join(str(d) for d in shape))
    if len(shape) != 4:
        print("FAILED: expected [B, H, T, S]")
        return 1
    queries, keys = shape[2], shape[3]
    ok = True

    rows = [values[i : i + keys] for i in range(0, len(values), keys)]
    zero_rows = sum(1 for row in rows if all(v == 0.0 for v in row))
    sums = [abs(sum(row) - 1.0) for row in rows if any(v != 0.0 for v in row)]
    worst = max(sums, default=0.0)
    negative = sum(1 for v in values if v < 0.0)
    print("rows %d: %d sum to 1 (max |sum - 1| %.1e), %d all zero, %d negative weights"
          % (len(rows), len(sums), worst, zero_rows, negative))
    if worst > 1e-5 or negative:
        ok = False

    if args.causal:
        above = max((row[s] for r, row in enumerate(rows)
                     for s in range(keys) if s > r % queries), default=0.0)
        print("above the diagonal: max %g" % above)
        if above != 0.0:
            ok = False

    if args.expect is not None:
        expected = [float(v) for v in args.expect.split(",")]
        if len(expected) != len(values):
            print("FAILED: %d expected values for %d weights" % (len(expected), len(values)))
            return 1
        diff = max(abs(a - b) for a, b in zip(values, expected))
        print("max abs difference from the expected values: %.1e" % diff)
        if diff > 1e-6:
            ok = False

    print("ok" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
