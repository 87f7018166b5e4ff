import Foundation
import Testing
@testable import PulseArchive
@testable import PulseStore
import PulseSQLite
import PulseSystem
@testable import PulseTestSupport
@testable import PulseStoreTestSupport

/// An export of a store encodes each column where SQLite keeps it (`StoredRow`), not through a
/// `FieldValue` per value: the text it writes must be the text the value path writes, byte for
/// byte, for whatever a hand-edited store holds, and it must refuse what that path refuses.
@Suite("A store's columns are written as their values are")
struct StoredRowEncodingTests {
    /// The store's content with its in-place rows hidden: the writer then takes `forEachRow`,
    /// the `FieldValue` path.
    struct ValuesOnly: ArchiveContent {
        let content: any ArchiveContent
        func rowCount(of table: ArchiveTable) throws -> Int { try content.rowCount(of: table) }
        func forEachRow(of table: ArchiveTable, _ body: (ArchiveRow) throws -> Void) throws { try content.forEachRow(of: table, body) }
        func forEachSetting(_ body: (String, String) throws -> Void) throws { try content.forEachSetting(body) }
        func forEachAttachment(_ body: (String, any PieceReadable) throws -> Void) throws { try content.forEachAttachment(body) }
        var hasDocuments: Bool { content.hasDocuments }
        func forEachDocument(stubs: Bool, _ body: (DocumentPath, JSONNode, [UInt8]?) throws -> Void) throws {
            try content.forEachDocument(stubs: stubs, body)
        }
        func forEachDocumentFile(_ body: (DocumentPath, any PieceReadable) throws -> Void) throws { try content.forEachDocumentFile(body) }
        func extensionRowCount(_ table: ExtensionTable) throws -> Int { try content.extensionRowCount(table) }
        func forEachExtensionRow(_ table: ExtensionTable, _ body: (JSONNode) throws -> Void) throws { try content.forEachExtensionRow(table, body) }
    }

    /// The archive's JSON from both paths, or the error each threw.
    static func bothPaths(_ store: String) throws -> (stored: Result<[UInt8], Error>, values: Result<[UInt8], Error>) {
        let options = ArchiveWriterOptions(appVersion: "test", exportedAt: 1_773_619_200_000)
        func write(_ content: any ArchiveContent) -> Result<[UInt8], Error> {
            Result {
                let sink = MemorySink()
                try ArchiveWriter.write(content, options: options, to: sink)
                return sink.bytes
            }
        }
        return try PulseStore.readSnapshot(storeDirectory: store) { content in
            (write(content), write(ValuesOnly(content: content)))
        }
    }

    /// A demo store of `days` with `sql` run on its database, as a hand edit leaves it; the
    /// directory keeps it.
    static func demoStore(days: Int, editedBy sql: String) throws -> (dir: TemporaryDirectory, store: String) {
        let dir = TemporaryDirectory()
        let store = dir.path + "/store"
        try StoreFixtures.demoStore(store, days: days)
        let database = try SQLiteDatabase(path: store + "/" + PulseStore.databaseFileName, create: false)
        try database.execute(sql)
        database.close()
        return (dir, store)
    }

    @Test("hostile columns: escapes, NUL, non-ASCII, extreme numbers, values a column's affinity converted")
    func hostileColumns() throws {
        let dir = TemporaryDirectory()
        let store = dir.path + "/store"
        try StoreFixtures.demoStore(store, days: 3)
        let database = try SQLiteDatabase(path: store + "/" + PulseStore.databaseFileName, create: false)
        // Each statement changes rows the demo wrote; SQLite's storage classes are what a hand
        // edit can leave (text in a real column, a real in an integer one, a blob as text).
        for sql in [
            "UPDATE measurements SET unit = 'ü' WHERE rowid = 1",
            #"UPDATE measurements SET kindRaw = 'a"b\c/d' || char(10) || char(0) || char(31) || 'é€😀', sourceRaw = 123, confidenceRaw = '' WHERE rowid = 2"#,
            "UPDATE measurements SET value = -0.0 WHERE rowid = 3",
            "UPDATE measurements SET value = 1.7976931348623157e308, timestamp = -62167219200000 WHERE rowid = 4",
            "UPDATE measurements SET value = 5e-324, timestamp = 253402300799999 WHERE rowid = 5",
            "UPDATE measurements SET value = 42, unit = 4.5 WHERE rowid = 6",
            "UPDATE measurements SET value = 0.1 + 0.2, unit = CAST(X'F4' || X'8F' || X'BF' || X'BF' AS TEXT) WHERE rowid = 7",
            "UPDATE measurements SET value = -9223372036854775808 WHERE rowid = 8",
            "UPDATE batterySamples SET percent = 9223372036854775807 WHERE rowid = 1",
            "UPDATE batterySamples SET percent = -9223372036854775808 WHERE rowid = 2",
            "UPDATE batterySamples SET percent = 3.0 WHERE rowid = 3",
            "UPDATE userProfiles SET athleteMode = 1, onboardingCompleted = 0, usesBetaBlockers = NULL",
            // The reader takes a UUID in either case; the export writes it upper-case, as the
            // dialect does (a key in lower case is refused: below).
            "UPDATE measurements SET activitySessionId = 'abcdef01-2345-6789-abcd-ef0123456789' WHERE rowid = 9",
            "UPDATE measurements SET activitySessionId = '0a1B2c3D-4e5F-6a7B-8c9D-0e1F2a3B4c5D' WHERE rowid = 10",
        ] {
            try database.execute(sql)
        }
        database.close()

        // The store's content takes the in-place path, so the two outputs come from two paths.
        #expect(try PulseStore.readSnapshot(storeDirectory: store) { try $0.forEachStoredRow(of: .measurements) { _ in } })
        let (stored, values) = try Self.bothPaths(store)
        let storedBytes = try stored.get(), valueBytes = try values.get()
        #expect(storedBytes == valueBytes)
        let text = String(decoding: storedBytes, as: UTF8.self)
        // The escapes the value path makes, so the comparison saw them.
        for expected in [#""unit":"ü""#, #""unit":"\#u{10FFFF}""#, #""kindRaw":"a\"b\\c\/d\n\u0000\u001fé€😀""#, #""value":-0}"#,
                         #""percent":-9223372036854775808,"#, #""percent":9223372036854775807,"#, #""percent":3,"#, #""athleteMode":true"#,
                         #""value":42}"#, #""unit":"4.5""#, #""value":-9.223372036854776e+18}"#, #""sourceRaw":"123""#,
                         #""activitySessionId":"ABCDEF01-2345-6789-ABCD-EF0123456789""#, #""activitySessionId":"0A1B2C3D-4E5F-6A7B-8C9D-0E1F2A3B4C5D""#, #""timestamp":"0000-01-01T00:00:00.000Z""#, #""timestamp":"9999-12-31T23:59:59.999Z""#, #""value":5e-324"#] {
            #expect(text.contains(expected), "\(expected) is not in the export")
        }
    }

    @Test("a value the reader would refuse, or one the store keeps in a form its type cannot read, is refused by both paths with the same message")
    func refusals() throws {
        for (sql, problem) in [
            ("UPDATE measurements SET timestamp = 253402300800000 WHERE rowid = 3", "after the years 0000–9999"),
            ("UPDATE measurements SET value = 9e999 WHERE rowid = 3", "not a finite number"),
            ("UPDATE measurements SET value = 'abc' WHERE rowid = 3", "the store holds text where a number belongs"),
            ("UPDATE measurements SET value = X'00' WHERE rowid = 3", "the store holds a blob where a number belongs"),
            ("UPDATE measurements SET value = 9007199254740993 WHERE rowid = 3", "the integer 9007199254740993, which no double holds exactly"),
            ("UPDATE measurements SET unit = X'41' WHERE rowid = 3", "the store holds a blob where text belongs"),
            ("UPDATE measurements SET timestamp = '2026-01-01' WHERE rowid = 3", "the store holds text where a date (integer milliseconds) belongs"),
            ("UPDATE measurements SET timestamp = 1700000000000.5 WHERE rowid = 3", "the store holds a real number where a date"),
            ("UPDATE batterySamples SET percent = 1.5 WHERE rowid = 3", "the store holds a real number where an integer belongs"),
            ("UPDATE batterySamples SET percent = 9e999 WHERE rowid = 3", "the store holds a real number where an integer belongs"),
            ("UPDATE userProfiles SET athleteMode = 2", "the store holds 2 where a boolean (0 or 1) belongs"),
            ("UPDATE userProfiles SET onboardingCompleted = -1", "the store holds -1 where a boolean"),
            ("UPDATE userProfiles SET baselineCompleted = 'yes'", "the store holds text where a boolean"),
            // JSON cannot carry these bytes, and a U+FFFD would be another value than the store's.
            ("UPDATE measurements SET unit = CAST(X'41C328FF41E282' AS TEXT) WHERE rowid = 3", "the store holds text that is not valid UTF-8 (byte 0xC3 at offset 1)"),
            ("UPDATE measurements SET unit = CAST(X'EDA080' AS TEXT) WHERE rowid = 3", "not valid UTF-8 (byte 0xED at offset 0)"),
            ("UPDATE measurements SET unit = CAST(X'F4908080' AS TEXT) WHERE rowid = 3", "not valid UTF-8 (byte 0xF4 at offset 0)"),
            ("UPDATE measurements SET unit = CAST(X'C0AF' AS TEXT) WHERE rowid = 3", "not valid UTF-8 (byte 0xC0 at offset 0)"),
            ("UPDATE measurements SET unit = CAST(X'E282' AS TEXT) WHERE rowid = 3", "not valid UTF-8 (byte 0xE2 at offset 0)"),
            ("UPDATE measurements SET kindRaw = CAST(X'6162636465666768FF' AS TEXT) WHERE rowid = 3", "not valid UTF-8 (byte 0xFF at offset 8)"),
            // Every reader refuses these as "not a UUID": an export that wrote them would be a
            // backup nothing restores.
            ("UPDATE measurements SET id = 'not-a-uuid' WHERE rowid = 3", #"the store holds "not-a-uuid" where a UUID belongs"#),
            ("UPDATE measurements SET id = '' WHERE rowid = 3", #"the store holds "" where a UUID belongs"#),
            // A NUL before a digit reads as an escape of its own: `\u{0}`, never `\0`.
            ("UPDATE measurements SET id = '0' || char(0) || '1' WHERE rowid = 3", #"the store holds "0\u{0}1" where a UUID belongs"#),
            ("UPDATE measurements SET id = id || ' ' WHERE rowid = 3", "where a UUID belongs"),
            ("UPDATE measurements SET id = replace(id, '-', 'x') WHERE rowid = 3", "where a UUID belongs"),
            ("UPDATE measurements SET id = '0000000G-0000-0000-0000-000000000000' WHERE rowid = 3", #""0000000G-0000-0000-0000-000000000000" where a UUID belongs"#),
            ("UPDATE measurements SET id = '00000000-0000-0000-0000-00000000000é' WHERE rowid = 3", "where a UUID belongs"),
            ("UPDATE measurements SET id = X'00' WHERE rowid = 3", "the store holds a blob where a UUID (text) belongs"),
            ("UPDATE measurements SET id = 7 WHERE rowid = 3", #"the store holds "7" where a UUID belongs"#),  // TEXT affinity
            ("UPDATE sleepStageBlocks SET sessionId = 'zzz' WHERE rowid = 1", #"the store holds "zzz" where a UUID belongs"#),
            // A key in lower case: the store's index would let its upper-case twin in, and a
            // reader takes the two for one key.
            ("UPDATE measurements SET id = lower(id) WHERE rowid = 3", "measurements[2].id: cannot be exported: the store holds the key"),
            ("UPDATE measurements SET id = lower((SELECT id FROM measurements WHERE rowid = 4)) WHERE rowid = 3", "with lower-case letters, where it keeps keys upper-case"),
            ("UPDATE sleepStageBlocks SET id = substr(id, 1, 35) || 'a' WHERE rowid = 1", "sleepStageBlocks[0].id: cannot be exported: the store holds the key"),
        ] {
            let edited: (dir: TemporaryDirectory, store: String)
            do { edited = try Self.demoStore(days: 2, editedBy: sql) } catch { Issue.record("\(sql): \(error)"); continue }
            let (stored, values) = try Self.bothPaths(edited.store)
            guard case .failure(let storedError) = stored, case .failure(let valueError) = values else {
                Issue.record("\(sql): written by a path: \(stored), \(values)")
                continue
            }
            #expect("\(storedError)" == "\(valueError)", "\(sql)")
            #expect("\(storedError)".contains("cannot be exported") && "\(storedError)".contains(problem), "\(sql): \(storedError)")
        }
    }

    @Test("a meal or food row a reader would refuse is refused by export, named by table and row: no row object, no key, a key it is not kept under, no JSON")
    func extensionRows() throws {
        let nested = String(repeating: "[", count: 300) + String(repeating: "]", count: 300)
        for (sql, message) in [
            (#"INSERT INTO mealEntries VALUES ('m1', '[1,2]')"#, "mealEntries[0]: cannot be exported: expected a row object"),
            (#"INSERT INTO mealEntries VALUES ('m1', '"m1"')"#, "mealEntries[0]: cannot be exported: expected a row object"),
            (#"INSERT INTO mealEntries VALUES ('m1', '{}')"#, #"mealEntries[0]: cannot be exported: missing the required field "id""#),
            (#"INSERT INTO mealEntries VALUES ('m1', '{"id":null}')"#, #"mealEntries[0]: cannot be exported: missing the required field "id""#),
            (#"INSERT INTO foodProducts VALUES ('c1', '{"name":"no code"}')"#, #"foodProducts[0]: cannot be exported: missing the required field "code""#),
            (#"INSERT INTO mealEntries VALUES ('m1', '{"id":"m1"}'), ('m2', '{"id":"other"}')"#,
             #"mealEntries[1]: cannot be exported: the row's id "other" is not the key it is kept under, "m2""#),
            // The same text to Swift's `==`, another key to the index and the reader.
            (#"INSERT INTO mealEntries VALUES ('m\#u{E9}', '{"id":"me\u0301"}')"#,
             #"mealEntries[0]: cannot be exported: the row's id "me\#u{301}" is not the key it is kept under, "m\#u{E9}""#),
            (#"INSERT INTO mealEntries VALUES ('m1', '{"id":true}')"#, #"mealEntries[0]: cannot be exported: its "id" is a boolean, where a string or a number belongs"#),
            (#"INSERT INTO mealEntries VALUES ('m1', 'not json')"#, "mealEntries[0]: cannot be exported: the stored row is not valid JSON (invalid JSON at byte"),
            (#"INSERT INTO mealEntries VALUES ('m1', '{"id":"m1"} {}')"#, "mealEntries[0]: cannot be exported: the stored row is not valid JSON ("),
            (#"INSERT INTO mealEntries VALUES ('m1', '{"id":"m1","x":\#(nested)}')"#, "mealEntries[0]: cannot be exported: the stored row is not valid JSON (JSON nesting"),
        ] {
            let edited: (dir: TemporaryDirectory, store: String)
            do { edited = try Self.demoStore(days: 1, editedBy: sql) } catch { Issue.record("\(sql): \(error)"); continue }
            let (stored, _) = try Self.bothPaths(edited.store)
            guard case .failure(let error) = stored else {
                Issue.record("\(sql): written")
                continue
            }
            #expect("\(error)".contains(message) && !"\(error)".contains("not a PulseLoop archive"), "\(sql): \(error)")
        }
        // Rows as the reader takes them (a number for a key, any other fields) go out as kept.
        let kept = try Self.demoStore(days: 1, editedBy: #"INSERT INTO mealEntries VALUES ('m1', '{"id":"m1","name":"Müsli"}'), ('7', '{"id":7}'); INSERT INTO foodProducts VALUES ('c1', '{"code":"c1"}')"#)
        let text = String(decoding: try Self.bothPaths(kept.store).stored.get(), as: UTF8.self)
        #expect(text.contains(#""mealEntries":[{"id":"m1","name":"Müsli"},{"id":7}]"#) && text.contains(#""foodProducts":[{"code":"c1"}]"#), "\(text.suffix(300))")
    }

    @Test("a setting or attachment the store keeps as another class, or as invalid UTF-8, is refused by name; a settings blob that is no JSON is named without calling the file no archive")
    func settingsAndAttachments() throws {
        for (sql, message) in [
            ("UPDATE settings SET value = X'7B7D' WHERE key = (SELECT min(key) FROM settings)",
             "settings.pulseloop.coach.settings.v1: cannot be exported: the store holds a blob where text belongs"),
            ("UPDATE settings SET value = CAST(X'7B2261223AFF7D' AS TEXT) WHERE key = (SELECT min(key) FROM settings)",
             "settings.pulseloop.coach.settings.v1: cannot be exported: the store holds text that is not valid UTF-8 (byte 0xFF at offset 5)"),
            ("UPDATE settings SET key = CAST(X'61FF' AS TEXT) WHERE key = (SELECT min(key) FROM settings)",
             "settings[0].key: cannot be exported: the store holds text that is not valid UTF-8 (byte 0xFF at offset 1)"),
            ("UPDATE settings SET value = '{\"a\"' || char(3) WHERE key = (SELECT min(key) FROM settings)",
             "settings.pulseloop.coach.settings.v1: the stored blob is not valid JSON (invalid JSON at byte 4"),
            ("UPDATE attachments SET contents = CAST(contents AS TEXT)",
             "cannot be exported: the store holds text where the file's bytes (a blob) belong"),
            ("UPDATE attachments SET file = CAST(X'612E6A7067FF' AS TEXT) WHERE file = 'a.jpg'",
             "].file: cannot be exported: the store holds text that is not valid UTF-8 (byte 0xFF at offset 5)"),
        ] {
            let dir = TemporaryDirectory()
            let store = dir.path + "/store"
            try StoreFixtures.demoStore(store, days: 2)
            let database = try SQLiteDatabase(path: store + "/" + PulseStore.databaseFileName, create: false)
            if sql.contains("attachments") {
                try database.execute("INSERT OR IGNORE INTO attachments (file, contents) VALUES ('a.jpg', X'FFD8FF00E0')")
            }
            do { try database.execute(sql) } catch { Issue.record("\(sql): \(error)"); continue }
            database.close()
            let (stored, _) = try Self.bothPaths(store)
            guard case .failure(let error) = stored else {
                Issue.record("\(sql): written")
                continue
            }
            #expect("\(error)".contains(message), "\(sql): \(error)")
            #expect(!"\(error)".contains("not a PulseLoop archive"), "\(sql): \(error)")
        }
    }
}
