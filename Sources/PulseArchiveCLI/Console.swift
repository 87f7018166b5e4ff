import Foundation
import PulseAge
import PulseArchive
import PulseStore
import PulseSystem
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where a command's output goes: results on stdout, messages and progress on stderr.
struct Console {
    var environment: [String: String] = ProcessInfo.processInfo.environment

    /// Writes a result line. Control characters are escaped (`ShownText`): reports quote
    /// values from archives and stores, and a terminal must not act on them. JSON output has
    /// none to escape (`JSONReport` writes them as `\u` escapes), so it stays exact.
    /// - Throws: `SystemError` when standard output cannot take it (closed, a full disk, a
    ///   reader gone): the command then fails with exit 1, and says that what it did stands,
    ///   since a report comes after the work (a retried import would find a store with data).
    func out(_ text: String) throws {
        try result(text, to: STDOUT_FILENO, name: "standard output")
    }

    /// `out` for a report that is the command's whole result (`verify`'s verdict): when it
    /// cannot be written, `lost` says what it held, instead of "the work is done and stands".
    func out(_ text: String, lost: String) throws {
        try result(text, to: STDOUT_FILENO, name: "standard output", lost: lost)
    }

    /// Writes the path of a file or folder the command made, the line a script takes with
    /// `new=$(pulse-archive export …)`: as it is when standard output is not a terminal, so
    /// that it opens the file (a folder named with U+200B was printed `\u{200B}`, and the
    /// nightly job's `verify "$new"` found no such file); on a terminal escaped as a name in a
    /// list is, a line break or tab quoted too, so it cannot fake another line.
    func outPath(_ path: String) throws {
        let terminal = isatty(STDOUT_FILENO) == 1
        try result(terminal ? ShownText.listed(path) : path, to: STDOUT_FILENO, name: "standard output", escaped: terminal)
    }

    /// Writes a result asked for (`--json`) on standard error, where it goes when standard
    /// output carries the archive (`-o -`): it fails as `out` does when it cannot be written
    /// (`2>/dev/full`), since the caller that asked for it is owed a failure, not exit 0.
    func resultOnStandardError(_ text: String) throws {
        try result(text, to: STDERR_FILENO, name: "standard error")
    }

    /// Whether a report went (or began to go) to standard output, the command's or that of
    /// an interruption or fatal signal that ended it: a command that fails after it adds no
    /// second one (`--json` promises one object).
    static var wroteResult: Bool { InterruptCleanup.reportClaimed }

    /// Takes standard output for an interruption's report; false when the command's report
    /// has begun (a second object, or one inside the first, would break `--json`).
    static func claimForInterruption() -> Bool {
        InterruptCleanup.claimReport(for: .ending)
    }

    /// Writes an interruption's report on standard output, waiting at most a second for room:
    /// the process is ending, and a reader that takes nothing must not keep it from ending.
    static func writeInterruptionReport(_ text: String) {
        var ready = pollfd(fd: STDOUT_FILENO, events: Int16(POLLOUT), revents: 0)
        guard poll(&ready, 1, 1_000) == 1, ready.revents & Int16(POLLOUT) != 0 else { return }
        try? emit(text + "\n", to: STDOUT_FILENO, name: "standard output")
    }

    private func result(_ text: String, to descriptor: Int32, name: String, escaped: Bool = true,
                        lost: String = "the command's work is done and stands; only this report is lost") throws {
        try InterruptCleanup.writingReport { stopPending in
            // Not taken: an interruption or a fatal signal printed its report and is ending the process.
            if descriptor == STDOUT_FILENO, !InterruptCleanup.claimReport(for: .command) { return }
            // Closed at the start and held by /dev/null since (`StandardStreams`): the report
            // would vanish there, while the caller is owed a failure as for any stream that
            // cannot take it.
            if StandardStreams.closedAtStart.contains(descriptor) {
                throw SystemError(.io, "cannot write \(name): it was closed (\(descriptor == STDOUT_FILENO ? ">&-" : "2>&-")); \(lost)")
            }
            do {
                try withoutActuallyEscaping(stopPending) { stopPending in
                    try Self.emit((escaped ? ShownText.escapingControls(text) : text) + "\n", to: descriptor, name: name,
                                  givingUpAfterASignal: stopPending)
                }
            } catch let error as SystemError {
                throw SystemError(.io, "\(error.message); \(lost)")
            }
        }
    }

    /// How long a report's reader may take nothing, once a signal waits for the report to end,
    /// before the rest is dropped and the process ends: in waits of `readerPollMilliseconds`.
    private static let readerPatience = 25
    private static let readerPollMilliseconds: Int32 = 200

    /// Writes a message line, control characters escaped as by `out`.
    /// A message nobody may be able to read (standard error closed) is dropped.
    func err(_ text: String) {
        try? Self.emit(ShownText.escapingControls(text) + "\n", to: STDERR_FILENO, name: "standard error")
    }

    /// Writes a `warning:` line: one line whatever a name in `text` holds.
    func warn(_ text: String) {
        err("warning: " + ShownText.oneLine(text))
    }

    /// Writes a message line as it is: for the tool's own terminal sequences.
    func errRaw(_ text: String) {
        try? Self.emit(text + "\n", to: STDERR_FILENO, name: "standard error")
    }

    /// Every line printed passes here: a secret key in it is cut out (`SecretKeyText`).
    /// - Parameter givingUpAfterASignal: for a report written with signals held off: the text
    ///   goes out a page at a time once the descriptor has room, and is dropped when this is
    ///   true and the reader has taken nothing for `readerPatience` waits (5 s), so that a
    ///   reader that stopped cannot keep a Ctrl-C from ending the process.
    private static func emit(_ text: String, to descriptor: Int32, name: String,
                             givingUpAfterASignal stopPending: (() -> Bool)? = nil) throws(SystemError) {
        let bytes = Array(SecretKeyText.redacted(text).utf8)
        var offset = 0
        var idleWaits = 0
        while offset < bytes.count {
            var length = bytes.count - offset
            if let stopPending {
                var ready = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
                let polled = poll(&ready, 1, readerPollMilliseconds)
                if polled == 0 || (polled < 0 && errno == EINTR) {
                    if stopPending() {
                        idleWaits += 1
                        if idleWaits >= readerPatience { return }
                    }
                    continue
                }
                // At most a page: a pipe with room for one takes it without blocking.
                length = min(length, 4096)
            }
            let n = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress! + offset, length) }
            if n < 0 {
                if errno == EINTR { continue }
                throw SystemError(.io, "cannot write \(name): \(errnoText())")
            }
            offset += n
            idleWaits = 0
        }
    }

    var stderrIsTerminal: Bool { isatty(STDERR_FILENO) == 1 }

    /// Says, on a terminal, that the store is about to be upgraded, since on a large store the
    /// first command of a new version pauses for about as long as an import.
    func announceUpgrade(of store: String, quiet: Bool) {
        guard !quiet, stderrIsTerminal, PulseStore.needsUpgrade(store) else { return }
        err("Upgrading the store \(store) to this version's schema (once; a large store takes about as long as an import)…")
    }

    /// The store directory: `--store`, else `$PULSE_STORE`, else `./pulse-store`.
    /// - Throws: `UsageError` when `PULSE_STORE` is set but empty: that is how an unset
    ///   variable reaches a job (`PULSE_STORE=$STORE`), and the store meant is not `./pulse-store`.
    func storeDirectory(_ arguments: ParsedArguments) throws -> String {
        if let store = arguments.value("--store") { return store }
        if let store = environment["PULSE_STORE"] {
            guard !store.isEmpty else {
                throw UsageError(message: "PULSE_STORE is set but empty: set it to the store directory, or unset it to use ./pulse-store")
            }
            return store
        }
        return "pulse-store"
    }
}

