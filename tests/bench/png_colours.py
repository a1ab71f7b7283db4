#!/usr/bin/env python3
"""Says whether a PNG screenshot shows each of the given colours (hex RRGGBB) in at least 200
pixels. A PNG decoder in the standard library alone: 8-bit RGB or RGBA, non-interlaced, as
Chromium writes its screenshots."""
import struct, sys, zlib

def pixels(path):
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, width = 8, b"", 0
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", body)
            assert depth == 8 and colour in (2, 6) and interlace == 0, "unsupported PNG"
            bpp = 3 if colour == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw, stride, prev, out = zlib.decompress(idat), width * bpp, bytearray(width * bpp), {}
    for y in range(height):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            if f == 1: line[i] = (line[i] + a) & 255
            elif f == 2: line[i] = (line[i] + b) & 255
            elif f == 3: line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        for x in range(0, stride, bpp):
            rgb = bytes(line[x:x + 3])
            out[rgb] = out.get(rgb, 0) + 1
        prev = line
    return out

counts = pixels(sys.argv[1])
ok = True
for colour in sys.argv[2:]:
    n = counts.get(bytes.fromhex(colour), 0)
    print(("ok   " if n >= 200 else "FAIL ") + "#%s in the screenshot: %d pixels" % (colour, n))
    ok = ok and n >= 200
sys.exit(0 if ok else 1)
