import Foundation
import Testing
@testable import PulseArchive
@testable import PulseDocuments
@testable import PulseStore
import PulseSQLite
@testable import PulseTestSupport
@testable import PulseStoreTestSupport

/// docs/reliability.md, "Keys, blobs and sizes: one rule": keys are equal when their bytes are,
/// settings blobs are JSON, an entry says one thing once, and whatever export writes, import
/// reads back with default options. Every example runs through the built binary.
@Suite("Keys, blobs and sizes: one rule")
struct KeysAndSizesTests {
    /// `café` typed two ways: NFC (é) and NFD (e + U+0301).
    static let nfc = "caf\u{E9}", nfd = "cafe\u{301}"
    static let upper = "Splits/\(DocumentFixtures.splitID).json"
    static let lower = "Splits/\(DocumentFixtures.splitID.lowercased()).json"

    /// A plain archive of one device row with these settings and attachments; `extra` top-level
    /// members are put in front of the writer's.
    static func archive(_ dir: TemporaryDirectory, _ name: String, settings: [(String, String)] = [],
                        attachments: [(String, [UInt8])] = [], extra: String? = nil) throws -> String {
        var content = InMemoryContent()
        content.rows[ArchiveTable.devices.key] = [RowFactory.minimal(.devices, index: 1)]
        // Written under placeholder names, then given the names under test: the writer refuses
        // a name the reader would refuse, and these files are meant to hold such names.
        content.settings = settings.enumerated().map { ("settings-placeholder-\($0.offset)", $0.element.1) }
        content.attachments = attachments.enumerated().map { ("attachment-placeholder-\($0.offset)", $0.element.1) }
        let path = dir.file(name)
        try writeArchive(content, to: path, compressed: false)
        for (i, (key, _)) in settings.enumerated() { try edit(path, "\"settings-placeholder-\(i)\"", JSONText.quoted(key)) }
        for (i, (file, _)) in attachments.enumerated() { try edit(path, "\"attachment-placeholder-\(i)\"", JSONText.quoted(file)) }
        if let extra { try edit(path, "{", "{" + extra + ",") }
        return path
    }

    /// Replaces the first `old` in the file with `new`.
    static func edit(_ path: String, _ old: String, _ new: String) throws {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        let range = try #require(text.range(of: old), "\(old) is not in \(path)")
        try text.replacingCharacters(in: range, with: new).write(toFile: path, atomically: false, encoding: .utf8)
    }

    /// A store holding one archive's rows, for refusals that must leave it byte-identical.
    static func seededStore(_ dir: TemporaryDirectory) throws -> String {
        let store = dir.file("store")
        let seed = try archive(dir, "seed.json", settings: [("pulseloop.metricprefs.v1", "{}")])
        let result = try CLI.run(["import", seed, "--store", store, "--no-backfill"])
        #expect(result.exitCode == 0, "\(result.stderr)")
        return store
    }

    /// Runs `import` of `path` into `store` (replace) and expects a refusal naming every
    /// phrase, with the store's database byte-identical.
    static func expectRefused(_ path: String, store: String, naming phrases: [String], sourceLocation: SourceLocation = #_sourceLocation) throws {
        let before = StoreFixtures.bytes(store + "/pulse.sqlite")
        let result = try CLI.run(["import", path, "--store", store, "--replace", "--no-backfill"])
        #expect(result.exitCode == 1, "\(result.stderr)", sourceLocation: sourceLocation)
        for phrase in phrases {
            #expect(result.stderr.contains(phrase), "\(phrase) not in: \(result.stderr)", sourceLocation: sourceLocation)
        }
        #expect(StoreFixtures.bytes(store + "/pulse.sqlite") == before, sourceLocation: sourceLocation)
    }

    static func count(_ table: String, in store: String) throws -> Int64 {
        let database = try SQLiteDatabase(path: store + "/pulse.sqlite", create: false)
        defer { database.close() }
        return try database.integer("SELECT count(*) FROM \(StoreSchema.quoted(table))")
    }

    // MARK: - Key equality

    @Test("settings keys, attachment names and object keys that differ only in normalization are two keys, merged, exported and read back")
    func normalizationPairs() throws {
        let dir = TemporaryDirectory()
        let store = dir.file("store")
        let meal = #""mealEntries":[{"id":"m1","\#(Self.nfc)":1,"\#(Self.nfd)":2}]"#
        let a = try Self.archive(dir, "a.json", settings: [(Self.nfc, "1")], attachments: [(Self.nfc + ".jpg", [1])], extra: meal)
        let b = try Self.archive(dir, "b.json", settings: [(Self.nfd, "2")], attachments: [(Self.nfd + ".jpg", [2])])
        let first = try CLI.run(["import", a, "--store", store, "--no-backfill"])
        #expect(first.exitCode == 0, "\(first.stderr)")
        let merged = try CLI.run(["import", b, "--store", store, "--merge", "--no-backfill"])
        #expect(merged.exitCode == 0, "\(merged.stderr)")
        #expect(try Self.count("settings", in: store) == 2 && Self.count("attachments", in: store) == 2)

        let out = dir.file("out.json.gz")
        let export = try CLI.run(["export", "--store", store, "-o", out])
        #expect(export.exitCode == 0, "\(export.stderr)")
        let inspect = try CLI.run(["inspect", out, "--json"])
        #expect(inspect.exitCode == 0, "\(inspect.stderr)")
        #expect(inspect.json["settings"] as? Int == 2 && inspect.json["attachments"] as? Int == 2)
        let verify = try CLI.run(["verify", out, "--store", store])
        #expect(verify.exitCode == 0, "\(verify.stdout)\(verify.stderr)")
        let restored = dir.file("restored")
        let again = try CLI.run(["import", out, "--store", restored, "--no-backfill"])
        #expect(again.exitCode == 0, "\(again.stderr)")
        #expect(try Self.count("settings", in: restored) == 2 && Self.count("attachments", in: restored) == 2)
        let database = try SQLiteDatabase(path: restored + "/pulse.sqlite", create: false)
        defer { database.close() }
        let select = try database.prepare(#"SELECT "row" FROM "mealEntries""#)
        #expect(try select.step())
        let row = Data(select.text(at: 0).utf8)
        #expect(row.range(of: Data(Self.nfc.utf8)) != nil && row.range(of: Data(Self.nfd.utf8)) != nil, "both members kept")
    }

    // Linear, not timed: a quadratic read of this key takes hours, so the time limit is the
    // hang guard (no assertion on how long the reads take).
    @Test("a 1 MB key of mixed combining marks is read in linear time: an unknown key, a settings key, an attachment name, a row field",
          .timeLimit(.minutes(2)))
    func longCombiningKey() throws {
        let dir = TemporaryDirectory()
        // Marks of four combining classes, so that normalising would have to reorder them.
        let key = "a" + String(repeating: "\u{301}\u{316}\u{327}\u{308}", count: 131_072)
        #expect(key.utf8.count > 1 << 20)
        let path = try Self.archive(dir, "long.json", settings: [("short", "true")], attachments: [("short.jpg", [1])], extra: #""\#(key)":1"#)
        try Self.edit(path, #""devices":[{"#, #""devices":[{"\#(key)":0,"#)
        let inspect = try CLI.run(["inspect", path, "--json"])
        #expect(inspect.exitCode == 0, "\(inspect.stderr.prefix(300))")
        #expect(inspect.json["settings"] as? Int == 1 && inspect.json["attachments"] as? Int == 1)
        // A settings key and an attachment name are names, at most 1 KiB: refused, as quickly.
        for (settings, attachments) in [([(key, "true")], []), ([], [(key, [UInt8(1)])])] {
            let named = try Self.archive(dir, "named-\(settings.count).json", settings: settings, attachments: attachments)
            let refused = try CLI.run(["inspect", named])
            #expect(refused.exitCode == 1 && refused.stderr.contains("is longer than the limit of \(ArchiveLimits.maxNameBytes) bytes")
                    && refused.stderr.contains(settings.isEmpty ? "attachments: the attachment name of " : "settings: the settings key of ")
                    && refused.stderr.utf8.count < 2_000, "\(refused.stderr.prefix(300))")
        }

        // An Android enum NAME is looked up in the port's maps: a long one is an unknown NAME.
        let android = dir.file("android.json")
        try FileManager.default.copyItem(atPath: Repository.sampleAndroid, toPath: android)
        try Self.edit(android, #""stateRaw": "CONNECTED""#, #""stateRaw": "\#(key)""#)
        let inspected = try CLI.run(["inspect", android])
        #expect(inspected.exitCode == 0 && inspected.stderr.contains("have no app value") && inspected.stderr.utf8.count < 10_000, "\(inspected.stderr.prefix(300))")
    }

    @Test("an attachment name is checked on its bytes: a dot followed by a combining mark still starts a hidden file")
    func attachmentNameBytes() throws {
        let dir = TemporaryDirectory()
        let store = try Self.seededStore(dir)
        let path = try Self.archive(dir, "hidden.json", attachments: [(".\u{301}hidden", [1])])
        try Self.expectRefused(path, store: store, naming: ["unsafe attachment name"])
    }

    // MARK: - Document paths and letter case

    @Test("document paths that differ only in letter case are refused: in an archive, in a store's tree at a merge and at an export")
    func caseCollisions() throws {
        let dir = TemporaryDirectory()
        let store = try Self.seededStore(dir)
        let documents = #""documents":[{"document":{"n":1},"path":"\#(Self.upper)"},{"document":{"n":2},"path":"\#(Self.lower)"}],"documentStubs":[],"documentFiles":[]"#
        let path = try Self.archive(dir, "case.json", extra: documents)
        try Self.expectRefused(path, store: store, naming: [Self.upper, Self.lower, "differ only in letter case"])

        // The store's own tree holds both spellings (the app's file system would not).
        let tree = try TreeFixture(dir.file("tree-store"))
        try tree.write(Self.upper, node: .object(["n": .number("1")]))
        try tree.write(Self.lower, node: .object(["n": .number("2")]))
        let workout = "Workouts/2025/03/\(DocumentFixtures.workoutID).json"
        let one = try Self.archive(dir, "one.json", extra: #""documents":[{"document":{"n":3},"path":"\#(workout)"}],"documentStubs":[],"documentFiles":[]"#)
        let merge = try CLI.run(["import", one, "--store", tree.root, "--merge", "--no-backfill"])
        #expect(merge.exitCode == 1 && merge.stderr.contains(Self.upper) && merge.stderr.contains(Self.lower), "\(merge.stderr)")
        #expect(tree.bytes(workout) == nil)
        let target = dir.file("tree.json.gz")
        let export = try CLI.run(["export", "--store", tree.root, "-o", target])
        #expect(export.exitCode == 1 && export.stderr.contains(Self.upper) && export.stderr.contains(Self.lower), "\(export.stderr)")
        #expect(!FileManager.default.fileExists(atPath: target))
    }

    // MARK: - Settings blobs

    @Test("a settings blob that is not JSON is refused by import and inspect and reported by verify, naming its key")
    func settingsBlobNotJSON() throws {
        let dir = TemporaryDirectory()
        let store = try Self.seededStore(dir)
        let path = try Self.archive(dir, "blob.json", settings: [("pulseloop.workoutprefs.v1", "{}")])
        try Self.edit(path, #""pulseloop.workoutprefs.v1":"{}""#, #""pulseloop.workoutprefs.v1":"{not json""#)
        try Self.expectRefused(path, store: store, naming: ["settings.pulseloop.workoutprefs.v1", "not valid JSON"])
        let inspect = try CLI.run(["inspect", path])
        #expect(inspect.exitCode == 1 && inspect.stderr.contains("settings.pulseloop.workoutprefs.v1"))
        let verify = try CLI.run(["verify", path])
        #expect(verify.exitCode == 1 && verify.stdout.contains("settings.pulseloop.workoutprefs.v1: the stored blob is not valid JSON"), "\(verify.stdout)")
    }

    // MARK: - Silent choices

    @Test("a document entry whose document and base64 disagree is refused, naming the path; one that agrees is restored byte for byte")
    func documentAndBase64() throws {
        let dir = TemporaryDirectory()
        let store = try Self.seededStore(dir)
        let other = Data(#"{"n": 2}"#.utf8).base64EncodedString()
        let disagree = try Self.archive(dir, "disagree.json", extra: #"""
            "documents":[{"base64":"\#(other)","document":{"n":1},"path":"\#(Self.upper)"}],"documentStubs":[],"documentFiles":[]
            """#)
        try Self.expectRefused(disagree, store: store, naming: [Self.upper, "disagree"])
        let verify = try CLI.run(["verify", disagree])
        #expect(verify.exitCode == 1 && verify.stdout.contains("disagree"), "\(verify.stdout)")

        let same = Data(#"{"n": 1}"#.utf8)
        let agree = try Self.archive(dir, "agree.json", extra: #"""
            "documents":[{"base64":"\#(same.base64EncodedString())","document":{"n":1},"path":"\#(Self.upper)"}],"documentStubs":[],"documentFiles":[]
            """#)
        let result = try CLI.run(["import", agree, "--store", store, "--replace", "--no-backfill"])
        #expect(result.exitCode == 0, "\(result.stderr)")
        #expect(FileManager.default.contents(atPath: store + "/" + Self.upper) == same)
    }

    @Test("a member given twice in an attachment entry, a document entry or counts is refused, as in a row")
    func duplicateMembers() throws {
        let dir = TemporaryDirectory()
        let store = try Self.seededStore(dir)
        let attachment = try Self.archive(dir, "attachment.json", attachments: [("photo.jpg", [1, 2, 3])])
        try Self.edit(attachment, #""file":"photo.jpg""#, #""file":"photo.jpg","file":"other.jpg""#)
        try Self.expectRefused(attachment, store: store, naming: ["attachments[0].file", "appears twice"])

        let document = try Self.archive(dir, "document.json", extra: #"""
            "documents":[{"document":{"n":1},"path":"\#(Self.upper)","path":"\#(Self.lower)"}],"documentStubs":[],"documentFiles":[]
            """#)
        try Self.expectRefused(document, store: store, naming: ["documents[0].path", "appears twice"])

        let counts = try Self.archive(dir, "counts.json")
        try Self.edit(counts, #""counts":{"#, #""counts":{"devices":1,"#)
        try Self.expectRefused(counts, store: store, naming: ["counts", "\"devices\" appears twice"])

        // An unknown field given twice in a row, as a known one is (review h98: accepted, and
        // its warning said 2 rows of a table of one); another unknown member twice in an entry.
        let row = try Self.archive(dir, "row.json")
        try Self.edit(row, #""devices":[{"#, #""devices":[{"future":1,"future":2,"#)
        try Self.expectRefused(row, store: store, naming: ["devices[0]: the unknown field \"future\" appears twice in the row"])
        let entry = try Self.archive(dir, "entry.json", attachments: [("photo.jpg", [1, 2, 3])])
        try Self.edit(entry, #""file":"photo.jpg""#, #""file":"photo.jpg","note":1,"note":2"#)
        try Self.expectRefused(entry, store: store, naming: ["attachments[0].note", "appears twice"])
    }

    @Test("an unknown field in a row is counted in its warning once per row it is in")
    func unknownFieldCountedPerRow() throws {
        let dir = TemporaryDirectory()
        let path = try Self.archive(dir, "once.json")
        try Self.edit(path, #""devices":[{"#, #""devices":[{"future":1,"#)
        let inspected = try CLI.run(["inspect", path])
        #expect(inspected.exitCode == 0 && inspected.stderr.contains("devices: unknown field \"future\" in 1 row (ignored)"), "\(inspected.stderr)")
    }

    @Test("bytes inside ignored values are checked as UTF-8: an unknown key's value, an unknown row field, an unknown entry member")
    func ignoredValuesAreUTF8() throws {
        let dir = TemporaryDirectory()
        let store = try Self.seededStore(dir)
        for (name, old, new) in [("top", #""attachments":"#, "\"x\":[\"ok\",{\"k\":\"\u{FFFD}\"}],\"attachments\":"),
                                 ("row", #""devices":[{"#, "\"devices\":[{\"future\":\"\u{FFFD}\","),
                                 ("entry", #""file":"photo.jpg""#, "\"file\":\"photo.jpg\",\"note\":\"\u{FFFD}\"")] {
            let path = try Self.archive(dir, "\(name).json", attachments: [("photo.jpg", [1])])
            try Self.edit(path, old, new)
            // U+FFFD (EF BF BD) becomes a lone continuation byte and an invalid lead byte.
            var bytes = try #require(FileManager.default.contents(atPath: path))
            let mark = try #require(bytes.range(of: Data([0xEF, 0xBF, 0xBD])))
            bytes.replaceSubrange(mark, with: [0xC3, 0x28, 0xFF])
            try bytes.write(to: URL(fileURLWithPath: path))
            let inspect = try CLI.run(["inspect", path])
            #expect(inspect.exitCode == 1 && inspect.stderr.contains("not valid UTF-8"), "\(name): \(inspect.stderr)")
            try Self.expectRefused(path, store: store, naming: ["not valid UTF-8"])
        }
    }

    // MARK: - The Android port's counts

    @Test("inspect keeps an Android file's declared counts, and inspect and verify compare them with the rows")
    func androidCounts() throws {
        let dir = TemporaryDirectory()
        let inspect = try CLI.run(["inspect", Repository.sampleAndroid, "--json"])
        #expect(inspect.exitCode == 0)
        let declared = try #require(inspect.json["declaredCounts"] as? [String: Int])
        #expect(declared["activity_daily"] == 2 && declared["sleep_sessions"] == 1, "\(declared)")
        #expect(try CLI.run(["verify", Repository.sampleAndroid]).exitCode == 0)

        let wrong = dir.file("wrong.json")
        try FileManager.default.copyItem(atPath: Repository.sampleAndroid, toPath: wrong)
        try Self.edit(wrong, #""activity_daily": 2"#, #""activity_daily": 3"#)
        let verify = try CLI.run(["verify", wrong])
        #expect(verify.exitCode == 1 && verify.stdout.contains("activityDailies: the file declares 3 rows but holds 2"), "\(verify.stdout)")
        let imported = try CLI.run(["import", wrong, "--store", dir.file("store"), "--no-backfill"])
        #expect(imported.exitCode == 0 && imported.stderr.contains("declares 3 but holds 2"), "\(imported.stderr)")
    }

    // MARK: - Our own archives pass our own guards

    @Test("an all-zero attachment of the largest size exports to an archive the default inflate-ratio guard accepts, and it round-trips")
    func zeroAttachment() throws {
        let dir = TemporaryDirectory()
        let zeros = [UInt8](repeating: 0, count: ArchiveLimits.standard.maxBase64PayloadBytes)
        let path = try Self.archive(dir, "zeros.json", attachments: [("zeros.bin", zeros)])
        let store = dir.file("store")
        #expect(try CLI.run(["import", path, "--store", store, "--no-backfill"]).exitCode == 0)
        let out = dir.file("zeros.json.gz")
        #expect(try CLI.run(["export", "--store", store, "-o", out]).exitCode == 0)
        let restored = dir.file("restored")
        let again = try CLI.run(["import", out, "--store", restored, "--no-backfill"])
        #expect(again.exitCode == 0, "\(again.stderr)")
        #expect(try PulseStore.open(restored, create: false).attachments()["zeros.bin"] == zeros)
        let verify = try CLI.run(["verify", out, "--store", store])
        #expect(verify.exitCode == 0, "\(verify.stdout)")
    }

    @Test("a document file larger than the string limit (once refused by export) is exported in pieces and comes back byte for byte")
    func documentOverTheStringLimit() throws {
        let dir = TemporaryDirectory()
        let tree = try TreeFixture(dir.file("store"))
        let big = try tree.write(Self.upper, Array("not json".utf8))
        let size = ArchiveLimits.standard.maxStringBytes + 1
        #expect(truncate(big, off_t(size)) == 0)
        let target = dir.file("big.json.gz")
        let export = try CLI.run(["export", "--store", tree.root, "-o", target])
        #expect(export.exitCode == 0, "\(export.stderr)")
        let restored = dir.file("restored")
        let again = try CLI.run(["import", target, "--store", restored, "--no-backfill"])
        #expect(again.exitCode == 0, "\(again.stderr)")
        #expect(FileManager.default.contents(atPath: restored + "/" + Self.upper) == FileManager.default.contents(atPath: big))
    }
}
