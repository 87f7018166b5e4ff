/// The archive tables as the store's first schema created them (released in 8efb2c3, and
/// unchanged up to schema 6): the frozen copy that the released migrations `createArchiveTables`
/// and `uniqueKeysAsIndexes` are built from. Never edit it: a store created by those releases
/// has exactly these columns, whatever `ArchiveTable` says today.
enum ReleasedTables {
    /// An archive table as released: its name, unique key and columns (name, SQL type and
    /// constraint) in their order.
    struct FrozenTable {
        let name: String
        let uniqueKey: String
        let columns: [(name: String, definition: String)]

        init(_ name: String, unique uniqueKey: String, _ columns: [(String, String)]) {
            self.name = name
            self.uniqueKey = uniqueKey
            self.columns = columns.map { (name: $0.0, definition: $0.1) }
        }

        /// The table with its UNIQUE constraint (`createArchiveTables`), or under another name
        /// without it (the copy `uniqueKeysAsIndexes` rebuilds it into).
        func createTable(named other: String? = nil) -> String {
            var lines = columns.map { "\(quoted($0.name)) \($0.definition)" }
            if other == nil { lines.append("UNIQUE (\(quoted(uniqueKey)))") }
            return "CREATE TABLE \(quoted(other ?? name)) (\n  \(lines.joined(separator: ",\n  "))\n)"
        }

        /// `uniqueKeysAsIndexes` for this table: rebuilt without its UNIQUE constraint, its rows
        /// and rowids (the export's order) kept, and given a unique index on its key instead.
        func rebuiltWithUniqueIndex() -> [String] {
            let rebuilt = name + "Rebuilt"
            let list = columns.map { quoted($0.name) }.joined(separator: ", ")
            return [
                createTable(named: rebuilt),
                "INSERT INTO \(quoted(rebuilt)) (rowid, \(list)) SELECT rowid, \(list) FROM \(quoted(name)) ORDER BY rowid",
                "DROP TABLE \(quoted(name))",
                "ALTER TABLE \(quoted(rebuilt)) RENAME TO \(quoted(name))",
                "CREATE UNIQUE INDEX \(quoted(name + "UniqueKey")) ON \(quoted(name)) (\(quoted(uniqueKey)))",
            ]
        }

        /// `doublesKeepTheirSign` for this table: rebuilt with its REAL columns declared without
        /// a type, rows and rowids kept, its unique index made again; nothing when it has no
        /// REAL column.
        func rebuiltWithoutRealColumns() -> [String] {
            guard columns.contains(where: { $0.definition.hasPrefix("REAL") }) else { return [] }
            let rebuilt = name + "Rebuilt"
            let list = columns.map { quoted($0.name) }.joined(separator: ", ")
            let lines = columns.map { column in
                // "REAL NOT NULL" → " NOT NULL", "REAL" → "", as `StoreSchema.createTable` writes them.
                quoted(column.name) + (column.definition.hasPrefix("REAL") ? String(column.definition.dropFirst(4)) : " " + column.definition)
            }
            return [
                "CREATE TABLE \(quoted(rebuilt)) (\n  \(lines.joined(separator: ",\n  "))\n)",
                "INSERT INTO \(quoted(rebuilt)) (rowid, \(list)) SELECT rowid, \(list) FROM \(quoted(name)) ORDER BY rowid",
                "DROP TABLE \(quoted(name))",
                "ALTER TABLE \(quoted(rebuilt)) RENAME TO \(quoted(name))",
                "CREATE UNIQUE INDEX \(quoted(name + "UniqueKey")) ON \(quoted(name)) (\(quoted(uniqueKey)))",
            ]
        }

        /// Identifiers as these releases quoted them (none holds a quote).
        private func quoted(_ identifier: String) -> String { "\"" + identifier + "\"" }
    }

    /// The 26 archive tables of schema 1, in the order it created them.
    static let schema1: [FrozenTable] = [
        FrozenTable("devices", unique: "id", [
            ("id", "TEXT NOT NULL"), ("name", "TEXT NOT NULL"), ("advertisedName", "TEXT"),
            ("peripheralIdentifier", "TEXT"), ("bleAddressHint", "TEXT"), ("batteryPercent", "INTEGER"),
            ("stateRaw", "TEXT NOT NULL"), ("lastConnectedAt", "INTEGER"), ("lastDisconnectedAt", "INTEGER"),
            ("lastSyncAt", "INTEGER"), ("lastFullSyncAt", "INTEGER"), ("firmwareVersion", "TEXT"),
            ("wearableModelID", "TEXT"), ("deviceTypeRaw", "TEXT NOT NULL"), ("capabilitiesRaw", "TEXT NOT NULL"),
            ("createdAt", "INTEGER NOT NULL"), ("updatedAt", "INTEGER NOT NULL")
        ]),
        FrozenTable("activityDailies", unique: "id", [
            ("id", "TEXT NOT NULL"), ("date", "INTEGER NOT NULL"), ("steps", "INTEGER NOT NULL"),
            ("calories", "REAL NOT NULL"), ("distanceMeters", "REAL NOT NULL"),
            ("activeMinutes", "INTEGER NOT NULL"), ("source", "TEXT NOT NULL"), ("syncedAt", "INTEGER"),
            ("createdAt", "INTEGER NOT NULL"), ("updatedAt", "INTEGER NOT NULL"),
            ("estimatedActiveCalories", "REAL")
        ]),
        FrozenTable("measurements", unique: "id", [
            ("id", "TEXT NOT NULL"), ("kindRaw", "TEXT NOT NULL"), ("value", "REAL NOT NULL"),
            ("unit", "TEXT NOT NULL"), ("timestamp", "INTEGER NOT NULL"), ("sourceRaw", "TEXT NOT NULL"),
            ("confidenceRaw", "TEXT NOT NULL"), ("activitySessionId", "TEXT"), ("rawPacketId", "TEXT"),
            ("createdAt", "INTEGER NOT NULL")
        ]),
        FrozenTable("batterySamples", unique: "id", [
            ("id", "TEXT NOT NULL"), ("percent", "INTEGER NOT NULL"), ("timestamp", "INTEGER NOT NULL"),
            ("createdAt", "INTEGER NOT NULL")
        ]),
        FrozenTable("sleepSessions", unique: "id", [
            ("id", "TEXT NOT NULL"), ("date", "INTEGER NOT NULL"), ("startAt", "INTEGER NOT NULL"),
            ("endAt", "INTEGER NOT NULL"), ("totalMinutes", "INTEGER NOT NULL"), ("score", "INTEGER"),
            ("syncedAt", "INTEGER"), ("createdAt", "INTEGER NOT NULL"), ("updatedAt", "INTEGER NOT NULL"),
            ("sourceRaw", "TEXT")
        ]),
        FrozenTable("sleepStageBlocks", unique: "id", [
            ("id", "TEXT NOT NULL"), ("sessionId", "TEXT NOT NULL"), ("startAt", "INTEGER NOT NULL"),
            ("startMinute", "INTEGER NOT NULL"), ("durationMinutes", "INTEGER NOT NULL"),
            ("stageRaw", "TEXT NOT NULL")
        ]),
        FrozenTable("rawPackets", unique: "id", [
            ("id", "TEXT NOT NULL"), ("timestamp", "INTEGER NOT NULL"), ("directionRaw", "TEXT NOT NULL"),
            ("commandId", "INTEGER NOT NULL"), ("hexPayload", "TEXT NOT NULL"), ("decodedKind", "TEXT"),
            ("decodedJSON", "TEXT"), ("confidenceRaw", "TEXT NOT NULL"), ("createdAt", "INTEGER NOT NULL")
        ]),
        FrozenTable("derivedUpdates", unique: "id", [
            ("id", "TEXT NOT NULL"), ("timestamp", "INTEGER NOT NULL"), ("kind", "TEXT NOT NULL"),
            ("entityType", "TEXT NOT NULL"), ("entityId", "TEXT NOT NULL"), ("payloadJSON", "TEXT")
        ]),
        FrozenTable("userProfiles", unique: "id", [
            ("id", "TEXT NOT NULL"), ("name", "TEXT"), ("age", "INTEGER"), ("sex", "TEXT"), ("heightCm", "REAL"),
            ("weightKg", "REAL"), ("unitsRaw", "TEXT NOT NULL"), ("onboardingCompleted", "INTEGER NOT NULL"),
            ("baselineCompleted", "INTEGER NOT NULL"), ("athleteMode", "INTEGER NOT NULL"),
            ("altitudeMeters", "REAL"), ("usesBetaBlockers", "INTEGER"), ("hasKnownLungCondition", "INTEGER"),
            ("preferredGlucoseUnitRaw", "TEXT NOT NULL"), ("hrZoneModeRaw", "TEXT NOT NULL"),
            ("hrRestingBaseline", "REAL"), ("hrRestingBaselineUpdatedAt", "INTEGER"), ("hrCustomLowUpper", "REAL"),
            ("hrCustomAthleticUpper", "REAL"), ("hrCustomElevatedStart", "REAL"), ("hrCustomHighStart", "REAL"),
            ("createdAt", "INTEGER NOT NULL"), ("updatedAt", "INTEGER NOT NULL")
        ]),
        FrozenTable("userGoals", unique: "id", [
            ("id", "TEXT NOT NULL"), ("steps", "INTEGER NOT NULL"), ("sleepMinutes", "INTEGER NOT NULL"),
            ("activeMinutes", "INTEGER NOT NULL"), ("workoutsPerWeek", "INTEGER NOT NULL"),
            ("distanceMeters", "REAL NOT NULL"), ("calories", "INTEGER NOT NULL"), ("updatedAt", "INTEGER NOT NULL"),
            ("intakeCalories", "REAL"), ("intakeProteinG", "REAL"), ("intakeCarbsG", "REAL"), ("intakeFatG", "REAL"),
            ("nutritionEnabled", "INTEGER")
        ]),
        FrozenTable("deviceMeasurementConfigs", unique: "deviceId", [
            ("deviceId", "TEXT NOT NULL"), ("hrIntervalMinutes", "INTEGER NOT NULL"),
            ("hrEnabled", "INTEGER NOT NULL"), ("spo2Enabled", "INTEGER NOT NULL"),
            ("stressEnabled", "INTEGER NOT NULL"), ("hrvEnabled", "INTEGER NOT NULL"),
            ("temperatureEnabled", "INTEGER NOT NULL"), ("updatedAt", "INTEGER NOT NULL")
        ]),
        FrozenTable("activitySessions", unique: "id", [
            ("id", "TEXT NOT NULL"), ("type", "TEXT NOT NULL"), ("statusRaw", "TEXT NOT NULL"),
            ("startedAt", "INTEGER NOT NULL"), ("endedAt", "INTEGER"), ("totalPauseSeconds", "REAL NOT NULL"),
            ("calories", "REAL"), ("distanceMeters", "REAL"), ("avgHeartRate", "REAL"), ("minHeartRate", "REAL"),
            ("maxHeartRate", "REAL"), ("avgSpO2", "REAL"), ("latestSpO2", "REAL"), ("notes", "TEXT"),
            ("useGps", "INTEGER NOT NULL"), ("perceivedEffort", "TEXT"), ("gpsPointCount", "INTEGER NOT NULL"),
            ("rejectedGpsPointCount", "INTEGER NOT NULL"), ("hrPollCount", "INTEGER NOT NULL"),
            ("hrPollFailureCount", "INTEGER NOT NULL"), ("spo2PollCount", "INTEGER NOT NULL"),
            ("spo2PollFailureCount", "INTEGER NOT NULL"), ("liveActivityID", "TEXT"),
            ("lastSensorPollAt", "INTEGER"), ("lastGpsPointAt", "INTEGER"), ("vitalsModeRaw", "TEXT NOT NULL"),
            ("createdAt", "INTEGER NOT NULL"), ("updatedAt", "INTEGER NOT NULL"), ("stravaActivityId", "TEXT")
        ]),
        FrozenTable("activitySamples", unique: "id", [
            ("id", "TEXT NOT NULL"), ("sessionId", "TEXT NOT NULL"), ("measurementId", "TEXT"),
            ("kind", "TEXT NOT NULL"), ("value", "REAL NOT NULL"), ("unit", "TEXT NOT NULL"),
            ("timestamp", "INTEGER NOT NULL"), ("source", "TEXT NOT NULL"), ("confidenceRaw", "TEXT NOT NULL")
        ]),
        FrozenTable("activityBucketSamples", unique: "startEpoch", [
            ("startEpoch", "INTEGER NOT NULL"), ("date", "INTEGER NOT NULL"), ("timestamp", "INTEGER NOT NULL"),
            ("steps", "INTEGER NOT NULL"), ("distanceMeters", "REAL NOT NULL"), ("source", "TEXT NOT NULL"),
            ("updatedAt", "INTEGER NOT NULL")
        ]),
        FrozenTable("activityGpsPoints", unique: "id", [
            ("id", "TEXT NOT NULL"), ("sessionId", "TEXT NOT NULL"), ("latitude", "REAL NOT NULL"),
            ("longitude", "REAL NOT NULL"), ("altitude", "REAL"), ("horizontalAccuracy", "REAL"), ("speed", "REAL"),
            ("course", "REAL"), ("timestamp", "INTEGER NOT NULL"), ("accepted", "INTEGER NOT NULL"),
            ("rejectionReason", "TEXT")
        ]),
        FrozenTable("activityEvents", unique: "id", [
            ("id", "TEXT NOT NULL"), ("sessionId", "TEXT NOT NULL"), ("kind", "TEXT NOT NULL"),
            ("timestamp", "INTEGER NOT NULL"), ("payloadJSON", "TEXT")
        ]),
        FrozenTable("activitySensorPollEvents", unique: "id", [
            ("id", "TEXT NOT NULL"), ("sessionId", "TEXT NOT NULL"), ("timestamp", "INTEGER NOT NULL"),
            ("kind", "TEXT NOT NULL"), ("status", "TEXT NOT NULL"), ("value", "REAL"), ("errorMessage", "TEXT")
        ]),
        FrozenTable("coachConversations", unique: "id", [
            ("id", "TEXT NOT NULL"), ("title", "TEXT NOT NULL"), ("totalInputTokens", "INTEGER NOT NULL"),
            ("totalOutputTokens", "INTEGER NOT NULL"), ("totalCostUSD", "REAL NOT NULL"),
            ("createdAt", "INTEGER NOT NULL"), ("updatedAt", "INTEGER NOT NULL")
        ]),
        FrozenTable("coachMessages", unique: "id", [
            ("id", "TEXT NOT NULL"), ("conversationId", "TEXT NOT NULL"), ("role", "TEXT NOT NULL"),
            ("body", "TEXT NOT NULL"), ("cardsJSON", "TEXT"), ("pendingActionJSON", "TEXT"),
            ("attachmentsJSON", "TEXT"), ("inputTokens", "INTEGER"), ("outputTokens", "INTEGER"),
            ("costUSD", "REAL"), ("modelUsed", "TEXT"), ("providerUsed", "TEXT"), ("loggedActivityIdsJSON", "TEXT"),
            ("createdAt", "INTEGER NOT NULL"), ("loggedMealIdsJSON", "TEXT")
        ]),
        FrozenTable("coachMemories", unique: "id", [
            ("id", "TEXT NOT NULL"), ("key", "TEXT NOT NULL"), ("value", "TEXT NOT NULL"),
            ("memoryType", "TEXT NOT NULL"), ("importance", "INTEGER NOT NULL"), ("expiresAt", "INTEGER"),
            ("sourceMessageId", "TEXT"), ("isUserEditable", "INTEGER NOT NULL"), ("createdAt", "INTEGER NOT NULL"),
            ("updatedAt", "INTEGER NOT NULL")
        ]),
        FrozenTable("coachToolCalls", unique: "id", [
            ("id", "TEXT NOT NULL"), ("conversationId", "TEXT NOT NULL"), ("messageId", "TEXT"),
            ("toolName", "TEXT NOT NULL"), ("inputJSON", "TEXT"), ("outputJSON", "TEXT"), ("label", "TEXT NOT NULL"),
            ("statusRaw", "TEXT NOT NULL"), ("sequence", "INTEGER NOT NULL"), ("createdAt", "INTEGER NOT NULL")
        ]),
        FrozenTable("coachNotificationRecords", unique: "id", [
            ("id", "TEXT NOT NULL"), ("slotRaw", "TEXT NOT NULL"), ("dateKey", "TEXT NOT NULL"),
            ("title", "TEXT NOT NULL"), ("body", "TEXT NOT NULL"), ("createdAt", "INTEGER NOT NULL")
        ]),
        FrozenTable("coachSummaries", unique: "id", [
            ("id", "TEXT NOT NULL"), ("kind", "TEXT NOT NULL"), ("scopeKey", "TEXT NOT NULL"),
            ("title", "TEXT NOT NULL"), ("body", "TEXT NOT NULL"), ("chipsJSON", "TEXT"), ("conversationId", "TEXT"),
            ("dataSignature", "TEXT NOT NULL"), ("createdAt", "INTEGER NOT NULL"), ("updatedAt", "INTEGER NOT NULL")
        ]),
        FrozenTable("wearableLogs", unique: "id", [
            ("id", "TEXT NOT NULL"), ("timestamp", "INTEGER NOT NULL"), ("deviceTypeRaw", "TEXT NOT NULL"),
            ("categoryRaw", "TEXT NOT NULL"), ("levelRaw", "TEXT NOT NULL"), ("message", "TEXT NOT NULL"),
            ("metadataJSON", "TEXT")
        ]),
        FrozenTable("readinessDailies", unique: "id", [
            ("id", "TEXT NOT NULL"), ("date", "INTEGER NOT NULL"), ("score", "INTEGER NOT NULL"),
            ("bandRaw", "TEXT NOT NULL"), ("availablePoints", "REAL NOT NULL"),
            ("contributorsJSON", "TEXT NOT NULL"), ("algorithmVersion", "INTEGER NOT NULL"),
            ("computedAt", "INTEGER NOT NULL"), ("createdAt", "INTEGER NOT NULL"), ("updatedAt", "INTEGER NOT NULL")
        ]),
        FrozenTable("cycleDays", unique: "dateString", [
            ("dateString", "TEXT NOT NULL"), ("date", "INTEGER NOT NULL"), ("isPeriod", "INTEGER NOT NULL"),
            ("isDisturbed", "INTEGER NOT NULL"), ("disturbedAutoDetected", "INTEGER NOT NULL"), ("notes", "TEXT"),
            ("updatedAt", "INTEGER NOT NULL")
        ]),
    ]
}
