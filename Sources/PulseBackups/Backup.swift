import Foundation
import PulseArchive

/// A candidate of a backup directory: its name, and the instant it was made, which is what
/// `prune` orders by. The name's digits are a local time in a zone they do not name: after a
/// journey, or with a cron job and a shell in different zones, they sort backups in another
/// order than they were made, and the newest could be removed.
public struct Backup: Sendable, Equatable {
    public let name: BackupName
    /// When the backup was made, in milliseconds since 1970 (whole seconds when only the gzip
    /// header or the name dates it).
    public let madeAt: Int64
    /// Where `madeAt` was read.
    public let madeAtSource: Source

    public enum Source: String, Sendable {
        /// The gzip header's MTIME, which `export` sets to the export's instant: inside the
        /// file, so it survives a copy that loses the file's time.
        case gzipHeader = "gzip-header"
        /// The file's modification time, which `export` sets to the export's instant: all an
        /// encrypted backup shows without a key.
        case fileTime = "file-time"
        /// Neither fits the name: the name's date-time read in the local zone (`TZ`).
        case name
    }

    public init(name: BackupName, madeAt: Int64, madeAtSource: Source) {
        self.name = name
        self.madeAt = madeAt
        self.madeAtSource = madeAtSource
    }

    /// Dates a backup from what its file shows. The gzip header's time wins over the file's:
    /// a copy (`cp` without `-p`, most uploads) gives the file a new time but leaves its bytes
    /// alone. A time counts only when it lies in the name's `possibleInstants`: no zone's
    /// clock showed the name's minute at any other instant, so such a time is not when the
    /// backup was made (a copy's, a `touch`, an archive another tool wrote, an export under
    /// `SOURCE_DATE_EPOCH`, or 0, gzip's "no time", in archives from before the time was
    /// recorded). When neither counts, the name's date-time in `zone` dates it.
    /// - Parameters:
    /// The file's time, when it falls in the gzip header's second, is the same instant to the
    /// millisecond, and dates it that finely (two exports in one second stay in order).
    /// - Parameters:
    ///   - gzipTime: the gzip header's MTIME in seconds, nil when the file is not plain gzip.
    ///   - fileTime: the file's modification time in milliseconds, nil when it could not be read.
    public static func dated(_ name: BackupName, gzipTime: Int64?, fileTime: Int64?, zone: TimeZone) -> Backup {
        let possible = name.possibleInstants
        let fileSeconds = fileTime.map { $0 >= 0 ? $0 / 1000 : ($0 - 999) / 1000 }
        // Kept within the instants an archive date can hold, as `madeAt` is reported: the last
        // minute of 9999 read west of UTC (or a file time that close to it) is past them.
        let held = { (millis: Int64) in min(max(millis, ArchiveDate.representable.lowerBound), ArchiveDate.representable.upperBound) }
        if let gzipTime, possible.contains(gzipTime) {
            let refined = fileSeconds == gzipTime ? fileTime! : gzipTime * 1000
            return Backup(name: name, madeAt: held(refined), madeAtSource: .gzipHeader)
        }
        if let fileTime, let fileSeconds, possible.contains(fileSeconds) { return Backup(name: name, madeAt: held(fileTime), madeAtSource: .fileTime) }
        return Backup(name: name, madeAt: held(name.instant(in: zone) * 1000), madeAtSource: .name)
    }

    /// True when `self` was made after `other`: by the instants; but two backups of one
    /// minute's name whose instants are less than `coarsestFileTime` apart go by their names'
    /// `-n` (export gives the next one of the minute to the backup it writes next). A FAT stick
    /// keeps file times floored to 2 s: an `.age` made half a second after a `.json.gz` (dated
    /// by its gzip header's exact second) showed an earlier time, and prune removed the newer.
    /// Names of different minutes (another zone, a journey) never overrule the instants.
    /// A backup dated by its name alone is known to the minute: its instant is the minute's
    /// start, so against one of the same minute dated by its gzip header (a plain `cp` lost the
    /// `.age`'s file time) the times are up to a minute out, and the `-n` decides there too.
    public func isNewer(than other: Backup) -> Bool {
        let a = name, b = other.name
        let sameMinute = (a.year, a.month, a.day, a.hour, a.minute) == (b.year, b.month, b.day, b.hour, b.minute)
        let (gap, overflow) = madeAt.subtractingReportingOverflow(other.madeAt)
        let uncertainty = madeAtSource == .name || other.madeAtSource == .name ? Self.minute : Self.coarsestFileTime
        if sameMinute, a.sequence != b.sequence, !overflow, gap.magnitude < UInt64(uncertainty) { return a.isNewer(than: b) }
        if madeAt != other.madeAt { return madeAt > other.madeAt }
        return a.isNewer(than: b)
    }

    /// The coarsest file times of the file systems backups go to, in milliseconds: FAT's 2 s.
    static let coarsestFileTime: Int64 = 2_000

    /// What a name dates a backup to: its minute.
    static let minute: Int64 = 60_000
}
