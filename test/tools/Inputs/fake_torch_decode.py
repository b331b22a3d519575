#!/usr/bin/env python3
"""Stands in for ../shared/peers/torch_decode.py in bench-decode.test (the
tests never read ../shared): prints the peer's line with a fixed time, and
the arguments it was given, so the test sees how the bench runs the peer."""
import sys

print("arguments:", " ".join(sys.argv[1:]))
print("torch decode (fake): median 4.000 ms, min 3.500 ms per step; "
      "1.0 MiB read per step; torch fake, 2 threads")
