import Foundation
import PulseArchive
import PulseStore
import PulseSystem

/// The `pulse-archive` command: routes to a subcommand, turns failures into messages and
/// exit codes (0 success, 1 failure, 64 usage), never a stack trace.
public enum PulseArchiveCommand {
    public static let version = "0.1.0"

    static var subcommands: [any Subcommand.Type] {
        [InspectCommand.self, ExportCommand.self, ImportCommand.self, VerifyCommand.self, DiffCommand.self, PruneCommand.self, KeygenCommand.self, ReadinessCommand.self, DemoCommand.self, TablesCommand.self]
    }

    static var rootHelp: String { """
        OVERVIEW: Export, import and verify backups of PulseLoop smart-ring data.

        USAGE: pulse-archive <subcommand>

        OPTIONS:
        \(HelpFormatter.row("--version", "Show the version."))\(HelpFormatter.row("-h, --help", "Show help information."))
        SUBCOMMANDS:
        \(subcommands.map { HelpFormatter.row($0.spec.name, $0.spec.abstract) }.joined())
          See 'pulse-archive help <subcommand>' for detailed help.
        """ }

    /// Runs the command line and exits the process with its code.
    public static func main() -> Never {
        // Before anything opens a file: a standard stream the caller closed is held by
        // /dev/null, so that no file of ours takes its number.
        _ = StandardStreams.closedAtStart
        // Whatever the caller's umask, nothing this tool creates is readable by others.
        umask(0o077)
        // A test's refusals read before any work: a misspelt one ends the run before it writes.
        TestRefusal.readAtStart()
        // Past a file-size limit (`ulimit -f`) a write then fails with EFBIG, which every write
        // reports and cleans up after, instead of the signal killing the process mid-write and
        // leaving a partial file or a half-made store.
        signal(SIGXFSZ, SIG_IGN)
        // Likewise a reader that goes away (`export -o - | head -c 100`): the write fails with
        // EPIPE, reported and cleaned up after, instead of the signal leaving the scratch copy
        // of the archive behind in $TMPDIR.
        signal(SIGPIPE, SIG_IGN)
        #if canImport(Glibc)
        // Buffers of 256 KiB and more come from mmap and go back to the system when freed.
        // Left to itself, glibc raises this threshold to the largest block freed so far, and
        // then keeps multi-megabyte strings in heaps it rarely gives back: 32 strings of 8 MiB
        // took inspect to 140 MB, 118 MB with the threshold fixed (and 40 % less time).
        // `mallopt` is not in Swift's Glibc module; M_MMAP_THRESHOLD is -3 in <malloc.h>.
        typealias Mallopt = @convention(c) (Int32, Int32) -> Int32
        if let mallopt = dlsym(nil, "mallopt") { _ = unsafeBitCast(mallopt, to: Mallopt.self)(-3, 256 << 10) }
        #endif
        // After a commit the work stands: saying only "interrupted" made a retry fail on a
        // store that already held the archive.
        let describeCommit: @Sendable (String) -> String = { outcome in
            outcome + (outcome.contains("readiness backfill") ? "; run `pulse-archive readiness --backfill` to finish it" : "")
        }
        // A fatal signal (memory run out, a failed check) removes a partial archive too, and
        // says so in one line instead of a backtrace.
        InterruptCleanup.removeOnFatalSignal(describingCommit: describeCommit)
        // Before any thread starts: Ctrl-C removes partial archives and scratch files.
        InterruptCleanup.removeOnInterrupt { signal, committed, left, sent in
            let console = Console()
            let name = [SIGINT: "SIGINT", SIGTERM: "SIGTERM", SIGHUP: "SIGHUP", SIGQUIT: "SIGQUIT"][signal] ?? "signal \(signal)"
            var what = committed.map { " after its commit: " + describeCommit($0) } ?? "; its temporary files are removed"
            if !left.isEmpty {
                // Named, never said to be gone (a read-only folder, a tree too deep to remove).
                let paths = left.joined(separator: ", ")
                what += committed == nil ? ", except \(paths), which could not be: remove it by hand" : "; could not remove \(paths): remove it by hand"
            }
            if let sent { what += "; \(sent)" }
            let message = "interrupted (\(name))\(what)"
            // `--json` promises one object on standard output: the failure's, if the command's
            // report had not begun.
            if let template = failureReportTemplate.withLock({ $0 }), Console.claimForInterruption() {
                let quoted = JSONReport.string(message).text
                Console.writeInterruptionReport(template.replacingOccurrences(of: InterruptCleanup.fatalReportMessage,
                                                                              with: String(quoted.dropFirst().dropLast())))
            }
            console.errRaw((console.stderrIsTerminal ? "\r\u{1B}[K" : "") + "Error: " + message)
        }
        // What killed runs left in $TMPDIR (a temporary directory, an export's scratch copy):
        // nothing else would ever remove it.
        PrivateFiles.removeStaleTemporaries(in: PrivateFiles.temporaryBase)
        if let refusal = argumentNotUTF8() ?? variableNotUTF8() {
            InterruptCleanup.exit(usageFailure(refusal, usage: "pulse-archive <subcommand>", helpCommand: "pulse-archive --help", Console()))
        }
        InterruptCleanup.exit(run(Array(CommandLine.arguments.dropFirst()), console: Console()))
    }

    /// Why an argument cannot be taken as it was given, or nil. `CommandLine.arguments` repairs
    /// bytes that are not UTF-8 to U+FFFD, so a path holding one named another file: `verify`
    /// of a cut `night\xFF.json.gz` read a sound `night\u{FFFD}.json.gz` beside it, exit 0, and
    /// `prune bk\xFF` removed backups from `bk\u{FFFD}`. Refused, with the byte shown.
    static func argumentNotUTF8() -> String? {
        for index in 1..<Int(CommandLine.argc) {
            guard let raw = CommandLine.unsafeArgv[index], String(validatingCString: raw) == nil else { continue }
            let bytes = Array(UnsafeBufferPointer(start: UnsafeRawPointer(raw).assumingMemoryBound(to: UInt8.self), count: strlen(raw)))
            // The text as it is, each byte that is not UTF-8 as \xNN.
            var shown = ""
            var rest = bytes[...]
            while !rest.isEmpty {
                let valid = Self.longestValidPrefix(rest)
                shown += ShownText.escapingControls(String(decoding: rest.prefix(valid), as: UTF8.self))
                rest = rest.dropFirst(valid)
                if let byte = rest.first {
                    var hex: [UInt8] = []
                    HexText.append(byte, to: &hex)
                    shown += "\\x" + String(decoding: hex, as: UTF8.self)
                    rest = rest.dropFirst()
                }
            }
            return "argument \(index) is not UTF-8 text (\"\(shown)\"): this tool takes names as UTF-8, "
                + "and read any other way it would name another file; rename it"
        }
        return nil
    }

    /// The same for the environment variables the tool reads as names or secrets: `PULSE_STORE`
    /// holding byte 0xFF exported another store (the one under U+FFFD), `TMPDIR` put scratch
    /// files in another folder, and a passphrase from `PULSE_ARCHIVE_PASSPHRASE` became another
    /// passphrase than the one its bytes spell (`age` and a passphrase file read them raw). A
    /// passphrase's value is never shown.
    static func variableNotUTF8() -> String? {
        for name in ["PULSE_STORE", "TMPDIR", "SQLITE_TMPDIR", "TZ", KeyOptions.variable, "SOURCE_DATE_EPOCH"] {
            guard let raw = getenv(name), String(validatingCString: raw) == nil else { continue }
            let what = name == KeyOptions.variable ? "a passphrase" : "a name"
            return "\(name) is not UTF-8 text: this tool takes \(what) as UTF-8, and read any other way it would be another; set it to UTF-8 text"
                + (name == KeyOptions.variable ? " (or give the passphrase's bytes in a file: --passphrase-file)" : "")
        }
        return nil
    }

    /// How many bytes at the start of `bytes` are whole, valid UTF-8.
    private static func longestValidPrefix(_ bytes: ArraySlice<UInt8>) -> Int {
        var parser = Unicode.UTF8.ForwardParser()
        var iterator = bytes.makeIterator()
        var length = 0
        while case .valid(let scalar) = parser.parseScalar(from: &iterator) { length += scalar.count }
        return length
    }

    /// What `--json` prints on standard output when a signal ends the command, the message its
    /// `Error:` line says going where `InterruptCleanup.fatalReportMessage` stands: set once
    /// the arguments are read, here for an interruption and in the fatal-signal handler's
    /// storage (which can only copy bytes) for a fatal signal.
    private static let failureReportTemplate = Locked<String?>(nil)

    /// Runs one command line; returns the exit code.
    static func run(_ arguments: [String], console: Console) -> Int32 {
        guard let first = arguments.first else {
            return usageFailure("Missing subcommand", usage: "pulse-archive <subcommand>", helpCommand: "pulse-archive --help", console)
        }
        switch first {
        case "-h", "--help":
            return printed(rootHelp, console)
        case "--version":
            return printed("pulse-archive \(version)", console)
        case "help":
            if arguments.count > 1, let command = subcommands.first(where: { $0.spec.name == arguments[1] }) {
                return printed(command.spec.helpText, console)
            }
            return printed(rootHelp, console)
        default:
            break
        }
        guard let command = subcommands.first(where: { $0.spec.name == first }) else {
            return usageFailure("Unknown subcommand '\(first)'", usage: "pulse-archive <subcommand>", helpCommand: "pulse-archive --help", console)
        }
        let spec = command.spec
        var parsedArguments: ParsedArguments?
        do {
            let parsed = try ParsedArguments(Array(arguments.dropFirst()), spec: spec)
            parsedArguments = parsed
            // A marker every writer of a report leaves as it is (plain ASCII letters), then
            // the one byte the handler looks for.
            let marker = "PULSEFAILUREMESSAGEMARKER"
            if parsed.flag("--json"), let report = command.failureReport(marker, arguments: parsed)?.text {
                let template = report.replacingOccurrences(of: marker, with: InterruptCleanup.fatalReportMessage)
                failureReportTemplate.withLock { $0 = template }
                InterruptCleanup.setFatalReport(template)
            }
            if parsed.wantsHelp {
                try console.out(spec.helpText)
                return 0
            }
            let instance = try command.init(parsed, console: console)
            return try instance.run()
        } catch let error as UsageError {
            return usageFailure(error.message, usage: spec.usage, helpCommand: "pulse-archive \(spec.name) --help", console)
        } catch {
            // The library's message, and what to do in this tool's terms.
            let message = ShownText.oneLine(ErrorAdvice.message(error, command: spec.name))
            if let parsed = parsedArguments, parsed.flag("--json"), !Console.wroteResult, let report = command.failureReport(message, arguments: parsed) {
                try? console.out(report.text)
            }
            InterruptCleanup.reporting { console.err("Error: " + message) }
            return 1
        }
    }

    /// Prints help or the version: exit 0, or 1 when standard output cannot take it.
    private static func printed(_ text: String, _ console: Console) -> Int32 {
        do {
            try console.out(text)
            return 0
        } catch {
            console.err("Error: \(error)")
            return 1
        }
    }

    private static func usageFailure(_ message: String, usage: String, helpCommand: String, _ console: Console) -> Int32 {
        console.err("Error: \(ShownText.oneLine(message))\nUsage: \(usage)\n  See '\(helpCommand)' for more information.")
        return 64
    }
}
