import PulseArchive

/// RFC 4180 fields: comma-separated, CRLF at the end of each record, `"` doubled inside a
/// quoted field. Every byte of a value is kept, NUL and lone CR included.
enum CSVText {
    static let comma: UInt8 = 0x2C
    static let quote: UInt8 = 0x22
    static let recordEnd: [UInt8] = [0x0D, 0x0A]

    /// Appends one field holding `bytes`, quoted when RFC 4180 needs it (a comma, quote, CR or
    /// LF) and also when a reader could otherwise lose or misread the value: the empty string
    /// (`""`, so a reader that tells it from null can, as DuckDB with `allow_quoted_nulls=false`:
    /// an unquoted empty field is null), leading or trailing spaces and tabs (which some readers trim from unquoted fields)
    /// and NUL (which some readers stop at outside quotes).
    static func appendField(_ bytes: UnsafeBufferPointer<UInt8>, to out: inout ByteBuffer) {
        guard needsQuotes(bytes) else {
            out.append(bytes)
            return
        }
        out.append(quote)
        var runStart = 0
        for (i, c) in bytes.enumerated() where c == quote {
            out.append(UnsafeBufferPointer(rebasing: bytes[runStart...i]))
            out.append(quote)
            runStart = i + 1
        }
        if runStart < bytes.count { out.append(UnsafeBufferPointer(rebasing: bytes[runStart...])) }
        out.append(quote)
    }

    static func appendField(_ text: String, to out: inout ByteBuffer) {
        var text = text
        text.withUTF8 { appendField($0, to: &out) }
    }

    /// Appends one record of text fields and its CRLF.
    static func appendRecord(_ fields: [String], to out: inout ByteBuffer) {
        for (i, field) in fields.enumerated() {
            if i > 0 { out.append(comma) }
            appendField(field, to: &out)
        }
        out.append(recordEnd)
    }

    private static func needsQuotes(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let first = bytes.first, let last = bytes.last else { return true }
        if first == 0x20 || first == 0x09 || last == 0x20 || last == 0x09 { return true }
        for c in bytes where c == comma || c == quote || c == 0x0D || c == 0x0A || c == 0 { return true }
        return false
    }
}
