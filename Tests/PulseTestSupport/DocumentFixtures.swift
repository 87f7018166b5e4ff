import Foundation
@testable import PulseArchive
@testable import PulseDocuments

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
