/// The app's date dialect: ISO-8601 instants kept as integer milliseconds since 1970.
///
/// Hand-written rather than `ISO8601DateFormatter` because dates are the most frequent value in
/// an archive, and because the app's rule (milliseconds, further digits dropped) must be exact:
/// a `Date` (a Double of seconds) cannot promise byte-identical round trips.
public enum ArchiveDate {
    /// Parses `YYYY-MM-DDTHH:MM:SS[.f{1,9}](Z|±HH:MM)`; returns nil for anything else.
    /// Fractions beyond milliseconds are dropped (rounding down). An offset can move the
    /// instant out of `representable` (`0000-01-01T00:00:00+00:01`): readers of archive values
    /// ask `problem(with:)` as well.
    public static func parse(_ text: String) -> Int64? {
        var utf8 = Array(text.utf8)
        return utf8.withUnsafeMutableBufferPointer { parse(UnsafeBufferPointer($0)) }
    }

    /// Parses the date bytes of a JSON string (no quotes).
    public static func parse(_ s: UnsafeBufferPointer<UInt8>) -> Int64? {
        // The shortest form is 20 bytes: 2026-07-26T13:45:12Z
        guard s.count >= 20,
              let year = digits(s, 0, 4), s[4] == 0x2D,
              let month = digits(s, 5, 2), s[7] == 0x2D,
              let day = digits(s, 8, 2), s[10] == 0x54,
              let hour = digits(s, 11, 2), s[13] == 0x3A,
              let minute = digits(s, 14, 2), s[16] == 0x3A,
              let second = digits(s, 17, 2)
        else { return nil }
        guard (1...12).contains(month), day >= 1, day <= daysInMonth(year: year, month: month),
              hour <= 23, minute <= 59, second <= 59
        else { return nil }
        var i = 19
        var millis: Int64 = 0
        if s[i] == 0x2E {  // '.'
            i += 1
            let start = i
            var scale: Int64 = 100
            while i < s.count, s[i] >= 0x30, s[i] <= 0x39 {
                millis += Int64(s[i] - 0x30) * scale
                scale /= 10
                i += 1
            }
            let fractionDigits = i - start
            guard fractionDigits >= 1, fractionDigits <= 9 else { return nil }
        }
        guard i < s.count else { return nil }
        var offsetMinutes: Int64 = 0
        switch s[i] {
        case 0x5A:  // 'Z'
            i += 1
        case 0x2B, 0x2D:  // '+', '-'
            guard s.count - i == 6, let oh = digits(s, i + 1, 2), s[i + 3] == 0x3A, let om = digits(s, i + 4, 2),
                  oh <= 23, om <= 59
            else { return nil }
            offsetMinutes = (oh * 60 + om) * (s[i] == 0x2B ? 1 : -1)
            i += 6
        default:
            return nil
        }
        guard i == s.count else { return nil }
        let days = daysSinceEpoch(year: year, month: month, day: day)
        let seconds = days * 86_400 + hour * 3_600 + minute * 60 + second - offsetMinutes * 60
        return seconds * 1_000 + millis
    }

    /// Formats milliseconds as `YYYY-MM-DDTHH:MM:SS.mmmZ`, the app's write form.
    /// - Throws: `ArchiveError.invalidValue` for instants outside years 0000–9999.
    public static func format(_ millis: Int64) throws -> String {
        String(decoding: try ByteBuffer.collecting { try append(millis, to: &$0) }, as: UTF8.self)
    }

    /// The one date rule (docs/reliability.md, "Dates and numbers: one rule"): the instants
    /// the four-digit year form can write, 0000-01-01T00:00:00.000Z to 9999-12-31T23:59:59.999Z.
    /// Every reader (the app's date strings, whatever their offset; the Android port's epoch
    /// milliseconds), the writer and `demo` ask this range, so nothing enters a store that an
    /// export cannot write.
    public static let representable: ClosedRange<Int64> = -62_167_219_200_000...253_402_300_799_999

    /// Why `millis` cannot be an archive date, or nil when it can.
    public static func problem(with millis: Int64) -> String? {
        representable.contains(millis) ? nil : "\(millis) ms since 1970 is \(millis < 0 ? "before" : "after") the years 0000–9999 (UTC) that an archive date can hold"
    }

    /// Appends the formatted date (without quotes) to `out`.
    static func append(_ millis: Int64, to out: inout ByteBuffer) throws {
        if let problem = problem(with: millis) {
            throw ArchiveError(.invalidValue, "date \(problem)")
        }
        let (seconds, ms) = floorDivide(millis, 1_000)
        let (days, secondOfDay) = floorDivide(seconds, 86_400)
        let (year, month, day) = civilDate(daysSinceEpoch: days)
        // Filled in place on the stack, two digits at a time from a table, and appended at
        // once: a date is written for nearly every row of an export.
        let hour = secondOfDay / 3_600, minute = secondOfDay / 60 % 60, second = secondOfDay % 60
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 24) { text in
            digitPairs.withUnsafeBufferPointer { pairs in
                func put(_ value: Int64, at start: Int, then separator: UInt8) {
                    let pair = Int(value) * 2
                    text[start] = pairs[pair]
                    text[start + 1] = pairs[pair + 1]
                    text[start + 2] = separator
                }
                text[0] = pairs[Int(year / 100) * 2]
                text[1] = pairs[Int(year / 100) * 2 + 1]
                put(year % 100, at: 2, then: 0x2D)
                put(month, at: 5, then: 0x2D)
                put(day, at: 8, then: 0x54)
                put(hour, at: 11, then: 0x3A)
                put(minute, at: 14, then: 0x3A)
                put(second, at: 17, then: 0x2E)
                text[20] = UInt8(truncatingIfNeeded: 0x30 + ms / 100)
                put(ms % 100, at: 21, then: 0x5A)
            }
            out.append(UnsafeBufferPointer(text))
        }
    }

    /// "00" to "99", back to back: the two digits of `n` start at `2 * n`.
    private static let digitPairs: [UInt8] = (0..<100).flatMap { (n: Int) -> [UInt8] in
        [UInt8(truncatingIfNeeded: 0x30 + n / 10), UInt8(truncatingIfNeeded: 0x30 + n % 10)]
    }

    // MARK: - Calendar arithmetic (proleptic Gregorian, UTC)

    /// Days from 1970-01-01 to the given civil date.
    public static func daysSinceEpoch(year: Int64, month: Int64, day: Int64) -> Int64 {
        // Count years from March so that the leap day is the last day of the year.
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let monthFromMarch = (month + 9) % 12
        let dayOfYear = (153 * monthFromMarch + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The civil date of a day counted from 1970-01-01.
    public static func civilDate(daysSinceEpoch days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let shifted = days + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthFromMarch = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthFromMarch + 2) / 5 + 1
        let month = monthFromMarch < 10 ? monthFromMarch + 3 : monthFromMarch - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    /// Days in a month of the proleptic Gregorian calendar.
    public static func daysInMonth(year: Int64, month: Int64) -> Int64 {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    private static func floorDivide(_ a: Int64, _ b: Int64) -> (Int64, Int64) {
        let q = a / b, r = a % b
        return r < 0 ? (q - 1, r + b) : (q, r)
    }

    private static func digits(_ s: UnsafeBufferPointer<UInt8>, _ start: Int, _ count: Int) -> Int64? {
        var value: Int64 = 0
        for i in start..<(start + count) {
            let c = s[i]
            guard c >= 0x30, c <= 0x39 else { return nil }
            value = value * 10 + Int64(c - 0x30)
        }
        return value
    }
}
