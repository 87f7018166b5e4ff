import CSystemCalls
import Foundation
@testable import PulseStoreTestSupport
@testable import PulseTestSupport
import Testing

/// `--json` promises one object on standard output, never an empty file: a job that reads the
/// report of a command a signal ended (a CI timeout's SIGTERM, Ctrl-C) reads why it failed.
@Suite("--json when a signal ends the command: an interruption or a fatal signal")
struct InterruptedReportTests {
    /// The one JSON object `stdout` holds.
    static func onlyObject(_ stdout: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> [String: Any] {
        let lines = stdout.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.count == 2 && lines[1].isEmpty, "one line expected on stdout: \(stdout)", sourceLocation: sourceLocation)
        return try #require(try JSONSerialization.jsonObject(with: Data(stdout.utf8)) as? [String: Any], "\(stdout)", sourceLocation: sourceLocation)
    }

    @Test("prune --json interrupted after its first removal prints the failure object, its error the Error line's message")
    func prune() throws {
        let dir = try PruneTests.directory(["2021-05-01-1200", "2021-05-02-1200", "2021-05-03-1200", "2021-05-04-1200"])
        let stopped = try KillPoints.expectStopped(["prune", dir.path, "--keep-last", "1", "--json"], at: "prune.removed:1", with: SIGINT)
        let object = try Self.onlyObject(stopped.stdout)
        let error = try #require(object["error"] as? String, "\(stopped.stdout)")
        #expect(object["ok"] as? Bool == false && object.count == 2, "\(stopped.stdout)")
        #expect(error.hasPrefix("interrupted (SIGINT) after its commit: 1 of the 3 backups the policy removes is gone"), "\(error)")
        #expect(stopped.stderr.contains("Error: " + error), "\(stopped.stderr)")
    }

    @Test("import --json interrupted once staged prints the failure object")
    func importStaged() throws {
        let dir = TemporaryDirectory()
        let stopped = try KillPoints.expectStopped(["import", Repository.sampleFormat2, "--store", dir.file("store"), "--no-backfill", "--json"],
                                                   at: "import.staged:1", with: SIGTERM)
        let object = try Self.onlyObject(stopped.stdout)
        #expect(object["ok"] as? Bool == false, "\(stopped.stdout)")
        #expect(object["error"] as? String == "interrupted (SIGTERM); its temporary files are removed", "\(stopped.stdout)")
        #expect(!FileManager.default.fileExists(atPath: dir.file("store")))
    }

    @Test("verify --json interrupted while it reads prints its report's keys, the interruption as its one problem, roundTrip null")
    func verifyReading() throws {
        let stopped = try KillPoints.expectStopped(["verify", Repository.sampleFormat2, "--json"], at: "read:2", with: SIGHUP)
        let object = try Self.onlyObject(stopped.stdout)
        let error = try #require(object["error"] as? String, "\(stopped.stdout)")
        #expect(error.hasPrefix("interrupted (SIGHUP)"), "\(error)")
        #expect(object["ok"] as? Bool == false && object["roundTrip"] is NSNull, "\(stopped.stdout)")
        #expect((object["problems"] as? [[String: Any]])?.first?["message"] as? String == error, "\(stopped.stdout)")
    }

    @Test("a signal that comes as the command prints its report: one object on stdout, the report or the failure, never both")
    func asTheReportIsPrinted() throws {
        // The one removal is the prune's last step: resumed, the main thread goes on to print
        // its report while the interruption's watcher takes the signal.
        let dir = try PruneTests.directory(["2021-05-01-1200", "2021-05-02-1200"])
        let stopped = try KillPoints.expectStopped(["prune", dir.path, "--keep-last", "1", "--json"], at: "prune.removed:1", with: SIGINT)
        let object = try Self.onlyObject(stopped.stdout)
        #expect(object["ok"] as? Bool == false || object["removed"] != nil, "\(stopped.stdout)")
    }

    /// `readiness --json` of ten years (about 400 KB, six times what a pipe holds) through a
    /// pipe whose reader has taken its first byte, so that the command is halfway through
    /// writing the report when the signal comes.
    static func readinessReportUnderWay(in dir: TemporaryDirectory) throws -> (running: CLI.Running, first: Data) {
        let store = dir.file("store")
        try StoreFixtures.demoStore(store, days: 3)
        let running = try CLI.start(CLI.process(["readiness", "--store", store, "--json", "--days", "3650", "--timezone", "UTC"]))
        return (running, running.stdout.readData(ofLength: 1))
    }

    @Test("a signal while a long report goes out waits for its end: readiness --json through a pipe is one whole object, and the command ends by the signal")
    func signalDuringALongReport() throws {
        let dir = TemporaryDirectory()
        let (run, first) = try Self.readinessReportUnderWay(in: dir)
        #expect(kill(run.process.processIdentifier, SIGTERM) == 0)
        let stdout = first + run.stdout.readDataToEndOfFile()
        run.process.waitUntilExit()
        let stderr = run.stderr()
        #expect(run.process.terminationReason == .uncaughtSignal && run.process.terminationStatus == SIGTERM, "\(stderr)")
        let object = try Self.onlyObject(String(decoding: stdout, as: UTF8.self))
        #expect((object["days"] as? [Any])?.count == 3650, "\(stdout.count) bytes; \(stderr)")
    }

    @Test("a reader that stops taking a long report cannot keep a signal from ending the command: it ends by the signal within a bounded wait")
    func stalledReaderDoesNotHoldTheEnd() throws {
        let dir = TemporaryDirectory()
        let (run, _) = try Self.readinessReportUnderWay(in: dir)
        #expect(kill(run.process.processIdentifier, SIGTERM) == 0)
        // Nothing more is read; the command gives the reader 5 s.
        var waits = 0
        while run.process.isRunning && waits < 600 {
            usleep(100_000)
            waits += 1
        }
        #expect(!run.process.isRunning, "still running 60 s after SIGTERM with its report's reader stalled")
        if run.process.isRunning { run.process.terminate() }
        run.stdout.closeFile()
        run.process.waitUntilExit()
        #expect(run.process.terminationReason == .uncaughtSignal && run.process.terminationStatus == SIGTERM, "\(run.stderr())")
    }

    @Test("readiness --backfill interrupted after its scores committed (at the chart's commit) says they stay, in the Error line and the --json object (review h97: 'its temporary files are removed', the rows kept)")
    func backfillInterruptedAfterItsCommit() throws {
        let dir = TemporaryDirectory()
        let store = dir.file("store")
        try StoreFixtures.demoStore(store, days: 5)
        let stopped = try KillPoints.expectStopped(["readiness", "--store", store, "--backfill", "--days", "400", "--json", "--svg", dir.file("chart.svg")],
                                                   at: "commit:1", with: SIGTERM)
        let object = try Self.onlyObject(stopped.stdout)
        let error = try #require(object["error"] as? String, "\(stopped.stdout)")
        #expect(error == "interrupted (SIGTERM) after its commit: the store \(store) holds the readiness scores recomputed for the 400 days", "\(error)")
        #expect(stopped.stderr.contains("Error: " + error), "\(stopped.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir.file("chart.svg")))
    }

    @Test("a fatal signal (SIGABRT, as when memory runs out) ends import --json: one failure object on stdout, its error the Error line's message")
    func fatalSignalImport() throws {
        let dir = TemporaryDirectory()
        let stopped = try KillPoints.stop(["import", Repository.sampleFormat2, "--store", dir.file("store"), "--no-backfill", "--json"],
                                          at: "import.staged:1", with: SIGABRT)
        #expect(stopped.reached && stopped.reason == .exit && stopped.status == 1, "\(stopped.stderr)")
        let object = try Self.onlyObject(stopped.stdout)
        let error = try #require(object["error"] as? String, "\(stopped.stdout)")
        #expect(error == "stopped by a fatal error (SIGABRT: memory ran out, or an internal fault); the partial files and folders it was writing are removed",
                "\(error)")
        #expect(object["ok"] as? Bool == false && object.count == 2, "\(stopped.stdout)")
        #expect(stopped.stderr.contains("Error: " + error), "\(stopped.stderr)")
    }

    @Test("a fatal signal ends verify --json while it reads: its report's keys, the fatal error as its one problem, roundTrip null")
    func fatalSignalVerify() throws {
        let stopped = try KillPoints.stop(["verify", Repository.sampleFormat2, "--json"], at: "read:2", with: SIGSEGV)
        #expect(stopped.reached && stopped.reason == .exit && stopped.status == 1, "\(stopped.stderr)")
        let object = try Self.onlyObject(stopped.stdout)
        let error = try #require(object["error"] as? String, "\(stopped.stdout)")
        #expect(error.hasPrefix("stopped by a fatal error (SIGSEGV: "), "\(error)")
        #expect(object["ok"] as? Bool == false && object["roundTrip"] is NSNull, "\(stopped.stdout)")
        #expect((object["problems"] as? [[String: Any]])?.first?["message"] as? String == error, "\(stopped.stdout)")
    }

    @Test("the fatal-signal handler writes a message into the report as a JSON string's inside: quotes, backslashes, every control byte, non-ASCII text")
    func handlerEscapesJSON() throws {
        let texts = ["plain", "a \"quoted\" name", #"back\slash\"#, String((1...31).map { Character(Unicode.Scalar(UInt8($0))) }),
                     "\u{7F}del, tab\tnew\nline", "Zürich/日本/🙂.json.gz", "out/.t.staging-12, except \"x\""]
        for text in texts {
            var ends: [Int32] = [0, 0]
            #expect(pipe(&ends) == 0)
            pulse_fatal_write_json_to(ends[1], text)
            close(ends[1])
            let written = FileHandle(fileDescriptor: ends[0], closeOnDealloc: true).readDataToEndOfFile()
            let decoded = try JSONSerialization.jsonObject(with: Data("\"".utf8) + written + Data("\"".utf8), options: .fragmentsAllowed) as? String
            #expect(decoded == text, "\(text.debugDescription) came back as \(String(decoding: written, as: UTF8.self).debugDescription)")
        }
    }
}
