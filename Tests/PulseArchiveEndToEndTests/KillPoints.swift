import CSystemCalls
import Foundation
import Testing
@testable import PulseTestSupport

/// Kills and interrupts that land at exact places: the binary stops itself at a named point
/// when `PULSE_ARCHIVE_TEST_PAUSE_AT` asks (`TestPausePoint`, docs/testing.md "Kill points"), and
/// the test sends its signal to the stopped process. No delay, no calibration: the same point
/// every run.
enum KillPoints {
    static let variable = "PULSE_ARCHIVE_TEST_PAUSE_AT"

    /// How often `arguments` reaches each point when left alone (it must succeed).
    static func count(_ arguments: [String], environment: [String: String] = [:],
                      sourceLocation: SourceLocation = #_sourceLocation) throws -> [String: Int] {
        let result = try CLI.run(arguments, environment: environment.merging([variable: "count"]) { $1 })
        #expect(result.exitCode == 0, "\(arguments[0]) exited \(result.exitCode): \(result.stderr)", sourceLocation: sourceLocation)
        let line = try #require(result.stderr.split(separator: "\n").last { $0.hasPrefix("test pause points: reached") },
                                "no point count in: \(result.stderr)", sourceLocation: sourceLocation)
        var counts: [String: Int] = [:]
        for pair in line.dropFirst("test pause points: reached".count).split(separator: " ") {
            let parts = pair.split(separator: "=")
            if parts.count == 2, let n = Int(parts[1]) { counts[String(parts[0])] = n }
        }
        return counts
    }

    /// `count` occurrences of `point`, spread evenly from the first to the last of `total`
    /// (fewer when `total` is smaller), as `point:n` settings.
    static func spread(_ point: String, _ count: Int, over total: Int) -> [String] {
        guard total > 0, count > 0 else { return [] }
        let picks = (0..<count).map { i in count == 1 ? 1 : 1 + (total - 1) * i / (count - 1) }
        return Array(Set(picks)).sorted().map { "\(point):\($0)" }
    }

    /// What happened to a command stopped at a point.
    struct Stopped {
        /// Whether the command reached the point (else it ran to its end).
        let reached: Bool
        /// Whether the signal was sent: false when the point was not reached, or when the
        /// command ended between its pause line and its stop (a point on a thread the main
        /// thread does not wait for, such as `worker.finished`, lets the main thread exit there).
        let signalled: Bool
        let reason: Process.TerminationReason
        let status: Int32
        let stderr: String
        /// What it wrote on standard output (a file, not a pipe: a command writing more than a
        /// pipe holds must not block before its pause).
        let stdout: String
    }

    /// Runs `arguments` until it stops itself at `pause` (`point:n`), then sends it `signal`
    /// (and SIGCONT after any signal but SIGKILL, so that it handles it) and waits for its end.
    /// Every wait ends: the process either stops at the point or exits.
    /// - Parameter toThread: picks one thread of the stopped process (by its id) to receive the
    ///   signal alone (Linux's tgkill); nil: the process.
    /// - Parameter beforeSignal: runs while the process (its id given) is stopped, before the signal.
    static func stop(_ arguments: [String], at pause: String, with signal: Int32,
                     environment: [String: String] = [:], executable: String? = nil, shellPrefix: [String] = [],
                     toThread: ((Int32) -> Int32?)? = nil, beforeSignal: ((Int32) throws -> Void)? = nil) throws -> Stopped {
        let process = CLI.process(arguments, environment: environment.merging([variable: pause]) { $1 })
        if !shellPrefix.isEmpty {
            process.executableURL = URL(fileURLWithPath: shellPrefix[0])
            process.arguments = Array(shellPrefix.dropFirst()) + [CLI.executable] + arguments
        }
        let err = Pipe()
        let outputPath = NSTemporaryDirectory() + "/kill-points-stdout-\(UUID().uuidString)"
        guard FileManager.default.createFile(atPath: outputPath, contents: nil) else { throw CocoaError(.fileWriteUnknown) }
        defer { try? FileManager.default.removeItem(atPath: outputPath) }
        let output = try FileHandle(forWritingTo: URL(fileURLWithPath: outputPath))
        defer { try? output.close() }
        process.standardOutput = output
        process.standardError = err
        try process.run()
        let (reached, read) = awaitPause(pause, on: err)
        var collected = read
        var signalled = false
        // The line comes just before the process stops itself: a signal sent in between
        // would be handled before the stop (and SIGCONT wasted), so wait for the stop.
        let state = reached ? awaitStop(process.processIdentifier) : .ended
        if state == .timedOut {
            Issue.record("the command wrote the pause line but neither stopped nor ended within 60 s")
            kill(process.processIdentifier, SIGKILL)
        }
        if state == .stopped {
            signalled = true
            do { try beforeSignal?(process.processIdentifier) } catch {
                kill(process.processIdentifier, SIGKILL)
                process.waitUntilExit()
                throw error
            }
            if let toThread {
                let thread = toThread(process.processIdentifier)
                #expect(thread != nil, "no thread to signal")
                #expect(pulse_signal_thread(process.processIdentifier, thread ?? process.processIdentifier, signal) == 0, "tgkill: \(errno)")
            } else {
                kill(process.processIdentifier, signal)
            }
            if signal != SIGKILL { kill(process.processIdentifier, SIGCONT) }
            collected += err.fileHandleForReading.readDataToEndOfFile()
        }
        process.waitUntilExit()
        if state != .stopped { collected += err.fileHandleForReading.readDataToEndOfFile() }
        let written = FileManager.default.contents(atPath: outputPath) ?? Data()
        return Stopped(reached: reached, signalled: signalled, reason: process.terminationReason, status: process.terminationStatus,
                       stderr: String(decoding: collected, as: UTF8.self), stdout: String(decoding: written, as: UTF8.self))
    }

    /// The threads of process `pid`, by their ids, in order.
    static func threads(of pid: Int32) -> [Int32] {
        ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []).compactMap(Int32.init).sorted()
    }

    /// Whether `thread` of process `pid` blocks `signal`, as its `SigBlk` line in /proc says
    /// (the interruption's watcher blocks the fatal signals: one sent to it is never taken).
    static func blocks(_ signal: Int32, thread: Int32, of pid: Int32) -> Bool {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/task/\(thread)/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("SigBlk:") }),
              let mask = UInt64(line.dropFirst("SigBlk:".count).trimmingCharacters(in: .whitespaces), radix: 16) else { return true }
        return mask & (UInt64(1) << UInt64(signal - 1)) != 0
    }

    /// Reads the command's standard error until it says it paused at `pause` (true), or ends
    /// (false: it exited without reaching the point); returns what it read.
    static func awaitPause(_ pause: String, on err: Pipe) -> (reached: Bool, collected: Data) {
        let marker = Data("test pause point: paused at \(pause)\n".utf8)
        var collected = Data()
        // read(2) itself: it returns what the pipe holds as soon as it holds anything
        // (Foundation's availableData waited for more from a process that was stopped).
        let descriptor = err.fileHandleForReading.fileDescriptor
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { return (false, collected) }
            collected += buffer[..<count]
            if collected.range(of: marker) != nil { return (true, collected) }
        }
    }

    /// What became of a process that said it pauses.
    enum StopState {
        case stopped, ended, timedOut
    }

    /// Waits (at most 60 s) until the process is stopped, or has ended (a zombie, or gone from
    /// /proc once reaped), as /proc says.
    static func awaitStop(_ pid: Int32) -> StopState {
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline {
            guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8) else { return .ended }
            if let close = stat.lastIndex(of: ")"), let state = stat[close...].dropFirst(2).first {
                if state == "T" { return .stopped }
                if state == "Z" || state == "X" { return .ended }
            }
            usleep(1_000)
        }
        return .timedOut
    }

    /// Whether the process stops within 60 s.
    static func isStopped(_ pid: Int32) -> Bool {
        awaitStop(pid) == .stopped
    }

    /// `stop`, expecting the point reached and the process ended by `signal`, having said so
    /// when it could (any signal but SIGKILL).
    @discardableResult
    static func expectStopped(_ arguments: [String], at pause: String, with signal: Int32, environment: [String: String] = [:],
                              sourceLocation: SourceLocation = #_sourceLocation) throws -> Stopped {
        let stopped = try stop(arguments, at: pause, with: signal, environment: environment)
        #expect(stopped.reached, "\(arguments[0]) never reached \(pause): \(stopped.stderr)", sourceLocation: sourceLocation)
        #expect(stopped.reason == .uncaughtSignal && stopped.status == signal,
                "\(arguments[0]) at \(pause) ended by \(stopped.reason == .exit ? "exit" : "signal") \(stopped.status), not signal \(signal)",
                sourceLocation: sourceLocation)
        if signal != SIGKILL {
            #expect(stopped.stderr.contains("Error: interrupted ("), "\(arguments[0]) at \(pause): \(stopped.stderr)", sourceLocation: sourceLocation)
        }
        return stopped
    }
}
