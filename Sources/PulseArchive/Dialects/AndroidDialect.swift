import Foundation

/// The Android port's dialect (archive-format.md §8): epoch-millisecond dates, its own table
/// keys and enum NAMEs, ids that may not be UUIDs, defaults for fields older files lack.
/// Rows are mapped into the app's rows here, so everything after the reader sees one dialect.
public enum AndroidDialect {
    /// Android key → our table, where they differ.
    static let renamedTables: [String: ArchiveTable] = [
        "activityDaily": .activityDailies, "activityBuckets": .activityBucketSamples, "activitySensorPolls": .activitySensorPollEvents,
    ]

    /// Top-level keys that only the Android port writes.
    static let androidOnlyKeys: Set<String> = Set(renamedTables.keys)
    /// Top-level keys that only the app and this tool write.
    static let iosOnlyKeys: Set<String> = ["activityDailies", "activityBucketSamples", "activitySensorPollEvents", "settings",
                                           "attachments", "readinessDailies", "cycleDays", "documents", "documentStubs", "documentFiles"]

    /// The table an Android key holds (the tables it does not have are absent, so empty).
    static func table(forKey key: String) -> ArchiveTable? {
        if let renamed = renamedTables[key] { return renamed }
        guard let table = ArchiveTable.named(key), table != .readinessDailies, table != .cycleDays,
              !iosOnlyKeys.contains(key) else { return nil }
        return table
    }

    /// The port's `counts` name SQL tables: its key for the table in snake case
    /// (`activityDaily` → `activity_daily`, `mealEntries` → `meal_entries`).
    public static func countName(ofTable key: String) -> String {
        let androidKey = renamedTables.first { $0.value.key == key }?.key ?? key
        var name = ""
        for character in androidKey {
            if character.isASCII, character.isUppercase {
                name += "_" + character.lowercased()
            } else {
                name.append(character)
            }
        }
        return name
    }

    // MARK: - NAME maps

    static let kinds = ["HEART_RATE": "hr", "SPO2": "spo2", "STRESS": "stress", "FATIGUE": "fatigue", "HRV": "hrv",
                        "TEMPERATURE": "temp", "BLOOD_PRESSURE_SYSTOLIC": "bp_sys", "BLOOD_PRESSURE_DIASTOLIC": "bp_dia",
                        "BLOOD_SUGAR": "glucose", "RESPIRATORY_RATE": "resp_rate", "VO2MAX": "vo2max"]
    static let stages = lowercased(["LIGHT", "DEEP", "AWAKE", "UNKNOWN", "REM"])
    static let states = lowercased(["IDLE", "SCANNING", "CONNECTING", "CONNECTED", "DISCONNECTED", "RECONNECTING", "FAILED"])
    static let deviceTypes = ["JRING": "jring", "COLMI_R02": "colmiR02", "TK5": "tk5", "COLMI_SMART_HEALTH": "colmiSmartHealth",
                              "LUCK_RING": "luckRing", "YCBT": "ycbt", "RWFIT": "rwfit"]
    static let directions = lowercased(["INCOMING", "OUTGOING"])
    static let categories = lowercased(["CONNECTION", "SYNC", "ERROR", "BATTERY"])
    static let levels = lowercased(["INFO", "WARN", "ERROR"])

    private static func lowercased(_ names: [String]) -> [String: String] {
        Dictionary(uniqueKeysWithValues: names.map { ($0, $0.lowercased()) })
    }

    /// Per table: fields whose value is a NAME, with its map.
    static let nameMaps: [String: [String: [String: String]]] = [
        "measurements": ["kindRaw": kinds],
        "sleepStageBlocks": ["stageRaw": stages],
        "devices": ["stateRaw": states, "deviceTypeRaw": deviceTypes],
        "rawPackets": ["directionRaw": directions],
        "wearableLogs": ["deviceTypeRaw": deviceTypes, "categoryRaw": categories, "levelRaw": levels],
    ]

    /// Per table: our field → the Android field it is read from.
    static let sources: [String: [String: String]] = [
        "wearableLogs": ["message": "event", "metadataJSON": "detail", "deviceTypeRaw": "deviceId"],
        "coachMessages": ["attachmentsJSON": "attachmentsJson"],
    ]

    // MARK: - Defaults for absent fields

    static func defaults(_ table: ArchiveTable) -> [String: FieldValue] {
        let zeroInt = FieldValue.int(0), zero = FieldValue.double(0)
        switch table {
        case .measurements: return ["confidenceRaw": .string("known")]
        case .activitySamples: return ["confidenceRaw": .string("known"), "source": .string("mock")]
        case .rawPackets: return ["confidenceRaw": .string("unknown")]
        case .activityDailies: return ["steps": zeroInt, "calories": zero, "distanceMeters": zero, "activeMinutes": zeroInt, "source": .string("mock")]
        case .activityBucketSamples: return ["steps": zeroInt, "distanceMeters": zero, "source": .string("ring_history")]
        case .deviceMeasurementConfigs:
            return ["hrIntervalMinutes": .int(5), "hrEnabled": .bool(true), "spo2Enabled": .bool(true), "stressEnabled": .bool(true),
                    "hrvEnabled": .bool(true), "temperatureEnabled": .bool(true)]
        case .activitySessions:
            var values: [String: FieldValue] = ["statusRaw": .string("recording"), "totalPauseSeconds": zero, "useGps": .bool(true),
                                                "vitalsModeRaw": .string("spot")]
            for counter in ["gpsPointCount", "rejectedGpsPointCount", "hrPollCount", "hrPollFailureCount", "spo2PollCount", "spo2PollFailureCount"] {
                values[counter] = zeroInt
            }
            return values
        case .activityGpsPoints: return ["accepted": .bool(true)]
        case .sleepSessions: return ["sourceRaw": .string("ring")]
        case .coachConversations: return ["title": .string("Today check-in"), "totalInputTokens": zeroInt, "totalOutputTokens": zeroInt, "totalCostUSD": zero]
        case .coachMemories: return ["memoryType": .string("note"), "importance": .int(3), "isUserEditable": .bool(true)]
        case .coachToolCalls: return ["label": .string(""), "statusRaw": .string("success"), "sequence": zeroInt]
        case .userProfiles:
            return ["onboardingCompleted": .bool(false), "baselineCompleted": .bool(false), "athleteMode": .bool(false),
                    "hrZoneModeRaw": .string("auto"), "unitsRaw": .string("metric"), "preferredGlucoseUnitRaw": .string("mgdl")]
        case .userGoals:
            return ["steps": .int(10_000), "distanceMeters": .double(8_000), "calories": .int(500), "sleepMinutes": .int(480),
                    "activeMinutes": .int(45), "workoutsPerWeek": .int(4), "nutritionEnabled": .bool(false)]
        case .wearableLogs: return ["categoryRaw": .string("connection"), "levelRaw": .string("info"), "deviceTypeRaw": .string("")]
        case .coachNotificationRecords: return ["slotRaw": .string("")]
        default: return [:]
        }
    }

    // MARK: - Values

    /// An Android id: a UUID in either case, else the name-based UUID of its exact text.
    public static func mapID(_ text: String) -> String {
        CanonicalUUID.canonical(text) ?? NameBasedUUID.make(namespace: NameBasedUUID.androidNamespace, name: text)
    }

    /// Maps one Android row object into a row of `table`.
    /// - Parameters:
    ///   - dayKey: formats a `coachNotificationRecords.dateKey` from `createdAt` (local day).
    ///   - unknownName: told of a NAME with no mapping (kept verbatim).
    static func mapRow(_ object: [ByteKey: JSONNode], table: ArchiveTable, location: String,
                       dayKey: (Int64) -> String, unknownName: (String, String) -> Void) throws -> ArchiveRow {
        var row = ArchiveRow(table: table)
        let renamed = sources[table.key] ?? [:]
        let maps = nameMaps[table.key] ?? [:]
        let fallbacks = defaults(table)
        var bucketStart: Int64?
        for (index, field) in table.fields.enumerated() {
            let source = renamed[field.name] ?? field.name
            let where_ = "\(location).\(source)"
            guard let node = object[ByteKey(source)], node != .null else {
                if let fallback = fallbacks[field.name] { row[index] = fallback }
                continue
            }
            switch (table, field.name) {
            case (.activityBucketSamples, "startEpoch"):
                // An instant like any other Android date (it may become the bucket's
                // `timestamp`), so within the one date range; seconds rounded down.
                let millis = try epochMillis(node, location: where_)
                let (seconds, remainder) = millis.quotientAndRemainder(dividingBy: 1000)
                row[index] = .int(remainder < 0 ? seconds - 1 : seconds)
                bucketStart = millis
                continue
            case (.activitySessions, "stravaActivityId"):
                guard let id = node.integerValue else { throw invalid(where_, "expected an integer") }
                row[index] = .string(String(id))
                continue
            default:
                break
            }
            row[index] = try value(node, field: field, location: where_)
            // Every NAME and raw is ASCII: another value is unknown without a `String` lookup,
            // whose hashing and comparison normalise (not linear on a long run of marks).
            if let map = maps[field.name], case .string(let name) = row[index] {
                if !name.utf8.allSatisfy({ $0 < 0x80 }) {
                    unknownName(field.name, name)
                } else if let raw = map[name] {
                    row[index] = .string(raw)
                } else if !map.values.contains(name) {
                    unknownName(field.name, name)
                }
            }
        }
        if table == .activityBucketSamples, row[table.fieldIndex("timestamp")!].isNull, let start = bucketStart {
            row[table.fieldIndex("timestamp")!] = .date(start)
        }
        if table == .coachNotificationRecords, row[table.fieldIndex("dateKey")!].isNull, case .date(let created) = row[table.fieldIndex("createdAt")!] {
            row[table.fieldIndex("dateKey")!] = .string(dayKey(created))
        }
        for (index, field) in table.fields.enumerated() where !field.isOptional && row[index].isNull {
            throw invalid(location, "missing the required field \"\(renamed[field.name] ?? field.name)\"")
        }
        return row
    }

    private static func value(_ node: JSONNode, field: ArchiveField, location: String) throws -> FieldValue {
        switch (field.type, node) {
        case (.uuid, .string(let text)): return .string(mapID(text))
        case (.date, .number):
            return .date(try epochMillis(node, location: location))
        case (.string, .string(let text)): return .string(text)
        case (.int, .number):
            guard let value = node.integerValue else { throw invalid(location, "not an integer within 64 bits") }
            return .int(value)
        case (.double, .number(let literal)):
            var bytes = Array(literal.utf8)
            guard let value = ArchiveNumber.double(&bytes) else { throw invalid(location, "out of the range of a double") }
            return .double(value)
        case (.bool, .bool(let b)): return .bool(b)
        default:
            let expected = ["uuid": "an id string", "date": "epoch milliseconds", "string": "a string", "int": "an integer",
                            "double": "a number", "bool": "true or false"][field.type.rawValue]!
            throw invalid(location, "expected \(expected), found \(kind(node))")
        }
    }

    /// An Android date: integer epoch milliseconds within the one date range
    /// (`ArchiveDate.representable`).
    static func epochMillis(_ node: JSONNode, location: String) throws -> Int64 {
        guard let millis = node.integerValue else {
            guard case .number(let literal) = node else { throw invalid(location, "expected epoch milliseconds, found \(kind(node))") }
            throw invalid(location, ArchiveNumber.notEpochMillis(Array(literal.utf8)))
        }
        if let problem = ArchiveDate.problem(with: millis) { throw invalid(location, problem) }
        return millis
    }

    private static func kind(_ node: JSONNode) -> String {
        switch node {
        case .object: return "an object"
        case .array: return "an array"
        case .string: return "a string"
        case .number: return "a number"
        case .bool: return "a boolean"
        case .null: return "null"
        }
    }

    static func invalid(_ location: String, _ detail: String) -> ArchiveError {
        ArchiveError(.invalidValue, "\(location): \(detail)", table: String(location.prefix { $0 != "[" && $0 != "." }))
    }

    /// The Android fields our rows take, per table: anything else in a row is reported.
    static func knownFields(_ table: ArchiveTable) -> Set<ByteKey> {
        let renamed = sources[table.key] ?? [:]
        return Set(table.fields.map { ByteKey(renamed[$0.name] ?? $0.name) })
    }
}

