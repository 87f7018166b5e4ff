import Foundation
import PulseArchive

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
