#!/usr/bin/env python3
"""Re-encode an 8-bit RGB/RGBA PNG (e.g. a browser screenshot) as a 256-colour palette PNG:
the 256 most frequent colours are kept and every other pixel takes the nearest of them. Used to
keep docs/report.png small (no ImageMagick here). Usage: png-palette.py IN.png OUT.png"""
import struct
import sys
import zlib


def chunks(data):
    i = 8
    while i < len(data):
        (n,) = struct.unpack(">I", data[i : i + 4])
        yield data[i + 4 : i + 8], data[i + 8 : i + 8 + n]
        i += 12 + n


def unfilter(raw, w, h, bpp):
    stride = w * bpp
    out = bytearray(h * stride)
    prev = bytearray(stride)
    pos = 0
    for y in range(h):
        ft = raw[pos]
        line = bytearray(raw[pos + 1 : pos + 1 + stride])
        pos += 1 + stride
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            b = prev[x]
            c = prev[x - bpp] if x >= bpp else 0
            if ft == 1:
                line[x] = (line[x] + a) & 255
            elif ft == 2:
                line[x] = (line[x] + b) & 255
            elif ft == 3:
                line[x] = (line[x] + ((a + b) >> 1)) & 255
            elif ft == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pr = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                line[x] = (line[x] + pr) & 255
        out[y * stride : (y + 1) * stride] = line
        prev = line
    return out


def chunk(kind, body):
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))


def main(src, dst):
    data = open(src, "rb").read()
    idat = b""
    for kind, body in chunks(data):
        if kind == b"IHDR":
            w, h, depth, ctype = struct.unpack(">IIBB", body[:10])
        elif kind == b"IDAT":
            idat += body
    assert depth == 8 and ctype in (2, 6), "8-bit RGB or RGBA only"
    bpp = 3 if ctype == 2 else 4
    px = unfilter(zlib.decompress(idat), w, h, bpp)
    colours = [bytes(px[i : i + 3]) for i in range(0, len(px), bpp)]
    counts = {}
    for c in colours:
        counts[c] = counts.get(c, 0) + 1
    palette = sorted(counts, key=counts.get, reverse=True)[:256]
    index = {c: i for i, c in enumerate(palette)}
    for c in counts:
        if c not in index:
            index[c] = min(
                range(len(palette)),
                key=lambda i: sum((p - q) ** 2 for p, q in zip(palette[i], c)),
            )
    rows = bytearray()
    for y in range(h):
        rows.append(0)
        rows.extend(index[c] for c in colours[y * w : (y + 1) * w])
    out = b"\x89PNG\r\n\x1a\n"
    out += chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 3, 0, 0, 0))
    out += chunk(b"PLTE", b"".join(palette))
    out += chunk(b"IDAT", zlib.compress(bytes(rows), 9))
    out += chunk(b"IEND", b"")
    open(dst, "wb").write(out)


if __name__ == "__main__":
    main(*sys.argv[1:3])
