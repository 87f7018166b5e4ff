import Foundation
import Testing
@testable import PulseArchive
@testable import PulseDocuments
@testable import PulseStore
import PulseDemo

/// Documents for the tests, built as the app would write them.
enum DocumentFixtures {
    static let splitID = "01JN2Z3Y4X5W6V7T8S9R0Q1P2N"
    static let workoutID = "01JN2Z3Y4X5W6V7T8S9R0Q1P3A"

    static func date(_ text: String) -> Date { Date(timeIntervalSince1970: Double(ArchiveDate.parse(text)!) / 1000) }

    static let split = SplitDocument(
        schemaVersion: 3, id: splitID, name: "Push / Pull", color: "red", systemImage: "figure.strengthtraining.traditional",
        order: 0, createdAt: date("2025-03-01T10:00:00Z"), updatedAt: date("2025-03-02T10:00:00Z"),
        exercises: [
            ExerciseDocument(id: "01JN2Z3Y4X5W6V7T8S9R0Q1P2P", name: "Leg Press", order: 0, sets: 3, reps: 12, weight: 62.5, loadType: 1,
                             durationSeconds: 0, machineSettings: [MachineSetting(name: "Seat Height", value: "4")], libraryName: nil),
            ExerciseDocument(id: "01JN2Z3Y4X5W6V7T8S9R0Q1P2Q", name: "Plank \"hold\"", order: 1, sets: 3, reps: 0, weight: 0, loadType: 2,
                             durationSeconds: 60, machineSettings: [], libraryName: "Plank"),
        ],
        activityType: 0, restSeconds: 90, autoAdvance: nil, targetHeartRate: nil)

    static func log(_ id: String, order: Int, status: String = "completed", updatedAt: String? = "2025-03-03T18:10:00Z") -> WorkoutLogDocument {
        WorkoutLogDocument(id: id, exerciseName: "Bench Press", order: order, sets: 3, reps: 8, weight: 60, loadType: 1, durationSeconds: 0,
                           currentStateIndex: 6, status: status, notes: nil, date: date("2025-03-03T18:00:00Z"), machineSettings: nil,
                           startedAt: date("2025-03-03T18:00:00Z"), completedAt: date("2025-03-03T18:10:00Z"),
                           setEntries: [SetEntry(reps: 8, weight: 60, seconds: nil, completedAt: date("2025-03-03T18:03:00Z"))],
                           updatedAt: updatedAt.map(date), libraryName: nil)
    }

    static let workout = WorkoutDocument(
        schemaVersion: 5, id: workoutID, splitID: splitID, splitName: "Push / Pull", start: date("2025-03-03T18:00:00Z"),
        end: date("2025-03-03T18:40:00Z"), status: "completed", createdAt: date("2025-03-03T18:00:00Z"),
        updatedAt: date("2025-03-03T18:40:00Z"), logs: [log("01JN2Z3Y4X5W6V7T8S9R0Q1P3B", order: 0)],
        metrics: WorkoutMetrics(activeEnergyKcal: 312.5, avgHeartRate: 121, maxHeartRate: 164, minHeartRate: nil, totalVolume: 1440,
                                hrZoneSeconds: [60, 600, 900, 300, 0], healthKitWorkoutUUID: nil, source: "watch",
                                recordedAt: date("2025-03-03T18:41:00Z")),
        deletedLogIDs: ["01JN2Z3Y4X5W6V7T8S9R0Q1P3C": date("2025-03-03T18:20:00Z")], restSeconds: nil, autoAdvance: true, targetHeartRate: nil)

    /// What the app's DocumentCoder writes: Foundation's encoder, pretty, sorted keys, ISO dates.
    static func appBytes<T: Encodable>(_ value: T) throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        encoder.dateEncodingStrategy = .iso8601
        return [UInt8](try encoder.encode(value))
    }

    static func node<T: Encodable>(_ value: T) throws -> JSONNode { try JSONNode.parse(appBytes(value)) }

    /// A document node with some fields replaced.
    static func with(_ node: JSONNode, _ changes: [String: JSONNode]) -> JSONNode {
        guard case .object(var members) = node else { return node }
        for (key, value) in changes { members[ByteKey(key)] = value }
        return .object(members)
    }
}

@Suite("Workout documents: ULIDs, the canonical encoder, classification")
struct DocumentTests {
    @Test("ULID vectors of documents.md")
    func ulidVectors() throws {
        let ulid = try #require(ULID("01D0YHEWR9WMPY4NNTPK1MR1TQ"))
        #expect(ulid.bytes == [0x01, 0x68, 0x3D, 0x17, 0x73, 0x09, 0xE5, 0x2D, 0xE2, 0x56, 0xBA, 0xB4, 0xC3, 0x4C, 0x07, 0x57])
        #expect(ULID(bytes: ulid.bytes).description == "01D0YHEWR9WMPY4NNTPK1MR1TQ")
        #expect(ULID("01d0yhewr9wmpy4nntpk1mr1tq")?.description == "01D0YHEWR9WMPY4NNTPK1MR1TQ")
        #expect(ULID("80000000000000000000000000") == nil)
        #expect(ULID("7ZZZZZZZZZZZZZZZZZZZZZZZZZ")?.bytes == [UInt8](repeating: 0xFF, count: 16))
        #expect(ULID("01D0YHEWR9WMPY4NNTPK1MR1T") == nil && ULID("01D0YHEWR9WMPY4NNTPK1MR1TU") == nil)
        var generator = ULIDGenerator()
        var random = SystemRandomNumberGenerator()
        let made = generator.next(at: 1_547_213_173_513, using: &random)
        #expect(made.description.hasPrefix("01D0YHEWR9") && made.timestamp == 1_547_213_173_513)
    }

    @Test("ULIDs made within one millisecond are monotonic: the random part plus one")
    func monotonic() {
        var generator = ULIDGenerator()
        var random = SystemRandomNumberGenerator()
        let a = generator.next(at: 1_000, using: &random), b = generator.next(at: 1_000, using: &random)
        let c = generator.next(at: 999, using: &random), d = generator.next(at: 1_001, using: &random)
        #expect(a < b && b < c && c < d)
        var expected = a.bytes
        expected[15] &+= 1
        if expected[15] == 0 { expected[14] &+= 1 }
        #expect(b.bytes == expected)
    }

    @Test("the canonical encoder writes byte for byte what the app's encoder writes, for every document type")
    func canonicalBytes() throws {
        /// The app's minimal stub, written when the deleted record was unreadable: the tool only
        /// reads stubs, so the type is the test's, as the app's encoder sees it.
        struct MinimalStub: Encodable { var id: String; var deletedAt: Date; var kind: String? }
        let minimalStub = MinimalStub(id: DocumentFixtures.splitID, deletedAt: DocumentFixtures.date("2025-03-01T10:00:00Z"), kind: "seed")
        let fullStub = DocumentFixtures.with(try DocumentFixtures.node(DocumentFixtures.workout), ["deletedAt": .string("2025-03-05T09:00:00Z")])
        // The app injects deletedAt at the JSON level: encode the record's object with it.
        let fullStubBytes = try DocumentFixtures.appBytes(AnyEncodableNode(fullStub))
        let cases: [(String, [UInt8])] = [
            ("split", try DocumentFixtures.appBytes(DocumentFixtures.split)),
            ("workout", try DocumentFixtures.appBytes(DocumentFixtures.workout)),
            ("minimal stub", try DocumentFixtures.appBytes(minimalStub)),
            ("full stub", fullStubBytes),
            ("set entry", try DocumentFixtures.appBytes(DocumentFixtures.workout.logs[0].setEntries![0])),
            ("metrics", try DocumentFixtures.appBytes(DocumentFixtures.workout.metrics!)),
        ]
        for (name, appBytes) in cases {
            #expect(DocumentCoder.encode(try JSONNode.parse(appBytes)) == appBytes, "\(name)")
        }
        let expected = """
            {
              "deletedAt" : "2025-03-01T10:00:00Z",
              "empty" : [

              ],
              "id" : "01JN2Z3Y4X5W6V7T8S9R0Q1P2N",
              "nested" : {
                "path" : "a\\/b",
                "z" : {

                }
              }
            }
            """
        let node: JSONNode = .object(["id": .string(DocumentFixtures.splitID), "deletedAt": .string("2025-03-01T10:00:00Z"),
                                      "empty": .array([]), "nested": .object(["z": .object([:]), "path": .string("a/b")])])
        #expect(String(decoding: DocumentCoder.encode(node), as: UTF8.self) == expected)
    }

    @Test("classification: current, older, newer (quarantined), unreadable, stub")
    func classification() throws {
        let splitPath = try DocumentPath("Splits/\(DocumentFixtures.splitID).json")
        let workoutPath = try DocumentPath("Workouts/2025/03/\(DocumentFixtures.workoutID).json")
        let split = try DocumentFixtures.node(DocumentFixtures.split)
        #expect(DocumentClassifier.classify(splitPath, node: split).state == .current)
        // Schema 1: integer weights and the since-removed reminder fields.
        var old = DocumentFixtures.with(split, ["schemaVersion": .number("1")])
        if case .array(var exercises) = old["exercises"]!, case .object(var first) = exercises[0] {
            first["weight"] = .number("60"); first["reminderEnabled"] = .bool(true); first["category"] = .string("push")
            exercises[0] = .object(first)
            old = DocumentFixtures.with(old, ["exercises": .array(exercises)])
        }
        #expect(DocumentClassifier.classify(splitPath, node: old).state == .older(version: 1))
        #expect(DocumentClassifier.classify(splitPath, node: DocumentFixtures.with(split, ["schemaVersion": .number("4")])).state == .newer(version: 4))
        #expect(DocumentClassifier.classify(workoutPath, node: DocumentFixtures.with(try DocumentFixtures.node(DocumentFixtures.workout), ["schemaVersion": .number("9")])).state.isQuarantined)
        guard case .object(var members) = split else { return }
        members["schemaVersion"] = nil
        #expect(DocumentClassifier.classify(splitPath, node: .object(members)).state.label == "unreadable")
        #expect(DocumentClassifier.classify(splitPath, node: DocumentFixtures.with(split, ["name": .number("7")])).state.label == "unreadable")
        #expect(DocumentClassifier.classify(splitPath, bytes: Array("not json".utf8)).state.label == "unreadable")
        #expect(DocumentClassifier.classify(workoutPath, node: try DocumentFixtures.node(DocumentFixtures.workout)).state == .current)
        let stub = try DocumentPath("Stubs/Splits/\(DocumentFixtures.splitID).json")
        #expect(DocumentClassifier.classify(stub, bytes: Array("{}".utf8)).state == .stub)
    }

    @Test("a tree that cannot be walked is the document store's error, naming the path")
    func unwalkableTree() throws {
        let dir = TemporaryDirectory()
        let notADirectory = dir.write("store", "a file where a store's tree should be")
        #expect {
            _ = try DocumentTree(scanning: notADirectory)
        } throws: { error in
            (error as? DocumentsError).map { $0.kind == .io && $0.message.contains("cannot read \(notADirectory)/Splits") } ?? false
        }
    }

    @Test("document paths: the layout is enforced and nothing can escape the tree")
    func paths() throws {
        for good in ["Splits/\(DocumentFixtures.splitID).json", "Workouts/2025/03/\(DocumentFixtures.workoutID).json",
                     "Stubs/Splits/\(DocumentFixtures.splitID).json", "Stubs/Workouts/2025/03/\(DocumentFixtures.workoutID).json"] {
            #expect(throws: Never.self) { try DocumentPath(good) }
        }
        for bad in ["../x.json", "/etc/passwd", "Splits/../../etc/\(DocumentFixtures.splitID).json", "Splits/x.json",
                    "Other/\(DocumentFixtures.splitID).json", "Splits/\(DocumentFixtures.splitID) 2.json", "Workouts/25/3/\(DocumentFixtures.workoutID).json",
                    "Splits//\(DocumentFixtures.splitID).json", "Splits\\\(DocumentFixtures.splitID).json", "Stubs/Stubs/Splits/\(DocumentFixtures.splitID).json", ""] {
            #expect(throws: ArchiveError.self, "\(bad)") { try DocumentPath(bad) }
        }
    }
}

/// Lets Foundation's encoder write a `JSONNode` the way the app writes an injected record.
struct AnyEncodableNode: Encodable {
    let node: JSONNode
    init(_ node: JSONNode) { self.node = node }

    private struct Key: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    func encode(to encoder: Encoder) throws {
        switch node {
        case .object(let members):
            var container = encoder.container(keyedBy: Key.self)
            for (key, value) in members { try container.encode(AnyEncodableNode(value), forKey: Key(stringValue: key.text)) }
        case .array(let elements):
            var container = encoder.unkeyedContainer()
            for element in elements { try container.encode(AnyEncodableNode(element)) }
        case .string(let s):
            var container = encoder.singleValueContainer(); try container.encode(s)
        case .number(let literal):
            var container = encoder.singleValueContainer()
            if let integer = Int(literal) { try container.encode(integer) } else { try container.encode(Double(literal)!) }
        case .bool(let b):
            var container = encoder.singleValueContainer(); try container.encode(b)
        case .null:
            var container = encoder.singleValueContainer(); try container.encodeNil()
        }
    }
}
