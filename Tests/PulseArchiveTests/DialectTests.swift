import Foundation
import Testing
@testable import PulseArchive
@testable import PulseTestSupport

@Suite("The app's JSON dialect")
struct DialectTests {
    @Test("dates: milliseconds written, fractions of 1–9 digits and offsets read, rounding down")
    func dates() throws {
        #expect(ArchiveDate.parse("2026-07-26T13:45:12.345Z") == 1_785_073_512_345)
        #expect(ArchiveDate.parse("2026-07-26T13:45:12Z") == 1_785_073_512_000)
        #expect(ArchiveDate.parse("2026-07-26T13:45:12.3Z") == 1_785_073_512_300)
        #expect(ArchiveDate.parse("2026-07-26T13:45:12.345999999Z") == 1_785_073_512_345)
        #expect(ArchiveDate.parse("2026-07-26T15:45:12.345+02:00") == 1_785_073_512_345)
        #expect(ArchiveDate.parse("2026-07-26T08:15:12.345-05:30") == 1_785_073_512_345)
        #expect(ArchiveDate.parse("1969-12-31T23:59:59.999Z") == -1)
        #expect(ArchiveDate.parse("2024-02-29T00:00:00Z") != nil)
        for bad in ["2026-07-26", "2026-07-26T13:45:12", "2026-13-01T00:00:00Z", "2025-02-29T00:00:00Z",
                    "2026-07-26T24:00:00Z", "2026-07-26T13:45:12.Z", "2026-07-26T13:45:12.1234567890Z",
                    "2026-07-26T13:45:12+0200", "2026-07-26 13:45:12Z", "1785073512345", "2026-07-26T13:45:12zz"] {
            #expect(ArchiveDate.parse(bad) == nil, "\(bad) should be refused")
        }
        #expect(try ArchiveDate.format(1_785_073_512_345) == "2026-07-26T13:45:12.345Z")
        #expect(try ArchiveDate.format(-1) == "1969-12-31T23:59:59.999Z")
        #expect(try ArchiveDate.format(0) == "1970-01-01T00:00:00.000Z")
        #expect(throws: ArchiveError.self) { try ArchiveDate.format(Int64.max) }
    }

    @Test("the calendar arithmetic agrees with Foundation since the Gregorian reform")
    func calendarArithmetic() throws {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        // Foundation switches to the Julian calendar before 1582-10-15 (day -141 427).
        for days in stride(from: -141_000, through: 150_000, by: 97) {
            let date = Date(timeIntervalSince1970: Double(days) * 86_400)
            let parts = calendar.dateComponents([.year, .month, .day], from: date)
            let civil = ArchiveDate.civilDate(daysSinceEpoch: Int64(days))
            #expect(civil.year == Int64(parts.year!) && civil.month == Int64(parts.month!) && civil.day == Int64(parts.day!))
            #expect(ArchiveDate.daysSinceEpoch(year: civil.year, month: civil.month, day: civil.day) == Int64(days))
        }
    }

    @Test("every date is written as a formatter built independently writes it: seeded instants over all ten thousand years, every millisecond and second of a day, both ends")
    func datesAgainstAnIndependentFormatter() throws {
        // From the civil date (checked against Foundation above) with String(format:), digit by digit.
        func reference(_ millis: Int64) -> String {
            let ms = ((millis % 1_000) + 1_000) % 1_000, seconds = (millis - ms) / 1_000
            let secondOfDay = ((seconds % 86_400) + 86_400) % 86_400, days = (seconds - secondOfDay) / 86_400
            let civil = ArchiveDate.civilDate(daysSinceEpoch: days)
            return String(format: "%04lld-%02lld-%02lldT%02lld:%02lld:%02lld.%03lldZ", civil.year, civil.month, civil.day,
                          secondOfDay / 3_600, secondOfDay / 60 % 60, secondOfDay % 60, ms)
        }
        var random = SeededRandom.fromEnvironment("DialectTests.datesAgainstAnIndependentFormatter")
        let range = ArchiveDate.representable
        var instants = [range.lowerBound, range.upperBound, -1, 0, 1]
        instants += (0..<20_000).map { _ in Int64.random(in: range, using: &random) }
        instants += (0..<1_000).map { Int64($0) } + (0..<86_400).map { Int64($0) * 1_000 + 999 }
        for millis in instants {
            let written = try ArchiveDate.format(millis)
            #expect(written == reference(millis), "\(millis)")
            #expect(ArchiveDate.parse(written) == millis, "\(millis)")
        }
    }

    @Test("UUIDs: either case read, upper case kept")
    func uuids() {
        #expect(CanonicalUUID.canonical("3f2504e0-4f89-11d3-9a0c-0305e82c3301") == "3F2504E0-4F89-11D3-9A0C-0305E82C3301")
        #expect(CanonicalUUID.canonical("3F2504E0-4F89-11D3-9A0C-0305E82C3301") == "3F2504E0-4F89-11D3-9A0C-0305E82C3301")
        for bad in ["3F2504E04F8911D39A0C0305E82C3301", "3F2504E0-4F89-11D3-9A0C-0305E82C330", "G F2504E0-4F89-11D3-9A0C-0305E82C3301",
                    "{3F2504E0-4F89-11D3-9A0C-0305E82C3301}", "demo-device"] {
            #expect(CanonicalUUID.canonical(bad) == nil)
        }
    }

    @Test("one formatter writes UUIDs: the canonical form of 16 bytes, a name-based UUID, verify's 128-bit keys")
    func uuidFormatter() {
        #expect(CanonicalUUID.string(bytes: Array(0..<16).map { UInt8($0 * 17) }) == "00112233-4455-6677-8899-AABBCCDDEEFF")
        // RFC 9562's example: the DNS namespace and "www.example.com".
        #expect(NameBasedUUID.make(namespace: "6ba7b810-9dad-11d1-80b4-00c04fd430c8", name: "www.example.com")
            == "2ED6657D-E927-568B-95E1-2665A8AEA6A2")
        var out: [UInt8] = []
        HexText.append(0x0F, to: &out)
        HexText.append(0xA0, to: &out)
        #expect(out == Array("0FA0".utf8))
    }

    @Test("strings escape quotes, backslashes, controls and the slash; doubles are shortest and integral ones bare")
    func writerForms() throws {
        let dir = TemporaryDirectory()
        var content = InMemoryContent()
        var row = RowFactory.minimal(.wearableLogs, index: 0)
        row[ArchiveTable.wearableLogs.fieldIndex("message")!] = .string("a/b \"q\" \\ \n\u{01} é")
        content.rows["wearableLogs"] = [row]
        var measurement = RowFactory.minimal(.measurements, index: 0)
        measurement[ArchiveTable.measurements.fieldIndex("value")!] = .double(58)
        content.rows["measurements"] = [measurement]
        var gps = RowFactory.minimal(.activityGpsPoints, index: 0)
        gps[ArchiveTable.activityGpsPoints.fieldIndex("latitude")!] = .double(0.1)
        gps[ArchiveTable.activityGpsPoints.fieldIndex("longitude")!] = .double(1e-7)
        content.rows["activityGpsPoints"] = [gps]
        try writeArchive(content, to: dir.file("a.json"), compressed: false)
        let text = try String(contentsOfFile: dir.file("a.json"), encoding: .utf8)
        #expect(text.contains(#""message":"a\/b \"q\" \\ \n\u0001 é""#))
        #expect(text.contains(#""value":58}"#))
        #expect(text.contains(#""latitude":0.1,"#))
        #expect(text.contains(#""longitude":1e-07"#))
        // The version first, the fields that change every night last (ArchiveWriter).
        #expect(text.hasPrefix(#"{"formatVersion":2,"appVersion":"tests","activityBucketSamples":[],"#))
        #expect(text.contains(#""wearableLogs":[{"#))
        #expect(text.range(of: #","counts":{"activityBucketSamples":0,"#)!.lowerBound > text.range(of: #""wearableLogs":"#)!.lowerBound)
        #expect(text.hasSuffix(#","exportedAt":"2026-03-15T18:40:00.000Z"}"#))
    }

    @Test("row keys are sorted by UTF-8 bytes and nil optionals are omitted")
    func rowLayout() throws {
        let dir = TemporaryDirectory()
        var content = InMemoryContent()
        content.rows["batterySamples"] = [RowFactory.minimal(.batterySamples, index: 0)]
        content.rows["measurements"] = [RowFactory.minimal(.measurements, index: 0)]
        try writeArchive(content, to: dir.file("a.json"), compressed: false)
        let text = try String(contentsOfFile: dir.file("a.json"), encoding: .utf8)
        let battery = try #require(text.range(of: #""batterySamples":[{"#))
        let afterBattery = text[battery.upperBound...]
        #expect(afterBattery.hasPrefix(#""createdAt":"#))
        #expect(!text.contains("activitySessionId"))
        #expect(!text.contains("null"))
    }
}
