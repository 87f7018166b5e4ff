import Foundation
import Testing
@testable import PulseArchive
@testable import PulseStore
@testable import PulseTestSupport
@testable import PulseStoreTestSupport

@Suite("Progress on a terminal")
struct ProgressTests {
    /// Runs the binary under `script`, which gives it a pseudo-terminal; returns what it printed.
    private func runOnTerminal(_ arguments: [String], status expected: Int32 = 0) throws -> String {
        let command = ([CLI.executable] + arguments).map { "'\($0)'" }.joined(separator: " ")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/script")
        process.arguments = ["-qec", command, "/dev/null"]
        var environment = ProcessInfo.processInfo.environment
        environment["TZ"] = "UTC"
        process.environment = environment
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(process.terminationStatus == expected, "\(arguments)")
        return String(decoding: output, as: UTF8.self)
    }

    @Test("export -o - on a terminal is refused, saying why for each form: a gzip or age archive is binary, the plain one the whole store as JSON",
          .enabled(if: Capability.enabled(FileManager.default.isExecutableFile(atPath: "/usr/bin/script"))))
    func archiveNotOnTerminal() throws {
        try Capability.require(FileManager.default.isExecutableFile(atPath: "/usr/bin/script"), "/usr/bin/script (util-linux, bsdutils) for a pseudo-terminal")
        let dir = TemporaryDirectory()
        try StoreFixtures.demoStore(dir.file("store"), days: 3, seed: 4, rawPacketsPerDay: 1)
        let gzip = try runOnTerminal(["export", "--store", dir.file("store"), "-o", "-"], status: 64)
        #expect(gzip.contains("Standard output is a terminal: an archive is binary;"), "\(gzip)")
        let plain = try runOnTerminal(["export", "--store", dir.file("store"), "-o", "-", "--compression", "none"], status: 64)
        #expect(plain.contains("Standard output is a terminal: the plain archive is the whole store as JSON, not for reading there;")
                && !plain.contains("binary"), "\(plain)")
    }

    @Test("import, export and tables draw a progress line on a terminal, none when piped or with --quiet",
          .enabled(if: Capability.enabled(FileManager.default.isExecutableFile(atPath: "/usr/bin/script"))))
    func progressLine() throws {
        try Capability.require(FileManager.default.isExecutableFile(atPath: "/usr/bin/script"), "/usr/bin/script (util-linux, bsdutils) for a pseudo-terminal")
        let dir = TemporaryDirectory()
        try StoreFixtures.demoStore(dir.file("big"), days: 45, seed: 9, rawPacketsPerDay: 300)
        _ = try StoreFixtures.export(dir.file("big"), to: dir.file("big.json.gz"))

        let onTerminal = try runOnTerminal(["import", dir.file("big.json.gz"), "--store", dir.file("a"), "--no-backfill"])
        #expect(onTerminal.contains("Importing: ") && onTerminal.contains("rows/s") && onTerminal.contains("ETA"))
        let exportOnTerminal = try runOnTerminal(["export", "--store", dir.file("a"), "-o", dir.file("e.json.gz")])
        #expect(exportOnTerminal.contains("Exporting: ") && exportOnTerminal.contains("rows/s"))
        for source in [[dir.file("big.json.gz")], ["--store", dir.file("a")]] {
            let tables = try runOnTerminal(["tables"] + source + ["-o", dir.file("t\(source.count)")])
            #expect(tables.contains("Writing tables: ") && tables.contains("rows/s"), "\(source)")
        }
        #expect(!(try runOnTerminal(["tables", dir.file("big.json.gz"), "-o", dir.file("tq"), "-q"])).contains("rows/s"))

        let quiet = try runOnTerminal(["import", dir.file("big.json.gz"), "--store", dir.file("b"), "--quiet"])
        #expect(!quiet.contains("rows/s"))
        let piped = try CLI.run(["import", dir.file("big.json.gz"), "--store", dir.file("c")])
        #expect(piped.exitCode == 0 && !piped.stderr.contains("rows/s"))

        // A summary on stderr without --quiet; with it, nothing but the result on stdout (a
        // nightly job's mail stays empty), in every command that writes a summary.
        for (arguments, summary) in [(["export", "--store", dir.file("a"), "-o", dir.file("s.json.gz")], "Exported "),
                                     (["tables", dir.file("big.json.gz"), "-o", dir.file("ts")], "Wrote ")] {
            let loud = try CLI.run(arguments)
            #expect(loud.exitCode == 0 && loud.stderr.hasPrefix(summary), "\(loud.stderr)")
            try FileManager.default.removeItem(atPath: arguments[arguments.count - 1])
            for quietFlag in ["-q", "--quiet"] {
                let quiet = try CLI.run(arguments + [quietFlag])
                #expect(quiet.exitCode == 0 && quiet.stderr.isEmpty && quiet.stdout == arguments[arguments.count - 1] + "\n", "\(arguments): \(quiet.stderr)")
                try FileManager.default.removeItem(atPath: arguments[arguments.count - 1])
            }
        }
    }

    @Test("the readiness backfill draws a progress line in days on a terminal, after an import and with readiness --backfill; none with --quiet",
          .enabled(if: Capability.enabled(FileManager.default.isExecutableFile(atPath: "/usr/bin/script"))))
    func backfillProgressLine() throws {
        try Capability.require(FileManager.default.isExecutableFile(atPath: "/usr/bin/script"), "/usr/bin/script (util-linux, bsdutils) for a pseudo-terminal")
        let dir = TemporaryDirectory()
        try StoreFixtures.demoStore(dir.file("demo"), days: 120)
        _ = try StoreFixtures.export(dir.file("demo"), to: dir.file("demo.json.gz"))

        let imported = try runOnTerminal(["import", dir.file("demo.json.gz"), "--store", dir.file("a"), "--as-of", "2026-03-15"])
        #expect(imported.contains("Scoring readiness: ") && imported.contains("days/s"), "\(imported)")
        let backfill = ["readiness", "--store", dir.file("a"), "--backfill", "--days", "120", "--as-of", "2026-03-15"]
        try PulseStore.withExclusiveAccess(dir.file("a"), create: false) { try $0.database.execute(#"DELETE FROM "readinessDailies""#) }
        let onTerminal = try runOnTerminal(backfill)
        #expect(onTerminal.contains("Scoring readiness: ") && onTerminal.contains("days/s") && onTerminal.contains("ETA"), "\(onTerminal)")
        let quiet = try runOnTerminal(backfill + ["--quiet"])
        #expect(!quiet.contains("Scoring readiness") && quiet.contains("2026-03-15"))
        let piped = try CLI.run(backfill)
        #expect(piped.exitCode == 0 && !piped.stderr.contains("Scoring readiness"))
    }

    @Test("the first command on a store from an earlier version says, on a terminal, that it upgrades it; not again, not when piped",
          .enabled(if: Capability.enabled(FileManager.default.isExecutableFile(atPath: "/usr/bin/script"))))
    func upgradeNotice() throws {
        try Capability.require(FileManager.default.isExecutableFile(atPath: "/usr/bin/script"), "/usr/bin/script (util-linux, bsdutils) for a pseudo-terminal")
        let dir = TemporaryDirectory()
        try StoreFixtures.demoStore(dir.file("demo"), days: 2)
        try StoreFixtures.schema5Store(copying: dir.file("demo"), into: dir.file("old"))
        try StoreFixtures.schema5Store(copying: dir.file("demo"), into: dir.file("piped"))
        #expect(PulseStore.needsUpgrade(dir.file("old")) && !PulseStore.needsUpgrade(dir.file("demo")))
        #expect(!PulseStore.needsUpgrade(dir.file("missing")))

        let first = try runOnTerminal(["export", "--store", dir.file("old"), "-o", dir.file("1.json.gz")])
        #expect(first.contains("Upgrading the store \(dir.file("old")) to this version's schema"))
        #expect(!PulseStore.needsUpgrade(dir.file("old")))
        let second = try runOnTerminal(["export", "--store", dir.file("old"), "-o", dir.file("2.json.gz")])
        #expect(!second.contains("Upgrading"))
        let piped = try CLI.run(["export", "--store", dir.file("piped"), "-o", dir.file("3.json.gz")])
        #expect(piped.exitCode == 0 && !piped.stderr.contains("Upgrading"))
    }
}
