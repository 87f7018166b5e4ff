import Foundation
import Testing
import PulseDigest
@testable import PulseArchive
@testable import PulseStore
@testable import PulseTestSupport
@testable import PulseStoreTestSupport

@Suite("Archives written by the Android port")
struct AndroidTests {
    let berlin = ["TZ": "Europe/Berlin"]

    @Test("name-based UUIDs: the vectors of archive-format.md §8.2, and UUID ids kept")
    func ids() {
        #expect(AndroidDialect.mapID("demo-device") == "9B25E2FE-6FBB-5980-8A3A-1BA83361A399")
        #expect(AndroidDialect.mapID("history:hr:1750000000000") == "C4603449-3962-563F-845F-CA0E3ABDF980")
        #expect(AndroidDialect.mapID("") == "963789F3-E3E5-573B-8331-3A896FB37E45")
        #expect(AndroidDialect.mapID("9f1c2b7e-4a5d-4c3b-8e2f-1a2b3c4d5e6f") == "9F1C2B7E-4A5D-4C3B-8E2F-1A2B3C4D5E6F")
        #expect(SHA1.hash(Array("abc".utf8)).map { String(format: "%02x", $0) }.joined() == "a9993e364706816aba3e25717850c26c9cd0d89d")
    }

    @Test("inspect reports the Android dialect, the app's table keys, the extras kept and unknown NAMEs")
    func inspect() throws {
        let result = try CLI.run(["inspect", Repository.sampleAndroid, "--json"], environment: berlin)
        #expect(result.exitCode == 0, "\(result.stderr)")
        #expect(result.json["dialect"] as? String == "android" && result.json["formatVersion"] as? Int == 1)
        let tables = try #require(result.json["tables"] as? [String: Int])
        #expect(tables["activityDailies"] == 2 && tables["activityBucketSamples"] == 2 && tables["activitySensorPollEvents"] == 2)
        #expect(tables["activityDaily"] == nil && tables["mealEntries"] == 1 && tables["foodProducts"] == 1)
        let extras = try #require(result.json["extensionFields"] as? [String: Int])
        #expect(extras["activitySessions.stravaActivityId"] == 1 && extras["userGoals.intakeCalories"] == 1 && extras["sleepSessions.sourceRaw"] == 1)
        #expect(result.stderr.contains(#"measurements.kindRaw "ECG_QT_INTERVAL" has no app value (kept verbatim)"#))
    }

    @Test("the Android export imports with every mapping, and its export imports into the app's format with the same rows")
    func importAndExport() throws {
        let dir = TemporaryDirectory()
        let imported = try CLI.run(["import", Repository.sampleAndroid, "--store", dir.file("s"), "--no-backfill"], environment: berlin)
        #expect(imported.exitCode == 0, "\(imported.stderr)")
        let store = try StoreSnapshot(store: dir.file("s"))
        func rows(_ table: ArchiveTable) -> [ArchiveRow] { store.rows[table.key] ?? [] }
        func value(_ row: ArchiveRow, _ table: ArchiveTable, _ field: String) -> FieldValue { row[table.fieldIndex(field)!] }

        let device = try #require(rows(.devices).first)
        #expect(value(device, .devices, "id") == .string("9B25E2FE-6FBB-5980-8A3A-1BA83361A399"))
        #expect(value(device, .devices, "stateRaw") == .string("connected") && value(device, .devices, "deviceTypeRaw") == .string("colmiR02"))
        #expect(value(try #require(rows(.deviceMeasurementConfigs).first), .deviceMeasurementConfigs, "deviceId") == value(device, .devices, "id"))
        let kinds = rows(.measurements).map { value($0, .measurements, "kindRaw") }
        #expect(kinds.contains(.string("hr")) && kinds.contains(.string("temp")) && kinds.contains(.string("ECG_QT_INTERVAL")))
        let workoutHR = try #require(rows(.measurements).first { value($0, .measurements, "activitySessionId") != .null })
        #expect(value(workoutHR, .measurements, "activitySessionId") == .string("9F1C2B7E-4A5D-4C3B-8E2F-1A2B3C4D5E6F"))
        #expect(Set(rows(.sleepStageBlocks).map { value($0, .sleepStageBlocks, "stageRaw") }) == [.string("light"), .string("deep"), .string("rem"), .string("awake")])
        let sleep = try #require(rows(.sleepSessions).first)
        #expect(rows(.sleepStageBlocks).allSatisfy { value($0, .sleepStageBlocks, "sessionId") == value(sleep, .sleepSessions, "id") })
        let buckets = rows(.activityBucketSamples)
        #expect(buckets.map { value($0, .activityBucketSamples, "startEpoch") } == [.int(1_772_175_600), .int(1_772_179_200)])
        #expect(value(buckets[0], .activityBucketSamples, "timestamp") == .date(1_772_175_600_000))
        #expect(value(buckets[0], .activityBucketSamples, "source") == .string("ring_history") && value(buckets[1], .activityBucketSamples, "source") == .string("ring_history"))
        let session = try #require(rows(.activitySessions).first { value($0, .activitySessions, "statusRaw") == .string("finished") })
        #expect(value(session, .activitySessions, "stravaActivityId") == .string("13579246810") && value(session, .activitySessions, "vitalsModeRaw") == .string("spot"))
        let deleted = try #require(rows(.activitySessions).first { value($0, .activitySessions, "statusRaw") == .string("deleted") })
        #expect(value(deleted, .activitySessions, "useGps") == .bool(true) && value(deleted, .activitySessions, "gpsPointCount") == .int(0))
        let message = try #require(rows(.coachMessages).first { value($0, .coachMessages, "role") == .string("user") })
        #expect(value(message, .coachMessages, "attachmentsJSON") == .string(#"["photo-1.jpg"]"#) && value(message, .coachMessages, "loggedActivityIdsJSON") == .null)
        let profile = try #require(rows(.userProfiles).first)
        #expect(value(profile, .userProfiles, "unitsRaw") == .string("metric") && value(profile, .userProfiles, "athleteMode") == .bool(false))
        #expect(value(profile, .userProfiles, "preferredGlucoseUnitRaw") == .string("mgdl") && value(profile, .userProfiles, "altitudeMeters") == .null)
        let goals = try #require(rows(.userGoals).first)
        #expect(value(goals, .userGoals, "intakeCalories") == .double(2100) && value(goals, .userGoals, "nutritionEnabled") == .bool(true))
        let notification = try #require(rows(.coachNotificationRecords).first)
        #expect(value(notification, .coachNotificationRecords, "dateKey") == .string("2026-02-27") && value(notification, .coachNotificationRecords, "slotRaw") == .string(""))
        let logs = rows(.wearableLogs)
        #expect(logs.map { value($0, .wearableLogs, "message") } == [.string("CONNECTION/INFO: Connected to R02_4F1A"), .string("Scan started"), .string("OTA check failed")])
        #expect(logs.map { value($0, .wearableLogs, "deviceTypeRaw") } == [.string("colmiR02"), .string(""), .string("CRP")])
        #expect(logs.map { value($0, .wearableLogs, "categoryRaw") } == [.string("connection"), .string("connection"), .string("FIRMWARE")])
        #expect(value(logs[0], .wearableLogs, "metadataJSON") == .string(#"{"rssi":-61}"#))
        let meal = try JSONNode.parse(Array(try #require(store.extensions["mealEntries"]?.first).utf8))
        #expect(meal["loggedAt"] == .string("2026-02-27T06:30:00.000Z") && meal["updatedAt"] == meal["createdAt"] && meal["calories"] == .number("420.0"))

        // Export writes the app's dialect; importing that gives the same rows.
        let export = try CLI.run(["export", "--store", dir.file("s"), "-o", dir.file("ios.json.gz")])
        #expect(export.exitCode == 0)
        let summary = try ArchiveReader(path: dir.file("ios.json.gz")).inspect()
        #expect(summary.dialect == .ios && summary.rowsFound["mealEntries"] == 1)
        #expect(try CLI.run(["import", dir.file("ios.json.gz"), "--store", dir.file("t"), "--no-backfill"]).exitCode == 0)
        #expect(try StoreSnapshot(store: dir.file("t")) == store)
        #expect(try CLI.run(["verify", dir.file("ios.json.gz"), "--store", dir.file("t")]).exitCode == 0)
    }

    @Test("the text reports of import and verify list the extension tables after the app's, with their rows")
    func extensionTablesInTextReports() throws {
        let dir = TemporaryDirectory()
        func lines(_ text: String) -> [[Substring]] { text.split(separator: "\n").map { $0.split(separator: " ") } }
        let imported = try CLI.run(["import", Repository.sampleAndroid, "--store", dir.file("s"), "--no-backfill", "--quiet"], environment: berlin)
        #expect(imported.exitCode == 0, "\(imported.stderr)")
        let importTable = lines(imported.stdout)
        #expect(importTable.contains(["mealEntries", "1", "1"]) && importTable.contains(["foodProducts", "1", "1"]), "\(imported.stdout)")
        let verified = try CLI.run(["verify", Repository.sampleAndroid, "--quiet"], environment: berlin)
        #expect(verified.exitCode == 0, "\(verified.stderr)")
        let verifyTable = lines(verified.stdout)
        #expect(verifyTable.contains(["mealEntries", "1"]) && verifyTable.contains(["foodProducts", "1"]), "\(verified.stdout)")
        let order = verifyTable.compactMap(\.first).map(String.init)
        #expect(try #require(order.firstIndex(of: "mealEntries")) > #require(order.firstIndex(of: "wearableLogs")))
    }

    @Test("a wearable log whose message looks like CATEGORY/LEVEL: text is never re-prefixed, over any number of round trips")
    func noPrefixing() throws {
        let dir = TemporaryDirectory()
        var archive = Repository.sampleAndroid
        for cycle in 0..<4 {
            #expect(try CLI.run(["import", archive, "--store", dir.file("s\(cycle)"), "--no-backfill"], environment: berlin).exitCode == 0)
            archive = dir.file("c\(cycle).json.gz")
            #expect(try CLI.run(["export", "--store", dir.file("s\(cycle)"), "-o", archive]).exitCode == 0)
        }
        let logs = try StoreSnapshot(archive: archive).rows["wearableLogs"] ?? []
        #expect(logs.map { $0[ArchiveTable.wearableLogs.fieldIndex("message")!] }.first == .string("CONNECTION/INFO: Connected to R02_4F1A"))
    }

    @Test("an Android file is refused like any other: duplicates after mapping, a date that is not epoch milliseconds, a missing required field")
    func refusals() throws {
        let dir = TemporaryDirectory()
        let text = try String(contentsOfFile: Repository.sampleAndroid, encoding: .utf8)
        // name, a regular expression, its replacement, the phrase the refusal holds.
        let cases: [(String, String, String, String)] = [
            ("duplicate", #""id": "gps-2""#, #""id": "gps-1""#, "duplicate GPS point entries"),
            ("string date", #""timestamp": [0-9]+"#, #""timestamp": "2026-02-27T01:00:00Z""#, "expected epoch milliseconds"),
            ("missing field", #""hexPayload": "15","#, "", #"missing the required field "hexPayload""#),
        ]
        for (name, pattern, replacement, message) in cases {
            guard let range = text.range(of: pattern, options: .regularExpression) else {
                Issue.record("fixture text missing for \(name)")
                continue
            }
            let edited = text.replacingCharacters(in: range, with: replacement)
            let result = try CLI.run(["import", dir.write("\(name).json", edited), "--store", dir.file("s-\(name)")], environment: berlin)
            #expect(result.exitCode == 1, "\(name)")
            #expect(result.stderr.contains(message), "\(name): \(result.stderr)")
            #expect(!FileManager.default.fileExists(atPath: dir.file("s-\(name)")))
        }
    }

    @Test("a file whose table shared by both dialects comes first, damaged after it, is refused for the damage, where it is, not for the other dialect's values")
    func damageAheadOfWhatTellsTheDialect() throws {
        let measurement = #"{"id":"m1","kindRaw":"HEART_RATE","value":60,"unit":"bpm","timestamp":1772348400000,"sourceRaw":"RING","confidenceRaw":"KNOWN","createdAt":1772348400000}"#
        let head = #"{"formatVersion":2,"measurements":["# + measurement + "],"
        for (name, tail, place) in [
            ("trailing comma", #""batterySamples":[{"id":"b1","percent":5,"timestamp":1,"createdAt":1,}],"exportedAt":1773600000000}"#, #"in "batterySamples""#),
            ("lone surrogate", #""batterySamples":[{"id":"b\ud800","percent":5,"timestamp":1,"createdAt":1}],"exportedAt":1773600000000}"#, #"in "batterySamples""#),
            ("unknown key", #""zzz\ud800":1,"exportedAt":1773600000000}"#, #"after "measurements""#),
            ("no colon", #""batterySamples" [],"exportedAt":1773600000000}"#, #"in "batterySamples""#),
        ] {
            let text = head + tail
            for input in [["inspect", "file"], ["import", "file", "--store", "s"], ["verify", "file"]] {
                let dir = TemporaryDirectory()
                dir.write("file", text)
                let result = try CLI.run(input.map { $0 == "file" || $0 == "s" ? dir.file($0) : $0 })
                let shown = result.stdout + result.stderr
                #expect(result.exitCode == 1 && shown.contains(place) && shown.contains("invalid JSON at byte"), "\(name), \(input[0]): \(shown)")
                #expect(!shown.contains("not a UUID") && !shown.contains("unrecognized date"), "\(name), \(input[0]): \(shown)")
                #expect(!FileManager.default.fileExists(atPath: dir.file("s")))
                if name == "trailing comma" {
                    // The file's own byte, as the parser counts it: the `}` after the comma.
                    let byte = text.utf8.count - #"}],"exportedAt":1773600000000}"#.utf8.count
                    #expect(shown.contains("invalid JSON at byte \(byte):"), "\(name), \(input[0]): \(shown)")
                }
            }
        }
    }

}
