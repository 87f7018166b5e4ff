#!/usr/bin/env python3
"""Reads a folder `pulse-archive tables` wrote back with Python's csv and json modules and with
the sqlite3 command line's `.import --csv`, and compares every value of every file with what an
export of the same data holds (docs/analysis.md, docs/testing.md).

    check_tables.py EXPORT FOLDER csv|ndjson

EXPORT is an archive `pulse-archive export` wrote (gzip, or its plain JSON). Numbers are read as
their literal text, so a cell must hold exactly what the export wrote. Exits 1 naming the first
difference; prints a summary line when every value matches.
"""
import base64
import csv
import gzip
import hashlib
import json
import os
import sqlite3
import subprocess
import sys
import tempfile

EXTENSION_TABLES = ("mealEntries", "foodProducts")


def literal(text):
    return json.loads(text, parse_float=str, parse_int=str)


def cell(value, is_json):
    """What a CSV cell holds for an export's value, in a comparable form: a JSON column's cell is
    compared as the JSON value it parses to; numbers are already their literal text."""
    if value is None:
        return ""
    if is_json:
        return json.dumps(value, sort_keys=True)
    if value is True:
        return "true"
    if value is False:
        return "false"
    return value


def parsed_cell(text, is_json):
    """A cell as read back, in the form `cell` gives."""
    return json.dumps(literal(text), sort_keys=True) if is_json and text != "" else text


def fail(message):
    print("MISMATCH: " + message, file=sys.stderr)
    sys.exit(1)


def expected_sections(export):
    """Each section key -> (rows as dicts or lists, kind)."""
    sections = {}
    for key, value in export.items():
        if isinstance(value, list) and key not in ("attachments", "documents", "documentStubs", "documentFiles"):
            sections[key] = value
    sections["settings"] = [{"key": k, "value": v} for k, v in sorted(export.get("settings", {}).items(), key=lambda kv: kv[0].encode())]
    sections["attachments"] = [
        {"name": a["file"], "size": str(len(base64.b64decode(a["base64"]))), "sha256": hashlib.sha256(base64.b64decode(a["base64"])).hexdigest()}
        for a in export.get("attachments", [])
    ]
    for key in ("documents", "documentStubs"):
        sections[key] = [{"path": d["path"], "document": d["document"]} for d in export.get(key, [])]
    return sections


def read_csv(path):
    # Python's csv refuses fields over 128 KiB unless told otherwise (docs/analysis.md).
    csv.field_size_limit(sys.maxsize)
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.reader(f))


def sqlite_rows(path, columns):
    """The file through sqlite3's own `.import --csv` (the CLI, not Python's module)."""
    with tempfile.TemporaryDirectory() as tmp:
        db = os.path.join(tmp, "t.sqlite")
        subprocess.run(["sqlite3", db, ".import --csv '%s' t" % path.replace("'", "''")], check=True)
        connection = sqlite3.connect(db)
        got_columns = [r[1] for r in connection.execute("PRAGMA table_info(t)")]
        if got_columns != columns:
            fail("%s: sqlite3 .import made the columns %r" % (path, got_columns))
        rows = [list(r) for r in connection.execute("SELECT * FROM t ORDER BY rowid")]
        connection.close()
        return rows


def main():
    export_path, folder, form = sys.argv[1], sys.argv[2], sys.argv[3]
    opener = gzip.open if export_path.endswith(".gz") else open
    with opener(export_path, "rt", encoding="utf-8") as f:
        export = literal(f.read())
    with open(os.path.join(folder, "tables.json"), encoding="utf-8") as f:
        manifest = json.load(f)
    sections = expected_sections(export)
    checked_values = 0
    nul_cut = 0
    for key, entry in manifest["tables"].items():
        columns = [c["name"] for c in entry["columns"]]
        json_columns = {c["name"] for c in entry["columns"] if c["type"] == "JSON"}
        expected = sections.get(key, [])
        if key == "documentFiles":
            expected = []
        if entry["rows"] != len(expected):
            fail("%s: tables.json says %d rows, the export holds %d" % (key, entry["rows"], len(expected)))
        path = os.path.join(folder, entry["file"])
        if form == "ndjson":
            with open(path, encoding="utf-8", newline="") as f:
                text = f.read()
            lines = text.split("\n")
            if lines[-1] != "":
                fail("%s: the last line has no newline" % path)
            got = [literal(line) for line in lines[:-1]]
            want = expected
            if key == "attachments":
                want = [{"name": r["name"], "sha256": r["sha256"], "size": r["size"]} for r in expected]
            if len(got) != len(want):
                fail("%s: %d lines, the export has %d rows" % (path, len(got), len(want)))
            for i, (g, w) in enumerate(zip(got, want)):
                if g != w:
                    fail("%s line %d: %r != the export's %r" % (path, i + 1, g, w))
                checked_values += len(w)
            continue
        records = read_csv(path)
        with open(path, "rb") as f:
            raw = f.read()
        if raw.startswith(b"\xef\xbb\xbf"):
            fail("%s starts with a BOM" % path)
        if not raw.endswith(b"\r\n"):
            fail("%s does not end its last record with CRLF" % path)
        if records[0] != columns:
            fail("%s: header %r, tables.json says %r" % (path, records[0], columns))
        want = [[cell(r.get(c), c in json_columns) for c in columns] for r in expected]
        got = [[parsed_cell(v, c in json_columns) for c, v in zip(columns, record)] for record in records[1:]]
        if key == "settings":
            want = [[r["key"], r["value"]] for r in expected]
            got = records[1:]
        if key in ("documents", "documentStubs"):
            want = [[r["path"], None, None, cell(r["document"], True)] for r in expected]
            got = [[g[0], None, None, g[3]] for g in got]
        if sorted(map(repr, got)) != sorted(map(repr, want)):
            for g, w in zip(sorted(got, key=repr), sorted(want, key=repr)):
                if g != w:
                    fail("%s: %r != the export's %r" % (path, g, w))
            fail("%s: %d records, the export has %d" % (path, len(got), len(want)))
        checked_values += sum(len(r) for r in want)
        # The same file through sqlite3's .import: every value, except that the sqlite3 shell
        # ends a value at NUL (C strings): there the value must be what precedes the NUL.
        imported = sqlite_rows(path, columns)
        raw_records = records[1:]
        if len(imported) != len(raw_records):
            fail("%s: sqlite3 .import read %d rows, csv %d" % (path, len(imported), len(raw_records)))
        for r, (s_row, c_row) in enumerate(zip(imported, raw_records)):
            for column, s, c in zip(columns, s_row, c_row):
                if "\x00" in c:
                    nul_cut += 1
                    if s != c.split("\x00")[0]:
                        fail("%s row %d %s: sqlite3 read %r for %r" % (path, r + 1, column, s, c))
                elif str(s) != c:
                    fail("%s row %d %s: sqlite3 read %r, csv %r" % (path, r + 1, column, s, c))
    # The attachments' bytes.
    for a in export.get("attachments", []):
        with open(os.path.join(folder, "attachments", a["file"]), "rb") as f:
            if f.read() != base64.b64decode(a["base64"]):
                fail("attachments/%s differs from the export's bytes" % a["file"])
    print("ok: %d values in %d files match the export (%d values with NUL cut by sqlite3's .import)" % (checked_values, len(manifest["tables"]), nul_cut))


if __name__ == "__main__":
    main()
