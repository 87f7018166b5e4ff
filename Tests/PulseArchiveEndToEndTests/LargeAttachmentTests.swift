import Foundation
import Testing
@testable import PulseArchive
@testable import PulseArchiveCLI
import PulseSQLite
@testable import PulseTestSupport
@testable import PulseStoreTestSupport

/// Attachments and document files of any size (docs/reliability.md, "Memory"): an app archive
/// with a 10 MB attachment (over the old 8 MiB string limit) imports, exports byte for byte,
/// verifies; invalid base64 deep inside one is refused by location; a kill while one is being
/// written leaves the store as it was. Memory for a 300 MB one is scripts/bench.sh's figure.
@Suite("Attachments and document files of any size")
struct LargeAttachmentTests {
    static let seed: UInt64 = {
        let seed = ProcessInfo.processInfo.environment["PULSE_TEST_SEED"].flatMap { UInt64($0) } ?? 2_424
        print("LargeAttachmentTests: PULSE_TEST_SEED=\(seed)")
        return seed
    }()
    /// What `export` stamps with this environment, so its output can equal a file written here.
    static let environment = ["SOURCE_DATE_EPOCH": "1773600000"]
    static let options = ArchiveWriterOptions(appVersion: "pulse-archive \(PulseArchiveCommand.version)", exportedAt: 1_773_600_000_000)
    static let size = 10_000_000

    static func randomBytes(_ count: Int, seed: UInt64) -> [UInt8] {
        var state = seed &* 0x9E37_79B9_7F4A_7C15 | 1
        var bytes = [UInt8](repeating: 0, count: count)
        for i in 0..<count {
            state ^= state << 13; state ^= state >> 7; state ^= state << 17
            bytes[i] = UInt8(truncatingIfNeeded: state >> 24)
        }
        return bytes
    }

    /// A canonical plain archive (as export writes it) of one device row and `attachments`.
    static func archive(_ dir: TemporaryDirectory, _ name: String, attachments: [(String, [UInt8])]) throws -> String {
        var content = InMemoryContent()
        content.rows[ArchiveTable.devices.key] = [RowFactory.minimal(.devices, index: 1)]
        content.attachments = attachments
        let path = dir.file(name)
        try writeArchive(content, to: path, compressed: false, options: options)
        return path
    }

    static func read(_ path: String) throws -> [UInt8] { [UInt8](try Data(contentsOf: URL(fileURLWithPath: path))) }

    static func attachment(_ name: String, in store: String) throws -> [UInt8]? {
        // Not closed by hand: the connection closes once the statement that holds it is gone.
        let database = try SQLiteDatabase(path: store + "/pulse.sqlite", create: false)
        let query = try database.prepare(#"SELECT "contents" FROM "attachments" WHERE "file" = ?"#)
        try query.bind(text: name, at: 1)
        return try query.step() ? query.blob(at: 0) : nil
    }

    @Test("a 10 MB attachment, escaped as the app escapes it (every / as \\/), imports, exports byte for byte as export writes it, and verifies")
    func tenMegabytes() throws {
        let dir = TemporaryDirectory()
        let bytes = Self.randomBytes(Self.size, seed: Self.seed)
        let canonical = try Self.archive(dir, "canonical.json", attachments: [("coach-photo.jpg", bytes)])
        let canonicalBytes = try Self.read(canonical)
        let app = dir.file("app.json")
        try String(decoding: canonicalBytes, as: UTF8.self).replacingOccurrences(of: "/", with: "\\/")
            .write(toFile: app, atomically: false, encoding: .utf8)
        for (input, label) in [(canonical, "canonical"), (app, "app-escaped")] {
            let store = dir.file("store-\(label)")
            let imported = try CLI.run(["import", input, "--store", store, "--no-backfill"])
            #expect(imported.exitCode == 0, "\(label): \(imported.stderr)")
            #expect(try Self.attachment("coach-photo.jpg", in: store) == bytes, "\(label): the store holds other bytes")
            let exported = dir.file("export-\(label).json.gz")
            let export = try CLI.run(["export", "--store", store, "-o", exported], environment: Self.environment)
            #expect(export.exitCode == 0, "\(label): \(export.stderr)")
            // A store's export carries its (empty) document tree; the archive written here has none.
            let written = Array(String(decoding: try gunzip(exported), as: UTF8.self)
                .replacingOccurrences(of: #""documentFiles":[],"documentStubs":[],"documents":[],"#, with: "").utf8)
            let firstDifference = (0..<min(written.count, canonicalBytes.count)).first { written[$0] != canonicalBytes[$0] } ?? min(written.count, canonicalBytes.count)
            let same = written == canonicalBytes
            #expect(same, "\(label): the export differs from the canonical archive from byte \(firstDifference): \(String(decoding: written[max(0, firstDifference - 80)..<min(written.count, firstDifference + 80)], as: UTF8.self)) ≠ \(String(decoding: canonicalBytes[max(0, firstDifference - 80)..<min(canonicalBytes.count, firstDifference + 80)], as: UTF8.self))")
            let verified = try CLI.run(["verify", input])
            #expect(verified.exitCode == 0, "\(label): \(verified.stdout) \(verified.stderr)")
        }
    }

    @Test("a document file over the old limit (9 MB, not JSON) imports into the tree, exports and comes back the same, and verifies")
    func largeDocumentFile() throws {
        let dir = TemporaryDirectory()
        let bytes = Self.randomBytes(9_000_000, seed: Self.seed + 1)
        let encoded = ByteBuffer.collecting { Base64.encode(bytes, appendingTo: &$0) }
        let path = "Splits/\(DocumentFixtures.splitID).json"
        let archive = try Self.archive(dir, "doc.json", attachments: [])
        let text = try String(contentsOfFile: archive, encoding: .utf8)
        let entry = #""documentFiles":[{"path":"\#(path)","base64":"\#(String(decoding: encoded, as: UTF8.self))"}],"#
        try ("{" + entry + text.dropFirst()).write(toFile: archive, atomically: false, encoding: .utf8)
        let store = dir.file("store")
        let imported = try CLI.run(["import", archive, "--store", store, "--no-backfill"])
        #expect(imported.exitCode == 0, "\(imported.stderr)")
        #expect(try Self.read(store + "/" + path) == bytes)
        let exported = dir.file("export.json.gz")
        #expect(try CLI.run(["export", "--store", store, "-o", exported]).exitCode == 0)
        let again = dir.file("again")
        let reimported = try CLI.run(["import", exported, "--store", again, "--no-backfill"])
        #expect(reimported.exitCode == 0, "\(reimported.stderr)")
        #expect(try Self.read(again + "/" + path) == bytes)
        let verified = try CLI.run(["verify", archive])
        #expect(verified.exitCode == 0, "\(verified.stdout) \(verified.stderr)")
    }

    @Test("invalid base64 in the middle of a 10 MB attachment: import refuses it naming the value and the character, the store unchanged; verify reports it")
    func invalidInTheMiddle() throws {
        let dir = TemporaryDirectory()
        let store = dir.file("store")
        let seed = try Self.archive(dir, "seed.json", attachments: [("old.jpg", [1, 2, 3])])
        #expect(try CLI.run(["import", seed, "--store", store, "--no-backfill"]).exitCode == 0)
        let path = try Self.archive(dir, "bad.json", attachments: [("coach-photo.jpg", Self.randomBytes(Self.size, seed: Self.seed + 2))])
        var text = try Self.read(path)
        let start = try #require(String(decoding: text, as: UTF8.self).range(of: "\"base64\":\"")?.upperBound.utf16Offset(in: String(decoding: text, as: UTF8.self)))
        let character = 6_666_667
        text[start + character] = UInt8(ascii: "*")
        try Data(text).write(to: URL(fileURLWithPath: path))
        let before = StoreFixtures.bytes(store + "/pulse.sqlite")
        let result = try CLI.run(["import", path, "--store", store, "--replace", "--no-backfill"])
        #expect(result.exitCode == 1, "\(result.stderr)")
        #expect(result.stderr.contains("attachments[0].base64: invalid base64 at character \(character) of the value"), "\(result.stderr)")
        #expect(result.stderr.contains("'*' is not in the base64 alphabet"), "\(result.stderr)")
        #expect(StoreFixtures.bytes(store + "/pulse.sqlite") == before)
        #expect(try Self.attachment("old.jpg", in: store) == [1, 2, 3])
        let verified = try CLI.run(["verify", path])
        #expect(verified.exitCode == 1 && verified.stdout.contains("invalid base64 at character \(character)"), "\(verified.stdout)")
    }

    @Test("import --merge with attachments over 1 MiB (copied into the store in pieces): a name the store has keeps its contents, a new name comes in whole")
    func mergeKeepsExisting() throws {
        let dir = TemporaryDirectory()
        let store = dir.file("store")
        let old = Self.randomBytes(3_000_000, seed: Self.seed + 4)
        let seed = try Self.archive(dir, "seed.json", attachments: [("a.jpg", old), ("small.jpg", [9])])
        #expect(try CLI.run(["import", seed, "--store", store, "--no-backfill"]).exitCode == 0)
        let newer = Self.randomBytes(3_000_000, seed: Self.seed + 5), added = Self.randomBytes(2_500_000, seed: Self.seed + 6)
        let incoming = try Self.archive(dir, "incoming.json", attachments: [("a.jpg", newer), ("b.jpg", added)])
        let merged = try CLI.run(["import", incoming, "--store", store, "--merge", "--no-backfill"])
        #expect(merged.exitCode == 0, "\(merged.stderr)")
        #expect(try Self.attachment("a.jpg", in: store) == old, "the store's attachment must win a merge")
        #expect(try Self.attachment("b.jpg", in: store) == added)
        #expect(try Self.attachment("small.jpg", in: store) == [9])
    }

    @Test("verify --store compares attachments over 1 MiB in pieces: the same bytes are no difference, one changed byte of the same length is one change")
    func verifyAgainstStore() throws {
        let dir = TemporaryDirectory()
        let store = dir.file("store")
        var bytes = Self.randomBytes(3_000_000, seed: Self.seed + 7)
        let path = try Self.archive(dir, "a.json", attachments: [("a.jpg", bytes), ("small.jpg", [1])])
        #expect(try CLI.run(["import", path, "--store", store, "--no-backfill"]).exitCode == 0)
        let same = try CLI.run(["verify", path, "--store", store, "--json"])
        #expect(same.exitCode == 0, "\(same.stdout)")
        #expect((same.json["storeDiff"] as? [String: [String: Int]])?["attachments"] == ["missing": 0, "extra": 0, "changed": 0], "\(same.stdout)")
        bytes[2_000_000] ^= 0xFF
        do {
            let database = try SQLiteDatabase(path: store + "/pulse.sqlite", create: false)
            let update = try database.prepare(#"UPDATE "attachments" SET "contents" = ? WHERE "file" = 'a.jpg'"#)
            try update.bind(blob: bytes, at: 1)
            try update.runToEnd()
        }
        let changed = try CLI.run(["verify", path, "--store", store, "--json"])
        #expect(changed.exitCode == 1, "\(changed.stdout)")
        #expect((changed.json["storeDiff"] as? [String: [String: Int]])?["attachments"] == ["missing": 0, "extra": 0, "changed": 1], "\(changed.stdout)")
    }

    @Test("import --replace killed with SIGKILL while a 10 MB attachment is written, in staging and in the store's transaction: the store holds its old content, and the next import succeeds")
    func killedWhileWriting() throws {
        let dir = TemporaryDirectory()
        let store = dir.file("store")
        let seed = try Self.archive(dir, "seed.json", attachments: [("old.jpg", [1, 2, 3])])
        #expect(try CLI.run(["import", seed, "--store", store, "--no-backfill"]).exitCode == 0)
        let bytes = Self.randomBytes(Self.size, seed: Self.seed + 3)
        let path = try Self.archive(dir, "large.json", attachments: [("coach-photo.jpg", bytes)])
        let arguments = ["import", path, "--store", store, "--replace", "--no-backfill"]
        // Count on a copy of the store: the count run imports.
        let copy = dir.file("copy")
        try FileManager.default.copyItem(atPath: store, toPath: copy)
        let counts = try KillPoints.count(["import", path, "--store", copy, "--replace", "--no-backfill"])
        let pieces = try #require(counts["attachment.piece"])
        // Once in staging, once into the store: the middle of each.
        let perCopy = (Self.size + ArchiveBytes.pieceSize - 1) / ArchiveBytes.pieceSize
        #expect(pieces == 2 * perCopy, "\(counts)")
        let before = StoreFixtures.bytes(store + "/pulse.sqlite")
        for occurrence in [perCopy / 2, perCopy + perCopy / 2] {
            try KillPoints.expectStopped(arguments, at: "attachment.piece:\(occurrence)", with: SIGKILL)
            #expect(StoreFixtures.bytes(store + "/pulse.sqlite") == before, "killed at piece \(occurrence)")
            #expect(try Self.attachment("old.jpg", in: store) == [1, 2, 3], "killed at piece \(occurrence)")
            #expect(try Self.attachment("coach-photo.jpg", in: store) == nil, "killed at piece \(occurrence)")
        }
        let finished = try CLI.run(arguments)
        #expect(finished.exitCode == 0, "\(finished.stderr)")
        #expect(try Self.attachment("coach-photo.jpg", in: store) == bytes)
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: store).filter { $0.hasPrefix(".staging-") }
        #expect(leftovers.isEmpty, "\(leftovers)")
    }
}
