import Foundation
import Testing
@testable import GadgetbridgeTestSupport
@testable import PulseArchive
@testable import PulseGadgetbridge
import PulseSQLite
@testable import PulseTestSupport

/// The reader and mapper of a Gadgetbridge database (docs/gadgetbridge.md), on databases built
/// from Gadgetbridge's DDL.
@Suite struct GadgetbridgeReaderTests {
    static let utc = TimeZone(identifier: "UTC")!

    /// Maps `path` and keeps every row.
    static func mapped(_ path: String, zone: TimeZone = utc) throws -> (GadgetbridgeMapping, [String: [ArchiveRow]]) {
        let database = try GadgetbridgeFile.open(path, limits: .standard)
        var visitor = CollectingVisitor()
        let mapping = try GadgetbridgeMapper(database, timeZone: zone, now: 1_800_000_000_000).map(into: &visitor)
        return (mapping, visitor.rows)
    }

    @Test("ids are the specification's name-based UUIDs (its three vectors)")
    func idVectors() {
        #expect(GadgetbridgeMapper.id("gadgetbridge/device/F0:A1:B2:C3:D4:E5") == "E90C6E01-34FE-5D1C-8C18-5E6C54902A67")
        #expect(GadgetbridgeMapper.id("gadgetbridge/F0:A1:B2:C3:D4:E5/measurement/hr/1772348700000") == "6B8DE7E8-BC91-579C-B5C1-0F22376FDFEB")
        #expect(GadgetbridgeMapper.id("gadgetbridge/activityDaily/2026-03-01") == "D4B518F5-955D-570D-976C-E891BB21EEFC")
        #expect(NameBasedUUID.make(namespace: NameBasedUUID.androidNamespace, name: "gadgetbridge") == GadgetbridgeMapper.namespace)
    }

    @Test("schema 141: every table mapped; no-reading values counted invalid; the Mi Band's rows not read; temperature back to one decimal")
    func schema141() throws {
        let dir = TemporaryDirectory()
        try GadgetbridgeFixtures.write(.init(days: 3), to: dir.file("Gadgetbridge"))
        let (mapping, rows) = try Self.mapped(dir.file("Gadgetbridge"))
        let hr = try #require(mapping.tables[.heartRate])
        #expect(hr.read == 3 * 288 + 3 && hr.invalid == 3 && hr.imported == 3 * 288, "\(hr)")
        #expect(mapping.tables[.spo2]!.invalid == 1 && mapping.tables[.spo2]!.imported == 72)
        #expect(mapping.tables[.stress]!.invalid == 1 && mapping.tables[.hrvValue]!.imported == 144)
        #expect(mapping.tables[.temperature]!.invalid == 1 && mapping.tables[.temperature]!.imported == 144)
        #expect(mapping.tables[.activity]!.imported == 72)
        let measurements = rows["measurements"] ?? []
        #expect(measurements.count == 3 * 288 + 72 + 144 * 3)
        let temps = measurements.filter { $0[1] == .string("temp") }
        #expect(temps.allSatisfy { $0[2] == .double(33.3) && $0[3] == .string("°C") && $0[5] == .string("colmi") })
        #expect(measurements.filter { $0[1] == .string("hr") }.allSatisfy { $0[5] == .string("history") })
        // One ring: the Mi Band is neither a device row nor read.
        #expect(rows["devices"]?.count == 1 && mapping.deviceIDs.count == 1)
        #expect(rows["devices"]?.first?[1] == .string("My ring"))
        #expect(rows["devices"]?.first?[ArchiveTable.devices.fieldIndex("wearableModelID")!] == .string("colmi-r02"))
    }

    @Test("a night across midnight is one session dated by its waking day; a nap is a session of its own")
    func sleep() throws {
        let dir = TemporaryDirectory()
        try GadgetbridgeFixtures.write(.init(days: 3), to: dir.file("Gadgetbridge"))
        let (mapping, rows) = try Self.mapped(dir.file("Gadgetbridge"))
        let sessions = rows["sleepSessions"] ?? []
        #expect(sessions.count == 4, "three nights and a nap")
        let march1 = GadgetbridgeFixtures.march1
        let night = try #require(sessions.first { $0[2] == .date(march1 + 23 * 3_600_000) })
        #expect(night[1] == .date(march1 + 86_400_000), "a night starting at 23:00 belongs to the next day")
        #expect(night[3] == .date(march1 + 23 * 3_600_000 + 470 * 60_000) && night[4] == .int(470))
        let nap = try #require(sessions.first { $0[2] == .date(march1 + 86_400_000 + 13 * 3_600_000) })
        #expect(nap[1] == .date(march1 + 86_400_000) && nap[4] == .int(40))
        let blocks = rows["sleepStageBlocks"] ?? []
        #expect(blocks.count == 3 * 4 + 2)
        let nightBlocks = blocks.filter { $0[1] == night[0] }.map { [$0[3], $0[4], $0[5]] }
        #expect(nightBlocks == [[.int(0), .int(60), .string("light")], [.int(60), .int(120), .string("deep")],
                                [.int(180), .int(90), .string("rem")], [.int(270), .int(200), .string("light")]])
        #expect(mapping.tables[.sleepSession]!.read == 4 && mapping.tables[.sleepStage]!.read == 14)
        #expect(mapping.sleepRows.values.map(\.sessions).reduce(0, +) == 4)
    }

    @Test("stage rows that overlap the stage before them or run past their session's wake-up are counted invalid: the night's stages add up to no more than its length")
    func overlappingStages() throws {
        let dir = TemporaryDirectory()
        try GadgetbridgeFixtures.write(.init(days: 1, otherDevice: false, invalidRows: false), to: dir.file("Gadgetbridge"))
        let database = try SQLiteDatabase(path: dir.file("Gadgetbridge"), create: false)
        try database.execute(#"DELETE FROM "COLMI_SLEEP_SESSION_SAMPLE"; DELETE FROM "COLMI_SLEEP_STAGE_SAMPLE""#)
        let night = GadgetbridgeFixtures.march1 + 2 * 3_600_000, minute: Int64 = 60_000
        try database.execute(#"INSERT INTO "COLMI_SLEEP_SESSION_SAMPLE" VALUES (\#(night), 1, 1, \#(night + 480 * minute))"#)
        // light 0–120; deep 30–60 (inside it); awake 120–150; light 150–300; rem 300–600 (past the wake-up at 480).
        for (offset, minutes, stage) in [(0, 120, 2), (30, 30, 3), (120, 30, 5), (150, 150, 2), (300, 300, 4)] as [(Int64, Int64, Int64)] {
            try database.execute(#"INSERT INTO "COLMI_SLEEP_STAGE_SAMPLE" VALUES (\#(night + offset * minute), 1, 1, \#(minutes), \#(stage))"#)
        }
        database.close()
        let (mapping, rows) = try Self.mapped(dir.file("Gadgetbridge"))
        let blocks = (rows["sleepStageBlocks"] ?? []).map { [$0[3], $0[4], $0[5]] }
        #expect(blocks == [[.int(0), .int(120), .string("light")], [.int(120), .int(30), .string("awake")], [.int(150), .int(150), .string("light")]])
        #expect(mapping.tables[.sleepStage]!.invalid == 2 && mapping.tables[.sleepStage]!.read == 5, "\(mapping.tables[.sleepStage]!)")
        let session = try #require(rows["sleepSessions"]?.first)
        #expect(rows["sleepSessions"]?.count == 1 && session[4] == .int(300))
        // A stage that ends at the wake-up fits.
        let edge = try SQLiteDatabase(path: dir.file("Gadgetbridge"), create: false)
        try edge.execute(#"UPDATE "COLMI_SLEEP_STAGE_SAMPLE" SET "DURATION" = 180 WHERE "TIMESTAMP" = \#(night + 300 * minute)"#)
        edge.close()
        let (_, fitting) = try Self.mapped(dir.file("Gadgetbridge"))
        #expect(fitting["sleepStageBlocks"]?.last.map { [$0[3], $0[4], $0[5]] } == [.int(300), .int(180), .string("rem")])
    }

    @Test("schema 92 (no temperature table) is read; its temperature counts are zero")
    func schema92() throws {
        let dir = TemporaryDirectory()
        try GadgetbridgeFixtures.write(.init(days: 1, schema: 92), to: dir.file("Gadgetbridge"))
        let database = try GadgetbridgeFile.open(dir.file("Gadgetbridge"), limits: .standard)
        #expect(database.schemaVersion == 92 && !database.presentTables.contains(.temperature))
        let (mapping, _) = try Self.mapped(dir.file("Gadgetbridge"))
        #expect(mapping.tables[.temperature]! == ColmiTableCounts() && mapping.tables[.heartRate]!.imported == 288)
    }

    @Test("the backup ZIP (deflated or stored) reads as the plain database")
    func zipEqualsPlain() throws {
        let dir = TemporaryDirectory()
        try GadgetbridgeFixtures.write(.init(days: 2), to: dir.file("Gadgetbridge"))
        try GadgetbridgeFixtures.zip(database: dir.file("Gadgetbridge"), to: dir.file("backup.zip"))
        try GadgetbridgeFixtures.zip(database: dir.file("Gadgetbridge"), to: dir.file("stored.zip"), stored: true)
        let plain = try Self.mapped(dir.file("Gadgetbridge")).1
        #expect(GadgetbridgeFile.form(of: dir.file("backup.zip")) == .backup && GadgetbridgeFile.form(of: dir.file("Gadgetbridge")) == .database)
        #expect(try Self.mapped(dir.file("backup.zip")).1 == plain)
        #expect(try Self.mapped(dir.file("stored.zip")).1 == plain)
    }

    @Test("the rings: COLMI_Rnn and YAWELL_Rnn, not Colmi's watches nor anything else")
    func ringTypes() {
        func ring(_ type: String) -> Bool { GadgetbridgeDevice(id: 1, name: "", identifier: "", typeName: type, alias: nil, rows: 0).isColmiRing }
        #expect(["COLMI_R02", "COLMI_R12", "YAWELL_R11"].allSatisfy(ring))
        #expect(!["COLMI_V72", "COLMI_P76", "COLMI_R", "COLMI_R02X", "colmi_r02", "MIBAND", "YAWELL_", ""].contains(where: ring))
    }

    @Test("a reading off the minute grid is a live one; the overlap rule's whole minutes are the history's")
    func liveHeartRate() throws {
        let dir = TemporaryDirectory()
        try GadgetbridgeFixtures.write(.init(days: 1, otherDevice: false, invalidRows: false), to: dir.file("Gadgetbridge"))
        let database = try SQLiteDatabase(path: dir.file("Gadgetbridge"), create: false)
        try database.execute(#"INSERT INTO "COLMI_HEART_RATE_SAMPLE" VALUES (\#(GadgetbridgeFixtures.march1 + 61_234), 1, 1, 88)"#)
        database.close()
        let (_, rows) = try Self.mapped(dir.file("Gadgetbridge"))
        let live = (rows["measurements"] ?? []).filter { $0[5] == .string("live") }
        #expect(live.count == 1 && live.first?[4] == .date(GadgetbridgeFixtures.march1 + 61_234) && live.first?[2] == .double(88))
    }

    @Test("a temperature table from before update 118 (no TEMPERATURE_TYPE, TEMPERATURE_LOCATION) is read; a Yawell ring with a blank alias keeps its name and has no model id")
    func olderTemperatureAndYawell() throws {
        let dir = TemporaryDirectory()
        let database = try SQLiteDatabase(path: dir.file("Gadgetbridge"), create: true)
        for statement in GadgetbridgeFixtures.ddl92 { try database.execute(statement) }
        try database.execute(#"CREATE TABLE "COLMI_TEMPERATURE_SAMPLE" ("TIMESTAMP" INTEGER NOT NULL, "DEVICE_ID" INTEGER NOT NULL, "USER_ID" INTEGER NOT NULL, "TEMPERATURE" REAL NOT NULL, PRIMARY KEY ("TIMESTAMP", "DEVICE_ID") ON CONFLICT REPLACE) WITHOUT ROWID"#)
        try database.execute(#"INSERT INTO "DEVICE" VALUES (7, 'R11C_0F', 'Yawell', 'a0:b1:c2:d3:e4:f5', 0, 'YAWELL_R11', NULL, '  ', NULL)"#)
        try database.execute(#"INSERT INTO "COLMI_TEMPERATURE_SAMPLE" VALUES (\#(GadgetbridgeFixtures.march1), 7, 1, 36.099998474121094)"#)
        database.close()
        let (mapping, rows) = try Self.mapped(dir.file("Gadgetbridge"))
        #expect(mapping.tables[.temperature]!.imported == 1 && rows["measurements"]?.first?[2] == .double(36.1))
        let device = try #require(rows["devices"]?.first)
        #expect(device[1] == .string("R11C_0F") && device[ArchiveTable.devices.fieldIndex("wearableModelID")!] == .null)
        #expect(device[0] == .string(GadgetbridgeMapper.id("gadgetbridge/device/A0:B1:C2:D3:E4:F5")), "the MAC upper-cased in the id")
        #expect(device[ArchiveTable.devices.fieldIndex("bleAddressHint")!] == .string("A0:B1:C2:D3:E4:F5"))
    }

    @Test("a database entry whose bytes fail its CRC is refused as damaged")
    func crc() throws {
        let dir = TemporaryDirectory()
        try GadgetbridgeFixtures.write(.init(days: 1), to: dir.file("Gadgetbridge"))
        try GadgetbridgeFixtures.zip(database: dir.file("Gadgetbridge"), to: dir.file("stored.zip"), stored: true)
        var bytes = try #require(FileManager.default.contents(atPath: dir.file("stored.zip")))
        // The stored database starts after the first entry; flip a byte well inside it.
        let header = try #require(bytes.range(of: Data("database/Gadgetbridge".utf8)))
        bytes[header.upperBound + 5000] ^= 0xFF
        dir.write("flipped.zip", bytes)
        let refusal = Self.refusal(dir.file("flipped.zip"))
        #expect(refusal?.0 == "damaged" && refusal?.1.contains("CRC") == true, "\(String(describing: refusal))")
    }

    /// The refusal `path` gets, as its kind and message.
    static func refusal(_ path: String, limits: ArchiveLimits = .standard) -> (String, String)? {
        do {
            _ = try GadgetbridgeFile.open(path, limits: limits)
            return nil
        } catch let error as GadgetbridgeError {
            return (error.kind.rawValue, error.message)
        } catch let error as ArchiveError {
            return (error.kind.rawValue, error.message)
        } catch {
            return ("other", "\(error)")
        }
    }

    @Test("refusals: damaged, no DEVICE, no COLMI table, a missing column, no Colmi ring, a ZIP without the database, an encrypted entry, a ZIP bomb")
    func refusals() throws {
        let dir = TemporaryDirectory()
        let good = dir.file("Gadgetbridge")
        try GadgetbridgeFixtures.write(.init(days: 1), to: good)
        let bytes = try #require(FileManager.default.contents(atPath: good))
        // Damaged: the second half of the pages overwritten.
        var damaged = bytes
        for i in (bytes.count / 2)..<bytes.count { damaged[i] = UInt8(truncatingIfNeeded: i &* 31) }
        dir.write("damaged", damaged)
        #expect(Self.refusal(dir.file("damaged"))?.0 == "damaged")
        func database(_ name: String, _ statements: [String]) throws -> String {
            let db = try SQLiteDatabase(path: dir.file(name), create: true)
            for statement in statements { try db.execute(statement) }
            db.close()
            return dir.file(name)
        }
        let noDevice = try database("nodevice", [GadgetbridgeFixtures.ddl141[2]])
        #expect(Self.refusal(noDevice)?.1.contains("no DEVICE table") == true)
        let noColmi = try database("nocolmi", [GadgetbridgeFixtures.ddl141[0]])
        #expect(Self.refusal(noColmi)?.1.contains("without any COLMI table") == true)
        let missing = try database("missing", [GadgetbridgeFixtures.ddl141[0],
                                               #"CREATE TABLE "COLMI_HEART_RATE_SAMPLE" ("TIMESTAMP" INTEGER NOT NULL, "DEVICE_ID" INTEGER NOT NULL, "BPM" INTEGER)"#])
        let missingRefusal = Self.refusal(missing)
        #expect(missingRefusal?.0 == "missingColumn" && missingRefusal?.1.contains("COLMI_HEART_RATE_SAMPLE has no column HEART_RATE") == true, "\(String(describing: missingRefusal))")
        let noRing = try database("noring", GadgetbridgeFixtures.ddl92 + [#"INSERT INTO "DEVICE" VALUES (1, 'Band', 'Xiaomi', 'AA', 0, 'MIBAND', NULL, NULL, NULL)"#])
        #expect(Self.refusal(noRing)?.1.contains("no Colmi or Yawell ring among its devices (found: Band (MIBAND))") == true)
        try GadgetbridgeFixtures.zip(database: good, to: dir.file("other.zip"), databaseEntry: "database/Other")
        #expect(Self.refusal(dir.file("other.zip"))?.1.contains("is a ZIP but not a Gadgetbridge backup") == true)
        try GadgetbridgeFixtures.zip(database: good, to: dir.file("encrypted.zip"), password: "secret")
        #expect(Self.refusal(dir.file("encrypted.zip"))?.1.contains("is encrypted") == true)
        // A bomb: 24 MiB of zeros deflate about a thousand times.
        dir.write("zeros", Data(count: 24 << 20))
        try GadgetbridgeFixtures.zip(database: dir.file("zeros"), to: dir.file("bomb.zip"))
        let bomb = Self.refusal(dir.file("bomb.zip"))
        #expect(bomb?.0 == "limitExceeded" && bomb?.1.contains("ZIP bomb") == true, "\(String(describing: bomb))")
        var small = ArchiveLimits.standard
        small.maxUncompressedBytes = 4096
        #expect(Self.refusal(good, limits: small)?.0 == "limitExceeded")
        #expect(Self.refusal(dir.file("backup-none"))?.0 == "notGadgetbridge")
    }
}
