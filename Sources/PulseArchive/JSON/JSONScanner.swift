#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import PulseSystem

/// A pull tokenizer over a byte stream: the caller asks for the next value of the type it
/// expects, and nothing larger than one string is ever held.
///
/// Strict JSON (RFC 8259): no comments, no trailing commas, no unescaped control characters,
/// no lone surrogate escapes, valid UTF-8 in strings.
final class JSONScanner {
    private let source: ByteSource
    private let buffer: UnsafeMutablePointer<UInt8>
    private let capacity: Int
    private var position = 0
    private var end = 0
    private var bytesBeforeBuffer: Int64 = 0
    private var sourceEnded = false
    /// Where the text being captured starts in the buffer (`beginCapture`), and what of it
    /// earlier buffers held.
    private var captureStart: Int?
    private var captured: [UInt8] = []
    let limits: ArchiveLimits

    /// - Parameter offset: where `source` starts in the JSON text (a look ahead's, from the
    ///   scanner it looks ahead of), so that messages name the file's byte.
    init(source: ByteSource, limits: ArchiveLimits, capacity: Int = 256 * 1024, startingAt offset: Int64 = 0) {
        self.source = source
        self.limits = limits
        self.capacity = capacity
        self.buffer = .allocate(capacity: capacity)
        bytesBeforeBuffer = offset
    }

    deinit { buffer.deallocate() }

    /// The bytes loaded but not consumed yet: a look ahead starts with them.
    func unreadBytes() -> [UInt8] {
        Array(UnsafeBufferPointer(start: buffer + position, count: end - position))
    }

    /// Offset of the next unread byte from the start of the JSON text.
    var offset: Int64 { bytesBeforeBuffer + Int64(position) }

    // MARK: - Bytes

    /// Loads more bytes; false when the source is exhausted and the buffer is empty.
    private func refill() throws -> Bool {
        if position < end { return true }
        if sourceEnded { return false }
        if let start = captureStart {
            if captured.count + (end - start) > limits.maxWholeValueBytes {
                // Past the bound a capture is dropped: its reader falls back to what it does
                // without the text, rather than hold a row of any size.
                captured = []
                captureStart = nil
            } else {
                captured.append(contentsOf: UnsafeBufferPointer(start: buffer + start, count: end - start))
                captureStart = 0
            }
        }
        bytesBeforeBuffer += Int64(end)
        position = 0
        end = 0
        let n = try source.read(into: UnsafeMutableRawBufferPointer(start: buffer, count: capacity))
        if n == 0 { sourceEnded = true; return false }
        end = n
        return true
    }

    /// The next byte that is not whitespace, without consuming it; nil at the end of input.
    func peek() throws -> UInt8? {
        while true {
            while position < end {
                let c = buffer[position]
                if JSONByte.isWhitespace(c) { position += 1 } else { return c }
            }
            if try !refill() { return nil }
        }
    }

    /// Skips a UTF-8 byte order mark at the very start.
    func skipByteOrderMark() throws {
        guard try refill(), offset == 0 else { return }
        if end - position >= 3, buffer[position] == JSONByte.byteOrderMark[0], buffer[position + 1] == JSONByte.byteOrderMark[1], buffer[position + 2] == JSONByte.byteOrderMark[2] {
            position += 3
        }
    }

    @inline(__always) func advance() { position += 1 }

    /// Starts keeping the text read from the next byte on (a row's JSON text for `verify`), up
    /// to `limits.maxWholeValueBytes`.
    func beginCapture() {
        captured.removeAll(keepingCapacity: captured.capacity <= capacity)
        captureStart = position
    }

    /// Appends the text read since `beginCapture`, byte for byte, to `out`; nothing when it
    /// was longer than `limits.maxWholeValueBytes` (or no capture was begun).
    func endCapture(into out: inout [UInt8]) {
        guard let start = captureStart else { return }
        captureStart = nil
        out.append(contentsOf: captured)
        out.append(contentsOf: UnsafeBufferPointer(start: buffer + start, count: position - start))
    }

    private func nextRawByte() throws -> UInt8 {
        if position >= end, try !refill() { throw unexpectedEnd() }
        let c = buffer[position]
        position += 1
        return c
    }

    /// Consumes `byte` (after whitespace) or throws naming `expectation`.
    func expect(_ byte: UInt8, _ expectation: @autoclosure () -> String) throws {
        guard let c = try peek() else { throw unexpectedEnd() }
        guard c == byte else { throw syntaxError("expected \(expectation()), found \(describe(c))") }
        position += 1
    }

    /// After a member or element: consumes `,` and returns true, or consumes `closer` and
    /// returns false.
    func continues(closer: UInt8) throws -> Bool {
        guard let c = try peek() else { throw unexpectedEnd() }
        if c == JSONByte.comma { position += 1; return true }
        if c == closer { position += 1; return false }
        throw syntaxError("expected ',' or '\(Character(Unicode.Scalar(closer)))', found \(describe(c))")
    }

    /// Consumes `closer` if it comes next (an empty object or array).
    func consumeIfClosing(_ closer: UInt8) throws -> Bool {
        guard let c = try peek() else { throw unexpectedEnd() }
        if c == closer { position += 1; return true }
        return false
    }

    /// Requires that nothing but whitespace follows.
    func expectEnd() throws {
        if let c = try peek() { throw syntaxError("unexpected \(describe(c)) after the end of the JSON object") }
    }

    // MARK: - Strings

    /// Reads a string (the opening quote next) into `out`, escapes decoded, as raw UTF-8.
    func readStringBytes(into out: inout [UInt8]) throws {
        out.removeAll(keepingCapacity: true)
        try expect(JSONByte.quote, "a string")
        try readStringContent(into: &out)
    }

    /// Reads a string (the opening quote next) and hands its raw UTF-8, escapes decoded, to
    /// `body`. A string without escapes that lies whole in the buffer (most strings of an
    /// archive) is handed over in place, without a copy; any other goes through `scratch`.
    /// `body` must not keep the pointer.
    func withString<T>(scratch: inout [UInt8], _ body: (UnsafeBufferPointer<UInt8>) throws -> T) throws -> T {
        try expect(JSONByte.quote, "a string")
        var i = position
        while i < end {
            let c = buffer[i]
            if c == JSONByte.quote {
                let span = UnsafeBufferPointer(start: buffer + position, count: i - position)
                if span.count > limits.maxStringBytes { throw stringTooLong() }
                position = i + 1
                return try body(span)
            }
            if c == JSONByte.backslash || JSONByte.isControl(c) { break }
            i += 1
        }
        scratch.removeAll(keepingCapacity: true)
        try readStringContent(into: &scratch)
        return try scratch.withUnsafeBufferPointer(body)
    }

    /// Where the run of plain string bytes (no quote, backslash or control character) that
    /// starts at `position` ends within the buffer.
    @inline(__always)
    private func plainRunEnd() -> Int {
        var i = position
        while i < end {
            let c = buffer[i]
            if c == JSONByte.quote || c == JSONByte.backslash || JSONByte.isControl(c) { break }
            i += 1
        }
        return i
    }

    /// The rest of a string after its opening quote, through the closing one.
    private func readStringContent(into out: inout [UInt8]) throws {
        while true {
            // Fast path: copy the run of plain bytes within the buffer.
            let i = plainRunEnd()
            if i > position {
                out.append(contentsOf: UnsafeBufferPointer(start: buffer + position, count: i - position))
                position = i
                if out.count > limits.maxStringBytes { throw stringTooLong() }
            }
            if position >= end {
                if try !refill() { throw unexpectedEnd() }
                continue
            }
            let c = buffer[position]
            position += 1
            if c == JSONByte.quote { return }
            if JSONByte.isControl(c) { throw syntaxError("unescaped control character \(describe(c)) in a string") }
            try readEscape(into: &out)
            if out.count > limits.maxStringBytes { throw stringTooLong() }
        }
    }

    /// Reads a string (the opening quote next) of any length, escapes decoded, handing its raw
    /// bytes to `body` in pieces as they arrive: runs of plain bytes straight from the buffer,
    /// each escape decoded on its own (so one that straddles a refill is whole). For the values
    /// that may be larger than memory (attachments, document files), so no string limit
    /// applies; the archive's size limit still does. `body` must not keep the pointer.
    func readStringPieces(_ body: (UnsafeRawBufferPointer) throws -> Void) throws {
        try expect(JSONByte.quote, "a string")
        var escaped: [UInt8] = []
        escaped.reserveCapacity(4)
        while true {
            let i = plainRunEnd()
            if i > position {
                let run = UnsafeRawBufferPointer(start: buffer + position, count: i - position)
                position = i
                try body(run)
            }
            if position >= end {
                if try !refill() { throw unexpectedEnd() }
                continue
            }
            let c = buffer[position]
            position += 1
            if c == JSONByte.quote { return }
            if JSONByte.isControl(c) { throw syntaxError("unescaped control character \(describe(c)) in a string") }
            escaped.removeAll(keepingCapacity: true)
            try readEscape(into: &escaped)
            try escaped.withUnsafeBytes(body)
        }
    }

    /// Reads a string and checks that it is valid UTF-8.
    func readString(scratch: inout [UInt8]) throws -> String {
        guard let text = try withString(scratch: &scratch, Self.text) else { throw syntaxError("a string is not valid UTF-8") }
        return text
    }

    /// The text of UTF-8 bytes, or nil when they are not valid UTF-8.
    static func text(_ bytes: UnsafeBufferPointer<UInt8>) -> String? {
        // Pure ASCII (nearly every value) needs no validation beyond the byte range, and the
        // generic validator costs runtime metadata lookups on every call.
        if bytes.allSatisfy({ $0 < 0x80 }) { return String(decoding: bytes, as: UTF8.self) }
        return String(validating: bytes, as: UTF8.self)
    }

    private func readEscape(into out: inout [UInt8]) throws {
        let c = try nextRawByte()
        switch c {
        case JSONByte.quote, JSONByte.backslash, JSONByte.slash: out.append(c)
        case UInt8(ascii: "b"): out.append(0x08)  // backspace
        case UInt8(ascii: "f"): out.append(0x0C)  // form feed
        case UInt8(ascii: "n"): out.append(JSONByte.lineFeed)
        case UInt8(ascii: "r"): out.append(JSONByte.carriageReturn)
        case UInt8(ascii: "t"): out.append(JSONByte.tab)
        case UInt8(ascii: "u"):
            var scalar = try readHex4()
            if (0xD800...0xDBFF).contains(scalar) {
                guard try nextRawByte() == JSONByte.backslash, try nextRawByte() == UInt8(ascii: "u") else {
                    throw syntaxError("a \\u escape holds a lone high surrogate, which is no Unicode character")
                }
                let low = try readHex4()
                guard (0xDC00...0xDFFF).contains(low) else {
                    throw syntaxError("a \\u escape holds a high surrogate not followed by a low one")
                }
                scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
            } else if (0xDC00...0xDFFF).contains(scalar) {
                throw syntaxError("a \\u escape holds a lone low surrogate, which is no Unicode character")
            }
            appendUTF8(Unicode.Scalar(scalar)!, to: &out)
        default:
            throw syntaxError("invalid escape \\\(describe(c)) in a string")
        }
    }

    private func readHex4() throws -> UInt32 {
        var value: UInt32 = 0
        for _ in 0..<4 {
            let c = try nextRawByte()
            let digit: UInt32
            switch c {
            case JSONByte.digits: digit = UInt32(c - JSONByte.zero)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(c - UInt8(ascii: "A") + 10)
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(c - UInt8(ascii: "a") + 10)
            default: throw syntaxError("invalid \\u escape: \(describe(c)) is not a hex digit")
            }
            value = value << 4 | digit
        }
        return value
    }

    private func appendUTF8(_ scalar: Unicode.Scalar, to out: inout [UInt8]) {
        for unit in UTF8.encode(scalar)! { out.append(unit) }
    }

    private func stringTooLong() -> ArchiveError {
        ArchiveError(.limitExceeded, "a string near byte \(offset) is longer than the limit of \(limits.maxStringBytes) bytes", limit: .stringBytes)
    }

    // MARK: - Numbers and literals

    /// Reads a number literal into `out`, checking the JSON grammar and the length limit.
    func readNumberLiteral(into out: inout [UInt8]) throws {
        out.removeAll(keepingCapacity: true)
        guard try peek() != nil else { throw unexpectedEnd() }
        func take() throws -> UInt8? {
            if position >= end, try !refill() { return nil }
            let c = buffer[position]
            let isNumberByte = JSONByte.digits.contains(c) || c == JSONByte.minus || c == JSONByte.plus || c == JSONByte.dot
                || c == JSONByte.upperExponent || c == JSONByte.exponent
            guard isNumberByte else { return nil }
            position += 1
            out.append(c)
            if out.count > limits.maxNumberLength {
                throw ArchiveError(.limitExceeded, "a number literal near byte \(offset) is longer than the limit of \(limits.maxNumberLength) characters", limit: .numberLength)
            }
            return c
        }
        while try take() != nil {}
        guard Self.isValidNumber(out) else {
            throw syntaxError("invalid number \(String(decoding: out, as: UTF8.self).debugDescription)")
        }
    }

    /// `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`
    static func isValidNumber(_ s: [UInt8]) -> Bool {
        var i = 0
        func digits() -> Int {
            let start = i
            while i < s.count, JSONByte.digits.contains(s[i]) { i += 1 }
            return i - start
        }
        if i < s.count, s[i] == JSONByte.minus { i += 1 }
        guard i < s.count else { return false }
        if s[i] == JSONByte.zero { i += 1 } else if digits() == 0 { return false }
        if i < s.count, s[i] == JSONByte.dot {
            i += 1
            if digits() == 0 { return false }
        }
        if i < s.count, s[i] == JSONByte.upperExponent || s[i] == JSONByte.exponent {
            i += 1
            if i < s.count, s[i] == JSONByte.plus || s[i] == JSONByte.minus { i += 1 }
            if digits() == 0 { return false }
        }
        return i == s.count
    }

    /// Reads `true`, `false` or `null`.
    func readLiteral() throws -> FieldValue {
        guard let c = try peek() else { throw unexpectedEnd() }
        let word: [UInt8], value: FieldValue
        switch c {
        case UInt8(ascii: "t"): word = Array("true".utf8); value = .bool(true)
        case UInt8(ascii: "f"): word = Array("false".utf8); value = .bool(false)
        case UInt8(ascii: "n"): word = Array("null".utf8); value = .null
        default: throw syntaxError("unexpected \(describe(c))")
        }
        for expected in word {
            guard try nextRawByte() == expected else { throw syntaxError("invalid literal (expected \(String(decoding: word, as: UTF8.self)))") }
        }
        return value
    }

    // MARK: - Skipping

    /// Skips one value of any shape without recursion. `depth` is the nesting level of the
    /// value's container; nesting is counted against the limit even in values nobody reads.
    func skipValue(depth: Int) throws {
        var openObjects: [Bool] = []  // the containers entered, innermost last (true = object)
        var scratch: [UInt8] = []
        while true {
            guard let c = try peek() else { throw unexpectedEnd() }
            switch c {
            case JSONByte.openBrace, JSONByte.openBracket:
                advance()
                try checkDepth(depth + openObjects.count + 1)
                let isObject = c == JSONByte.openBrace
                if try !consumeIfClosing(isObject ? JSONByte.closeBrace : JSONByte.closeBracket) {
                    openObjects.append(isObject)
                    if isObject { try readMemberName(scratch: &scratch) }
                    continue
                }
            case JSONByte.quote:
                try readValidStringBytes(into: &scratch)
            case JSONByte.minus, JSONByte.digits:
                try readNumberLiteral(into: &scratch)
            default:
                _ = try readLiteral()
            }
            // A whole value was read: close finished containers, or move to the next member.
            while let isObject = openObjects.last {
                if try continues(closer: isObject ? JSONByte.closeBrace : JSONByte.closeBracket) {
                    if isObject { try readMemberName(scratch: &scratch) }
                    break
                }
                openObjects.removeLast()
            }
            if openObjects.isEmpty { return }
        }
    }

    private func readMemberName(scratch: inout [UInt8]) throws {
        try readValidStringBytes(into: &scratch)
        try expect(JSONByte.colon, "':'")
    }

    /// A string of a skipped value, held to the same UTF-8 rule as any read one: a value is
    /// not exempt from the format because nobody reads it.
    private func readValidStringBytes(into scratch: inout [UInt8]) throws {
        try readStringBytes(into: &scratch)
        guard scratch.withUnsafeBufferPointer({ Self.text($0) }) != nil else {
            throw syntaxError("a string in an ignored value is not valid UTF-8")
        }
    }

    func checkDepth(_ depth: Int) throws {
        if depth > limits.maxDepth {
            throw ArchiveError(.limitExceeded, "JSON nesting near byte \(offset) is deeper than the limit of \(limits.maxDepth) levels", limit: .depth)
        }
    }

    // MARK: - Errors

    func syntaxError(_ detail: String) -> ArchiveError {
        .notAnArchive("invalid JSON at byte \(offset): \(detail)")
    }

    func unexpectedEnd() -> ArchiveError {
        .notAnArchive("the JSON text ends early at byte \(offset): the file is incomplete")
    }

    func describe(_ c: UInt8) -> String {
        if c >= 0x20 && c < 0x7F { return "'\(Character(Unicode.Scalar(c)))'" }
        return "byte 0x\(String(c, radix: 16, uppercase: true))"
    }
}
