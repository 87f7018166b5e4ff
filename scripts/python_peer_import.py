#!/usr/bin/env python3
"""The importer a user would write instead of pulse-archive, with the standard library only:
gzip + json + sqlite3, one table per archive table, executemany, one transaction.
Used by scripts/bench.sh as the peer for `import --no-backfill`.

    python3 scripts/python_peer_import.py ARCHIVE.json.gz STORE.sqlite
"""
import gzip
import json
import sqlite3
import sys

archive, database = sys.argv[1], sys.argv[2]
opener = gzip.open if archive.endswith(".gz") else open
with opener(archive, "rb") as f:
    data = json.load(f)

connection = sqlite3.connect(database)
with connection:
    for key, rows in data.items():
        if not isinstance(rows, list) or not rows or not isinstance(rows[0], dict):
            continue
        columns = sorted({column for row in rows for column in row})
        quoted = ", ".join('"%s"' % c for c in columns)
        connection.execute('CREATE TABLE "%s" (%s)' % (key, quoted))
        placeholders = ", ".join("?" for _ in columns)
        connection.executemany(
            'INSERT INTO "%s" (%s) VALUES (%s)' % (key, quoted, placeholders),
            ([json.dumps(v) if isinstance(v, (dict, list)) else v for v in (row.get(c) for c in columns)] for row in rows),
        )
connection.close()
