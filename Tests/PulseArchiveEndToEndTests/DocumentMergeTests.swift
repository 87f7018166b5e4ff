import Foundation
import Testing
@testable import PulseArchive
@testable import PulseDocuments
@testable import PulseStore
@testable import PulseTestSupport
@testable import PulseStoreTestSupport

@Suite("Merging documents (documents.md scenarios)")
struct DocumentMergeTests {
    typealias D = DocumentFixtures
    static let now = ArchiveDate.parse("2025-04-10T12:00:00Z")!
    let merger = DocumentMerger(now: now)

    /// A version-5 workout with these logs and tombstones.
    func workout(logs: [WorkoutLogDocument], deleted: [String: String]? = nil, updatedAt: String = "2025-03-03T18:40:00Z") throws -> JSONNode {
        var document = D.workout
        document.logs = logs
        document.deletedLogIDs = deleted?.mapValues(D.date)
        document.updatedAt = D.date(updatedAt)
        document.status = DocumentMerger.status(of: try logs.map { try D.node($0) }).rawValue
        return try D.node(document)
    }

    func logIDs(_ node: JSONNode) -> [String] { node["logs"]?.arrayValue?.compactMap { $0["id"]?.stringValue } ?? [] }

    @Test("logs present on one side only are kept, ordered by order then id")
    func oneSidedLogs() throws {
        let a = try workout(logs: [D.log("L1AAAAAAAAAAAAAAAAAAAAAAAA", order: 0), D.log("L2AAAAAAAAAAAAAAAAAAAAAAAA", order: 1)])
        let b = try workout(logs: [D.log("L1AAAAAAAAAAAAAAAAAAAAAAAA", order: 0), D.log("L3AAAAAAAAAAAAAAAAAAAAAAAA", order: 2)])
        #expect(logIDs(merger.mergeWorkouts(a, b)) == ["L1AAAAAAAAAAAAAAAAAAAAAAAA", "L2AAAAAAAAAAAAAAAAAAAAAAAA", "L3AAAAAAAAAAAAAAAAAAAAAAAA"])
    }

    @Test("a log deleted on one side stays deleted; tombstones older than 30 days are pruned, 29-day-old ones kept")
    func deletedLogs() throws {
        let a = try workout(logs: [D.log("L1AAAAAAAAAAAAAAAAAAAAAAAA", order: 0)],
                            deleted: ["L3AAAAAAAAAAAAAAAAAAAAAAAA": "2025-04-01T00:00:00Z", "OLDAAAAAAAAAAAAAAAAAAAAAAA": "2025-03-10T11:59:59Z",
                                      "KEPTAAAAAAAAAAAAAAAAAAAAAA": "2025-03-12T12:00:00Z"])
        let b = try workout(logs: [D.log("L1AAAAAAAAAAAAAAAAAAAAAAAA", order: 0), D.log("L3AAAAAAAAAAAAAAAAAAAAAAAA", order: 1)],
                            deleted: ["L3AAAAAAAAAAAAAAAAAAAAAAAA": "2025-03-20T00:00:00Z"])
        let merged = merger.mergeWorkouts(a, b)
        #expect(logIDs(merged) == ["L1AAAAAAAAAAAAAAAAAAAAAAAA"])
        let tombstones = try #require(merged["deletedLogIDs"]?.objectValue)
        #expect(Set(tombstones.keys) == ["L3AAAAAAAAAAAAAAAAAAAAAAAA", "KEPTAAAAAAAAAAAAAAAAAAAAAA"])
        #expect(tombstones["L3AAAAAAAAAAAAAAAAAAAAAAAA"] == .string("2025-04-01T00:00:00Z"), "the later date wins")
    }

    @Test("the later log wins (a missing updatedAt is older); status is derived from the merged logs")
    func laterLogWins() throws {
        let old = D.log("L1AAAAAAAAAAAAAAAAAAAAAAAA", order: 0, status: "inProgress", updatedAt: nil)
        let new = D.log("L1AAAAAAAAAAAAAAAAAAAAAAAA", order: 0, status: "completed", updatedAt: "2025-03-03T18:10:00Z")
        let a = try workout(logs: [old, D.log("L2AAAAAAAAAAAAAAAAAAAAAAAA", order: 1, status: "skipped")], updatedAt: "2025-03-04T00:00:00Z")
        let b = try workout(logs: [new], updatedAt: "2025-03-03T00:00:00Z")
        let merged = merger.mergeWorkouts(a, b)
        #expect(merged["logs"]?.arrayValue?.first?["status"] == .string("completed"))
        #expect(merged["status"] == .string("completed"))
        #expect(merged["updatedAt"] == a["updatedAt"], "workout-level fields come from the later document")
    }

    @Test("merge(A, B) == merge(B, A), and merge(A, A) == A byte for byte")
    func algebra() throws {
        let a = try workout(logs: [D.log("L1AAAAAAAAAAAAAAAAAAAAAAAA", order: 0, updatedAt: "2025-03-03T18:10:00Z"),
                                   D.log("L2AAAAAAAAAAAAAAAAAAAAAAAA", order: 1)],
                            deleted: ["L9AAAAAAAAAAAAAAAAAAAAAAAA": "2025-04-01T00:00:00Z"])
        var tied = D.log("L1AAAAAAAAAAAAAAAAAAAAAAAA", order: 0, updatedAt: "2025-03-03T18:10:00Z")
        tied.notes = "same time, other content"
        let b = try workout(logs: [tied, D.log("L3AAAAAAAAAAAAAAAAAAAAAAAA", order: 1)], deleted: ["L2AAAAAAAAAAAAAAAAAAAAAAAA": "2025-04-02T00:00:00Z"])
        #expect(DocumentCoder.encode(merger.mergeWorkouts(a, b)) == DocumentCoder.encode(merger.mergeWorkouts(b, a)))
        #expect(DocumentCoder.encode(merger.mergeWorkouts(a, a)) == DocumentCoder.encode(a))
        let path = try DocumentPath("Workouts/2025/03/\(D.workoutID).json")
        #expect(merger.decide(store: DocumentClassifier.classify(path, node: a), archive: DocumentClassifier.classify(path, node: a)) == .keepStore)
    }

    @Test("splits on both sides: the later one wins whole")
    func splits() throws {
        let path = try DocumentPath("Splits/\(D.splitID).json")
        let older = try D.node(D.split)
        let newer = D.with(older, ["updatedAt": .string("2025-03-09T10:00:00Z"), "name": .string("Renamed")])
        #expect(merger.decide(store: DocumentClassifier.classify(path, node: older), archive: DocumentClassifier.classify(path, node: newer)) == .takeArchive)
        #expect(merger.decide(store: DocumentClassifier.classify(path, node: newer), archive: DocumentClassifier.classify(path, node: older)) == .keepStore)
    }

    @Test("through import --merge: a stub beats a live copy on either side; a newer-version document is never replaced")
    func storeMerge() throws {
        let dir = TemporaryDirectory()
        let newerPath = "Workouts/2025/03/01JP00000000000000000000AD.json"
        let newerBytes = Array(#"{"schemaVersion":6,"id":"01JP00000000000000000000AD","updatedAt":"2025-01-01T00:00:00Z"}"#.utf8)
        let store = try TreeFixture(dir.file("store"))
        try store.write("Splits/\(D.splitID).json", node: try D.node(D.split))
        try store.write("Stubs/Splits/01JP00000000000000000000AE.json", node: .object(["id": .string("01JP00000000000000000000AE"), "deletedAt": .string("2025-03-01T00:00:00Z")]))
        try store.write(newerPath, newerBytes)

        let archive = try TreeFixture(dir.file("archive"))
        try archive.write("Stubs/Splits/\(D.splitID).json", node: D.with(try D.node(D.split), ["deletedAt": .string("2025-03-08T00:00:00Z")]))
        var resurrected = D.split
        resurrected.id = "01JP00000000000000000000AE"
        try archive.write("Splits/01JP00000000000000000000AE.json", node: try D.node(resurrected))
        var newerWorkout = D.workout
        newerWorkout.id = "01JP00000000000000000000AD"
        newerWorkout.updatedAt = D.date("2025-12-01T00:00:00Z")
        try archive.write(newerPath, node: try D.node(newerWorkout))
        try archive.write("Workouts/2025/03/\(D.workoutID).json", node: try D.node(D.workout))
        #expect(try CLI.run(["export", "--store", archive.root, "-o", dir.file("a.json.gz")]).exitCode == 0)

        let result = try CLI.run(["import", dir.file("a.json.gz"), "--store", store.root, "--merge", "--no-backfill"])
        #expect(result.exitCode == 0, "\(result.stderr)")
        let files = store.files()
        #expect(files["Splits/\(D.splitID).json"] == nil, "the archive's stub deletes the store's live copy")
        #expect(files["Stubs/Splits/\(D.splitID).json"] != nil)
        #expect(files["Splits/01JP00000000000000000000AE.json"] == nil, "the store's stub keeps the archive's copy out")
        #expect(files[newerPath] == Data(newerBytes), "the quarantined document was replaced")
        #expect(files["Workouts/2025/03/\(D.workoutID).json"] == Data(DocumentCoder.encode(try D.node(D.workout))), "a one-sided document is added")
    }
}
