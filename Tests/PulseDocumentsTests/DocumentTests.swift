import Foundation
import Testing
@testable import PulseArchive
@testable import PulseDocuments
import PulseDemo
@testable import PulseTestSupport

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
        var random = SeededRandom.fromEnvironment("\(#function)")
        let made = generator.next(at: 1_547_213_173_513, using: &random)
        #expect(made.description.hasPrefix("01D0YHEWR9") && made.timestamp == 1_547_213_173_513)
    }

    @Test("ULIDs made within one millisecond are monotonic: the random part plus one")
    func monotonic() {
        var generator = ULIDGenerator()
        var random = SeededRandom.fromEnvironment("\(#function)")
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
        guard case .object(var members) = split else {
            Issue.record("the split document is not a JSON object: \(split.compactText)")
            return
        }
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
