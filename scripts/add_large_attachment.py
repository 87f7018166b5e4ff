#!/usr/bin/env python3
"""Writes a copy of an archive with one attachment of SIZE random bytes, as the app writes it
(standard base64, every "/" escaped as "\\/"), streamed: the attachment is never held whole, so
a 300 MB one takes no more memory here than in the tool (scripts/bench.sh, issue 24).

    scripts/add_large_attachment.py IN.json.gz OUT.json.gz SIZE
"""
import base64
import gzip
import json
import random
import sys

source, target, size = sys.argv[1], sys.argv[2], int(sys.argv[3])
with gzip.open(source, "rt", encoding="utf-8") as f:
    archive = json.load(f)
placeholder = "@@ATTACHMENT@@"
archive["attachments"] = [{"base64": placeholder, "file": "coach-photo.jpg"}]
head, tail = json.dumps(archive, separators=(",", ":")).split(placeholder)
rng = random.Random(24)
chunk = 3 * 65536  # whole groups of three bytes: the pieces' base64 joins without padding
with gzip.open(target, "wt", encoding="ascii", compresslevel=1) as f:
    f.write(head)
    left = size
    while left > 0:
        n = min(chunk, left)
        f.write(base64.b64encode(rng.randbytes(n)).decode("ascii").replace("/", "\\/"))
        left -= n
    f.write(tail)
