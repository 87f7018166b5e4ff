import Foundation
import Testing
import PulseSQLite
@testable import PulseTestSupport

/// SQLite's temporary files (an unnamed database past its page cache, a sort's runs, a
/// transaction's journal) go through the VFS's own files on Linux: created without a name, and
/// read and written by methods of ours. What SQLite writes there must come back as it wrote it.
@Suite("SQLite's temporary files")
struct TemporaryFileTests {
    /// The targets of this process's open descriptors, as /proc shows them.
    static func openFiles() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []).compactMap {
            try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\($0)")
        }
    }

    @Test("an unnamed database with a 64 KiB cache: 20 000 rows of seeded blobs spill to disk, sort through temporary runs, roll back through a journal, and read back byte for byte; no file SQLite holds meanwhile was ever named")
    func spilledDataReadsBack() throws {
        var random = SeededRandom.fromEnvironment("TemporaryFileTests.spilledDataReadsBack")
        let database = try SQLiteDatabase.unnamed()
        try database.execute("PRAGMA cache_size = -64")
        try database.execute("CREATE TABLE rows (id INTEGER PRIMARY KEY, key INTEGER NOT NULL, payload BLOB NOT NULL)")
        var expected: [(key: Int64, payload: [UInt8])] = []
        try database.execute("BEGIN")
        let insert = try database.prepare("INSERT INTO rows (id, key, payload) VALUES (?, ?, ?)")
        for id in 0..<20_000 {
            let key = Int64.random(in: Int64.min...Int64.max, using: &random)
            // Lengths across page boundaries, overflow pages included.
            let payload = (0..<Int.random(in: 0...1_500, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
            expected.append((key, payload))
            insert.reset()
            try insert.bind(int64: Int64(id), at: 1)
            try insert.bind(int64: key, at: 2)
            try insert.bind(blob: payload, at: 3)
            try insert.runToEnd()
        }
        try database.execute("COMMIT")

        // A sort larger than the cache writes its runs to temporary files: read while they
        // are open.
        let sorted = try database.prepare("SELECT key, payload FROM rows ORDER BY key, id")
        var order = expected.enumerated().sorted { ($0.element.key, $0.offset) < ($1.element.key, $1.offset) }.makeIterator()
        var count = 0
        var checkedOpenFiles = false
        while try sorted.step() {
            guard let next = order.next() else { Issue.record("the sort gave more rows than were written"); break }
            #expect(sorted.int64(at: 0) == next.element.key && sorted.blob(at: 1) == next.element.payload, "row \(count) of the sort")
            count += 1
            if !checkedOpenFiles {
                checkedOpenFiles = true
                #if os(Linux)
                let named = Self.openFiles().filter { $0.contains("etilqs_") }
                #expect(named.isEmpty, "SQLite holds temporary files that were created with a name: \(named)")
                #endif
            }
        }
        #expect(count == expected.count)

        // A change to every row, rolled back: the journal gives back each page.
        try database.execute("BEGIN")
        try database.execute("UPDATE rows SET payload = zeroblob(length(payload) + 7), key = key / 2")
        #expect(try database.integer("SELECT count(*) FROM rows WHERE length(payload) < 7") == 0)
        try database.execute("ROLLBACK")
        let all = try database.prepare("SELECT key, payload FROM rows ORDER BY id")
        var index = 0
        while try all.step() {
            #expect(all.int64(at: 0) == expected[index].key && all.blob(at: 1) == expected[index].payload, "row \(index) after the rollback")
            index += 1
        }
        #expect(index == expected.count)
        let integrity = try database.prepare("PRAGMA integrity_check")
        #expect(try integrity.step() && integrity.text(at: 0) == "ok")
    }

    @Test("a full database's error names both places SQLite may have run out of space: the database's disk and its temporary directory (a full $TMPDIR was reported as the store's disk)")
    func fullNamesTheTemporaryDirectory() throws {
        let database = try SQLiteDatabase.unnamed()
        try database.execute("CREATE TABLE rows (payload BLOB); PRAGMA max_page_count = 8")
        let temporary = try #require(SQLiteDatabase.temporaryDirectory)
        do {
            try database.execute("INSERT INTO rows SELECT zeroblob(100000) FROM (SELECT 1 UNION ALL SELECT 2)")
            Issue.record("eight pages held 200 000 bytes")
        } catch {
            #expect(error.message.contains("database or disk is full (the disk of that database, or that of SQLite's temporary directory \(temporary) ($SQLITE_TMPDIR, else $TMPDIR))"), "\(error.message)")
        }
        // The same from a prepared statement's step.
        let insert = try database.prepare("INSERT INTO rows VALUES (zeroblob(100000))")
        do {
            try insert.runToEnd()
            Issue.record("eight pages held 100 000 bytes")
        } catch {
            #expect(error.message.contains("SQLite's temporary directory \(temporary)"), "\(error.message)")
        }
    }
}
