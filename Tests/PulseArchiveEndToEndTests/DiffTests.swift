import Foundation
import Testing
import PulseDigest
@testable import PulseArchive
@testable import PulseVerify
@testable import PulseTestSupport
@testable import PulseStoreTestSupport

/// An archive's JSON as Foundation objects: a test edits it and writes it back, with other
/// whitespace and, when asked, its keys in reverse order.
private struct EditableArchive {
    var root: [String: Any]

    init(_ path: String) throws {
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        if bytes.starts(with: [0x1F, 0x8B]) { bytes = try readToEnd(GzipReader(source: MemorySource(bytes), name: path)) }
        root = try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
    }

    func rows(_ table: String) -> [[String: Any]] { root[table] as? [[String: Any]] ?? [] }

    mutating func setRows(_ table: String, _ rows: [[String: Any]]) {
        root[table] = rows
        // The declared count follows, so the edit is a sound archive of other data.
        if var counts = root["counts"] as? [String: Any] {
            counts[table] = rows.count
            root["counts"] = counts
        }
    }

    mutating func edit(_ table: String, _ body: (inout [[String: Any]]) -> Void) {
        var rows = rows(table)
        body(&rows)
        setRows(table, rows)
    }

    /// Writes the JSON: keys in reverse order and spaced out when `scrambled`, compact otherwise.
    func write(to path: String, scrambled: Bool = false) throws {
        var out = ""
        Self.write(root, scrambled: scrambled, to: &out)
        #expect(FileManager.default.createFile(atPath: path, contents: Data(out.utf8)))
    }

    private static func write(_ value: Any, scrambled: Bool, to out: inout String) {
        let gap = scrambled ? "\n  " : ""
        if let object = value as? [String: Any] {
            out += "{" + gap
            let keys = object.keys.sorted()
            for (i, key) in (scrambled ? Array(keys.reversed()) : keys).enumerated() {
                if i > 0 { out += "," + gap }
                write(key, scrambled: scrambled, to: &out)
                out += scrambled ? " : " : ":"
                write(object[key]!, scrambled: scrambled, to: &out)
            }
            out += gap + "}"
        } else if let array = value as? [Any] {
            out += "[" + gap
            for (i, element) in array.enumerated() {
                if i > 0 { out += "," + gap }
                write(element, scrambled: scrambled, to: &out)
            }
            out += gap + "]"
        } else {
            let data = try! JSONSerialization.data(withJSONObject: value, options: [.fragmentsAllowed])
            out += String(decoding: data, as: UTF8.self)
        }
    }
}

@Suite("Diff: two archives compared by unique key and content")
struct DiffTests {
    /// A demo store's export (gzip) and the archive's JSON.
    private func demoArchive(_ dir: TemporaryDirectory, days: Int = 5) throws -> (path: String, archive: EditableArchive) {
        try StoreFixtures.demoStore(dir.file("store"), days: days)
        _ = try StoreFixtures.export(dir.file("store"), to: dir.file("old.json.gz"))
        return (dir.file("old.json.gz"), try EditableArchive(dir.file("old.json.gz")))
    }

    private func diff(_ arguments: [String]) throws -> CLI.Result { try CLI.run(["diff"] + arguments) }

    private func counts(_ json: [String: Any], _ table: String) -> [Int] {
        let entry = (json["tables"] as? [String: Any])?[table] as? [String: Any] ?? json[table] as? [String: Any] ?? [:]
        return ["added", "removed", "changed"].map { entry[$0] as? Int ?? -1 }
    }

    @Test("known numbers of added, removed and changed rows in several tables, settings, attachments and documents")
    func knownNumbers() throws {
        let dir = TemporaryDirectory()
        var (old, archive) = try demoArchive(dir)
        var removedIDs: [String] = []
        archive.edit("measurements") { rows in
            for _ in 0..<3 { removedIDs.append(rows.removeLast()["id"] as! String) }
        }
        archive.edit("sleepStageBlocks") { rows in
            for i in 0..<2 {
                var row = rows[i]
                row["id"] = String(format: "00000000-0000-4000-8000-%012d", i)
                rows.append(row)
            }
        }
        archive.edit("batterySamples") { rows in
            rows[0]["percent"] = (rows[0]["percent"] as! Int) == 1 ? 2 : 1
        }
        archive.edit("activityDailies") { rows in
            rows[1]["steps"] = (rows[1]["steps"] as? Int ?? 0) + 1
            rows[2]["steps"] = (rows[2]["steps"] as? Int ?? 0) + 1
            rows.removeFirst()
        }
        var settings = try #require(archive.root["settings"] as? [String: Any])
        let settingKeys = settings.keys.sorted()
        settings[settingKeys[0]] = nil
        settings[settingKeys[1]] = "{\"changed\":true}"
        settings["tests.new.v1"] = "{}"
        archive.root["settings"] = settings
        var attachments = try #require(archive.root["attachments"] as? [[String: Any]])
        attachments[0]["base64"] = "AAEC"
        archive.root["attachments"] = attachments
        var documents = try #require(archive.root["documents"] as? [[String: Any]])
        #expect(documents.count >= 2)
        let removedDocument = documents.removeLast()["path"] as! String
        var document = try #require(documents[0]["document"] as? [String: Any])
        document["color"] = "tests-blue"
        documents[0]["document"] = document
        archive.root["documents"] = documents
        try archive.write(to: dir.file("new.json"))

        let result = try diff([old, dir.file("new.json"), "--json", "--show", "5"])
        #expect(result.exitCode == 0, "\(result.stderr)")
        let json = result.json
        #expect(json["identical"] as? Bool == false)
        #expect(counts(json, "measurements") == [0, 3, 0])
        #expect(counts(json, "sleepStageBlocks") == [2, 0, 0])
        #expect(counts(json, "batterySamples") == [0, 0, 1])
        #expect(counts(json, "activityDailies") == [0, 1, 2])
        #expect(counts(json, "settings") == [1, 1, 1])
        #expect(counts(json, "attachments") == [0, 0, 1])
        #expect(counts(json, "documents") == [0, 1, 1])
        // Every other table is there, unchanged.
        let tables = try #require(json["tables"] as? [String: Any])
        for table in tables.keys where !["measurements", "sleepStageBlocks", "batterySamples", "activityDailies"].contains(table) {
            #expect(counts(json, table) == [0, 0, 0], "\(table)")
        }
        #expect(tables.count == ArchiveTable.all.count)
        let measurements = try #require(tables["measurements"] as? [String: Any])
        #expect((measurements["removedKeys"] as? [String]) == removedIDs.sorted())
        let docs = try #require(json["documents"] as? [String: Any])
        #expect((docs["removedKeys"] as? [String]) == [removedDocument])

        // The human report: a line per differing table, and the totals.
        let text = try diff([old, dir.file("new.json")])
        #expect(text.exitCode == 0)
        let line = try #require(text.stdout.split(separator: "\n").first { $0.contains("measurements") })
        #expect(line.contains("+0") && line.contains("-3") && line.contains("~0"))
        #expect(text.stdout.contains("diff: 7 of \(ArchiveTable.all.count + 3) tables and categories differ: +3 -6 ~6"))
        #expect(!text.stdout.contains("sleepSessions"))
    }

    @Test("whitespace, key order, date spelling and compression are no change")
    func sameContent() throws {
        let dir = TemporaryDirectory()
        var (old, archive) = try demoArchive(dir)
        try archive.write(to: dir.file("scrambled.json"), scrambled: true)
        // The same instant in another spelling: an offset, no fraction.
        archive.edit("batterySamples") { rows in
            let millis = ArchiveDate.parse(rows[0]["timestamp"] as! String)!
            let plusOne = try! ArchiveDate.format(millis + 3_600_000)
            rows[0]["timestamp"] = String(plusOne.prefix(19)) + (millis % 1000 == 0 ? "" : ".\(millis % 1000)") + "+01:00"
        }
        try archive.write(to: dir.file("dates.json"))
        let plain = try EditableArchive(old)
        try plain.write(to: dir.file("plain.json"))
        try gzipped([UInt8](try Data(contentsOf: URL(fileURLWithPath: dir.file("plain.json")))), to: dir.file("plain.json.gz"))

        for other in ["scrambled.json", "dates.json", "plain.json", "plain.json.gz"] {
            let result = try diff([old, dir.file(other), "--exit-code", "--json"])
            #expect(result.exitCode == 0, "\(other): \(result.stdout) \(result.stderr)")
            #expect(result.json["identical"] as? Bool == true, "\(other)")
        }
        let text = try diff([dir.file("plain.json"), dir.file("plain.json.gz")])
        #expect(text.stdout.hasSuffix("diff: no differences\n") || text.stdout.hasSuffix("diff: no differences"))
        // And the check is real: the value itself changed is a change.
        var changed = try EditableArchive(old)
        changed.edit("batterySamples") { rows in rows[0]["timestamp"] = "2001-01-01T00:00:00.000Z" }
        try changed.write(to: dir.file("changed.json"))
        let result = try diff([old, dir.file("changed.json"), "--exit-code", "--json"])
        #expect(result.exitCode == 1)
        #expect(counts(result.json, "batterySamples") == [0, 0, 1])
    }

    @Test("a JSON object carried as a document file is the document its re-export writes: no change against it; its content changed, or a file that is no JSON object, is compared as before")
    func documentFileAsDocument() throws {
        let dir = TemporaryDirectory()
        var (_, archive) = try demoArchive(dir)
        let path = "Splits/01ARZ3NDEKTSV4RRFFQ69G5FAV.json"
        func file(_ text: String) -> [String: Any] { ["path": path, "base64": Data(text.utf8).base64EncodedString()] }
        // Keys out of the canonical order: the store keeps these bytes, and its export writes
        // them as a document with its base64.
        var files = archive.root["documentFiles"] as? [[String: Any]] ?? []
        files.append(file(#"{"schemaVersion":3,"id":"01ARZ3NDEKTSV4RRFFQ69G5FAV"}"#))
        archive.root["documentFiles"] = files
        try archive.write(to: dir.file("carried.json"))
        let imported = try CLI.run(["import", dir.file("carried.json"), "--store", dir.file("s1"), "--no-backfill", "-q"])
        #expect(imported.exitCode == 0, "\(imported.stderr)")
        let exported = try CLI.run(["export", "--store", dir.file("s1"), "--compression", "none", "-o", dir.file("again.json"), "-q"])
        #expect(exported.exitCode == 0, "\(exported.stderr)")
        let again = try EditableArchive(dir.file("again.json"))
        #expect((again.root["documents"] as? [[String: Any]] ?? []).contains { $0["path"] as? String == path }, "the export wrote it as a document")
        let same = try diff([dir.file("carried.json"), dir.file("again.json"), "--exit-code", "--json"])
        #expect(same.exitCode == 0 && same.json["identical"] as? Bool == true, "\(same.stdout) \(same.stderr)")
        // Its content changed is a change; a file that is no JSON object is still its bytes.
        for (text, changed) in [(#"{"schemaVersion":3,"id":"01ARZ3NDEKTSV4RRFFQ69G5FAW"}"#, true), ("not JSON", true)] {
            var other = archive
            var otherFiles = files
            otherFiles[otherFiles.count - 1] = file(text)
            other.root["documentFiles"] = otherFiles
            try other.write(to: dir.file("other.json"))
            let result = try diff([dir.file("other.json"), dir.file("again.json"), "--exit-code", "--json"])
            #expect((result.exitCode == 1) == changed && counts(result.json, "documents") == [0, 0, 1], "\(text): \(result.stdout)")
        }
    }

    @Test("an Android-dialect archive and the same data in the app's dialect: no differences; changes are reported by the app's table keys")
    func acrossDialects() throws {
        let dir = TemporaryDirectory()
        try StoreFixtures.importArchive(Repository.sampleAndroid, into: dir.file("store"))
        _ = try StoreFixtures.export(dir.file("store"), to: dir.file("app.json.gz"))
        let same = try diff([Repository.sampleAndroid, dir.file("app.json.gz"), "--exit-code", "--json"])
        #expect(same.exitCode == 0, "\(same.stdout) \(same.stderr)")
        #expect(same.json["identical"] as? Bool == true)
        #expect((same.json["old"] as? [String: Any])?["dialect"] as? String == "android")
        let tables = try #require(same.json["tables"] as? [String: Any])
        #expect(tables["activityDailies"] != nil && tables["activityDaily"] == nil)
        #expect(tables["mealEntries"] != nil)

        var archive = try EditableArchive(dir.file("app.json.gz"))
        archive.edit("activityDailies") { rows in rows.removeLast() }
        archive.edit("mealEntries") { rows in rows[0]["name"] = "tests: another meal" }
        try archive.write(to: dir.file("app-edited.json"))
        let result = try diff([Repository.sampleAndroid, dir.file("app-edited.json"), "--json"])
        #expect(counts(result.json, "activityDailies") == [0, 1, 0])
        #expect(counts(result.json, "mealEntries") == [0, 0, 1])
        // Both ways round.
        let back = try diff([dir.file("app-edited.json"), Repository.sampleAndroid, "--json"])
        #expect(counts(back.json, "activityDailies") == [1, 0, 0])
    }

    @Test("--exit-code and --fail-on: 1 only for the kinds asked; an unreadable archive: 1 naming it; usage errors: 64")
    func exitCodes() throws {
        let dir = TemporaryDirectory()
        var (old, archive) = try demoArchive(dir)
        archive.edit("measurements") { rows in
            var row = rows[0]
            row["id"] = "00000000-0000-4000-8000-000000000001"
            rows.append(row)
        }
        try archive.write(to: dir.file("added.json"))
        let added = dir.file("added.json")
        #expect(try diff([old, added]).exitCode == 0)
        #expect(try diff([old, added, "--exit-code"]).exitCode == 1)
        #expect(try diff([old, old, "--exit-code"]).exitCode == 0)
        #expect(try diff([old, added, "--fail-on", "removed"]).exitCode == 0)
        #expect(try diff([old, added, "--fail-on", "removed,changed"]).exitCode == 0)
        #expect(try diff([old, added, "--fail-on", "removed,added"]).exitCode == 1)
        // Reversed, the row was removed: the nightly guard fails.
        #expect(try diff([added, old, "--fail-on", "removed"]).exitCode == 1)
        #expect(try diff([added, old, "--fail-on", "added,changed"]).exitCode == 0)
        // Twice is a usage error: the last one winning silently dropped the removals' guard.
        let failOnTwice = try diff([added, old, "--fail-on", "removed", "--fail-on", "added"])
        #expect(failOnTwice.exitCode == 64 && failOnTwice.stderr.contains("'--fail-on' was given 2 times: give it once (kinds go in one value"), "\(failOnTwice.stderr)")

        let damaged = dir.write("damaged.json", "{\"formatVersion\": 2, \"measurements\": [")
        for arguments in [[old, damaged], [damaged, old], [old, dir.file("missing.json.gz")]] {
            let result = try diff(arguments)
            #expect(result.exitCode == 1)
            let named = arguments.first { $0 != old }!
            #expect(result.stderr.contains(named), "\(result.stderr)")
            #expect(result.stdout.isEmpty)
        }
        // Both sides on the one standard input: a pipe gives its bytes once, so naming it twice
        // (`-` and `/dev/stdin`) is a usage error; a regular file redirected in is read afresh.
        for (arguments, pipe) in [(["-", "/dev/stdin"], true), (["/dev/fd/0", "-"], true), ([old, "/dev/stdin"], false)] {
            let process = CLI.process(["diff"] + arguments + ["--exit-code"])
            // The pipe's writing end closed first: a reader finds its end at once, never waits.
            let input = Pipe()
            try input.fileHandleForWriting.close()
            process.standardInput = pipe ? input : FileHandle(forReadingAtPath: old)
            let result = try CLI.collect(process)
            if pipe {
                #expect(result.exitCode == 64 && result.stderr.contains("cannot both be standard input"), "\(arguments): \(result.stderr)")
            } else {
                #expect(result.exitCode == 0, "\(arguments): \(result.stderr)")
            }
        }
        // One FIFO named twice: the same, with its own words.
        let fifo = dir.file("fifo")
        #expect(mkfifo(fifo, 0o600) == 0)
        // Under `timeout`: read, a FIFO without a writer would wait for one forever.
        let bounded = CLI.process(["diff", fifo, fifo])
        bounded.arguments = ["60", CLI.executable] + (bounded.arguments ?? [])
        bounded.executableURL = URL(fileURLWithPath: "/usr/bin/timeout")
        let twice = try CLI.collect(bounded)
        #expect(twice.exitCode == 64 && twice.stderr.contains("OLD and NEW are the same pipe (\(fifo))"), "\(twice.stderr)")
        let help = try diff(["-h"])
        #expect(help.exitCode == 0 && help.stdout.contains("USAGE: pulse-archive diff <old> <new>") && help.stdout.contains("--fail-on <kinds>"))
        #expect(try CLI.run(["--help"]).stdout.contains("  diff "))
        for usage in [[old], [old, old, "--show", "-1"], [old, old, "--show", "1001"], [old, old, "--show", "x"], [old, old, "--fail-on", "lost"],
                      [old, old, "--fail-on", "removed,"], [old, old, "--exit-code", "--fail-on", "removed"], [old, old, "--bogus"]] {
            let result = try diff(usage)
            #expect(result.exitCode == 64, "\(usage): \(result.stderr)")
            #expect(result.stderr.contains("Usage: pulse-archive diff"))
        }
    }

    @Test("--show N lists at most N keys of each kind, in key order, while the counts stay whole")
    func showBound() throws {
        let dir = TemporaryDirectory()
        var (old, archive) = try demoArchive(dir)
        var removed: [String] = []
        archive.edit("measurements") { rows in
            for _ in 0..<7 { removed.append(rows.removeLast()["id"] as! String) }
            for i in 0..<4 { rows[i]["value"] = -1 - i }
        }
        try archive.write(to: dir.file("new.json"))
        for show in [0, 1, 3, 20] {
            let json = try diff([old, dir.file("new.json"), "--json", "--show", String(show)]).json
            let measurements = try #require((json["tables"] as? [String: Any])?["measurements"] as? [String: Any])
            #expect(measurements["removed"] as? Int == 7 && measurements["changed"] as? Int == 4)
            #expect((measurements["removedKeys"] as? [String]) == Array(removed.sorted().prefix(show)))
            #expect((measurements["changedKeys"] as? [String])?.count == min(show, 4))
            #expect((measurements["addedKeys"] as? [String]) == [])
        }
        let text = try diff([old, dir.file("new.json"), "--show", "2"]).stdout
        #expect(text.contains("  - \(removed.sorted()[0])\n") && text.contains("  - \(removed.sorted()[1])\n"))
        #expect(!text.contains(removed.sorted()[2]))
        #expect(text.contains("  - … and 5 more"))
    }

    @Test("a key with a line break, a line separator or a bidirectional override is listed quoted and escaped, never as a line of its own; --json keeps it exact")
    func keysThatFakeLines() throws {
        let dir = TemporaryDirectory()
        var (old, archive) = try demoArchive(dir)
        var settings = try #require(archive.root["settings"] as? [String: Any])
        let keys = ["x\nmeasurements +999", "y\u{2028}fake", "z\u{202E}gnp.exe", " padded "]
        for key in keys { settings[key] = "{}" }
        archive.root["settings"] = settings
        try archive.write(to: dir.file("new.json"))
        let text = try diff([old, dir.file("new.json"), "--show", "10"]).stdout
        #expect(!text.contains("\nmeasurements +999") && text.contains(#"  + "x\u{A}measurements +999""#) || text.contains(#"  + "x\nmeasurements +999""#), "\(text)")
        #expect(!text.unicodeScalars.contains("\u{2028}") && !text.unicodeScalars.contains("\u{202E}"), "\(text.debugDescription)")
        #expect(text.contains(#"  + " padded ""#), "\(text)")
        let json = try diff([old, dir.file("new.json"), "--json", "--show", "10"])
        #expect(!json.stdout.unicodeScalars.contains("\u{2028}") && !json.stdout.unicodeScalars.contains("\u{202E}"))
        let added = try #require(((json.json["settings"] as? [String: Any])?["addedKeys"] as? [String]))
        #expect(Set(added) == Set(keys), "\(added)")
    }

    @Test("a key repeated within one archive is a problem of that archive, not a change, and the two are not called identical; --exit-code fails on it")
    func repeatedKeys() throws {
        let dir = TemporaryDirectory()
        var (old, archive) = try demoArchive(dir)
        archive.edit("batterySamples") { rows in
            var copy = rows[3]
            copy["percent"] = 1
            rows.append(copy)
            rows.append(copy)
        }
        try archive.write(to: dir.file("repeats.json"))
        let result = try diff([old, dir.file("repeats.json"), "--json"])
        #expect(result.exitCode == 0)
        // Only the first row of a repeated key was compared: not "identical".
        #expect(result.json["identical"] as? Bool == false)
        let problems = try #require(result.json["problems"] as? [[String: Any]])
        #expect(problems.count == 1)
        #expect(problems.first?["archive"] as? String == "new")
        #expect(problems.first?["table"] as? String == "batterySamples")
        #expect(problems.first?["repeatedKeys"] as? Int == 2)
        #expect((problems.first?["message"] as? String)?.contains(dir.file("repeats.json")) == true)
        #expect(try diff([old, dir.file("repeats.json"), "--exit-code"]).exitCode == 1)
        #expect(try diff([dir.file("repeats.json"), old, "--fail-on", "removed"]).exitCode == 1)
        let text = try diff([dir.file("repeats.json"), old])
        #expect(text.stdout.contains("warning: \(dir.file("repeats.json")): batterySamples: 2 entries repeat keys"))
    }

    @Test("a settings key, attachment name or document path given twice in one archive is a problem of that archive, as a repeated row is (diff.md), not an unreadable archive")
    func repeatedNames() throws {
        let dir = TemporaryDirectory()
        let (old, archive) = try demoArchive(dir)
        try archive.write(to: dir.file("plain.json"))
        // A settings key twice: the JSON object written by hand.
        let text = try String(contentsOfFile: dir.file("plain.json"), encoding: .utf8)
        let settings = try #require(text.range(of: "\"settings\":{"))
        let entries = try #require(archive.root["settings"] as? [String: Any])
        let key = try #require(entries.keys.sorted().first)
        let json = { (value: Any) in String(decoding: try JSONSerialization.data(withJSONObject: value, options: .fragmentsAllowed), as: UTF8.self) }
        let repeated = text.replacingCharacters(in: settings, with: "\"settings\":{\(try json(key)):\(try json(entries[key]!)),")
        #expect(FileManager.default.createFile(atPath: dir.file("settings.json"), contents: Data(repeated.utf8)))
        for table in ["attachments", "documents"] {
            var copy = archive
            copy.edit(table) { rows in rows.append(rows[0]) }
            try copy.write(to: dir.file("\(table).json"))
        }
        for table in ["settings", "attachments", "documents"] {
            let result = try diff([old, dir.file("\(table).json"), "--json"])
            #expect(result.exitCode == 0, "\(table): \(result.stderr)")
            let problems = result.json["problems"] as? [[String: Any]] ?? []
            #expect(problems.count == 1 && problems.first?["table"] as? String == table && problems.first?["repeatedKeys"] as? Int == 1, "\(table): \(result.stdout)")
            #expect(try diff([old, dir.file("\(table).json"), "--exit-code"]).exitCode == 1)
            // verify still refuses the archive.
            #expect(try CLI.run(["verify", dir.file("\(table).json"), "-q"]).exitCode == 1)
        }
    }

    @Test("runs with a payload carry it through spills and the merge, whatever the key")
    func payloadRuns() throws {
        let runs = SortedKeyRuns(name: "payload", memoryBudget: 4096, payloadSize: 20)
        var expected: [(FieldValue, [UInt8])] = []
        for i in 0..<2_000 {
            let key: FieldValue = i % 3 == 0 ? .string(RowFactory.uuid(i)) : i % 3 == 1 ? .int(Int64(i) - 500) : .string("a key longer than sixteen bytes \(i)")
            let payload = SHA1.hash(Array("\(i)".utf8))
            try runs.add(key, row: i, payload: payload)
            expected.append((key, payload))
        }
        #expect(runs.spilledRuns > 2, "the budget spills runs")
        let cursor = try runs.cursor()
        var seen: [String: [UInt8]] = [:]
        while try cursor.next() { seen["\(cursor.value)"] = cursor.payload }
        #expect(seen.count == expected.count)
        for (key, payload) in expected { #expect(seen["\(key)"] == payload, "\(key)") }
    }
}
