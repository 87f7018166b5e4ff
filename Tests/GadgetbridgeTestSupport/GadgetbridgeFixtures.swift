import CZip
import Foundation
import PulseSQLite

/// Gadgetbridge databases and backup ZIPs built in the tests, from the DDL Gadgetbridge's
/// greenDAO writes (docs/gadgetbridge.md, "The tables we read"; copied here so the tests need
/// nothing outside the repository).
enum GadgetbridgeFixtures {
    /// `sqlite_master`'s text of the tables, schema 141 (2026, with the temperature table).
    static let ddl141: [String] = [
        #"CREATE TABLE "DEVICE" ("_id" INTEGER PRIMARY KEY ,"NAME" TEXT NOT NULL ,"MANUFACTURER" TEXT NOT NULL ,"IDENTIFIER" TEXT NOT NULL UNIQUE ,"TYPE" INTEGER NOT NULL ,"TYPE_NAME" TEXT NOT NULL ,"MODEL" TEXT,"ALIAS" TEXT,"PARENT_FOLDER" TEXT)"#,
        #"CREATE TABLE "COLMI_ACTIVITY_SAMPLE" ("TIMESTAMP" INTEGER  NOT NULL ,"DEVICE_ID" INTEGER  NOT NULL ,"USER_ID" INTEGER NOT NULL ,"RAW_KIND" INTEGER NOT NULL ,"STEPS" INTEGER NOT NULL ,"HEART_RATE" INTEGER NOT NULL ,"DISTANCE" INTEGER NOT NULL ,"CALORIES" INTEGER NOT NULL ,PRIMARY KEY ("TIMESTAMP" ,"DEVICE_ID" ) ON CONFLICT REPLACE) WITHOUT ROWID"#,
        #"CREATE TABLE "COLMI_HEART_RATE_SAMPLE" ("TIMESTAMP" INTEGER  NOT NULL ,"DEVICE_ID" INTEGER  NOT NULL ,"USER_ID" INTEGER NOT NULL ,"HEART_RATE" INTEGER NOT NULL ,PRIMARY KEY ("TIMESTAMP" ,"DEVICE_ID" ) ON CONFLICT REPLACE) WITHOUT ROWID"#,
        #"CREATE TABLE "COLMI_SPO2_SAMPLE" ("TIMESTAMP" INTEGER  NOT NULL ,"DEVICE_ID" INTEGER  NOT NULL ,"USER_ID" INTEGER NOT NULL ,"SPO2" INTEGER NOT NULL ,PRIMARY KEY ("TIMESTAMP" ,"DEVICE_ID" ) ON CONFLICT REPLACE) WITHOUT ROWID"#,
        #"CREATE TABLE "COLMI_STRESS_SAMPLE" ("TIMESTAMP" INTEGER  NOT NULL ,"DEVICE_ID" INTEGER  NOT NULL ,"USER_ID" INTEGER NOT NULL ,"STRESS" INTEGER NOT NULL ,PRIMARY KEY ("TIMESTAMP" ,"DEVICE_ID" ) ON CONFLICT REPLACE) WITHOUT ROWID"#,
        #"CREATE TABLE "COLMI_SLEEP_SESSION_SAMPLE" ("TIMESTAMP" INTEGER  NOT NULL ,"DEVICE_ID" INTEGER  NOT NULL ,"USER_ID" INTEGER NOT NULL ,"WAKEUP_TIME" INTEGER,PRIMARY KEY ("TIMESTAMP" ,"DEVICE_ID" ) ON CONFLICT REPLACE) WITHOUT ROWID"#,
        #"CREATE TABLE "COLMI_SLEEP_STAGE_SAMPLE" ("TIMESTAMP" INTEGER  NOT NULL ,"DEVICE_ID" INTEGER  NOT NULL ,"USER_ID" INTEGER NOT NULL ,"DURATION" INTEGER NOT NULL ,"STAGE" INTEGER NOT NULL ,PRIMARY KEY ("TIMESTAMP" ,"DEVICE_ID" ) ON CONFLICT REPLACE) WITHOUT ROWID"#,
        #"CREATE TABLE "COLMI_HRV_VALUE_SAMPLE" ("TIMESTAMP" INTEGER  NOT NULL ,"DEVICE_ID" INTEGER  NOT NULL ,"USER_ID" INTEGER NOT NULL ,"VALUE" INTEGER NOT NULL ,PRIMARY KEY ("TIMESTAMP" ,"DEVICE_ID" ) ON CONFLICT REPLACE) WITHOUT ROWID"#,
        #"CREATE TABLE "COLMI_HRV_SUMMARY_SAMPLE" ("TIMESTAMP" INTEGER  NOT NULL ,"DEVICE_ID" INTEGER  NOT NULL ,"USER_ID" INTEGER NOT NULL ,"WEEKLY_AVERAGE" INTEGER,"LAST_NIGHT_AVERAGE" INTEGER,"LAST_NIGHT5_MIN_HIGH" INTEGER,"BASELINE_LOW_UPPER" INTEGER,"BASELINE_BALANCED_LOWER" INTEGER,"BASELINE_BALANCED_UPPER" INTEGER,"STATUS_NUM" INTEGER,PRIMARY KEY ("TIMESTAMP" ,"DEVICE_ID" ) ON CONFLICT REPLACE) WITHOUT ROWID"#,
        #"CREATE TABLE "COLMI_TEMPERATURE_SAMPLE" ("TIMESTAMP" INTEGER  NOT NULL ,"DEVICE_ID" INTEGER  NOT NULL ,"USER_ID" INTEGER NOT NULL ,"TEMPERATURE" REAL NOT NULL ,"TEMPERATURE_TYPE" INTEGER NOT NULL ,"TEMPERATURE_LOCATION" INTEGER NOT NULL ,PRIMARY KEY ("TIMESTAMP" ,"DEVICE_ID" ) ON CONFLICT REPLACE) WITHOUT ROWID"#,
        #"CREATE TABLE android_metadata (locale TEXT)"#,
    ]

    /// Schema 92 (0.83.0): the eight tables without temperature.
    static let ddl92: [String] = ddl141.filter { !$0.contains("COLMI_TEMPERATURE_SAMPLE") }

    /// 2026-03-01T00:00:00Z.
    static let march1: Int64 = 1_772_323_200_000
    static let ring = (id: Int64(1), mac: "F0:A1:B2:C3:D4:E5")

    /// What a generated history holds.
    struct History {
        var days = 3
        /// The first day's UTC midnight, in milliseconds.
        var start = march1
        var schema = 141
        /// A Mi Band with heart-rate rows in the COLMI table too (which must be ignored).
        var otherDevice = true
        /// "No reading" rows: HR 0 and 255, SpO2 0, stress 0, temperature 0 °C, a text timestamp.
        var invalidRows = true
        var heartRateMinutes = 5
    }

    /// Writes a Gadgetbridge database of `history` at `path`: HR every 5 minutes, SpO2 hourly,
    /// stress and HRV every 30 minutes, temperature at HH:00 and HH:30 (schema 141), an activity
    /// row per hour, a night across midnight every day (23:00–06:50 UTC, four stages) and a nap on
    /// the second day (13:00–13:40 UTC).
    static func write(_ history: History, to path: String) throws {
        let database = try SQLiteDatabase(path: path, create: true)
        try database.execute("PRAGMA journal_mode = DELETE")
        for statement in history.schema >= 141 ? ddl141 : ddl92 { try database.execute(statement) }
        try database.execute("PRAGMA user_version = \(history.schema)")
        try database.execute("BEGIN")
        try database.execute(#"INSERT INTO "DEVICE" VALUES (1, 'R02_1A2B', 'Colmi', '\#(ring.mac)', 0, 'COLMI_R02', NULL, 'My ring', NULL)"#)
        if history.otherDevice {
            try database.execute(#"INSERT INTO "DEVICE" VALUES (2, 'Mi Smart Band 4', 'Xiaomi', 'C8:0F:10:00:00:01', 0, 'MIBAND4', NULL, NULL, NULL)"#)
        }
        func insert(_ table: String, _ values: [Int64]) throws {
            let statement = try database.cached("INSERT INTO \"\(table)\" VALUES (\(Array(repeating: "?", count: values.count).joined(separator: ", ")))")
            for (index, value) in values.enumerated() { try statement.bind(int64: value, at: Int32(index + 1)) }
            try statement.runToEnd()
            statement.reset()
        }
        let hour: Int64 = 3_600_000
        for day in 0..<Int64(history.days) {
            let midnight = history.start + day * 86_400_000
            var minute: Int64 = 0
            while minute < 1440 {
                let t = midnight + minute * 60_000
                try insert("COLMI_HEART_RATE_SAMPLE", [t, 1, 1, 55 + (minute / 5) % 40])
                if history.otherDevice && minute % 60 == 0 { try insert("COLMI_HEART_RATE_SAMPLE", [t, 2, 1, 70]) }
                if minute % 60 == 0 {
                    try insert("COLMI_SPO2_SAMPLE", [t, 1, 1, 95 + (minute / 60) % 4])
                    try insert("COLMI_ACTIVITY_SAMPLE", [t / 1000, 1, 1, 1, 100 + minute / 6, 0, 70 + minute / 10, 5])
                }
                if minute % 30 == 0 {
                    try insert("COLMI_STRESS_SAMPLE", [t, 1, 1, 20 + (minute / 30) % 50])
                    try insert("COLMI_HRV_VALUE_SAMPLE", [t, 1, 1, 40 + (minute / 30) % 30])
                    if history.schema >= 141 {
                        let statement = try database.cached(#"INSERT INTO "COLMI_TEMPERATURE_SAMPLE" VALUES (?, 1, 1, ?, 0, 0)"#)
                        try statement.bind(int64: t, at: 1)
                        try statement.bind(double: Double(Float(33.3)), at: 2)
                        try statement.runToEnd()
                        statement.reset()
                    }
                }
                minute += Int64(history.heartRateMinutes)
            }
            // The night starting this day at 23:00 UTC: light 60, deep 120, REM 90, light 200 (till 06:50).
            let night = midnight + 23 * hour
            try insert("COLMI_SLEEP_SESSION_SAMPLE", [night, 1, 1, night + 470 * 60_000])
            var stageStart = night
            for (minutes, stage) in [(Int64(60), Int64(2)), (120, 3), (90, 4), (200, 2)] {
                try insert("COLMI_SLEEP_STAGE_SAMPLE", [stageStart, 1, 1, minutes, stage])
                stageStart += minutes * 60_000
            }
            if day == 1 {
                let nap = midnight + 13 * hour
                try insert("COLMI_SLEEP_SESSION_SAMPLE", [nap, 1, 1, nap + 40 * 60_000])
                try insert("COLMI_SLEEP_STAGE_SAMPLE", [nap, 1, 1, 25, 2])
                try insert("COLMI_SLEEP_STAGE_SAMPLE", [nap + 25 * 60_000, 1, 1, 15, 3])
            }
        }
        if history.invalidRows {
            let t = history.start + 7 * 60_000 + 30_000
            try insert("COLMI_HEART_RATE_SAMPLE", [t, 1, 1, 0])
            try insert("COLMI_HEART_RATE_SAMPLE", [t + 60_000, 1, 1, 255])
            try insert("COLMI_SPO2_SAMPLE", [history.start + 30 * 60_000, 1, 1, 0])
            try insert("COLMI_STRESS_SAMPLE", [history.start + 15 * 60_000, 1, 1, 0])
            try database.execute(#"INSERT INTO "COLMI_HEART_RATE_SAMPLE" VALUES ('yesterday', 1, 1, 60)"#)
            if history.schema >= 141 {
                try database.execute(#"INSERT INTO "COLMI_TEMPERATURE_SAMPLE" VALUES (\#(history.start + 15 * 60_000), 1, 1, 0.0, 0, 0)"#)
            }
        }
        try database.execute("COMMIT")
        // As Android 9 and later leave it: WAL mode in the header, no -wal file beside it.
        try database.execute("PRAGMA journal_mode = WAL")
        database.close()
    }

    /// A backup ZIP as Gadgetbridge writes it: preferences, `database/Gadgetbridge` (the bytes
    /// of `database`, deflated unless `stored`), files, `gadgetbridge.json` last.
    /// - Parameter databaseEntry: the entry's name (another one makes a ZIP that is no backup).
    static func zip(database: String?, to path: String, databaseEntry: String = "database/Gadgetbridge", stored: Bool = false,
                    password: String? = nil, extra: [(String, [UInt8])] = []) throws {
        var code: Int32 = 0
        guard let archive = zip_open(path, ZIP_CREATE | ZIP_EXCL, &code) else { throw FixtureError("zip_open \(path): \(code)") }
        var buffers: [UnsafeMutableRawBufferPointer] = []
        defer { for buffer in buffers { buffer.deallocate() } }
        func add(_ name: String, _ source: OpaquePointer?, method: Int32 = ZIP_CM_DEFLATE) throws {
            guard let source else { throw FixtureError("zip source for \(name)") }
            let index = zip_file_add(archive, name, source, UInt32(ZIP_FL_ENC_UTF_8))
            guard index >= 0 else { zip_source_free(source); throw FixtureError("zip_file_add \(name)") }
            zip_set_file_compression(archive, UInt64(index), method, 0)
            if let password, name == databaseEntry {
                guard zip_file_set_encryption(archive, UInt64(index), UInt16(ZIP_EM_AES_256), password) == 0 else { throw FixtureError("encryption") }
            }
        }
        func bytes(_ name: String, _ content: [UInt8]) throws {
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(1, content.count), alignment: 1)
            buffers.append(buffer)
            buffer.copyBytes(from: content)
            try add(name, zip_source_buffer(archive, buffer.baseAddress, UInt64(content.count), 0))
        }
        try bytes("preferences/global.json", Array(#"{"preferences": {}}"#.utf8))
        if let database {
            try add(databaseEntry, zip_source_file(archive, database, 0, -1), method: stored ? ZIP_CM_STORE : ZIP_CM_DEFLATE)
        }
        for (name, content) in extra { try bytes(name, content) }
        try bytes("gadgetbridge.json", Array(#"{"appId": "nodomain.freeyourgadget.gadgetbridge", "backupVersion": 1}"#.utf8))
        guard zip_close(archive) == 0 else {
            let message = String(cString: zip_error_strerror(zip_get_error(archive)))
            zip_discard(archive)
            throw FixtureError("zip_close \(path): \(message)")
        }
    }

    struct FixtureError: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }
}
