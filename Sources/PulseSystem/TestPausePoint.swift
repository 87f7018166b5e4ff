#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Named points in the work of a command where a test can stop the process, so that a kill or
/// an interrupt lands at an exact place instead of after a calibrated delay (docs/testing.md,
/// "Kill points").
///
/// Inert unless the environment variable `PULSE_ARCHIVE_TEST_PAUSE_AT` is set when the process
/// starts (read once; a point then costs one load and a compare):
///
/// - `PULSE_ARCHIVE_TEST_PAUSE_AT=<point>:<n>` — the `n`-th time the process reaches `point`
///   (n ≥ 1, `:1` may be left out) it writes `test pause point: paused at <point>:<n>` and a
///   newline to standard error and stops itself with SIGSTOP. The test that reads the line kills
///   the stopped process (SIGKILL), or sends its signal and SIGCONT; after SIGCONT alone the
///   command carries on as if nothing happened.
/// - `PULSE_ARCHIVE_TEST_PAUSE_AT=count` — nothing stops; at a normal exit the process writes
///   `test pause points: reached <point>=<times> …` (sorted) to standard error, so a test can
///   spread its pauses over the points a command really reaches.
///
/// The points (`point` names are stable; tests name them):
/// `read` (each read of an archive's content), `write` (each write to a file sink: an export,
/// a safety backup), `migration.statement` (each statement of a schema migration step, inside
/// its transaction), `import.staged` (the archive staged, the store untouched),
/// `import.committed` (the store's transaction committed, the document swap not yet done),
/// `attachment.piece` (each piece of a large attachment written into a database: staging, then
/// the store's transaction),
/// `export.name` (`export -o DIR/` found a free name, its partial file not yet made),
/// `commit` (an `AtomicFile` complete and flushed, before it takes its name),
/// `commit.placeholder` (`NoReplaceMove`'s placeholder made, the file not yet renamed over it),
/// `sqlite.temporary` (SQLite about to create a temporary file, an interruption held off),
/// `sqlite.temporary.opened` (that file open, the interruption still held off),
/// `prune.removed` (after each removal of `prune`), `worker.finished` (a `BackgroundWorker`'s
/// work done and handed back, its thread not yet ended), `documents.swap` (a committed document
/// swap about to be done, an interruption held off).
public enum TestPausePoint {
    /// The variable's name.
    public static let variable = "PULSE_ARCHIVE_TEST_PAUSE_AT"

    /// The point and occurrence that stops the process, or counting; nil when inert.
    private enum Setting {
        case pause(point: String, occurrence: Int)
        case count
    }

    private static let setting: Setting? = {
        guard let raw = getenv(variable) else { return nil }
        let text = String(cString: raw)
        if text.isEmpty { return nil }
        if text == "count" {
            atexit { TestPausePoint.reportCounts() }
            return .count
        }
        if let colon = text.lastIndex(of: ":"), let n = Int(text[text.index(after: colon)...]), n >= 1 {
            return .pause(point: String(text[..<colon]), occurrence: n)
        }
        return .pause(point: text, occurrence: 1)
    }()

    /// Occurrences per point, guarded by `lock` (points are reached from worker threads too).
    nonisolated(unsafe) private static var counts: [String: Int] = [:]
    nonisolated(unsafe) private static var lock = pthread_mutex_t()
    nonisolated(unsafe) private static var lockReady: Bool = {
        pthread_mutex_init(&lock, nil)
        return true
    }()

    /// Marks that the process reached `point`; stops it there when the environment asks.
    @inline(__always)
    public static func reached(_ point: StaticString) {
        guard let setting else { return }
        reachedSlow(String(describing: point), setting)
    }

    private static func reachedSlow(_ point: String, _ setting: Setting) {
        switch setting {
        case .count:
            _ = increment(point)
        case .pause(let wanted, let occurrence):
            guard wanted == point, increment(point) == occurrence else { return }
            write(2, "test pause point: paused at \(point):\(occurrence)\n")
            raise(SIGSTOP)
        }
    }

    private static func increment(_ point: String) -> Int {
        _ = lockReady
        pthread_mutex_lock(&lock)
        defer { pthread_mutex_unlock(&lock) }
        counts[point, default: 0] += 1
        return counts[point]!
    }

    private static func reportCounts() {
        _ = lockReady
        pthread_mutex_lock(&lock)
        let text = counts.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        pthread_mutex_unlock(&lock)
        write(2, "test pause points: reached \(text)\n")
    }

    private static func write(_ descriptor: Int32, _ text: String) {
        var bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeMutableBytes { systemWrite(descriptor, $0.baseAddress! + offset, $0.count - offset) }
            if n <= 0 { return }
            offset += n
        }
    }
}

/// The C `write`, out of the way of the helper of the same name above.
private func systemWrite(_ descriptor: Int32, _ buffer: UnsafeRawPointer, _ count: Int) -> Int {
    write(descriptor, buffer, count)
}
