import Foundation
import Testing
@testable import PulseTestSupport

/// The `pulse-archive` binary the end-to-end tests run: an optimized build, as users run it.
///
/// `PULSE_ARCHIVE_BINARY`, when set, names it (`.ci/run` builds it with
/// `swift build -c release --product pulse-archive --scratch-path .build/release-binary` before the tests, and
/// points the thread-sanitizer run at its own sanitized build). Unset, the first test that runs the
/// binary builds that same command (a no-op when it is up to date) and the others wait for it, so plain
/// `swift test` works too. The build has a scratch path of its own: `swift test` holds the lock of
/// `.build` while the tests run.
enum ReleaseBinary {
    static let scratchPath = Repository.root + "/.build/release-binary"

    static let path: String = {
        let environment = ProcessInfo.processInfo.environment
        if let given = environment["PULSE_ARCHIVE_BINARY"], !given.isEmpty {
            precondition(FileManager.default.isExecutableFile(atPath: given), "PULSE_ARCHIVE_BINARY=\(given) is not an executable file")
            return given
        }
        let build = Process()
        build.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        build.arguments = ["swift", "build", "-c", "release", "--product", "pulse-archive", "--scratch-path", scratchPath]
        build.currentDirectoryURL = URL(fileURLWithPath: Repository.root)
        let output = Pipe()
        build.standardOutput = output
        build.standardError = output
        do { try build.run() } catch { preconditionFailure("cannot start `swift build` for the end-to-end tests' binary: \(error)") }
        let log = output.fileHandleForReading.readDataToEndOfFile()
        build.waitUntilExit()
        precondition(build.terminationStatus == 0,
                     "`swift build -c release --product pulse-archive` failed for the end-to-end tests:\n" + String(decoding: log, as: UTF8.self))
        let path = scratchPath + "/release/pulse-archive"
        precondition(FileManager.default.isExecutableFile(atPath: path), "no binary at \(path) after the release build")
        return path
    }()
}

/// Runs the built `pulse-archive` binary, as a user would.
enum CLI {
    struct Result {
        let exitCode: Int32
        let stdout: String
        let stderr: String

        /// The stdout parsed as one JSON object.
        var json: [String: Any] {
            (try? JSONSerialization.jsonObject(with: Data(stdout.utf8))) as? [String: Any] ?? [:]
        }
    }

    /// The optimized binary these tests run (`ReleaseBinary`).
    static let executable: String = ReleaseBinary.path

    static func process(_ arguments: [String], environment: [String: String] = [:], in directory: String? = nil) -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        var env = ProcessInfo.processInfo.environment
        env["PULSE_STORE"] = nil
        env["TZ"] = "UTC"
        for (key, value) in environment { env[key] = value }
        process.environment = env
        if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
        return process
    }

    @discardableResult
    static func run(_ arguments: [String], environment: [String: String] = [:], in directory: String? = nil) throws -> Result {
        try collect(process(arguments, environment: environment, in: directory))
    }

    /// Runs `script` with `/bin/sh -c`, in the environment `process` gives the binary and with
    /// `$PA` naming the binary, so that a test can pipe, redirect and signal as a user's shell
    /// does. With `expectingSuccess`, a non-zero exit is recorded as a failure at the caller.
    @discardableResult
    static func shell(_ script: String, environment: [String: String] = [:], in directory: String? = nil,
                      expectingSuccess: Bool = false, sourceLocation: SourceLocation = #_sourceLocation) throws -> Result {
        let process = self.process(["-c", script], environment: environment.merging(["PA": executable]) { $1 }, in: directory)
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        let result = try collect(process)
        if expectingSuccess { #expect(result.exitCode == 0, "\(script): \(result.stderr)", sourceLocation: sourceLocation) }
        return result
    }

    /// A started process whose standard error is read to its end on another thread, so that
    /// the caller can read standard output as it likes (a byte, then a signal) without a large
    /// error output blocking the child.
    struct Running {
        let process: Process
        let stdout: FileHandle
        private let group: DispatchGroup
        private let errBuffer: ErrBuffer

        private final class ErrBuffer: @unchecked Sendable { var data = Data() }

        fileprivate init(_ process: Process) throws {
            let out = Pipe(), err = Pipe()
            process.standardOutput = out
            process.standardError = err
            try process.run()
            self.process = process
            stdout = out.fileHandleForReading
            group = DispatchGroup()
            let buffer = ErrBuffer()
            errBuffer = buffer
            group.enter()
            DispatchQueue.global().async { [group] in
                buffer.data = err.fileHandleForReading.readDataToEndOfFile()
                group.leave()
            }
        }

        /// Standard error, once the process has closed it.
        func stderr() -> String {
            group.wait()
            return String(decoding: errBuffer.data, as: UTF8.self)
        }
    }

    static func start(_ process: Process) throws -> Running {
        try Running(process)
    }

    /// Runs `process` to its end and returns its exit status and both outputs.
    static func collect(_ process: Process) throws -> Result {
        let running = try start(process)
        let outData = running.stdout.readDataToEndOfFile()
        let stderr = running.stderr()
        process.waitUntilExit()
        return Result(exitCode: process.terminationStatus, stdout: String(decoding: outData, as: UTF8.self), stderr: stderr)
    }
}
