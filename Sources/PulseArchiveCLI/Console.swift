import Foundation
import PulseArchive
import PulseStore
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
    func out(_ text: String) {
        FileHandle.standardOutput.write(Data((ShownText.escapingControls(text) + "\n").utf8))
    }

    /// Writes a message line, control characters escaped as by `out`.
    func err(_ text: String) {
        FileHandle.standardError.write(Data((ShownText.escapingControls(text) + "\n").utf8))
    }

    /// Writes a message line as it is: for the tool's own terminal sequences.
    func errRaw(_ text: String) {
        FileHandle.standardError.write(Data((text + "\n").utf8))
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

/// A progress line on stderr, redrawn at most a few times a second, only on a terminal.
final class ProgressLine {
    private let label: String
    /// What is counted, in the plural: rows, days.
    private let unit: String
    private let enabled: Bool
    private let started = Date()
    private var lastDraw = Date.distantPast
    private var drawn = false

    init(_ label: String, unit: String = "rows", console: Console, quiet: Bool) {
        self.label = label
        self.unit = unit
        self.enabled = !quiet && console.stderrIsTerminal
    }

    /// Redraws: units done and rate, and an ETA when the total is known (`done` and `total`
    /// may count something else, such as bytes read).
    func update(rows: Int, done: Int64, total: Int64) {
        guard enabled else { return }
        let now = Date()
        guard now.timeIntervalSince(lastDraw) >= 0.2 else { return }
        lastDraw = now
        let elapsed = max(now.timeIntervalSince(started), 0.001)
        var line = "\(label): \(Self.grouped(rows)) \(rows == 1 ? String(unit.dropLast()) : unit), \(Self.grouped(Int(Double(rows) / elapsed))) \(unit)/s"
        if total > 0, done > 0, done <= total {
            let remaining = elapsed * Double(total - done) / Double(done)
            line += String(format: ", %d%%, ETA %d:%02d", Int(100 * done / total), Int(remaining) / 60, Int(remaining) % 60)
        }
        FileHandle.standardError.write(Data(("\r\u{1B}[K" + line).utf8))
        drawn = true
    }

    /// Redraws from a read's progress.
    func update(_ read: ReadProgress) {
        update(rows: read.rows, done: read.bytesRead, total: read.totalBytes)
    }

    /// Redraws from a count of all there is to do (days of a backfill).
    func update(done: Int, of total: Int) {
        update(rows: done, done: Int64(done), total: Int64(total))
    }

    /// Clears the line.
    func finish() {
        guard drawn else { return }
        FileHandle.standardError.write(Data("\r\u{1B}[K".utf8))
        drawn = false
    }

    static func grouped(_ n: Int) -> String {
        let digits = String(n)
        var out = ""
        for (i, c) in digits.enumerated() {
            if i > 0, (digits.count - i) % 3 == 0 { out += "," }
            out.append(c)
        }
        return out
    }
}

enum Formatting {
    /// Bytes in a human unit: `812 B`, `4.2 MB`.
    static func bytes(_ n: Int64) -> String {
        let units = ["B", "KB", "MB", "GB", "TB"]
        var value = Double(n)
        var unit = 0
        while value >= 1000, unit < units.count - 1 {
            value /= 1000
            unit += 1
        }
        return unit == 0 ? "\(n) B" : String(format: "%.1f %@", value, units[unit])
    }

    /// The Android port's extension tables among `counts`' keys, in a fixed order: the import
    /// report lists them after the app's tables, and only when the store has them.
    static func extensionTables(in counts: [String: Int]) -> [String] {
        ExtensionTable.allCases.map(\.rawValue).filter { counts[$0] != nil }
    }

    /// Columns two spaces apart, indented by two; the `numeric` ones right-aligned.
    static func columns(_ header: [String], _ rows: [[String]], numeric: Set<Int>) -> String {
        let all = [header] + rows
        let widths = header.indices.map { column in all.map { $0[column].count }.max() ?? 0 }
        return all.map { row in
            var line = "  " + row.enumerated().map { column, cell in
                let pad = String(repeating: " ", count: widths[column] - cell.count)
                return numeric.contains(column) ? pad + cell : cell + pad
            }.joined(separator: "  ")
            while line.hasSuffix(" ") { line.removeLast() }
            return line
        }.joined(separator: "\n")
    }
}
