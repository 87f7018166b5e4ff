#!/usr/bin/env python3
"""Writes a copy of an archive with COUNT attachments of SIZE random bytes each, for the
benchmark's attachment-heavy case (scripts/bench.sh): memory must stay flat however large
the attachments are.

    scripts/add_attachments.py IN.json.gz OUT.json.gz COUNT SIZE
"""
import base64
import gzip
import json
import random
import sys

source, target, count, size = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
with gzip.open(source, "rt", encoding="utf-8") as f:
    archive = json.load(f)
rng = random.Random(7)
archive["attachments"] = [
    {"file": "photo-%04d.jpg" % i, "base64": base64.b64encode(rng.randbytes(size)).decode("ascii")}
    for i in range(count)
]
with gzip.open(target, "wt", encoding="utf-8", compresslevel=1) as f:
    json.dump(archive, f)
