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

    /// `backups` newest first. Each is sorted by one key, so the order is the same whatever a
    /// sort compares first (a rule between pairs went in a circle: by time one way, by `-n`
    /// the other, and which backup came out newest, and stayed, depended on the sort's path).
    ///
    /// The key is the instant it was made, raised where the names prove more: a backup's
    /// time is known to within `uncertainty` after it (a FAT stick's 2-second file times, a
    /// name's minute), and a backup of the same minute's name with a lower `-n` was named
    /// before it. So when such a sibling's key lies inside that window, the backup comes a
    /// millisecond after it: a `-2` `.age` whose FAT time is floored below the `.json.gz`'s
    /// gzip second, or whose name alone dates it after a plain `cp` (to the minute's start).
    /// Outside the window the times decide. Equal keys go by the names.
    public static func newestFirst(_ backups: [Backup]) -> [Backup] {
        var keys = backups.map(\.madeAt)
        let minutes = Dictionary(grouping: backups.indices) { index in
            let name = backups[index].name
            return [name.year, name.month, name.day, name.hour, name.minute]
        }
        for members in minutes.values where members.count > 1 {
            // Lower `-n` first, so a sibling's key is final before it raises another's.
            let bySequence = members.sorted { backups[$1].name.hasHigherSequence(than: backups[$0].name) }
            for (position, index) in bySequence.enumerated() {
                let backup = backups[index]
                for earlier in bySequence[..<position] where backup.name.hasHigherSequence(than: backups[earlier].name) {
                    let (offset, overflow) = keys[earlier].subtractingReportingOverflow(backup.madeAt)
                    if !overflow, offset >= 0, offset < backup.uncertainty { keys[index] = max(keys[index], keys[earlier] + 1) }
                }
            }
        }
        return backups.indices.sorted { a, b in
            keys[a] != keys[b] ? keys[a] > keys[b] : backups[a].name.isNewer(than: backups[b].name)
        }.map { backups[$0] }
    }

    /// How long after `madeAt` the backup may have been made: a gzip header's second, the
    /// coarsest file time, a name's minute.
    var uncertainty: Int64 {
        switch madeAtSource {
        case .gzipHeader: 1_000
        case .fileTime: Self.coarsestFileTime
        case .name: Self.minute
        }
    }

    /// The coarsest file times of the file systems backups go to, in milliseconds: FAT's 2 s.
    static let coarsestFileTime: Int64 = 2_000

    /// What a name dates a backup to: its minute.
    static let minute: Int64 = 60_000
}
