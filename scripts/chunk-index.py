#!/usr/bin/env python3
"""Writes FILE's FreshAir chunk index (version 2) to FILE.freshair-chunks, or to OUT.

A reference implementation of the format the LargeFiles DocC article and ChunkIndex.swift document, from the
text alone: for publishing from a machine without breeze, and as the check (ChunkIndexTests)
that the format is specified well enough for a second implementation to agree byte for byte.
Slow (pure Python, a few MB a second): breeze hash is the tool for large files.

    scripts/chunk-index.py FILE [OUT]
"""
import hashlib, struct, sys

MASK = (1 << 64) - 1
MULTIPLIER = 0x9E3779B97F4A7C15
BLOCK = 4096


def gear_table():
    """256 values from SplitMix64 seeded with "FreshAir"."""
    state, table = 0x4672657368416972, []
    for _ in range(256):
        state = (state + 0x9E3779B97F4A7C15) & MASK
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        table.append(z ^ (z >> 31))
    return table


GEAR = gear_table()


def rolling(block):
    """The high 32 bits of sum(gear[b_i] * MULTIPLIER^(n-1-i)) mod 2^64."""
    value = 0
    for byte in block:
        value = (value * MULTIPLIER + GEAR[byte]) & MASK
    return value >> 32


def index(data):
    out = b"FRCI" + bytes([2, 0, 0, 0]) + struct.pack("<IQ", BLOCK, len(data)) + hashlib.sha256(data).digest()
    for start in range(0, len(data), BLOCK):
        block = data[start:start + BLOCK]
        out += struct.pack("<I", rolling(block)) + hashlib.sha256(block).digest()[:4]
    return out


if __name__ == "__main__":
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__.strip().splitlines()[-1].strip())
    with open(sys.argv[1], "rb") as source:
        data = source.read()
    with open(sys.argv[2] if len(sys.argv) == 3 else sys.argv[1] + ".freshair-chunks", "wb") as target:
        target.write(index(data))
