import Foundation
import Testing
@testable import PulseTestSupport

/// Issue 24, point 2: every command that writes a file commits it without `link(2)` and without
/// the no-replace rename, as on a USB stick, and never over a file that appeared meanwhile.
/// `PULSE_ARCHIVE_TEST_REFUSE` makes the binary treat those primitives as refused
/// (`TestRefusal`), so the fallbacks run here on any file system; `FatFileSystemTests` runs the
/// same commands on real FAT file systems.
@Suite("Commits without hard links or a no-replace rename")
struct CommitFallbackTests {
    /// The three ways a commit can go: `link(2)`; the no-replace rename; the placeholder.
    static let refusals = ["", "link", "link,rename-noreplace"]

    static func environment(_ refuse: String) -> [String: String] {
        ["PULSE_ARCHIVE_TEST_REFUSE": refuse]
    }

    /// A demo store with documents (splits and their stubs), the same for a seed.
    static func demo(_ store: String, seed: Int) throws {
        let result = try CLI.run(["demo", "--store", store, "--days", "4", "--end", "2026-03-15", "--seed", String(seed), "--timezone", "UTC"])
        try #require(result.exitCode == 0, "demo: \(result.stderr)")
    }

    /// A test directory with a demo store (`store`) and an empty folder to write into (`out`).
    static func storeAndFolder(seed: Int) throws -> (dir: TemporaryDirectory, store: String, out: String) {
        let dir = TemporaryDirectory()
        let store = dir.file("store"), out = dir.file("out")
        try demo(store, seed: seed)
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: false)
        return (dir, store, out)
    }

    /// The document files of a store's tree, relative to it.
    static func documents(_ store: String) -> Set<String> {
        let paths = FileManager.default.enumerator(atPath: store)?.compactMap { $0 as? String } ?? []
        return Set(paths.filter { $0.hasSuffix(".json") && !$0.hasPrefix("backups") })
    }

    /// Names that a commit left behind: partial files and placeholders.
    static func leftovers(_ directory: String) -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return names.filter { name in
            name.contains(".partial-") || (FileBytes.read(directory + "/" + name).starts(with: Array("placeholder of".utf8)))
        }
    }

    @Test("every command that writes a file works with link(2) refused, and with the no-replace rename refused too",
          arguments: refusals)
    func everyCommandWrites(refuse: String) throws {
        let dir = TemporaryDirectory()
        let env = Self.environment(refuse)
        let store = dir.file("store"), other = dir.file("other"), out = dir.file("out")
        try Self.demo(store, seed: 1)
        try Self.demo(other, seed: 2)
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: false)

        // Which primitive committed: the placeholder's pause point is reached only when both
        // others are refused.
        let counts = try KillPoints.count(["export", "--store", store, "-o", dir.file("counted.json.gz")], environment: env)
        #expect(counts["commit"] == 1, "\(counts)")
        #expect((counts["commit.placeholder"] ?? 0) == (refuse.contains("rename-noreplace") ? 1 : 0), "\(counts)")

        let exported = try CLI.run(["export", "--store", store, "-o", out + "/a.json.gz"], environment: env)
        #expect(exported.exitCode == 0, "\(exported.stderr)")
        let first = try CLI.run(["export", "--store", other, "-o", out], environment: env)
        let second = try CLI.run(["export", "--store", other, "-o", out], environment: env)
        #expect(first.exitCode == 0 && second.exitCode == 0, "\(first.stderr)\(second.stderr)")
        let firstPath = first.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let secondPath = second.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(firstPath != secondPath && FileManager.default.fileExists(atPath: firstPath) && FileManager.default.fileExists(atPath: secondPath),
                "\(firstPath) \(secondPath)")
        let keygen = try CLI.run(["keygen", "-o", out + "/key.txt"], environment: env)
        #expect(keygen.exitCode == 0 && FileBytes.read(out + "/key.txt").starts(with: Array("# created:".utf8)), "\(keygen.stderr)")
        let chart = try CLI.run(["readiness", "--store", store, "--svg", out + "/chart.svg"], environment: env)
        #expect(chart.exitCode == 0 && FileBytes.read(out + "/chart.svg").starts(with: Array("<svg".utf8)), "\(chart.stderr)")

        // Imports: a new store, a merge that stages the store's documents beside the archive's
        // (hard links, or copies), a replace with its safety backup.
        let fresh = try CLI.run(["import", out + "/a.json.gz", "--store", dir.file("fresh"), "--no-backfill"], environment: env)
        #expect(fresh.exitCode == 0 && Self.documents(dir.file("fresh")) == Self.documents(store), "\(fresh.stderr)")
        let before = Self.documents(store), theirs = Self.documents(other)
        let merged = try CLI.run(["import", firstPath, "--store", store, "--merge", "--no-backfill"], environment: env)
        #expect(merged.exitCode == 0, "\(merged.stderr)")
        #expect(Self.documents(store) == before.union(theirs), "merge lost or missed documents")
        let replaced = try CLI.run(["import", out + "/a.json.gz", "--store", store, "--replace", "--no-backfill"], environment: env)
        #expect(replaced.exitCode == 0, "\(replaced.stderr)")
        #expect(Self.documents(store) == before)
        let backups = (try? FileManager.default.contentsOfDirectory(atPath: store + "/backups")) ?? []
        #expect(backups.count == 1 && backups[0].hasPrefix("before-replace-"), "\(backups)")
        let restored = try CLI.run(["import", store + "/backups/" + (backups.first ?? ""), "--store", dir.file("restored"), "--no-backfill"])
        #expect(restored.exitCode == 0 && Self.documents(dir.file("restored")) == before.union(theirs), "\(restored.stderr)")
        for directory in [out, dir.path, store, store + "/backups"] {
            #expect(Self.leftovers(directory).isEmpty, "\(directory): \(Self.leftovers(directory))")
        }
    }

    @Test("a file that appears at the target between the last write and the commit is never replaced, whichever primitive commits",
          arguments: refusals)
    func appearedMeanwhile(refuse: String) throws {
        let dir = TemporaryDirectory()
        let env = Self.environment(refuse)
        let store = dir.file("store"), out = dir.file("out")
        try Self.demo(store, seed: 3)
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: false)
        let theirs = Data("a file the user made meanwhile".utf8)

        // A named target: refused with "already exists", the file as it was, nothing left.
        for (arguments, target) in [(["export", "--store", store, "-o", out + "/a.json.gz"], out + "/a.json.gz"),
                                    (["keygen", "-o", out + "/key.txt"], out + "/key.txt"),
                                    (["readiness", "--store", store, "--svg", out + "/chart.svg"], out + "/chart.svg")] {
            let result = try Self.paused(arguments, at: "commit:1", environment: env) {
                #expect(FileManager.default.createFile(atPath: target, contents: theirs))
            }
            #expect(result.reached, "\(arguments[0]) never reached the commit: \(result.stderr)")
            #expect(result.exitCode == 1 && result.stderr.contains("already exists"), "\(arguments[0]): \(result.stderr)")
            #expect(FileBytes.read(target) == Array(theirs), "\(arguments[0]) replaced \(target)")
        }
        // A directory: the export takes the next free name, the file that appeared stays.
        var taken = ""
        let result = try Self.paused(["export", "--store", store, "-o", out], at: "commit:1", environment: env) {
            // The partial file is `.NAME.partial-PID`: NAME is where the export commits.
            let partial = (try? FileManager.default.contentsOfDirectory(atPath: out))?.first { $0.contains(".partial-") } ?? ""
            let hidden = partial.dropFirst()
            taken = out + "/" + String(hidden[..<(hidden.range(of: ".partial-", options: .backwards)?.lowerBound ?? hidden.endIndex)])
            #expect(FileManager.default.createFile(atPath: taken, contents: theirs))
        }
        let path = result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(result.reached && result.exitCode == 0 && path != taken && path.hasSuffix("-2.json.gz"), "\(path) \(result.stderr)")
        #expect(FileBytes.read(taken) == Array(theirs), "the export replaced \(taken)")
        let check = try CLI.run(["verify", path, "--store", store])
        #expect(check.exitCode == 0, "\(check.stderr)")
        #expect(Self.leftovers(out).isEmpty, "\(Self.leftovers(out))")
    }

    @Test("a placeholder whose line cannot be written (a full stick) is removed with the partial file: the export fails, and no empty file keeps a backup's name")
    func placeholderWriteFails() throws {
        let folder = try Self.storeAndFolder(seed: 6)
        let (store, out) = (folder.store, folder.out)
        let result = try CLI.run(["export", "--store", store, "-o", out], environment: Self.environment("link,rename-noreplace,placeholder-write"))
        #expect(result.exitCode == 1 && result.stderr.contains("No space left on device"), "\(result.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: out) == [], "left \((try? FileManager.default.contentsOfDirectory(atPath: out)) ?? [])")
    }

    @Test("prune takes a commit's placeholder for no backup: a live export's is ignored (not 'does not read'), a killed one's goes with its partial file under abandoned, the dry run saying the same")
    func pruneAndPlaceholders() throws {
        let env = Self.environment("link,rename-noreplace")
        let folder = try Self.storeAndFolder(seed: 5)
        let (store, out) = (folder.store, folder.out)
        let older = try CLI.run(["export", "--store", store, "-o", out + "/pulseloop-backup-2026-03-14-0300.json.gz", "-q"], environment: env)
        #expect(older.exitCode == 0, "\(older.stderr)")
        let name = "pulseloop-backup-2026-03-15-0300.json.gz"
        // Paused between the placeholder and the rename: an export committing now.
        try SecretsAndSignalsTests.whilePaused(["export", "--store", store, "-o", out + "/" + name], at: "commit.placeholder:1", environment: env) { _ in
            let live = try CLI.run(["prune", out, "--keep-last", "1", "--json"])
            #expect(live.exitCode == 0 && (live.json["ignored"] as? [String] ?? []).contains(name)
                    && (live.json["kept"] as? [[String: Any]])?.first?["file"] as? String == "pulseloop-backup-2026-03-14-0300.json.gz", "\(live.stdout)\(live.stderr)")
        }
        // whilePaused killed it there: a placeholder and the complete partial file of a dead writer.
        let partial = try #require(try FileManager.default.contentsOfDirectory(atPath: out).first { $0.contains(".partial-pulse-archive-") })
        let dry = try CLI.run(["prune", out, "--keep-last", "1", "--dry-run", "--json"])
        #expect(dry.exitCode == 0 && (dry.json["abandoned"] as? [String]) == [partial, name].sorted(), "\(dry.stdout)\(dry.stderr)")
        let real = try CLI.run(["prune", out, "--keep-last", "1", "--json"])
        #expect(real.exitCode == 0 && (real.json["abandoned"] as? [String]) == [partial, name].sorted(), "\(real.stdout)\(real.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: out) == ["pulseloop-backup-2026-03-14-0300.json.gz"])
    }

    @Test("killed between the placeholder and the rename: the name holds a placeholder, never part of an archive, and the next commit in the folder removes it; interrupted there, the complete archive or nothing")
    func placeholderKilled() throws {
        let env = Self.environment("link,rename-noreplace")
        let folder = try Self.storeAndFolder(seed: 4)
        let (store, out) = (folder.store, folder.out)

        try KillPoints.expectStopped(["export", "--store", store, "-o", out + "/a.json.gz"], at: "commit.placeholder:1", with: SIGKILL, environment: env)
        let text = String(decoding: FileBytes.read(out + "/a.json.gz"), as: UTF8.self)
        #expect(text.hasPrefix("placeholder of an unfinished commit of .a.json.gz.partial-"), "\(text)")
        #expect(Self.leftovers(out).count == 2, "the placeholder and the complete partial file: \(Self.leftovers(out))")
        // The next file written into the folder, under another name, removes both.
        let next = try CLI.run(["keygen", "-o", out + "/key.txt"], environment: env)
        #expect(next.exitCode == 0, "\(next.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: out) == ["key.txt"])
        // The name is free again. A dead writer's partial file is removed, but a file that holds
        // a placeholder's line naming another partial file is not that writer's placeholder.
        let gone = Process()
        gone.executableURL = URL(fileURLWithPath: "/bin/true")
        try gone.run()
        gone.waitUntilExit()
        let deadPartial = out + "/.c.json.gz.partial-pulse-archive-\(gone.processIdentifier)"
        #expect(FileManager.default.createFile(atPath: deadPartial, contents: Data("part of an archive".utf8)))
        let lookalike = Data("placeholder of an unfinished commit of .c.json.gz.partial-1: no backup is in this file; it is removed by the next file written into this folder, or remove it yourself\n".utf8)
        #expect(FileManager.default.createFile(atPath: out + "/c.json.gz", contents: lookalike))
        let again = try CLI.run(["export", "--store", store, "-o", out + "/a.json.gz"], environment: env)
        #expect(again.exitCode == 0, "\(again.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: out).sorted() == ["a.json.gz", "c.json.gz", "key.txt"])
        #expect(FileBytes.read(out + "/c.json.gz") == Array(lookalike))
        try FileManager.default.removeItem(atPath: out + "/c.json.gz")

        // An interruption there races the rename, which runs with interruption held off: the
        // name then holds the complete archive or nothing, never the placeholder.
        for signal in [SIGINT, SIGTERM, SIGHUP] {
            let target = out + "/signal-\(signal).json.gz"
            let stopped = try KillPoints.stop(["export", "--store", store, "-o", target], at: "commit.placeholder:1", with: signal, environment: env)
            #expect(stopped.reached, "\(stopped.stderr)")
            if FileManager.default.fileExists(atPath: target) {
                let check = try CLI.run(["verify", target, "--store", store])
                #expect(check.exitCode == 0, "signal \(signal) left \(target) that is not the archive: \(check.stderr)")
            } else {
                #expect(stopped.reason == .uncaughtSignal && stopped.status == signal, "\(stopped)")
            }
            #expect(Self.leftovers(out).isEmpty, "\(Self.leftovers(out))")
        }
    }

    @Test("an unknown primitive in PULSE_ARCHIVE_TEST_REFUSE ends the process, naming it")
    func unknownRefusal() throws {
        let dir = TemporaryDirectory()
        for arguments in [["keygen", "-o", dir.file("key.txt")], ["keygen"]] {
            let result = try CLI.run(arguments, environment: Self.environment("link,hardlink"))
            #expect(result.exitCode == 70 && result.stderr.contains("unknown primitive 'hardlink'") && result.stdout.isEmpty,
                    "\(result.exitCode) \(result.stderr)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).isEmpty, "the refused run wrote something")
    }

    // MARK: - A command paused at a point while the test acts

    struct Paused {
        let reached: Bool
        let exitCode: Int32
        let stdout: String
        let stderr: String
    }

    /// Runs `arguments` until it stops itself at `pause`, runs `meanwhile`, lets it go on and
    /// waits for its end. Every wait ends: the process stops at the point or exits.
    @Test("the folder an export writes into swapped for a link to another before its commit: the archive is committed in the folder it was opened in, and nothing in the other (a file planted there under the partial file's name was committed as the archive, exit 0)")
    func folderSwappedForALink() throws {
        let dir = TemporaryDirectory()
        try Self.demo(dir.file("store"), seed: 11)
        for folder in ["w", "other"] { try FileManager.default.createDirectory(atPath: dir.file(folder), withIntermediateDirectories: false) }
        let result = try Self.paused(["export", "--store", dir.file("store"), "-o", dir.file("w/x.json.gz"), "-q"], at: "commit:1", environment: [:]) {
            let partial = try #require(try FileManager.default.contentsOfDirectory(atPath: dir.file("w")).first { $0.contains(".partial-") })
            dir.write("other/" + partial, "decoy")
            try FileManager.default.moveItem(atPath: dir.file("w"), toPath: dir.file("w.real"))
            try FileManager.default.createSymbolicLink(atPath: dir.file("w"), withDestinationPath: dir.file("other"))
        }
        #expect(result.reached && result.exitCode == 0, "\(result.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.file("w.real")) == ["x.json.gz"])
        #expect(!FileManager.default.fileExists(atPath: dir.file("other/x.json.gz")), "the commit followed the link")
        let check = try CLI.run(["verify", dir.file("w.real/x.json.gz"), "-q"])
        #expect(check.exitCode == 0, "\(check.stderr)")
    }

    @Test("export -o DIR/: a file that takes the free name it found before its partial file is made (a concurrent export's commit; 20 at once into a vfat folder failed up to 13 of them) sends it to the next name, exit 0, the other file kept")
    func nameTakenBeforeThePartialFile() throws {
        let dir = TemporaryDirectory()
        try Self.demo(dir.file("store"), seed: 12)
        try FileManager.default.createDirectory(atPath: dir.file("w"), withIntermediateDirectories: false)
        // The name is of the minute the export looked (its own clock): this one's or the last.
        var taken: [String] = []
        let result = try Self.paused(["export", "--store", dir.file("store"), "-o", dir.file("w") + "/"], at: "export.name:1", environment: ["TZ": "UTC"]) {
            taken = Set([Date(), Date().addingTimeInterval(-60)].map { ExportNameTests.defaultStem($0) + ".json.gz" }).sorted()
            for name in taken { dir.write("w/" + name, "a concurrent export's archive") }
        }
        #expect(result.reached && result.exitCode == 0, "\(result.stderr)")
        let names = try FileManager.default.contentsOfDirectory(atPath: dir.file("w"))
        let written = names.filter { !taken.contains($0) }
        #expect(written.count == 1 && written[0].hasSuffix("-2.json.gz"), "\(names)")
        for name in taken {
            #expect(String(decoding: FileBytes.read(dir.file("w/" + name)), as: UTF8.self) == "a concurrent export's archive")
        }
        #expect(result.stdout.contains(written.first ?? "?"), "\(result.stdout)")
        let check = try CLI.run(["verify", dir.file("w/" + (written.first ?? "?")), "-q"])
        #expect(check.exitCode == 0, "\(check.stderr)")
    }

    static func paused(_ arguments: [String], at pause: String, environment: [String: String],
                       meanwhile: () throws -> Void) throws -> Paused {
        try paused(arguments, at: pause, environment: environment, meanwhileWithProcess: { _ in try meanwhile() })
    }

    /// `paused`, handing `meanwhile` the stopped process's id.
    static func paused(_ arguments: [String], at pause: String, environment: [String: String],
                       meanwhileWithProcess meanwhile: (Int32) throws -> Void) throws -> Paused {
        let process = CLI.process(arguments, environment: environment.merging([KillPoints.variable: pause]) { $1 })
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let (reached, read) = KillPoints.awaitPause(pause, on: err)
        var collected = read
        if reached {
            #expect(KillPoints.isStopped(process.processIdentifier), "the command wrote the pause line but did not stop within 60 s")
            try meanwhile(process.processIdentifier)
            kill(process.processIdentifier, SIGCONT)
        }
        collected += err.fileHandleForReading.readDataToEndOfFile()
        let output = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Paused(reached: reached, exitCode: process.terminationStatus,
                      stdout: String(decoding: output, as: UTF8.self), stderr: String(decoding: collected, as: UTF8.self))
    }
}

/// A file's bytes, or none when it cannot be read.
enum FileBytes {
    static func read(_ path: String) -> [UInt8] {
        (FileManager.default.contents(atPath: path)).map { [UInt8]($0) } ?? []
    }
}
