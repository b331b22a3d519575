"""compare.py TOL SINGLE RANK0 RANK1 ...: each rank's output of a split run
(mha-run --parallel heads) within TOL of the others and of the single
process's; prints the largest differences, exits 1 if one is over TOL."""
import sys

import numpy as np

tolerance = float(sys.argv[1])
single = np.load(sys.argv[2])
ranks = [np.load(path) for path in sys.argv[3:]]
failed = False
for index, output in enumerate(ranks):
    if output.shape != single.shape:
        print(f"rank {index}: shape {output.shape}, single {single.shape}")
        failed = True
        continue
    to_single = float(np.max(np.abs(output - single)))
    to_rank0 = float(np.max(np.abs(output - ranks[0])))
    ok = to_single <= tolerance and to_rank0 <= tolerance
    failed |= not ok
    print(f"rank {index}: max |rank - single| {to_single:.2e}, "
          f"max |rank - rank 0| {to_rank0:.2e}: {'ok' if ok else 'FAILED'}")
sys.exit(1 if failed else 0)
