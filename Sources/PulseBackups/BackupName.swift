import Foundation
import PulseArchive

/// A file name of the backup scheme, `pulseloop-backup-<yyyy-MM-dd-HHmm>[-n].json[.gz][.age]`:
/// the names `export -o DIR` writes (with `-n`, n ≥ 2, when the minute's name was taken; `.gz`
/// unless `--compression none`), and the same encrypted with age. Anything else is not a
/// backup of ours and is never touched.
///
/// The time is the name's local time, without a zone: the local time where and when the backup
/// was made, which the policy's periods are taken from. It is not an instant: the order of
/// backups is the instant each was made (`Backup`), the name's digits only where nothing else
/// tells it.
public struct BackupName: Sendable, Equatable {
    public let fileName: String
    public let year: Int
    public let month: Int
    public let day: Int
    public let hour: Int
    public let minute: Int
    /// The `-n` suffix's digits ("1" when there is none): kept as text, compared by length
    /// then by digits, so no suffix, however long, is converted to a number.
    public let sequence: String
    /// The name ends `.age`: the archive is encrypted.
    public let encrypted: Bool
    /// The name ends `.json.gz` (before any `.age`): a gzip archive, whose header records when
    /// it was made; else plain JSON (`export --compression none`).
    public let compressed: Bool
    /// `pulseloop-backup-<yyyy-MM-dd-HHmm>`: the part the names of one minute share.
    public let stem: String

    static let prefix = Array("pulseloop-backup-".utf8)
    static let gzipSuffix = Array(".gz".utf8)
    static let jsonSuffix = Array(".json".utf8)
    static let ageSuffix = Array(".age".utf8)

    /// Parses `fileName`; nil for any name outside the scheme (including a date that does not
    /// exist, such as 2021-02-30 or hour 24, and `-0`, `-1` or `-02`).
    public init?(_ fileName: String) {
        var bytes = Array(fileName.utf8)
        guard bytes.starts(with: Self.prefix) else { return nil }
        bytes.removeFirst(Self.prefix.count)
        var encrypted = false
        if bytes.count >= Self.ageSuffix.count, Array(bytes.suffix(Self.ageSuffix.count)) == Self.ageSuffix {
            encrypted = true
            bytes.removeLast(Self.ageSuffix.count)
        }
        let compressed = bytes.count >= Self.gzipSuffix.count && Array(bytes.suffix(Self.gzipSuffix.count)) == Self.gzipSuffix
        if compressed { bytes.removeLast(Self.gzipSuffix.count) }
        guard bytes.count >= Self.jsonSuffix.count, Array(bytes.suffix(Self.jsonSuffix.count)) == Self.jsonSuffix else { return nil }
        bytes.removeLast(Self.jsonSuffix.count)
        // Left: yyyy-MM-dd-HHmm, then optionally -n.
        guard bytes.count >= 15, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"), bytes[10] == UInt8(ascii: "-"),
              let year = Self.number(bytes[0..<4]), let month = Self.number(bytes[5..<7]), let day = Self.number(bytes[8..<10]),
              let hour = Self.number(bytes[11..<13]), let minute = Self.number(bytes[13..<15])
        else { return nil }
        guard year >= 1, (1...12).contains(month), day >= 1, day <= Self.daysInMonth(year: year, month: month),
              (0...23).contains(hour), (0...59).contains(minute)
        else { return nil }
        var sequence = "1"
        if bytes.count > 15 {
            let rest = bytes[15...]
            guard rest.first == UInt8(ascii: "-") else { return nil }
            let digits = rest.dropFirst()
            guard let first = digits.first, first != UInt8(ascii: "0"), digits.allSatisfy(Self.isDigit) else { return nil }
            // n ≥ 2: a single "1" is not a suffix export writes.
            guard !(digits.count == 1 && first == UInt8(ascii: "1")) else { return nil }
            sequence = String(decoding: digits, as: UTF8.self)
        }
        self.fileName = fileName
        self.year = year
        self.month = month
        self.day = day
        self.hour = hour
        self.minute = minute
        self.sequence = sequence
        self.encrypted = encrypted
        self.compressed = compressed
        stem = String(decoding: Self.prefix + bytes[0..<15], as: UTF8.self)
    }

    /// The `-n` suffix as a number (1 for none), or nil for one of more than 9 digits, which
    /// no export writes.
    public var sequenceNumber: Int? { sequence.utf8.count <= 9 ? Int(sequence) : nil }

    /// The highest `-n` export writes: nine digits.
    public static let highestSequence = 999_999_999

    /// The name's date-time read as if it were UTC, in seconds since 1970, on the proleptic
    /// Gregorian calendar the archive's dates use (Foundation's `gregorian` is Julian before
    /// 1582, and dated a name of year 1 two days off).
    var digitsAsUTC: Int64 {
        ArchiveDate.daysSinceEpoch(year: Int64(year), month: Int64(month), day: Int64(day)) * 86_400 + Int64(hour) * 3_600 + Int64(minute) * 60
    }

    /// Every instant (seconds since 1970) at which a clock in some zone of the world (UTC−12
    /// to UTC+14) showed this name's minute: an instant outside cannot be when this backup was
    /// made, whatever zone it was made in.
    public var possibleInstants: ClosedRange<Int64> {
        let local = digitsAsUTC
        return (local - 14 * 3600)...(local + 12 * 3600 + 59)
    }

    /// The name's date-time read in `zone` (the first of two in a daylight-saving fold), in
    /// seconds since 1970: the order of last resort, for a backup nothing else dates.
    ///
    /// A minute the clocks skipped (02:30 on a spring-forward night in Berlin) is the instant
    /// they skipped to, the gap's end, where Foundation would move it on by the gap's length
    /// (to 03:30, after a name of 03:00): names in and after the gap keep the order of their
    /// digits, those of one instant then ordered by name. Worked out from the zone's offsets,
    /// not a calendar's fields, so that every year reads as the archive's dates do.
    public func instant(in zone: TimeZone) -> Int64 {
        let local = digitsAsUTC
        let offset = { (second: Int64) in Int64(zone.secondsFromGMT(for: Date(timeIntervalSince1970: TimeInterval(second)))) }
        // The offsets in force within a day of the name's time (the longest skip on record,
        // Samoa's in 2011, is one day); the instants whose clock showed the name's minute.
        let candidates = Set(stride(from: Int64(-2), through: 2, by: 1).map { local - offset(local + $0 * 43_200) })
        if let first = candidates.filter({ $0 + offset($0) == local }).min() { return first }
        // None: a minute the clocks skipped. The gap's end is the first second with the
        // offset of after it, between the earliest and the latest reading.
        guard var before = candidates.min(), var end = candidates.max(), offset(before) != offset(end) else { return candidates.min() ?? local }
        let after = offset(end)
        while end - before > 1 {
            let middle = before + (end - before) / 2
            if offset(middle) == after { end = middle } else { before = middle }
        }
        return end
    }

    /// True when `self` is newer than `other`: later time, then the higher `-n` (written
    /// later in the same minute), then, for two names alike but for `.gz` or `.age`, the name
    /// itself.
    public func isNewer(than other: BackupName) -> Bool {
        let a = (year, month, day, hour, minute), b = (other.year, other.month, other.day, other.hour, other.minute)
        if a != b { return a > b }
        if sequence != other.sequence { return hasHigherSequence(than: other) }
        return other.fileName.utf8.lexicographicallyPrecedes(fileName.utf8)
    }

    /// True when `self`'s `-n` is higher than `other`'s (no suffix is 1): written later in
    /// the same minute.
    public func hasHigherSequence(than other: BackupName) -> Bool {
        if sequence.utf8.count != other.sequence.utf8.count { return sequence.utf8.count > other.sequence.utf8.count }
        return other.sequence.utf8.lexicographicallyPrecedes(sequence.utf8)
    }

    private static func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    /// The value of 2 or 4 ASCII digits (no sign, no overflow possible).
    private static func number(_ digits: ArraySlice<UInt8>) -> Int? {
        var value = 0
        for byte in digits {
            guard isDigit(byte) else { return nil }
            value = value * 10 + Int(byte - UInt8(ascii: "0"))
        }
        return value
    }

    static func daysInMonth(year: Int, month: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }
}
