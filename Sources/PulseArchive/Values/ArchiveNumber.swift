#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The one rule for numbers, per field kind, shared by every reader (rows of both dialects, the
/// envelope, JSON trees) and by the writer (docs/reliability.md, "Dates and numbers: one rule").
///
/// What the reader keeps of a number is exactly what the writer writes back, so
/// import → export → import is a fixed point: the text may be canonicalised once (`5.0` → `5`,
/// `1E2` → `100`; in an integer field `-0` → `0`, the integer it is), the value never changes
/// afterwards. A double keeps its sign: `-0` in a double field is negative zero and is written
/// back as `-0`, as the app's own encoder does.
public enum ArchiveNumber {
    // MARK: - Integer fields

    /// Why `literal` is refused where epoch milliseconds go (an Android date, the Android
    /// `exportedAt`): the rule and what was found, a long literal cut short.
    public static func notEpochMillis(_ literal: [UInt8]) -> String {
        let shown = literal.count > 40 ? String(decoding: literal.prefix(40), as: UTF8.self) + "…" : String(decoding: literal, as: UTF8.self)
        return "expected epoch milliseconds, a whole number within 64 bits; found \(shown)"
    }

    /// The exact value of a valid JSON number literal when it is an integer within 64 bits;
    /// nil otherwise. Worked out on the decimal digits, never through a Double, so
    /// `9007199254740993.0` is 9007199254740993 and `1.5` is refused. A fraction or exponent is
    /// fine when the value is integral (`5.0`, `1e3`, `1000e-3`), as it is for the app. Cannot
    /// trap, however long the exponent.
    public static func integer(_ literal: [UInt8]) -> Int64? {
        if !literal.contains(where: { $0 == 0x2E || $0 == 0x45 || $0 == 0x65 }) {
            // Plain digits, nearly every integer of an archive: no allocation.
            let negative = literal.first == 0x2D
            guard literal.count > (negative ? 1 : 0) else { return nil }
            var value: Int64 = 0
            for c in literal.dropFirst(negative ? 1 : 0) {
                guard c >= 0x30, c <= 0x39 else { return nil }
                let (times10, o1) = value.multipliedReportingOverflow(by: 10)
                let (next, o2) = negative ? times10.subtractingReportingOverflow(Int64(c - 0x30)) : times10.addingReportingOverflow(Int64(c - 0x30))
                if o1 || o2 { return nil }
                value = next
            }
            return value
        }
        var significant: [UInt8] = []
        significant.reserveCapacity(literal.count)
        var negative = false, fractionDigits = 0, exponent = 0, exponentNegative = false
        var part = 0  // 0: integer digits, 1: fraction digits, 2: exponent
        for c in literal {
            switch c {
            case 0x2D where part == 0: negative = true
            case 0x2D: exponentNegative = true
            case 0x2B: break
            case 0x2E: part = 1
            case 0x45, 0x65: part = 2
            case 0x30...0x39:
                let digit = c - 0x30
                if part == 2 {
                    // Saturates: any exponent beyond this makes a non-zero value overflow
                    // or leave the integers, and leaves zero zero.
                    exponent = min(exponent * 10 + Int(digit), 1_000_000)
                } else {
                    if part == 1 { fractionDigits += 1 }
                    if !(significant.isEmpty && digit == 0) { significant.append(digit) }
                }
            default: return nil
            }
        }
        // The value is `significant` × 10^scale; trailing zeros only move the scale.
        var scale = (exponentNegative ? -exponent : exponent) - fractionDigits
        while significant.last == 0 {
            significant.removeLast()
            scale += 1
        }
        if significant.isEmpty { return 0 }
        guard scale >= 0, significant.count + scale <= 19 else { return nil }
        var value: Int64 = 0
        for digit in significant + repeatElement(0, count: scale) {
            let (times10, o1) = value.multipliedReportingOverflow(by: 10)
            let (next, o2) = negative ? times10.subtractingReportingOverflow(Int64(digit)) : times10.addingReportingOverflow(Int64(digit))
            if o1 || o2 { return nil }
            value = next
        }
        return value
    }

    /// An integer field as the writer writes it: plain decimal, every Int64.
    static func appendInteger(_ value: Int64, to out: inout ByteBuffer) {
        JSONText.appendInteger(value, to: &out)
    }

    // MARK: - Double fields

    /// The nearest double to a valid JSON number literal, negative zero included; nil when it
    /// is beyond the largest finite double (`1e999`).
    public static func double(_ literal: inout [UInt8]) -> Double? {
        literal.append(0)
        defer { literal.removeLast() }
        let value = literal.withUnsafeBufferPointer { buffer in
            buffer.baseAddress!.withMemoryRebound(to: CChar.self, capacity: buffer.count) { strtod($0, nil) }
        }
        return value.isFinite ? value : nil
    }

    /// Why the writer cannot write `value` in a double field, or nil when it can: only finite
    /// doubles are JSON numbers, and only they are read back.
    public static func problem(withDouble value: Double) -> String? {
        value.isFinite ? nil : "\(value) is not a finite number, which a JSON archive cannot hold"
    }

    /// A double field as the writer writes it: the shortest text that reads back as the
    /// same double (`-0` for negative zero).
    static func appendDouble(_ value: Double, to out: inout ByteBuffer) {
        JSONText.appendNumber(value, to: &out)
    }
}
