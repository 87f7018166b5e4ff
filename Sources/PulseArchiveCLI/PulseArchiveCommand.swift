import Foundation
import PulseArchive
import PulseStore
import PulseSystem

/// The `pulse-archive` command: routes to a subcommand, turns failures into messages and
/// exit codes (0 success, 1 failure, 64 usage), never a stack trace.
public enum PulseArchiveCommand {
    public static let version = "0.1.0"

    static var subcommands: [any Subcommand.Type] {
        [InspectCommand.self, ExportCommand.self, ImportCommand.self, VerifyCommand.self, ReadinessCommand.self, DemoCommand.self]
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
        // Whatever the caller's umask, nothing this tool creates is readable by others.
        umask(0o077)
        // Past a file-size limit (`ulimit -f`) a write then fails with EFBIG, which every write
        // reports and cleans up after, instead of the signal killing the process mid-write and
        // leaving a partial file or a half-made store.
        signal(SIGXFSZ, SIG_IGN)
        // Before any thread starts: Ctrl-C removes partial archives and scratch files.
        InterruptCleanup.removeOnInterrupt { signal in
            let console = Console()
            let name = [SIGINT: "SIGINT", SIGTERM: "SIGTERM", SIGHUP: "SIGHUP"][signal] ?? "signal \(signal)"
            console.errRaw((console.stderrIsTerminal ? "\r\u{1B}[K" : "") + "Error: interrupted (\(name)); its temporary files are removed")
        }
        exit(run(Array(CommandLine.arguments.dropFirst()), console: Console()))
    }

    /// Runs one command line; returns the exit code.
    static func run(_ arguments: [String], console: Console) -> Int32 {
        guard let first = arguments.first else {
            return usageFailure("Missing subcommand", usage: "pulse-archive <subcommand>", helpCommand: "pulse-archive --help", console)
        }
        switch first {
        case "-h", "--help":
            console.out(rootHelp)
            return 0
        case "--version":
            console.out("pulse-archive \(version)")
            return 0
        case "help":
            if arguments.count > 1, let command = subcommands.first(where: { $0.spec.name == arguments[1] }) {
                console.out(command.spec.helpText)
            } else {
                console.out(rootHelp)
            }
            return 0
        default:
            break
        }
        guard let command = subcommands.first(where: { $0.spec.name == first }) else {
            return usageFailure("Unknown subcommand '\(first)'", usage: "pulse-archive <subcommand>", helpCommand: "pulse-archive --help", console)
        }
        let spec = command.spec
        do {
            let parsed = try ParsedArguments(Array(arguments.dropFirst()), spec: spec)
            if parsed.wantsHelp {
                console.out(spec.helpText)
                return 0
            }
            let instance = try command.init(parsed, console: console)
            return try instance.run()
        } catch let error as UsageError {
            return usageFailure(error.message, usage: spec.usage, helpCommand: "pulse-archive \(spec.name) --help", console)
        } catch let error as ArchiveError {
            console.err("Error: \(LimitOptions.advice(error.message, limit: error.limit))")
            return 1
        } catch {
            // StoreError prints as its message (CustomStringConvertible).
            console.err("Error: \(error)")
            return 1
        }
    }

    private static func usageFailure(_ message: String, usage: String, helpCommand: String, _ console: Console) -> Int32 {
        console.err("Error: \(message)\nUsage: \(usage)\n  See '\(helpCommand)' for more information.")
        return 64
    }
}

/// One subcommand: its declared shape, a validating initializer, and the work.
protocol Subcommand {
    static var spec: CommandSpec { get }
    /// Checks the values of the arguments.
    /// - Throws: `UsageError` for a value that does not fit (exit 64).
    init(_ arguments: ParsedArguments, console: Console) throws
    /// Does the work; returns the exit code.
    func run() throws -> Int32
}

extension CommandSpec.Option {
    static let store = CommandSpec.Option.value("--store", valueName: "dir",
        help: "The store directory (default: $PULSE_STORE, else ./pulse-store).")
    static let json = CommandSpec.Option.flag("--json", help: "Print one JSON object on stdout instead of text.")
    static let quiet = CommandSpec.Option.flag("--quiet", "-q", help: "Show no progress line.")
    static let maxSize = CommandSpec.Option.value("--max-size", valueName: "bytes",
        help: "Refuse an archive whose JSON is larger than this (default: 64 GiB).")
    static let maxInflateRatio = CommandSpec.Option.value("--max-inflate-ratio", valueName: "n",
        help: "Refuse a gzip archive that inflates more than n times its size (default: 200).")
    static let maxStringSize = CommandSpec.Option.value("--max-string-size", valueName: "bytes",
        help: "Refuse a string longer than this; an attachment or file carries 3/4 of it as base64 (default: 8 MiB). Memory grows with it.")
    static let maxObjectSize = CommandSpec.Option.value("--max-object-size", valueName: "bytes",
        help: "Refuse a document, Android row, meal or food row, or settings blob whose JSON is larger than this (default: 2 MiB). Memory grows with it.")
}

/// The option that raises each limit the reader and writer share: the library names the limit,
/// the command line says how to raise it.
enum LimitOptions {
    static func option(raising limit: ArchiveLimits.Name) -> String? {
        switch limit {
        case .stringBytes: "--max-string-size"
        case .wholeValueBytes: "--max-object-size"
        case .uncompressedBytes: "--max-size"
        case .inflateRatio: "--max-inflate-ratio"
        case .depth, .numberLength: nil
        }
    }

    /// `message` with the way to raise `limit`, when it can be raised.
    static func advice(_ message: String, limit: ArchiveLimits.Name?) -> String {
        guard let limit, let option = option(raising: limit) else { return message }
        return "\(message); \(option) raises the limit (then needed wherever the archive is read)"
    }
}

/// Checks of argument values shared by the commands.
enum ArgumentValues {
    static func integer(_ text: String?, option: String, range: ClosedRange<Int>) throws -> Int? {
        guard let text else { return nil }
        guard let value = Int(text), range.contains(value) else {
            throw UsageError(message: "The value '\(text)' is invalid for '\(option)': expected an integer from \(range.lowerBound) to \(range.upperBound)")
        }
        return value
    }

    /// `--timezone`, else `$TZ`, else the system's zone. An invalid `$TZ` is refused like an
    /// invalid `--timezone`, rather than read as UTC as Foundation would: days would silently
    /// fall on other boundaries, and an import stores the scores computed from them.
    static func timeZone(_ text: String?, environment: [String: String]) throws -> TimeZone {
        if let text {
            guard let zone = TimeZone(identifier: text) else {
                throw UsageError(message: "The value '\(text)' is invalid for '--timezone': expected a zone identifier such as Europe/Berlin or UTC")
            }
            return zone
        }
        guard let variable = environment["TZ"] else { return .current }
        // As the C library reads TZ: empty is UTC, a leading ':' is dropped, a path into the
        // zone database names its zone.
        var name = Substring(variable)
        if name.first == ":" { name = name.dropFirst() }
        if name.isEmpty { name = "UTC" }
        if name.hasPrefix("/"), let range = name.range(of: "/zoneinfo/") { name = name[range.upperBound...] }
        guard let zone = TimeZone(identifier: String(name)) else {
            throw UsageError(message: "The value '\(variable)' of the TZ environment variable is not a zone identifier such as Europe/Berlin or UTC: correct or unset TZ, or pass --timezone")
        }
        return zone
    }

    /// A `YYYY-MM-DD` calendar day.
    static func day(_ text: String?, option: String) throws -> DateComponents? {
        guard let text else { return nil }
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
              let year = Int(parts[0]), let month = Int(parts[1]), let day = Int(parts[2]),
              (1...12).contains(month), day >= 1,
              Int64(day) <= ArchiveDate.daysInMonth(year: Int64(year), month: Int64(month))
        else {
            throw UsageError(message: "The value '\(text)' is invalid for '\(option)': expected a date as YYYY-MM-DD")
        }
        return DateComponents(year: year, month: month, day: day)
    }

    /// The reader's (and for export the writer's) limits, with the options applied.
    static func limits(_ arguments: ParsedArguments) throws -> ArchiveLimits {
        var limits = ArchiveLimits.standard
        if let size = try integer(arguments.value("--max-size"), option: "--max-size", range: 1...Int.max) {
            limits.maxUncompressedBytes = Int64(size)
        }
        if let ratio = try integer(arguments.value("--max-inflate-ratio"), option: "--max-inflate-ratio", range: 1...1_000_000) {
            limits.maxInflateRatio = Double(ratio)
        }
        // At most 1 GiB: a string and its decoded bytes are held in memory (and 1 GiB of base64
        // keeps every size within Int32 for SQLite's blobs).
        if let size = try integer(arguments.value("--max-string-size"), option: "--max-string-size", range: 1_024...(1 << 30)) {
            limits.maxStringBytes = size
        }
        if let size = try integer(arguments.value("--max-object-size"), option: "--max-object-size", range: 1_024...(1 << 30)) {
            limits.maxWholeValueBytes = size
        }
        return limits
    }

    /// Now, in milliseconds since 1970.
    static func nowMillis() -> Int64 {
        Int64((Date().timeIntervalSince1970 * 1000).rounded(.down))
    }
}
