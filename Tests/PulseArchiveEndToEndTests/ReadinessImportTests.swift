import Foundation
import Testing
@testable import PulseArchive
@testable import PulseStore
@testable import Readiness
#if canImport(FoundationXML)
import FoundationXML
import PulseSQLite
#endif
@testable import PulseTestSupport
@testable import PulseStoreTestSupport

@Suite("Readiness after import, and the readiness command")
struct ReadinessImportTests {
    let zone = ["--timezone", "Europe/Berlin"]

    @Test("a store in a zone whose DST change skips midnight (America/Santiago, 2026-09-06 starts at 01:00): a row for every scored day, that day included, and readiness shows each day its own score (it showed the 7th's for the 6th, which had no row)")
    func dstChangeAtMidnight() throws {
        let dir = TemporaryDirectory()
        let zone = ["TZ": "America/Santiago"]
        let demo = try CLI.run(["demo", "--store", dir.file("s"), "--days", "60", "--end", "2026-09-20"], environment: zone)
        try #require(demo.exitCode == 0, "\(demo.stderr)")
        let shown = try CLI.run(["readiness", "--store", dir.file("s"), "--days", "30", "--as-of", "2026-09-20", "--json"], environment: zone)
        try #require(shown.exitCode == 0, "\(shown.stderr)")
        let days = try #require(shown.json["days"] as? [[String: Any]])
        let scores = Dictionary(uniqueKeysWithValues: days.map { ($0["date"] as? String ?? "", $0["score"] as? Int) })
        #expect(scores["2026-09-06"] != nil && scores["2026-09-06"]! != nil, "\(days.map { "\($0["date"] ?? ""): \($0["score"] ?? "-")" })")
        // Every stored row is of another local day.
        let calendar = LocalCalendar(timeZone: TimeZone(identifier: "America/Santiago")!)
        let database = try SQLiteDatabase(path: dir.file("s/pulse.sqlite"), create: false)
        let rows = try database.prepare(#"SELECT "date" FROM "readinessDailies" ORDER BY "date""#)
        var dates: [String] = []
        while try rows.step() { dates.append(calendar.dayString(rows.int64(at: 0))) }
        #expect(Set(dates).count == dates.count && dates.contains("2026-09-06"), "\(dates)")
    }

    @Test("readiness read west of the zone its rows were computed in warns that they show a day early, naming when their day began; in their own zone, no warning")
    func rowsOfAnotherZone() throws {
        let dir = TemporaryDirectory()
        let demo = try CLI.run(["demo", "--store", dir.file("s"), "--days", "20", "--end", "2026-11-02"], environment: ["TZ": "America/New_York"])
        try #require(demo.exitCode == 0, "\(demo.stderr)")
        let home = try CLI.run(["readiness", "--store", dir.file("s"), "--days", "4", "--as-of", "2026-11-02"], environment: ["TZ": "America/New_York"])
        #expect(home.exitCode == 0 && !home.stderr.contains("warning"), "\(home.stderr)")
        let away = try CLI.run(["readiness", "--store", dir.file("s"), "--days", "4", "--as-of", "2026-11-02", "--json"], environment: ["TZ": "Pacific/Pago_Pago"])
        #expect(away.exitCode == 0 && away.stderr.contains("computed in another time zone") && away.stderr.contains("began at 18:00 here")
                && away.stderr.contains("--timezone"), "\(away.stderr)")
        #expect(away.json["days"] is [[String: Any]], "\(away.stdout)")
    }

    @Test("importing the format-1 sample produces readiness rows; importing it again changes nothing")
    func backfillAfterImport() throws {
        let dir = TemporaryDirectory()
        let store = dir.file("s")
        let first = try CLI.run(["import", Repository.sampleFormat1, "--store", store, "--json"] + zone)
        #expect(first.exitCode == 0, "\(first.stderr)")
        let readiness = try #require(first.json["readiness"] as? [String: Any])
        let scored = try #require(readiness["scored"] as? Int)
        #expect(scored > 5 && (readiness["unavailable"] as? Int).map { $0 + scored } == 90)
        #expect((first.json["tables"] as? [String: Int])?["readinessDailies"] == scored)
        let before = try StoreSnapshot(store: store)
        let second = try CLI.run(["import", Repository.sampleFormat1, "--store", store, "--merge", "--json"] + zone)
        #expect(second.exitCode == 0)
        #expect(try StoreSnapshot(store: store) == before)
    }

    @Test("a readiness row at algorithmVersion 1 in an archive is rescored to 2; rows at 2 are kept verbatim")
    func oldVersionRescored() throws {
        let dir = TemporaryDirectory()
        var visitor = CollectingVisitor()
        try ArchiveReader(path: Repository.sampleFormat2).read(into: &visitor)
        var content = InMemoryContent(rows: visitor.rows, settings: Array(visitor.settings), attachments: Array(visitor.attachments))
        let table = ArchiveTable.readinessDailies
        var rows = try #require(content.rows[table.key])
        let versionIndex = table.fieldIndex("algorithmVersion")!, dateIndex = table.fieldIndex("date")!
        rows.sort { "\($0[dateIndex])" < "\($1[dateIndex])" }
        let old = rows.count - 1
        rows[old][versionIndex] = .int(1)
        content.rows[table.key] = rows
        try writeArchive(content, to: dir.file("v1row.json.gz"))

        let result = try CLI.run(["import", dir.file("v1row.json.gz"), "--store", dir.file("s")] + zone)
        #expect(result.exitCode == 0, "\(result.stderr)")
        let after = try StoreSnapshot(store: dir.file("s"))
        let stored = try #require(after.rows[table.key])
        let idIndex = table.fieldIndex("id")!
        #expect(!stored.contains { $0[versionIndex] == .int(1) })
        let rescored = try #require(stored.first { $0[idIndex] == rows[old][idIndex] })
        #expect(rescored[versionIndex] == .int(2) && rescored != rows[old])
        for row in rows.dropLast() { #expect(stored.contains(row), "a row at version 2 was not kept verbatim") }
    }

    @Test("the backfill survives hostile stored values: extreme integers and doubles, odd raws")
    func hostileStore() throws {
        let dir = TemporaryDirectory()
        var content = RowFactory.everyTable()
        // Dates near the fixture's so the backfill window covers them.
        content.rows["readinessDailies"] = []
        try writeArchive(content, to: dir.file("odd.json.gz"))
        let result = try CLI.run(["import", dir.file("odd.json.gz"), "--store", dir.file("s"), "--as-of", "2026-02-28", "--json"] + zone)
        #expect(result.exitCode == 0, "\(result.stderr)")
        let readiness = try #require(result.json["readiness"] as? [String: Any])
        #expect((readiness["scored"] as? Int ?? -1) + (readiness["unavailable"] as? Int ?? -1) == 90)
        let history = try CLI.run(["readiness", "--store", dir.file("s"), "--as-of", "2026-02-28", "--json"] + zone)
        #expect(history.exitCode == 0 && !history.stdout.contains("nan") && !history.stdout.contains("inf"))
    }

    @Test("--no-backfill skips readiness; readiness --backfill computes it")
    func explicitBackfill() throws {
        let dir = TemporaryDirectory()
        let result = try CLI.run(["import", Repository.sampleFormat1, "--store", dir.file("s"), "--no-backfill", "--json"] + zone)
        #expect((result.json["readiness"] as? [String: Any])?["scored"] as? Int == 0)
        #expect((result.json["tables"] as? [String: Int])?["readinessDailies"] == 0)
        let before = try CLI.run(["readiness", "--store", dir.file("s"), "--json", "--days", "7"] + zone)
        let days = try #require(before.json["days"] as? [[String: Any]])
        #expect(days.count == 7 && days.allSatisfy { $0["score"] is NSNull })
        #expect(days.contains { $0["reason"] as? String == "notComputed" })
        let after = try CLI.run(["readiness", "--store", dir.file("s"), "--json", "--days", "7", "--backfill"] + zone)
        let scored = try #require(after.json["days"] as? [[String: Any]]).filter { $0["score"] as? Int != nil }
        #expect(!scored.isEmpty)
        let text = try CLI.run(["readiness", "--store", dir.file("s"), "--days", "7"] + zone)
        #expect(text.exitCode == 0 && text.stdout.contains("biggest drag") && text.stdout.contains("your baseline"))
    }

    @Test("readiness --svg writes a chart that parses and holds one mark per scored day")
    func svgChart() throws {
        let dir = TemporaryDirectory()
        #expect(try CLI.run(["demo", "--store", dir.file("s"), "--days", "60", "--end", "2026-03-15"] + zone).exitCode == 0)
        let result = try CLI.run(["readiness", "--store", dir.file("s"), "--days", "75", "--json", "--svg", dir.file("chart.svg")] + zone)
        #expect(result.exitCode == 0, "\(result.stderr)")
        let days = try #require(result.json["days"] as? [[String: Any]])
        let scoredDays = days.filter { $0["score"] as? Int != nil }.count
        #expect(scoredDays > 0 && scoredDays < days.count, "the range should hold gaps too")

        final class Marks: NSObject, XMLParserDelegate {
            var scores = 0, trends = 0, medians = 0
            func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?, attributes: [String: String] = [:]) {
                switch (name, attributes["class"]) {
                case ("circle", "score"): scores += 1
                case ("polyline", "trend"): trends += 1
                case ("polyline", "median"): medians += 1
                default: break
                }
            }
        }
        let parser = try #require(XMLParser(contentsOf: URL(fileURLWithPath: dir.file("chart.svg"))))
        let marks = Marks()
        parser.delegate = marks
        #expect(parser.parse(), "the SVG is not well-formed XML")
        #expect(marks.scores == scoredDays && marks.trends >= 1 && marks.medians == 1)
        #expect(StoreFixtures.mode(dir.file("chart.svg")) == 0o600)
    }
}
