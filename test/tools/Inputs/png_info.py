#!/usr/bin/env python3
"""Prints `PNG <width>x<height> <color type>` for each PNG file given, read
from its signature and IHDR chunk, or `not a PNG` (and exits 1)."""
import struct
import sys

COLOR_TYPES = {0: "grey", 2: "RGB", 3: "palette", 4: "grey+alpha", 6: "RGBA"}

status = 0
for path in sys.argv[1:]:
    with open(path, "rb") as f:
        head = f.read(33)
    if head[:8] != b"\x89PNG\r\n\x1a\n" or head[12:16] != b"IHDR":
        print("%s: not a PNG" % path)
        status = 1
        continue
    width, height, depth, color = struct.unpack(">IIBB", head[16:26])
    print("%s: PNG %dx%d %d-bit %s" % (path, width, height, depth, COLOR_TYPES.get(color, color)))
sys.exit(status)
