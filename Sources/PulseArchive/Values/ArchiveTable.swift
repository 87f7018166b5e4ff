/// One table of the archive: its JSON key, unique key, the entity name used in the
/// duplicate-key message, and its fields.
///
/// A single description drives the JSON reader and writer, the SQLite schema, `inspect` and
/// the replace wipe, so a table added here is carried everywhere or nowhere.
///
/// A class, not a struct: a table travels with every row through the reader, the worker
/// threads and the writer, and one reference costs one retain where a struct of five arrays
/// and strings cost five.
public final class ArchiveTable: Sendable, Equatable, Hashable, CustomStringConvertible {
    /// The archive key, also the SQL table name (`measurements`, `sleepSessions`, …).
    public let key: String
    /// The field whose value is unique within the table (`id` for most).
    public let uniqueKey: String
    /// The app's entity name for "This file contains duplicate {entity} entries".
    public let entity: String
    /// `false` for tables an archive may omit (`readinessDailies`, `cycleDays`).
    public let isRequired: Bool
    public let fields: [ArchiveField]
    /// Field indices in the order their names sort by UTF-8 bytes: the write order.
    public let sortedFieldIndices: [Int]
    public let uniqueKeyIndex: Int

    init(_ key: String, unique uniqueKey: String = "id", entity: String, required: Bool = true, _ fields: [ArchiveField]) {
        self.key = key
        self.uniqueKey = uniqueKey
        self.entity = entity
        self.isRequired = required
        self.fields = fields
        self.sortedFieldIndices = fields.indices.sorted { utf8Precedes(fields[$0].name, fields[$1].name) }
        guard let unique = fields.firstIndex(where: { $0.name == uniqueKey }) else {
            preconditionFailure("table \(key) has no field \(uniqueKey)")
        }
        self.uniqueKeyIndex = unique
    }

    public var description: String { key }

    public static func == (lhs: ArchiveTable, rhs: ArchiveTable) -> Bool { lhs.key == rhs.key }
    public func hash(into hasher: inout Hasher) { hasher.combine(key) }

    /// The index of the field called `name`, or nil.
    public func fieldIndex(_ name: String) -> Int? {
        fields.firstIndex { $0.name == name }
    }

    /// Every table of the archive in the app's order: the 24 format-1 tables, then the two
    /// optional ones.
    public static let all: [ArchiveTable] = [
        devices, activityDailies, measurements, batterySamples, sleepSessions, sleepStageBlocks,
        rawPackets, derivedUpdates, userProfiles, userGoals, deviceMeasurementConfigs,
        activitySessions, activitySamples, activityBucketSamples, activityGpsPoints, activityEvents,
        activitySensorPollEvents, coachConversations, coachMessages, coachMemories, coachToolCalls,
        coachNotificationRecords, coachSummaries, wearableLogs, readinessDailies, cycleDays,
    ]

    private static let byKey: [String: ArchiveTable] = Dictionary(uniqueKeysWithValues: all.map { ($0.key, $0) })

    /// The table whose archive key is `key`, or nil.
    public static func named(_ key: String) -> ArchiveTable? { byKey[key] }
}

// MARK: - The tables (archive-format.md §4)

private func f(_ name: String, _ type: FieldType) -> ArchiveField { ArchiveField(name, type) }
private func opt(_ name: String, _ type: FieldType) -> ArchiveField { ArchiveField(name, type, optional: true) }
private func ext(_ name: String, _ type: FieldType) -> ArchiveField { ArchiveField(name, type, extension: true) }

extension ArchiveTable {
    public static let devices = ArchiveTable("devices", entity: "device", [
        f("id", .uuid), f("name", .string), opt("advertisedName", .string),
        opt("peripheralIdentifier", .string), opt("bleAddressHint", .string),
        opt("batteryPercent", .int), f("stateRaw", .string), opt("lastConnectedAt", .date),
        opt("lastDisconnectedAt", .date), opt("lastSyncAt", .date), opt("lastFullSyncAt", .date),
        opt("firmwareVersion", .string), opt("wearableModelID", .string), f("deviceTypeRaw", .string),
        f("capabilitiesRaw", .string), f("createdAt", .date), f("updatedAt", .date),
    ])

    public static let activityDailies = ArchiveTable("activityDailies", entity: "daily activity", [
        f("id", .uuid), f("date", .date), f("steps", .int), f("calories", .double),
        f("distanceMeters", .double), f("activeMinutes", .int), f("source", .string),
        opt("syncedAt", .date), f("createdAt", .date), f("updatedAt", .date),
        ext("estimatedActiveCalories", .double),
    ])

    public static let measurements = ArchiveTable("measurements", entity: "measurement", [
        f("id", .uuid), f("kindRaw", .string), f("value", .double), f("unit", .string),
        f("timestamp", .date), f("sourceRaw", .string), f("confidenceRaw", .string),
        opt("activitySessionId", .uuid), opt("rawPacketId", .uuid), f("createdAt", .date),
    ])

    public static let batterySamples = ArchiveTable("batterySamples", entity: "battery sample", [
        f("id", .uuid), f("percent", .int), f("timestamp", .date), f("createdAt", .date),
    ])

    public static let sleepSessions = ArchiveTable("sleepSessions", entity: "sleep session", [
        f("id", .uuid), f("date", .date), f("startAt", .date), f("endAt", .date),
        f("totalMinutes", .int), opt("score", .int), opt("syncedAt", .date),
        f("createdAt", .date), f("updatedAt", .date), ext("sourceRaw", .string),
    ])

    public static let sleepStageBlocks = ArchiveTable("sleepStageBlocks", entity: "sleep stage", [
        f("id", .uuid), f("sessionId", .uuid), f("startAt", .date), f("startMinute", .int),
        f("durationMinutes", .int), f("stageRaw", .string),
    ])

    public static let readinessDailies = ArchiveTable("readinessDailies", entity: "readiness score", required: false, [
        f("id", .uuid), f("date", .date), f("score", .int), f("bandRaw", .string),
        f("availablePoints", .double), f("contributorsJSON", .string), f("algorithmVersion", .int),
        f("computedAt", .date), f("createdAt", .date), f("updatedAt", .date),
    ])

    public static let rawPackets = ArchiveTable("rawPackets", entity: "raw packet", [
        f("id", .uuid), f("timestamp", .date), f("directionRaw", .string), f("commandId", .int),
        f("hexPayload", .string), opt("decodedKind", .string), opt("decodedJSON", .string),
        f("confidenceRaw", .string), f("createdAt", .date),
    ])

    public static let derivedUpdates = ArchiveTable("derivedUpdates", entity: "derived update", [
        f("id", .uuid), f("timestamp", .date), f("kind", .string), f("entityType", .string),
        f("entityId", .string), opt("payloadJSON", .string),
    ])

    public static let userProfiles = ArchiveTable("userProfiles", entity: "profile", [
        f("id", .uuid), opt("name", .string), opt("age", .int), opt("sex", .string),
        opt("heightCm", .double), opt("weightKg", .double), f("unitsRaw", .string),
        f("onboardingCompleted", .bool), f("baselineCompleted", .bool), f("athleteMode", .bool),
        opt("altitudeMeters", .double), opt("usesBetaBlockers", .bool),
        opt("hasKnownLungCondition", .bool), f("preferredGlucoseUnitRaw", .string),
        f("hrZoneModeRaw", .string), opt("hrRestingBaseline", .double),
        opt("hrRestingBaselineUpdatedAt", .date), opt("hrCustomLowUpper", .double),
        opt("hrCustomAthleticUpper", .double), opt("hrCustomElevatedStart", .double),
        opt("hrCustomHighStart", .double), f("createdAt", .date), f("updatedAt", .date),
    ])

    public static let userGoals = ArchiveTable("userGoals", entity: "goal", [
        f("id", .uuid), f("steps", .int), f("sleepMinutes", .int), f("activeMinutes", .int),
        f("workoutsPerWeek", .int), f("distanceMeters", .double), f("calories", .int),
        f("updatedAt", .date), ext("intakeCalories", .double), ext("intakeProteinG", .double),
        ext("intakeCarbsG", .double), ext("intakeFatG", .double), ext("nutritionEnabled", .bool),
    ])

    public static let deviceMeasurementConfigs = ArchiveTable("deviceMeasurementConfigs", unique: "deviceId", entity: "measurement config", [
        f("deviceId", .uuid), f("hrIntervalMinutes", .int), f("hrEnabled", .bool),
        f("spo2Enabled", .bool), f("stressEnabled", .bool), f("hrvEnabled", .bool),
        f("temperatureEnabled", .bool), f("updatedAt", .date),
    ])

    public static let activitySessions = ArchiveTable("activitySessions", entity: "workout", [
        f("id", .uuid), f("type", .string), f("statusRaw", .string), f("startedAt", .date),
        opt("endedAt", .date), f("totalPauseSeconds", .double), opt("calories", .double),
        opt("distanceMeters", .double), opt("avgHeartRate", .double), opt("minHeartRate", .double),
        opt("maxHeartRate", .double), opt("avgSpO2", .double), opt("latestSpO2", .double),
        opt("notes", .string), f("useGps", .bool), opt("perceivedEffort", .string),
        f("gpsPointCount", .int), f("rejectedGpsPointCount", .int), f("hrPollCount", .int),
        f("hrPollFailureCount", .int), f("spo2PollCount", .int), f("spo2PollFailureCount", .int),
        opt("liveActivityID", .string), opt("lastSensorPollAt", .date), opt("lastGpsPointAt", .date),
        f("vitalsModeRaw", .string), f("createdAt", .date), f("updatedAt", .date),
        ext("stravaActivityId", .string),
    ])

    public static let activitySamples = ArchiveTable("activitySamples", entity: "workout sample", [
        f("id", .uuid), f("sessionId", .uuid), opt("measurementId", .uuid), f("kind", .string),
        f("value", .double), f("unit", .string), f("timestamp", .date), f("source", .string),
        f("confidenceRaw", .string),
    ])

    public static let activityBucketSamples = ArchiveTable("activityBucketSamples", unique: "startEpoch", entity: "activity bucket", [
        f("startEpoch", .int), f("date", .date), f("timestamp", .date), f("steps", .int),
        f("distanceMeters", .double), f("source", .string), f("updatedAt", .date),
    ])

    public static let activityGpsPoints = ArchiveTable("activityGpsPoints", entity: "GPS point", [
        f("id", .uuid), f("sessionId", .uuid), f("latitude", .double), f("longitude", .double),
        opt("altitude", .double), opt("horizontalAccuracy", .double), opt("speed", .double),
        opt("course", .double), f("timestamp", .date), f("accepted", .bool),
        opt("rejectionReason", .string),
    ])

    public static let activityEvents = ArchiveTable("activityEvents", entity: "workout event", [
        f("id", .uuid), f("sessionId", .uuid), f("kind", .string), f("timestamp", .date),
        opt("payloadJSON", .string),
    ])

    public static let activitySensorPollEvents = ArchiveTable("activitySensorPollEvents", entity: "sensor poll", [
        f("id", .uuid), f("sessionId", .uuid), f("timestamp", .date), f("kind", .string),
        f("status", .string), opt("value", .double), opt("errorMessage", .string),
    ])

    public static let coachConversations = ArchiveTable("coachConversations", entity: "conversation", [
        f("id", .uuid), f("title", .string), f("totalInputTokens", .int),
        f("totalOutputTokens", .int), f("totalCostUSD", .double), f("createdAt", .date),
        f("updatedAt", .date),
    ])

    public static let coachMessages = ArchiveTable("coachMessages", entity: "coach message", [
        f("id", .uuid), f("conversationId", .uuid), f("role", .string), f("body", .string),
        opt("cardsJSON", .string), opt("pendingActionJSON", .string), opt("attachmentsJSON", .string),
        opt("inputTokens", .int), opt("outputTokens", .int), opt("costUSD", .double),
        opt("modelUsed", .string), opt("providerUsed", .string), opt("loggedActivityIdsJSON", .string),
        f("createdAt", .date), ext("loggedMealIdsJSON", .string),
    ])

    public static let coachMemories = ArchiveTable("coachMemories", entity: "coach memory", [
        f("id", .uuid), f("key", .string), f("value", .string), f("memoryType", .string),
        f("importance", .int), opt("expiresAt", .date), opt("sourceMessageId", .uuid),
        f("isUserEditable", .bool), f("createdAt", .date), f("updatedAt", .date),
    ])

    public static let coachToolCalls = ArchiveTable("coachToolCalls", entity: "tool call", [
        f("id", .uuid), f("conversationId", .uuid), opt("messageId", .uuid), f("toolName", .string),
        opt("inputJSON", .string), opt("outputJSON", .string), f("label", .string),
        f("statusRaw", .string), f("sequence", .int), f("createdAt", .date),
    ])

    public static let coachNotificationRecords = ArchiveTable("coachNotificationRecords", entity: "notification record", [
        f("id", .uuid), f("slotRaw", .string), f("dateKey", .string), f("title", .string),
        f("body", .string), f("createdAt", .date),
    ])

    public static let coachSummaries = ArchiveTable("coachSummaries", entity: "coach summary", [
        f("id", .uuid), f("kind", .string), f("scopeKey", .string), f("title", .string),
        f("body", .string), opt("chipsJSON", .string), opt("conversationId", .uuid),
        f("dataSignature", .string), f("createdAt", .date), f("updatedAt", .date),
    ])

    public static let wearableLogs = ArchiveTable("wearableLogs", entity: "wearable log", [
        f("id", .uuid), f("timestamp", .date), f("deviceTypeRaw", .string), f("categoryRaw", .string),
        f("levelRaw", .string), f("message", .string), opt("metadataJSON", .string),
    ])

    public static let cycleDays = ArchiveTable("cycleDays", unique: "dateString", entity: "cycle day", required: false, [
        f("dateString", .string), f("date", .date), f("isPeriod", .bool), f("isDisturbed", .bool),
        f("disturbedAutoDetected", .bool), opt("notes", .string), f("updatedAt", .date),
    ])
}
