/// The app's JSON forms of numbers and strings, shared by the archive writer and anything else
/// that must write JSON the app reads back the same way (the readiness contributors).
public enum JSONText {
    /// The shortest decimal that reads back as the same double; integral values without `.0`.
    public static func number(_ value: Double) -> String {
        String(decoding: ByteBuffer.collecting { appendNumber(value, to: &$0) }, as: UTF8.self)
    }

    /// A quoted, escaped JSON string.
    public static func quoted(_ text: String) -> String {
        String(decoding: ByteBuffer.collecting { appendString(text, to: &$0) }, as: UTF8.self)
    }

    static func appendNumber(_ value: Double, to out: inout ByteBuffer) {
        if value == value.rounded(), abs(value) < 9.007_199_254_740_992e15 {
            if value == 0 && value.sign == .minus {
                out.append(0x2D)
                out.append(0x30)
                return
            }
            appendInteger(Int64(value), to: &out)
            return
        }
        var text = value.description
        if text.hasSuffix(".0") { text.removeLast(2) }
        out.append(text)
    }

    static func appendInteger(_ value: Int64, to out: inout ByteBuffer) {
        if value < 0 { out.append(0x2D) }
        var magnitude = value.magnitude
        // Digits from the right, in a scratch buffer on the stack: no allocation per number.
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var start = digits.count
            repeat {
                start -= 1
                digits[start] = UInt8(truncatingIfNeeded: 0x30 + magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            out.append(UnsafeBufferPointer(rebasing: digits[start...]))
        }
    }

    /// A date as the app writes it: a quoted `yyyy-MM-ddTHH:mm:ss.SSSZ`.
    static func appendDate(_ millis: Int64, to out: inout ByteBuffer) throws {
        out.append(0x22)
        try ArchiveDate.append(millis, to: &out)
        out.append(0x22)
    }

    static let trueLiteral: [UInt8] = Array("true".utf8)
    static let falseLiteral: [UInt8] = Array("false".utf8)
    static let nullLiteral: [UInt8] = Array("null".utf8)

    static func appendString(_ text: String, to out: inout ByteBuffer) {
        out.append(0x22)
        var text = text
        text.withUTF8 { appendEscaped($0, to: &out) }
        out.append(0x22)
    }

    /// Escapes as the app does: `"`, `\` and control characters, and `/` as `\/`. Runs that
    /// need no escaping (nearly everything) are copied in one piece.
    static func appendEscaped(_ bytes: some Collection<UInt8>, to out: inout ByteBuffer) {
        let handled: Void? = bytes.withContiguousStorageIfAvailable { buffer in
            var runStart = 0
            for (i, c) in buffer.enumerated() where c < 0x20 || c == 0x22 || c == 0x5C || c == 0x2F {
                if i > runStart { out.append(UnsafeBufferPointer(rebasing: buffer[runStart..<i])) }
                appendEscape(c, to: &out)
                runStart = i + 1
            }
            if runStart < buffer.count { out.append(UnsafeBufferPointer(rebasing: buffer[runStart...])) }
        }
        if handled == nil {
            for c in bytes {
                if c < 0x20 || c == 0x22 || c == 0x5C || c == 0x2F { appendEscape(c, to: &out) } else { out.append(c) }
            }
        }
    }

    /// Appends `bytes` escaped, as `appendEscaped` does, when every byte is ASCII; otherwise
    /// appends nothing and returns false. One pass for what a store's text columns nearly
    /// always hold, and no question of UTF-8 validity for it. Eight bytes are looked at a time
    /// while none of them needs a closer look (most text, the UUIDs above all, needs none).
    static func appendEscapedIfASCII(_ bytes: UnsafeBufferPointer<UInt8>, to out: inout ByteBuffer) -> Bool {
        guard let base = bytes.baseAddress else { return true }
        let start = out.count
        var runStart = 0
        var i = 0
        while i < bytes.count {
            while i + 8 <= bytes.count, !mayNeedEscapeOrBeNonASCII(UnsafeRawPointer(base + i).loadUnaligned(as: UInt64.self)) {
                i += 8
            }
            guard i < bytes.count else { break }
            let c = base[i]
            if c >= 0x80 {
                out.removeAll(from: start)
                return false
            }
            if c < 0x20 || c == 0x22 || c == 0x5C || c == 0x2F {
                if i > runStart { out.append(UnsafeBufferPointer(rebasing: bytes[runStart..<i])) }
                appendEscape(c, to: &out)
                runStart = i + 1
            }
            i += 1
        }
        if runStart < bytes.count { out.append(UnsafeBufferPointer(rebasing: bytes[runStart...])) }
        return true
    }

    /// Whether any of eight bytes is a control character, `"`, `\`, `/` or not ASCII. Never
    /// false when one is (it may be true when none is: the caller then looks byte by byte).
    @inline(__always)
    private static func mayNeedEscapeOrBeNonASCII(_ word: UInt64) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
        /// A high bit set in each byte that is zero (and maybe in a byte above one that is).
        func zeroBytes(_ x: UInt64) -> UInt64 { (x &- ones) & ~x & highs }
        let below0x20 = (word &- ones &* 0x20) & ~word & highs
        let special = zeroBytes(word ^ (ones &* 0x22)) | zeroBytes(word ^ (ones &* 0x5C)) | zeroBytes(word ^ (ones &* 0x2F))
        return (word & highs) | below0x20 | special != 0
    }

    private static func appendEscape(_ c: UInt8, to out: inout ByteBuffer) {
        switch c {
        case 0x22: out.append(0x5C); out.append(0x22)
        case 0x5C: out.append(0x5C); out.append(0x5C)
        case 0x2F: out.append(0x5C); out.append(0x2F)
        case 0x0A: out.append(0x5C); out.append(0x6E)
        case 0x0D: out.append(0x5C); out.append(0x72)
        case 0x09: out.append(0x5C); out.append(0x74)
        case 0x08: out.append(0x5C); out.append(0x62)
        case 0x0C: out.append(0x5C); out.append(0x66)
        default: out.append([0x5C, 0x75, 0x30, 0x30, hex[Int(c >> 4)], hex[Int(c & 0xF)]])
        }
    }

    private static let hex: [UInt8] = Array("0123456789abcdef".utf8)
}
