#!/usr/bin/env python3
"""What a night costs a tool that deduplicates small content-defined chunks (an rsync-like
delta, or a backup with small chunks): the bytes of NEW that lie in chunks OLD does not have,
as a share of NEW. Chunks end where a gear hash of the bytes before them has its low 13 bits
zero (about 8 KiB apart, at least 2 KiB): a change moves the chunks around it only.

    scripts/chunk_growth.py OLD NEW        # prints: new-bytes total-bytes percent
"""
import hashlib
import sys


def gear_table():
    """256 fixed 32-bit values from a 64-bit linear congruential sequence (seed 25)."""
    state, table = 25, []
    for _ in range(256):
        state = (state * 6364136223846793005 + 1442695040888963407) % (1 << 64)
        table.append(state >> 32)
    return table


def chunk_digests(data, table, mask=(1 << 13) - 1, minimum=2048):
    digests, start, h = [], 0, 0
    for i, byte in enumerate(data):
        h = ((h << 1) + table[byte]) & 0xFFFFFFFF
        if i + 1 - start >= minimum and h & mask == 0:
            digests.append((hashlib.sha256(data[start:i + 1]).digest(), i + 1 - start))
            start = i + 1
    if start < len(data):
        digests.append((hashlib.sha256(data[start:]).digest(), len(data) - start))
    return digests


def main():
    old_path, new_path = sys.argv[1:3]
    table = gear_table()
    with open(old_path, "rb") as f:
        known = {digest for digest, _ in chunk_digests(f.read(), table)}
    with open(new_path, "rb") as f:
        chunks = chunk_digests(f.read(), table)
    total = sum(size for _, size in chunks)
    new = sum(size for digest, size in chunks if digest not in known)
    print(f"{new} {total} {100 * new / total:.1f}")


if __name__ == "__main__":
    main()
