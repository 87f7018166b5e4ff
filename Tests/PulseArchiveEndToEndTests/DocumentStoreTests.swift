import Foundation
import Testing
@testable import PulseArchive
@testable import PulseDocuments
@testable import PulseStore
import PulseSQLite
@testable import PulseTestSupport
@testable import PulseStoreTestSupport

/// A store directory with a document tree written by hand.
struct TreeFixture {
    let root: String

    init(_ root: String) throws {
        self.root = root
        _ = try PulseStore.fillEmptyStore(root) { _ in }
    }

    @discardableResult
    func write(_ relative: String, _ bytes: [UInt8]) throws -> String {
        let path = root + "/" + relative
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        #expect(FileManager.default.createFile(atPath: path, contents: Data(bytes)), "\(path)")
        return path
    }

    func write(_ relative: String, node: JSONNode) throws { try write(relative, DocumentCoder.encode(node)) }

    func bytes(_ relative: String) -> Data? { FileManager.default.contents(atPath: root + "/" + relative) }

    /// Every file under the three folders, relative path → bytes.
    func files() -> [String: Data] {
        var result: [String: Data] = [:]
        for folder in DocumentTree.folders {
            guard let walker = FileManager.default.enumerator(atPath: root + "/" + folder) else { continue }
            while let relative = walker.nextObject() as? String {
                var isDirectory: ObjCBool = false
                let path = root + "/" + folder + "/" + relative
                if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue {
                    result[folder + "/" + relative] = FileManager.default.contents(atPath: path)
                }
            }
        }
        return result
    }
}

@Suite("The document tree through export, import and merge")
struct DocumentStoreTests {
    typealias D = DocumentFixtures
    let splitPath = "Splits/\(DocumentFixtures.splitID).json"
    let workoutPath = "Workouts/2025/03/\(DocumentFixtures.workoutID).json"

    @Test("canonical, newer, unreadable, stub and unknown-key files come back byte for byte; twins are reported, never archived or deleted")
    func treeRoundTrip() throws {
        let dir = TemporaryDirectory()
        let tree = try TreeFixture(dir.file("a"))
        try tree.write(splitPath, node: D.with(try D.node(D.split), ["futureField": .object(["kept": .bool(true)])]))
        try tree.write(workoutPath, node: try D.node(D.workout))
        // A newer app's file, not in our canonical layout: quarantined, kept byte for byte.
        try tree.write("Workouts/2025/04/01JP00000000000000000000AA.json", Array(#"{"schemaVersion":9,"id":"01JP00000000000000000000AA","x":1.50}"#.utf8))
        try tree.write("Splits/01JP00000000000000000000AB.json", Array("{ not json".utf8))
        try tree.write("Stubs/Splits/01JP00000000000000000000AC.json",
                       node: .object(["id": .string("01JP00000000000000000000AC"), "deletedAt": .string("2025-03-01T10:00:00Z"), "kind": .string("seed")]))
        try tree.write("Splits/\(D.splitID) 2.json", Array("twin".utf8))
        try tree.write("Splits/.\(D.splitID).json.icloud", Array("placeholder".utf8))
        try tree.write("Workouts/.DS_Store", [0, 1, 2])
        let before = tree.files()

        let export = try CLI.run(["export", "--store", tree.root, "-o", dir.file("a.json.gz"), "--json"])
        #expect(export.exitCode == 0, "\(export.stderr)")
        #expect(export.stderr.contains("\(D.splitID) 2.json is not a document") && export.stderr.contains(".icloud is not a document"))
        let tables = try #require(export.json["tables"] as? [String: Int])
        #expect(tables["splits"] == 2 && tables["workouts"] == 2 && tables["stubs"] == 1)
        #expect(tree.files() == before, "export changed the source tree")

        let imported = try CLI.run(["import", dir.file("a.json.gz"), "--store", dir.file("b"), "--no-backfill"])
        #expect(imported.exitCode == 0, "\(imported.stderr)")
        let restored = try TreeFixture(existing: dir.file("b")).files()
        var expected = before
        for name in ["Splits/\(D.splitID) 2.json", "Splits/.\(D.splitID).json.icloud", "Workouts/.DS_Store"] { expected[name] = nil }
        #expect(restored == expected)
        #expect(try JSONNode.parse([UInt8](restored[splitPath]!))["futureField"] == .object(["kept": .bool(true)]))
    }

    @Test("replace keeps the store's non-document files; an app archive without documents leaves the tree alone")
    func replaceTree() throws {
        let dir = TemporaryDirectory()
        let tree = try TreeFixture(dir.file("s"))
        try tree.write(splitPath, node: try D.node(D.split))
        try tree.write("Splits/\(D.splitID) 2.json", Array("twin".utf8))
        try writeArchive(InMemoryContent(), to: dir.file("app.json.gz"))  // no document keys, like the app's files
        #expect(try CLI.run(["import", dir.file("app.json.gz"), "--store", tree.root, "--replace", "--no-backfill"]).exitCode == 0)
        #expect(tree.bytes(splitPath) != nil)

        let other = try TreeFixture(dir.file("other"))
        try other.write(workoutPath, node: try D.node(D.workout))
        #expect(try CLI.run(["export", "--store", other.root, "-o", dir.file("other.json.gz")]).exitCode == 0)
        #expect(try CLI.run(["import", dir.file("other.json.gz"), "--store", tree.root, "--replace", "--no-backfill"]).exitCode == 0)
        #expect(tree.bytes(splitPath) == nil && tree.bytes(workoutPath) != nil)
        #expect(tree.bytes("Splits/\(D.splitID) 2.json") == Data("twin".utf8))
        #expect(!(try FileManager.default.contentsOfDirectory(atPath: tree.root)).contains { $0.hasPrefix(".staging") })
    }

    @Test("hostile document paths are refused and nothing is written")
    func hostilePaths() throws {
        let dir = TemporaryDirectory()
        let tree = try TreeFixture(dir.file("s"))
        try tree.write(splitPath, node: try D.node(D.split))
        let database = try #require(FileManager.default.contents(atPath: tree.root + "/pulse.sqlite"))
        let files = tree.files()
        let base = try BadArchives.validText()
        let document = DocumentCoder.encode(try D.node(D.split))
        let compact = try JSONNode.parse(document).compactText
        for path in ["../x.json", "/tmp/evil-\(getpid()).json", "Splits/../../etc/\(D.splitID).json", "Splits/x.json",
                     "Other/\(D.splitID).json", "Splits/..\\/..\\/\(D.splitID).json"] {
            let text = base.replacingOccurrences(of: #""formatVersion":2"#,
                                                 with: #""formatVersion":2,"documents":[{"document":\#(compact),"path":"\#(path)"}],"documentStubs":[],"documentFiles":[]"#)
            let archive = dir.write("hostile.json", text)
            for mode in ["--replace", "--merge"] {
                let result = try CLI.run(["import", archive, "--store", tree.root, mode])
                #expect(result.exitCode == 1, "\(path)")
                #expect(result.stderr.contains("unsafe document path"), "\(path): \(result.stderr)")
            }
            #expect(FileManager.default.contents(atPath: tree.root + "/pulse.sqlite") == database)
            #expect(tree.files() == files)
        }
        #expect(!FileManager.default.fileExists(atPath: dir.path + "/x.json") && !FileManager.default.fileExists(atPath: "/tmp/evil-\(getpid()).json"))
    }

    @Test("a symbolic link in the store's tree refuses the import and nothing is written")
    func symlinkInStore() throws {
        let dir = TemporaryDirectory()
        let outside = dir.file("outside")
        try FileManager.default.createDirectory(atPath: outside, withIntermediateDirectories: true)
        let tree = try TreeFixture(dir.file("s"))
        try FileManager.default.createSymbolicLink(atPath: tree.root + "/Splits", withDestinationPath: outside)
        let donor = try TreeFixture(dir.file("donor"))
        try donor.write(splitPath, node: try D.node(D.split))
        #expect(try CLI.run(["export", "--store", donor.root, "-o", dir.file("d.json.gz")]).exitCode == 0)
        let database = FileManager.default.contents(atPath: tree.root + "/pulse.sqlite")
        let result = try CLI.run(["import", dir.file("d.json.gz"), "--store", tree.root, "--replace"])
        #expect(result.exitCode == 1 && result.stderr.contains("symbolic link"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: outside).isEmpty)
        #expect(FileManager.default.contents(atPath: tree.root + "/pulse.sqlite") == database)
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: tree.root + "/Splits") == outside)
    }

    @Test("files whose names are not UTF-8 are named in export's warnings, and refuse an import that would leave them behind; nothing is lost")
    func namesThatAreNotUTF8() throws {
        let dir = TemporaryDirectory()
        try StoreFixtures.demoStore(dir.file("s"), days: 1)
        try CLI.shell("\"$PA\" export --store s -o a.json.gz -q && printf x > \"s/Splits/$(printf '\\377\\376').json\" && mkdir \"s/Workouts/$(printf '\\376')\" "
                      + "&& printf y > \"s/Workouts/$(printf '\\376')/inside\"", in: dir.path)
        let exported = try CLI.run(["export", "--store", dir.file("s"), "-o", dir.file("b.json.gz")])
        #expect(exported.exitCode == 0, "\(exported.stderr)")
        for shown in [#"Splits/\xFF\xFE.json has a name that is not UTF-8"#, #"Workouts/\xFE has a name that is not UTF-8"#] {
            #expect(exported.stderr.contains("warning: documents: \(shown) (not archived, left in place)"), "\(exported.stderr)")
        }
        let database = FileManager.default.contents(atPath: dir.file("s/pulse.sqlite"))
        for mode in ["--replace", "--merge"] {
            let result = try CLI.run(["import", dir.file("a.json.gz"), "--store", dir.file("s"), mode])
            #expect(result.exitCode == 1 && result.stderr.contains(#"holds \#(dir.file("s"))/Splits/\xFF\xFE.json, whose name is not UTF-8"#), "\(mode): \(result.stderr)")
            #expect(FileManager.default.contents(atPath: dir.file("s/pulse.sqlite")) == database)
        }
        // Both files are where they were, with their bytes, and no safety backup was made.
        let left = try CLI.shell("cat \"s/Splits/$(printf '\\377\\376').json\" \"s/Workouts/$(printf '\\376')/inside\"; ls s", in: dir.path)
        #expect(left.stdout.hasPrefix("xy") && !left.stdout.contains("backups"), "\(left.stdout)")
    }

    @Test("a document whose JSON, as the writer escapes it, would pass the whole-value limit travels as a file, byte for byte, instead of failing the export")
    func documentThatOutgrowsItsFile() throws {
        let dir = TemporaryDirectory()
        try StoreFixtures.demoStore(dir.file("s"), days: 1)
        let split = try #require(try FileManager.default.contentsOfDirectory(atPath: dir.file("s/Splits")).sorted().first)
        // 3 000 slashes: 3 KB in the file, 6 KB once written (`\/`), over a 4 KiB limit.
        let original = try #require(FileManager.default.contents(atPath: dir.file("s/Splits/" + split)))
        var object = try #require(try JSONNode.parse(Array(original)).objectValue)
        object["name"] = .string(String(repeating: "/", count: 3_000))
        try Data(DocumentCoder.encode(.object(object))).write(to: URL(fileURLWithPath: dir.file("s/Splits/" + split)))
        let limit = ["--max-object-size", "4096"]
        let exported = try CLI.run(["export", "--store", dir.file("s"), "-o", dir.file("a.json.gz"), "-q"] + limit, environment: PlainExportTests.epoch)
        #expect(exported.exitCode == 0, "\(exported.stderr)")
        let text = try CLI.shell("gzip -dc a.json.gz", in: dir.path).stdout
        #expect(text.contains(#""path":"Splits\/\#(split)""#) && text.contains(#""documentFiles":[{"base64":"#), "\(text.suffix(400))")
        try CLI.shell("\"$PA\" import a.json.gz --store t -q --no-backfill && cmp s/Splits/\(split) t/Splits/\(split)", in: dir.path)
        // verify's own export of the restored store keeps to the limit it was given too.
        let verified = try CLI.run(["verify", dir.file("a.json.gz"), "--store", dir.file("s"), "-q"] + limit)
        #expect(verified.exitCode == 0, "\(verified.stdout)\(verified.stderr)")
        let again = try CLI.run(["export", "--store", dir.file("t"), "-o", dir.file("b.json.gz"), "-q"] + limit, environment: PlainExportTests.epoch)
        #expect(again.exitCode == 0 && FileManager.default.contents(atPath: dir.file("a.json.gz")) == FileManager.default.contents(atPath: dir.file("b.json.gz")))
    }

    @Test("demo stores hold a realistic tree that survives a round trip")
    func demoTree() throws {
        let dir = TemporaryDirectory()
        #expect(try CLI.run(["demo", "--store", dir.file("a"), "--days", "40", "--end", "2026-03-15"]).exitCode == 0)
        let tree = try DocumentTree(scanning: dir.file("a"))
        let states = try tree.documents.map { try tree.classify($0).state.label }
        #expect(states.filter { $0 == "current" }.count >= 15 && states.filter { $0 == "stub" }.count == 2)
        let stubs = try tree.documents.filter(\.isStub).map { try tree.classify($0).node! }
        #expect(stubs.contains { $0["kind"] == .string("seed") } && stubs.contains { $0["name"] != nil && $0["deletedAt"] != nil })
        #expect(try CLI.run(["export", "--store", dir.file("a"), "-o", dir.file("a.json.gz")]).exitCode == 0)
        #expect(try CLI.run(["import", dir.file("a.json.gz"), "--store", dir.file("b"), "--no-backfill"]).exitCode == 0)
        #expect(try TreeFixture(existing: dir.file("a")).files() == TreeFixture(existing: dir.file("b")).files())
    }
}

extension TreeFixture {
    /// A fixture over an existing store, without creating anything.
    init(existing root: String) throws { self.root = root }
}

@Suite("A document swap interrupted by a crash")
struct DocumentSwapRecoveryTests {
    typealias D = DocumentFixtures

    /// The state a kill leaves after the commit: the pending row, the staged tree, and the swap
    /// done up to `movedFolders`.
    private func interruptedSwap(in dir: TemporaryDirectory, movedFolders: [String]) throws -> (store: TreeFixture, newTree: [String: Data]) {
        let store = try TreeFixture(dir.file("s"))
        try store.write("Splits/\(D.splitID).json", node: try D.node(D.split))
        try store.write("Stubs/Splits/01JP00000000000000000000AE.json", node: .object(["id": .string("01JP00000000000000000000AE"), "deletedAt": .string("2025-03-01T00:00:00Z")]))
        let staged = try TreeFixture(existing: store.root + "/.staging-4242/tree")
        try staged.write("Workouts/2025/03/\(D.workoutID).json", node: try D.node(D.workout))
        for folder in DocumentTree.folders { try FileManager.default.createDirectory(atPath: staged.root + "/" + folder, withIntermediateDirectories: true) }
        let newTree = staged.files()
        for folder in movedFolders {
            try FileManager.default.createDirectory(atPath: store.root + "/.staging-4242/old", withIntermediateDirectories: true)
            if FileManager.default.fileExists(atPath: store.root + "/" + folder) {
                try FileManager.default.moveItem(atPath: store.root + "/" + folder, toPath: store.root + "/.staging-4242/old/" + folder)
            }
            try FileManager.default.moveItem(atPath: staged.root + "/" + folder, toPath: store.root + "/" + folder)
        }
        let database = try SQLiteDatabase(path: store.root + "/pulse.sqlite", create: false)
        try database.prepare(#"INSERT INTO "documentSwaps" ("staging") VALUES (?)"#).run([.string(".staging-4242")])
        return (store, newTree)
    }

    @Test("the next command finishes a swap that was committed but not done, or half done", arguments: [[], ["Splits"], ["Splits", "Stubs"]])
    func recovery(moved: [String]) throws {
        let dir = TemporaryDirectory()
        let (store, newTree) = try interruptedSwap(in: dir, movedFolders: moved)
        let result = try CLI.run(["export", "--store", store.root, "-o", dir.file("x.json.gz")])
        #expect(result.exitCode == 0, "\(result.stderr)")
        #expect(store.files() == newTree)
        #expect(!FileManager.default.fileExists(atPath: store.root + "/.staging-4242"))
        let database = try SQLiteDatabase(path: store.root + "/pulse.sqlite", create: false)
        #expect(try database.integer(#"SELECT count(*) FROM "documentSwaps""#) == 0)
        let summary = try ArchiveReader(path: dir.file("x.json.gz")).inspect()
        #expect(summary.documentCounts == ["workouts": 1])
    }

    @Test("a swap whose staging directory, tree, old folder, a staged folder or anything in one is a link, or whose place in old is taken, is refused and nothing moves; one whose staging is gone is cleared",
          arguments: ["", "/tree", "/old", "/tree/Workouts", "/tree/Splits/01JP00000000000000000000AF.json", "/old/Splits", "gone"])
    func linksInASwap(replaced: String) throws {
        let dir = TemporaryDirectory()
        let (store, _) = try interruptedSwap(in: dir, movedFolders: [])
        let staging = store.root + "/.staging-4242"
        // Somewhere else, holding what a link would bring in or take the store's folders to.
        let elsewhere = try TreeFixture(dir.file("elsewhere"))
        try elsewhere.write("tree/Workouts/mine.txt", Array("mine".utf8))
        try elsewhere.write("Workouts/mine.txt", Array("mine".utf8))
        let before = (store: store.files(), elsewhere: elsewhere.files())
        if replaced == "gone" {
            try FileManager.default.removeItem(atPath: staging)
        } else {
            try? FileManager.default.removeItem(atPath: staging + replaced)
            try FileManager.default.createDirectory(atPath: ((staging + replaced) as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try FileManager.default.createSymbolicLink(atPath: staging + replaced, withDestinationPath: replaced.hasSuffix("Workouts") ? elsewhere.root + "/Workouts" : elsewhere.root)
        }
        let result = try CLI.run(["export", "--store", store.root, "-o", dir.file("x.json.gz")])
        #expect(elsewhere.files() == before.elsewhere, "\(replaced)")
        let database = try SQLiteDatabase(path: store.root + "/pulse.sqlite", create: false)
        if replaced == "gone" {
            #expect(result.exitCode == 0 && store.files() == before.store, "\(result.stderr)")
            #expect(try database.integer(#"SELECT count(*) FROM "documentSwaps""#) == 0)
        } else {
            #expect(result.exitCode == 1 && result.stderr.contains("; it is left as it is (was the store edited by another program?)"), "\(replaced): \(result.stderr)")
            #expect(store.files() == before.store, "\(replaced)")
            #expect(try database.integer(#"SELECT count(*) FROM "documentSwaps""#) == 1)
        }
    }
}
