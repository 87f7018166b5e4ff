import Foundation
import Testing
@testable import PulseArchive
@testable import PulseArchiveCLI
@testable import PulseStore
import PulseSystem
import PulseSQLite
@testable import PulseTestSupport
@testable import PulseStoreTestSupport
@testable import PulseVerify

/// The libraries' errors say what went wrong, with a kind (and a limit or an advice) to branch
/// on, and name no command or option; the command line adds the remedy in its own terms
/// (`ErrorAdvice`), so what a user reads is as helpful as when the libraries wrote it.
@Suite("Library errors carry kinds; the command line words the remedy")
struct ErrorAdviceTests {
    /// The modules that are the command line itself, or tools of the repository, not libraries.
    static let frontEnds: Set<String> = ["PulseArchiveCLI", "pulse-archive", "make-sample-archives", "read-floor"]

    @Test("no library source names a command-line option or pulse-archive outside comments (scratch prefixes and thread names aside)")
    func librarySourcesNameNoOption() throws {
        let sources = Repository.root + "/Sources"
        let modules = try FileManager.default.contentsOfDirectory(atPath: sources).filter { !Self.frontEnds.contains($0) }.sorted()
        #expect(modules.contains("PulseStore") && modules.contains("PulseSystem"), "\(modules)")
        let pattern = try NSRegularExpression(pattern: #"--[a-z]|pulse-archive"#)
        var offenders: [String] = []
        var scanned = 0
        for module in modules {
            guard let files = FileManager.default.enumerator(atPath: sources + "/" + module) else { continue }
            for case let file as String in files where file.hasSuffix(".swift") {
                scanned += 1
                let text = try String(contentsOfFile: "\(sources)/\(module)/\(file)", encoding: .utf8)
                for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                    let code = line.trimmingCharacters(in: .whitespaces)
                    if code.hasPrefix("//") { continue }
                    // Names of private scratch directories and of threads, never shown as advice.
                    if code.contains("temporaryDirectory(prefix: \"pulse-archive-") || code.contains("temporaryPrefix = \"pulse-archive\"") || code.contains("named: \"pulse-archive ")
                        || code.contains("partialMarker = \".partial-pulse-archive-\"") { continue }
                    // A format's identifier (the age header's length record), never advice.
                    if code.contains("stanzaType = \"pulse-archive-length\"") { continue }
                    let range = NSRange(code.startIndex..., in: code)
                    if pattern.firstMatch(in: code, range: range) != nil { offenders.append("\(module)/\(file):\(number + 1): \(code)") }
                }
            }
        }
        #expect(scanned > 50)
        #expect(offenders.isEmpty, "library messages must leave commands and options to the command line (ErrorAdvice):\n\(offenders.joined(separator: "\n"))")
    }

    @Test("store errors: a kind per remedy, a message without the tool's name, the remedy added by the command line")
    func storeKinds() throws {
        let dir = TemporaryDirectory()
        func refusal(_ body: () throws -> Void) -> StoreError? {
            do { try body() } catch let error as StoreError { return error } catch { Issue.record("not a StoreError: \(error)") }
            return nil
        }

        let missing = try #require(refusal { _ = try PulseStore.open(dir.file("none"), create: false) })
        #expect(missing.kind == .missingStore && missing.message == "there is no store at \(dir.file("none")) (no pulse.sqlite)", "\(missing)")
        #expect(ErrorAdvice.message(missing, command: "export")
            == "\(missing.message); create one with `pulse-archive import` or `pulse-archive demo`")

        try StoreFixtures.demoStore(dir.file("s"), days: 2)
        let filled = try #require(refusal { _ = try PulseStore.fillEmptyStore(dir.file("s")) { _ in } })
        #expect(filled.kind == .storeNotEmpty && filled.message == "the store \(dir.file("s")) already holds data")
        #expect(ErrorAdvice.message(filled, command: "demo") == "\(filled.message); choose an empty --store directory")

        let imported = try #require(refusal { _ = try StoreFixtures.importArchive(Repository.sampleFormat2, into: dir.file("s")) })
        #expect(imported.kind == .storeNotEmpty && !imported.message.contains("--"), "\(imported)")
        #expect(ErrorAdvice.message(imported, command: "import").hasSuffix(
            ": pass --replace to make it equal to the archive (after a safety backup) or --merge to add only what it lacks"))

        let database = try SQLiteDatabase.unnamed()
        let newer = try #require(refusal { try StoreMigration.requireKnown(StoreMigration.all.count + 1, in: database) })
        #expect(newer.kind == .newerStore && !newer.message.contains("pulse-archive"), "\(newer)")
        #expect(ErrorAdvice.message(newer, command: "export").hasSuffix("): update pulse-archive"))

        try database.execute("CREATE TABLE notes (body TEXT)")
        let foreign = try #require(refusal { try StoreMigration.requireKnown(0, in: database) })
        #expect(foreign.kind == .foreignDatabase && foreign.message.contains("(notes)") && !foreign.message.contains("--"), "\(foreign)")
        #expect(ErrorAdvice.message(foreign, command: "export").hasSuffix("; give --store the directory of a PulseLoop store, or a new directory"))

        let backfill = StoreError(.backfillFailed, "the archive was imported, but the readiness backfill failed: disk I/O error")
        #expect(ErrorAdvice.message(backfill, command: "import").hasSuffix("; run `pulse-archive readiness --backfill` to retry"))
        // A kind without a remedy of the command line's prints as the library wrote it.
        #expect(ErrorAdvice.message(StoreError(.io, "cannot lock x"), command: "import") == "cannot lock x")
    }

    @Test("an existing target is its own kind; the command line says to choose another name")
    func existingTarget() throws {
        let dir = TemporaryDirectory()
        let taken = dir.write("taken.json.gz", "x")
        var error: SystemError?
        do { _ = try AtomicFile(targetPath: taken) } catch let refused as SystemError { error = refused }
        let refused = try #require(error)
        #expect(refused.kind == .alreadyExists && refused.message == "\(taken) already exists")
        #expect(ErrorAdvice.message(refused, command: "export") == "\(taken) already exists; choose another name (pulse-archive never overwrites a file)")
    }

    @Test("archive errors and verify's problems: the update, the limit's option and the gzip advice come from the command line")
    func archiveAndVerifyAdvice() {
        let newer = ArchiveError.unsupportedVersion(found: 3)
        #expect(newer.message == "this archive is format 3; this tool reads up to \(ArchiveFormat.newestVersion)")
        #expect(ErrorAdvice.message(newer, command: "inspect") == "\(newer.message): update pulse-archive")
        let limit = ArchiveError(.limitExceeded, "a string of 9 MiB", limit: .stringBytes)
        #expect(ErrorAdvice.message(limit, command: "import").contains("; --max-string-size raises the limit"))

        #expect(VerifyProblem.advice(for: newer) == .update)
        let plain = VerifyProblem(severity: .warning, table: nil, message: "plain JSON: no checksum", advice: .exportCompressed)
        #expect(ErrorAdvice.verify(plain) == "plain JSON: no checksum; pulse-archive export writes gzip (its CRC-32 covers every byte) unless given --compression none")
        let unreadable = VerifyProblem(severity: .error, table: nil, message: newer.message, advice: VerifyProblem.advice(for: newer))
        #expect(ErrorAdvice.verify(unreadable) == "\(newer.message): update pulse-archive")
    }

    @Test("through the binary: import and demo into a store that holds data say what to do")
    func storeNotEmptyThroughTheBinary() throws {
        let dir = TemporaryDirectory()
        try StoreFixtures.demoStore(dir.file("s"), days: 2)
        let imported = try CLI.run(["import", Repository.sampleFormat2, "--store", dir.file("s")])
        #expect(imported.exitCode == 1 && imported.stderr.contains(
            "already holds data: pass --replace to make it equal to the archive (after a safety backup) or --merge to add only what it lacks"),
            "\(imported.stderr)")
        let demo = try CLI.run(["demo", "--store", dir.file("s"), "--days", "2"])
        #expect(demo.exitCode == 1 && demo.stderr.contains("already holds data; choose an empty --store directory"), "\(demo.stderr)")
    }
}
