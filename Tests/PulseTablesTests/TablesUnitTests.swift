import Foundation
import Testing
@testable import PulseArchive
import PulseSystem
@testable import PulseTables

@Suite("PulseTables")
struct TablesUnitTests {
    func field(_ text: String) -> String {
        String(decoding: ByteBuffer.collecting { CSVText.appendField(text, to: &$0) }, as: UTF8.self)
    }

    @Test("RFC 4180 fields: quoted for comma, quote, CR, LF, NUL, edge spaces and the empty string; every byte kept")
    func quoting() {
        #expect(field("plain") == "plain")
        #expect(field("=1+2") == "=1+2" && field("-5") == "-5" && field("@x") == "@x" && field("+1") == "+1")
        #expect(field("in side") == "in side")
        #expect(field("a,b") == "\"a,b\"")
        #expect(field("say \"hi\"") == "\"say \"\"hi\"\"\"")
        #expect(field("\"") == "\"\"\"\"")
        #expect(field("cr\r") == "\"cr\r\"" && field("lf\n") == "\"lf\n\"")
        #expect(field("n\u{0}l") == "\"n\u{0}l\"")
        #expect(field(" lead") == "\" lead\"" && field("trail ") == "\"trail \"" && field("\ttab") == "\"\ttab\"")
        #expect(field("") == "\"\"")
        #expect(field("🏃‍♀️") == "🏃‍♀️")
    }

    @Test("cells hold what the writer writes: shortest doubles, -0, 64-bit integers, millisecond dates; non-finite refused")
    func fieldText() throws {
        func text(_ value: FieldValue) throws -> String {
            String(decoding: try ByteBuffer.collecting { try FieldText.append(value, to: &$0) }, as: UTF8.self)
        }
        #expect(try text(.double(62.5)) == "62.5" && text(.double(1234567.0)) == "1234567" && text(.double(-0.0)) == "-0")
        #expect(try text(.double(1e-7)) == "1e-07" && text(.double(.greatestFiniteMagnitude)) == "1.7976931348623157e+308")
        #expect(try text(.int(.min)) == "-9223372036854775808" && text(.bool(true)) == "true" && text(.null) == "")
        #expect(try text(.date(1_772_313_781_310)) == "2026-02-28T21:23:01.310Z")
        #expect(throws: ArchiveError.self) { try text(.double(.nan)) }
        #expect(throws: ArchiveError.self) { try text(.date(.max)) }
    }

    @Test("units where the format gives one; measurement values point at their unit column")
    func units() {
        let columns = Dictionary(uniqueKeysWithValues: ArchiveTable.all.flatMap { table in TableColumn.of(table).map { ("\(table.key).\($0.name)", $0) } })
        #expect(columns["activitySessions.totalPauseSeconds"]?.unit == "s" && columns["activityBucketSamples.startEpoch"]?.unit == "s")
        #expect(columns["userProfiles.heightCm"]?.unit == "cm" && columns["userProfiles.weightKg"]?.unit == "kg")
        #expect(columns["coachConversations.totalCostUSD"]?.unit == "USD" && columns["batterySamples.percent"]?.unit == "%")
        #expect(columns["userGoals.calories"]?.unit == "kcal" && columns["activityDailies.calories"]?.unit == nil)
        #expect(columns["measurements.value"]?.unitColumn == "unit" && columns["activitySamples.value"]?.unitColumn == "unit")
        #expect(columns["measurements.timestamp"]?.type == .date && columns["userProfiles.athleteMode"]?.type == .boolean)
    }

    @Test("extension rows: columns are every key any row has, sorted; a literal with a fraction is real, the archive's dates date, mixed kinds JSON")
    func extensionColumns() throws {
        let spool = try ExtensionSpool()
        try spool.add(try JSONNode.parse(Array(#"{"id":"a","kcal":420.0,"n":1,"tags":["x"],"mixed":1,"flag":true,"at":"2026-02-27T06:31:00.000Z","when":"2026-02-27T06:31:00Z"}"#.utf8)))
        try spool.add(try JSONNode.parse(Array(#"{"id":"b","kcal":3,"n":2,"mixed":"two","extra":null,"at":"2026-02-28T00:00:00.000Z","when":"2026-02-28T00:00:00.000Z"}"#.utf8)))
        let types = Dictionary(uniqueKeysWithValues: spool.columns.map { ($0.name, $0.type) })
        #expect(spool.columns.map(\.name) == ["at", "extra", "flag", "id", "kcal", "mixed", "n", "tags", "when"])
        #expect(types == ["at": .date, "extra": .text, "flag": .boolean, "id": .text, "kcal": .real, "mixed": .json, "n": .integer, "tags": .json,
                          "when": .text])
    }

    @Test("extension numbers a typed loader could not hold make their column JSON: an integer beyond 64 bits, a literal beyond the doubles, an integer beyond 2^53 among reals; the edges that fit keep their type")
    func extensionNumbersBeyondTheirType() throws {
        let spool = try ExtensionSpool()
        try spool.add(try JSONNode.parse(Array(#"{"id":"a","wide":18446744073709551616,"huge":1e400,"exact":9007199254740993,"mixed":0.5,"top":9223372036854775807,"bottom":-9223372036854775808,"small":1e-400,"big":1.7976931348623157e308,"near":9007199254740992}"#.utf8)))
        try spool.add(try JSONNode.parse(Array(#"{"id":"b","wide":1,"huge":1,"exact":1,"mixed":9007199254740993,"top":1,"bottom":1,"small":0.5,"big":1,"near":0.5}"#.utf8)))
        let types = Dictionary(uniqueKeysWithValues: spool.columns.map { ($0.name, $0.type) })
        #expect(types == ["id": .text, "wide": .json, "huge": .json, "exact": .integer, "mixed": .json, "top": .integer, "bottom": .integer,
                          "small": .real, "big": .real, "near": .real])
    }
}
