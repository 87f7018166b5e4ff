import Foundation

// The typed view of the documents (SCHEMA.md). Raw enum fields stay raw (an unknown status or
// load type is kept, never a failure); unknown keys live on in the `JSONNode` a document is
// read from, which is what the tool writes back.

public enum DocumentSchema {
    public static let currentSplitVersion = 3
    public static let currentWorkoutVersion = 5
}

/// `WorkoutStatus` raw values.
public enum WorkoutStatus: String, Sendable, CaseIterable {
    case notStarted, inProgress, completed, skipped
}

/// `LoadType` raw values.
public enum LoadType: Int, Sendable, CaseIterable {
    case none = 0, weight = 1, duration = 2
}

/// `WorkoutActivityType` raw values.
public enum WorkoutActivityType: Int, Sendable, CaseIterable {
    case traditionalStrength = 0, functionalStrength, hiit, coreTraining, cardio, cycling, warmUp, stretching, mindAndBody
}

/// `MetricSource` raw values.
public enum MetricSource: String, Sendable, CaseIterable {
    case watch, phoneEstimate
}

public struct MachineSetting: Codable, Sendable, Equatable {
    public var name: String
    public var value: String
}

public struct ExerciseDocument: Codable, Sendable, Equatable {
    public var id: String
    public var name: String
    public var order: Int
    public var sets: Int
    public var reps: Int
    /// Int before schema 3; integers decode natively.
    public var weight: Double
    public var loadType: Int
    public var durationSeconds: Int
    public var machineSettings: [MachineSetting]?
    public var libraryName: String?
}

public struct SplitDocument: Codable, Sendable, Equatable {
    public var schemaVersion: Int
    public var id: String
    public var name: String
    public var color: String
    public var systemImage: String
    public var order: Int
    public var createdAt: Date
    public var updatedAt: Date
    public var exercises: [ExerciseDocument]
    public var activityType: Int?
    public var restSeconds: Int?
    public var autoAdvance: Bool?
    public var targetHeartRate: Int?
}

public struct SetEntry: Codable, Sendable, Equatable {
    public var reps: Int?
    public var weight: Double?
    public var seconds: Int?
    public var completedAt: Date
}

public struct WorkoutMetrics: Codable, Sendable, Equatable {
    public var activeEnergyKcal: Double?
    public var avgHeartRate: Double?
    public var maxHeartRate: Double?
    public var minHeartRate: Double?
    public var totalVolume: Double?
    public var hrZoneSeconds: [Double]?
    public var healthKitWorkoutUUID: String?
    public var source: String
    public var recordedAt: Date
}

public struct WorkoutLogDocument: Codable, Sendable, Equatable {
    public var id: String
    public var exerciseName: String
    public var order: Int
    public var sets: Int
    public var reps: Int
    /// Int before schema 4; integers decode natively.
    public var weight: Double
    public var loadType: Int
    public var durationSeconds: Int
    public var currentStateIndex: Int
    public var status: String
    public var notes: String?
    public var date: Date
    public var machineSettings: [MachineSetting]?
    public var startedAt: Date?
    public var completedAt: Date?
    public var setEntries: [SetEntry]?
    public var updatedAt: Date?
    public var libraryName: String?
}

public struct WorkoutDocument: Codable, Sendable, Equatable {
    public var schemaVersion: Int
    public var id: String
    public var splitID: String?
    public var splitName: String?
    public var start: Date
    public var end: Date?
    public var status: String
    public var createdAt: Date
    public var updatedAt: Date
    public var logs: [WorkoutLogDocument]
    public var metrics: WorkoutMetrics?
    public var deletedLogIDs: [String: Date]?
    public var restSeconds: Int?
    public var autoAdvance: Bool?
    public var targetHeartRate: Int?
}
