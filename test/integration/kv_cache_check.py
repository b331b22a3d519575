#!/usr/bin/env python3
"""Checks decoding with a KV cache against a float64 NumPy causal layer.

For each case folder that KvCacheTest wrote (MHA_KV_DUMP_DIR; the folder's
contents are described in test/Inputs/causal_decode_reference.py), the
prefill's and the steps' rows against the plain causal multi-head layer over
each sequence's own tokens, in float64. Prints one line per case; exits 1 if
any error exceeds 1e-5.
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "Inputs"))
from causal_decode_reference import check_folders  # noqa: E402


def check(case):
    worst = [0.0, 0.0]
    for call, (got, tokens, first) in enumerate(case.rows()):
        error = np.abs(got - case.reference(tokens, first)).max()
        worst[call % 2] = max(worst[call % 2], error)
    ok = max(worst) <= 1e-5 and np.isfinite(case.prefill).all() and \
        np.isfinite(case.steps).all()
    print("%s: prefill max abs error %.2e, %d steps max abs error %.2e: %s"
          % (case.name, worst[0], case.steps.shape[0], worst[1],
             "ok" if ok else "FAILED"))
    return ok


if __name__ == "__main__":
    sys.exit(check_folders(sys.argv[1], check))
