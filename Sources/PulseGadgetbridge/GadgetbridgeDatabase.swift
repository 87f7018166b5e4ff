import Foundation
import PulseArchive
import PulseSQLite

/// A Gadgetbridge database opened read-only and checked as the specification requires before
/// anything is read from it: `PRAGMA quick_check`, a `DEVICE` table with the columns we use,
/// at least one COLMI data table, every present COLMI table with its key and value columns,
/// and a Colmi ring among the devices.
///
/// Columns are read by name: upgrades append them, so their order differs between installs.
public final class GadgetbridgeDatabase {
    /// What messages call the file (the ZIP's entry names the ZIP too).
    public let name: String
    public let form: GadgetbridgeFile.Form
    /// `PRAGMA user_version`: greenDAO's schema number.
    public let schemaVersion: Int64
    /// The file's bytes: (compressed, uncompressed); equal for a plain database.
    public let bytes: (compressed: Int64, uncompressed: Int64)
    /// Every `DEVICE` row in `_id` order, with its row count.
    public let devices: [GadgetbridgeDevice]
    /// The COLMI tables present, of the nine we know.
    public let presentTables: Set<ColmiTable>
    let database: SQLiteDatabase
    /// Keeps a ZIP's extracted copy until the database closes.
    private let extracted: ExtractedDatabase?
    /// Read from a private copy with the `-wal` that lay beside it (its rows count).
    public let withWriteAheadLog: Bool

    /// - Parameter withWriteAheadLog: `path` is a private copy with its `-wal` beside it,
    ///   opened normally so that SQLite applies the log (`immutable=1` would ignore it).
    init(path: String, shownAs name: String, form: GadgetbridgeFile.Form, bytes: (Int64, Int64), extracted: ExtractedDatabase?,
         withWriteAheadLog: Bool = false) throws {
        self.name = name
        self.form = form
        self.bytes = bytes
        self.extracted = extracted
        self.withWriteAheadLog = withWriteAheadLog
        // SQLite opens an empty file as an empty database, which would be called "an SQLite
        // database but not Gadgetbridge's" (a backup ZIP's empty database entry).
        guard bytes.1 > 0 else {
            throw GadgetbridgeError(.notGadgetbridge, "\(name) is empty (0 bytes): it holds no database")
        }
        do {
            database = try SQLiteDatabase(path: path, create: false, access: withWriteAheadLog ? .readWrite : .immutable)
            let check = try database.prepare("PRAGMA quick_check")
            var problems: [String] = []
            while try check.step() { problems.append(check.text(at: 0)) }
            guard problems == ["ok"] else {
                throw GadgetbridgeError(.damaged, "\(name) is damaged: SQLite's quick_check says \(problems.prefix(3).joined(separator: "; "))")
            }
            schemaVersion = try database.integer("PRAGMA user_version")
            let tables = try Self.tableNames(database)
            guard tables.contains("DEVICE") else {
                throw GadgetbridgeError(.notGadgetbridge, "\(name) is an SQLite database but not Gadgetbridge's: it has no DEVICE table")
            }
            try Self.requireColumns(["_id", "NAME", "IDENTIFIER", "TYPE_NAME"], of: "DEVICE", in: database, file: name)
            presentTables = Set(ColmiTable.allCases.filter { tables.contains($0.rawValue) })
            guard !presentTables.subtracting([.hrvSummary]).isEmpty else {
                throw GadgetbridgeError(.notGadgetbridge, "\(name) is a Gadgetbridge database without any COLMI table: it holds no Colmi ring history")
            }
            for table in presentTables {
                try Self.requireColumns(["TIMESTAMP", "DEVICE_ID"] + table.valueColumns, of: table.rawValue, in: database, file: name)
            }
            devices = try Self.readDevices(database, sampleTables: tables.filter { $0.hasSuffix("SAMPLE") })
        } catch let error as SQLiteError {
            // Named as the user gave it: a copy's path (standard input spooled, a ZIP's entry
            // unpacked) is gone by the time the message is read.
            let detail = error.message.hasPrefix(path + ": ") ? String(error.message.dropFirst(path.count + 2)) : error.message
            guard error.kind != .unavailable else { throw SQLiteError(.unavailable, "\(name): \(detail)") }
            throw GadgetbridgeError(.damaged, "\(name) is damaged or not a database: \(detail)")
        }
        guard devices.contains(where: \.isColmiRing) else {
            let found = devices.isEmpty ? "none" : devices.map { "\($0.name) (\($0.typeName))" }.joined(separator: ", ")
            throw GadgetbridgeError(.notGadgetbridge, "\(name) holds no Colmi or Yawell ring among its devices (found: \(found))")
        }
        // A ring's ids come from its MAC (§3.4), case aside: two rows of one MAC would give every
        // reading twice the same id. Refused here, so inspect and import say the same.
        var seen: [String: GadgetbridgeDevice] = [:]
        for ring in devices where ring.isColmiRing {
            if let first = seen[ring.mac] {
                throw GadgetbridgeError(.duplicateDevice, "\(name) lists the ring \(ring.mac) twice in its DEVICE table (_id \(first.id) as "
                    + "\(ShownText.quoted(first.identifier)) and _id \(ring.id) as \(ShownText.quoted(ring.identifier))): Gadgetbridge keeps one row "
                    + "per device, so its readings cannot be told apart; remove the ring in Gadgetbridge, add it again and export anew")
            }
            seen[ring.mac] = ring
        }
    }

    /// The Colmi rings, in `_id` order.
    public var rings: [GadgetbridgeDevice] { devices.filter(\.isColmiRing) }

    /// The tables and views, names upper-cased: SQLite's names are case-insensitive (a query of
    /// `"COLMI_HEART_RATE_SAMPLE"` reads `colmi_heart_rate_sample`), and a view reads as a table.
    private static func tableNames(_ database: SQLiteDatabase) throws -> Set<String> {
        let statement = try database.prepare("SELECT upper(name) FROM sqlite_master WHERE type IN ('table', 'view')")
        var names: Set<String> = []
        while try statement.step() { names.insert(statement.text(at: 0)) }
        return names
    }

    private static func requireColumns(_ needed: [String], of table: String, in database: SQLiteDatabase, file: String) throws {
        let statement = try database.prepare("SELECT upper(name) FROM pragma_table_info(?)")
        try statement.bind(text: table, at: 1)
        var columns: Set<String> = []
        while try statement.step() { columns.insert(statement.text(at: 0)) }
        for column in needed where !columns.contains(column.uppercased()) {
            throw GadgetbridgeError(.missingColumn, "\(file): the table \(table) has no column \(column), which the import needs "
                + "(a Gadgetbridge schema this version does not know; schema \((try? database.integer("PRAGMA user_version")) ?? 0))")
        }
    }

    private static func readDevices(_ database: SQLiteDatabase, sampleTables: Set<String>) throws -> [GadgetbridgeDevice] {
        var hasAlias = false
        let info = try database.prepare("SELECT upper(name) FROM pragma_table_info('DEVICE')")
        while try info.step() { hasAlias = hasAlias || info.text(at: 0) == "ALIAS" }
        let statement = try database.prepare("SELECT \"_id\", \"NAME\", \"IDENTIFIER\", \"TYPE_NAME\", \(hasAlias ? "\"ALIAS\"" : "NULL") FROM \"DEVICE\" ORDER BY \"_id\"")
        var devices: [GadgetbridgeDevice] = []
        while try statement.step() {
            devices.append(GadgetbridgeDevice(id: statement.int64(at: 0), name: statement.text(at: 1), identifier: statement.text(at: 2),
                                              typeName: statement.text(at: 3), alias: statement.isNull(at: 4) ? nil : statement.text(at: 4), rows: 0))
        }
        // A device's rows: in every *SAMPLE table that has DEVICE_ID (§3.9), matched as the
        // import reads a ring's rows (`DEVICE_ID = _id`, as SQLite compares: 1.0 is 1, the text
        // '1' is not), so that the device's count is the sum of what its tables read.
        for table in sampleTables.sorted() {
            let columns = try database.prepare("SELECT 1 FROM pragma_table_info(?) WHERE upper(name) = 'DEVICE_ID'")
            try columns.bind(text: table, at: 1)
            guard try columns.step() else { continue }
            let count = try database.prepare("SELECT count(*) FROM \"\(table.replacingOccurrences(of: "\"", with: "\"\""))\" WHERE \"DEVICE_ID\" = ?")
            for index in devices.indices {
                count.reset()
                try count.bind(int64: devices[index].id, at: 1)
                _ = try count.step()
                devices[index].rows += Int(count.int64(at: 0))
            }
        }
        return devices
    }
}

/// A `DEVICE` row.
public struct GadgetbridgeDevice: Sendable, Equatable {
    public let id: Int64
    public let name: String
    /// The MAC address.
    public let identifier: String
    public let typeName: String
    public let alias: String?
    /// Rows with its `_id` in the sample tables.
    public var rows: Int

    /// `^(COLMI|YAWELL)_R[0-9]+$` (§3.3): the rings that write the COLMI tables.
    public var isColmiRing: Bool {
        for prefix in ["COLMI_R", "YAWELL_R"] where typeName.hasPrefix(prefix) {
            let digits = typeName.dropFirst(prefix.count)
            return !digits.isEmpty && digits.allSatisfy { $0.isASCII && $0.isNumber }
        }
        return false
    }

    /// `IDENTIFIER` trimmed and upper-cased: the MAC in ids (§3.4).
    public var mac: String { identifier.trimmingCharacters(in: .whitespacesAndNewlines).uppercased() }
}

/// The nine COLMI tables of the specification (§2.3).
public enum ColmiTable: String, CaseIterable, Sendable {
    case activity = "COLMI_ACTIVITY_SAMPLE"
    case heartRate = "COLMI_HEART_RATE_SAMPLE"
    case spo2 = "COLMI_SPO2_SAMPLE"
    case stress = "COLMI_STRESS_SAMPLE"
    case sleepSession = "COLMI_SLEEP_SESSION_SAMPLE"
    case sleepStage = "COLMI_SLEEP_STAGE_SAMPLE"
    case hrvValue = "COLMI_HRV_VALUE_SAMPLE"
    case hrvSummary = "COLMI_HRV_SUMMARY_SAMPLE"
    case temperature = "COLMI_TEMPERATURE_SAMPLE"

    /// The columns besides the key that the import reads (the summary is counted only).
    var valueColumns: [String] {
        switch self {
        case .activity: ["STEPS", "DISTANCE"]
        case .heartRate: ["HEART_RATE"]
        case .spo2: ["SPO2"]
        case .stress: ["STRESS"]
        case .sleepSession: ["WAKEUP_TIME"]
        case .sleepStage: ["DURATION", "STAGE"]
        case .hrvValue: ["VALUE"]
        case .hrvSummary: []
        case .temperature: ["TEMPERATURE"]
        }
    }

    /// `TIMESTAMP` in seconds (activity) or milliseconds (every other table, §2.5).
    var millisecondsPerUnit: Int64 { self == .activity ? 1000 : 1 }
}

/// How many rows of the Colmi rings a table holds, and their first and last instant.
public struct ColmiTableExtent: Sendable, Equatable {
    public var rows = 0
    /// Milliseconds since 1970; nil when the table holds no row.
    public var first: Int64?
    public var last: Int64?
}

extension GadgetbridgeDatabase {
    /// Every one of the nine tables (a missing one empty), over the Colmi rings' rows: what
    /// `inspect` shows.
    public func tableExtents() throws -> [ColmiTable: ColmiTableExtent] {
        let rings = rings.map { String($0.id) }.joined(separator: ", ")
        return try reading {
            var extents: [ColmiTable: ColmiTableExtent] = [:]
            for table in ColmiTable.allCases {
                var extent = ColmiTableExtent()
                if presentTables.contains(table) {
                    let unit = table.millisecondsPerUnit
                    let statement = try database.prepare("SELECT count(*), min(\"TIMESTAMP\") * \(unit), max(\"TIMESTAMP\") * \(unit) FROM \"\(table.rawValue)\" "
                        + "WHERE \"DEVICE_ID\" IN (\(rings)) AND typeof(\"TIMESTAMP\") = 'integer' "
                        + "AND \"TIMESTAMP\" >= \(GadgetbridgeMapper.earliest / unit) AND \"TIMESTAMP\" < \(GadgetbridgeMapper.latest / unit)")
                    _ = try statement.step()
                    extent.first = statement.isNull(at: 1) ? nil : statement.int64(at: 1)
                    extent.last = statement.isNull(at: 2) ? nil : statement.int64(at: 2)
                    let all = try database.prepare("SELECT count(*) FROM \"\(table.rawValue)\" WHERE \"DEVICE_ID\" IN (\(rings))")
                    _ = try all.step()
                    extent.rows = Int(all.int64(at: 0))
                }
                extents[table] = extent
            }
            return extents
        }
    }

    /// Runs `body`, an SQLite error turned into the refusal of a damaged database.
    func reading<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as SQLiteError {
            throw GadgetbridgeError(.damaged, "\(name) is damaged: \(error.message)")
        }
    }
}
