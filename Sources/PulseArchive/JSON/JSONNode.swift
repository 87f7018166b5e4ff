import PulseSystem

/// A JSON value held whole: a workout document inside an archive, or read from a file.
///
/// Numbers keep their literal text, so a document passes through without any value being
/// re-rounded; objects refuse duplicate keys. Keys are `ByteKey`s: two keys differ when their
/// bytes do, so NFC and NFD spellings of one name are two members, as in SQLite and the writer.
/// Strings compare by their bytes too (`==` below), so a document that changed only its
/// normalisation is a changed document.
///
/// Not `indirect`: arrays and dictionaries already hold their elements out of line, and a boxed
/// case cost a heap allocation per value (a 20 MB array of numbers took 700 MB). Inline, a
/// number or short string costs its 16 bytes in its container. A tree is still several times
/// its text, which is why the reader holds one only up to `ArchiveLimits.maxWholeValueBytes`.
public enum JSONNode: Sendable, Equatable, Hashable {
    case object([ByteKey: JSONNode])
    case array([JSONNode])
    case string(String)
    /// The number's literal text, verbatim (`62.5`, `60`, `1e-07`).
    case number(String)
    case bool(Bool)
    case null

    public static func == (a: JSONNode, b: JSONNode) -> Bool {
        switch (a, b) {
        case (.object(let x), .object(let y)): return x == y
        case (.array(let x), .array(let y)): return x == y
        case (.string(let x), .string(let y)), (.number(let x), .number(let y)): return ByteKey(x) == ByteKey(y)
        case (.bool(let x), .bool(let y)): return x == y
        case (.null, .null): return true
        default: return false
        }
    }

    public func hash(into hasher: inout Hasher) {
        switch self {
        case .object(let members): hasher.combine(0); hasher.combine(members)
        case .array(let elements): hasher.combine(1); hasher.combine(elements)
        case .string(let text): hasher.combine(2); hasher.combine(ByteKey(text))
        case .number(let literal): hasher.combine(3); hasher.combine(ByteKey(literal))
        case .bool(let value): hasher.combine(4); hasher.combine(value)
        case .null: hasher.combine(5)
        }
    }

    public subscript(key: String) -> JSONNode? {
        if case .object(let members) = self { return members[ByteKey(key)] }
        return nil
    }

    public var stringValue: String? {
        if case .string(let s) = self { return s }
        return nil
    }

    public var objectValue: [ByteKey: JSONNode]? {
        if case .object(let members) = self { return members }
        return nil
    }

    public var arrayValue: [JSONNode]? {
        if case .array(let elements) = self { return elements }
        return nil
    }

    /// The integer value of a number literal, if it is one.
    public var integerValue: Int64? {
        if case .number(let literal) = self { return ArchiveNumber.integer(Array(literal.utf8)) }
        return nil
    }

    /// Parses one JSON value that must fill `bytes` entirely.
    /// - Throws: `ArchiveError` for anything that is not strict JSON within `limits`.
    /// - Parameter what: names the value in a message: larger than `limits.maxWholeValueBytes`,
    ///   or a key repeated in it.
    public static func parse(_ bytes: [UInt8], limits: ArchiveLimits = .standard, what: @autoclosure () -> String = "the document") throws -> JSONNode {
        try limits.checkWholeValue(bytes.count, what())
        let scanner = JSONScanner(source: MemorySource(bytes), limits: limits, capacity: max(16, min(bytes.count, 256 * 1024)))
        var repeated: ArchiveError?
        let node = try read(scanner, depth: 0, location: what(), repeated: &repeated)
        try scanner.expectEnd()
        if let repeated { throw repeated }
        return node
    }

    /// Reads one value held whole, refusing it once its text passes
    /// `scanner.limits.maxWholeValueBytes`; `depth` is the nesting level of its container.
    static func readWhole(_ scanner: JSONScanner, depth: Int, location: @autoclosure () -> String) throws -> JSONNode {
        let start = scanner.offset
        var repeated: ArchiveError?
        let node = try read(scanner, depth: depth, location: location(), startedAt: start, repeated: &repeated)
        // Thrown once the value is read to its end, so a reader that steps over the value to
        // report the next problem finds the JSON after it, not the rest of this object.
        if let repeated { throw repeated }
        let span = scanner.offset - start
        try scanner.limits.checkWholeValue(span, location())
        // The rule is on the value as our writer writes it (compact, escaped as the app does:
        // `/` as `\/`), so that what is read can be written back. Escaping at most sextuples
        // a byte, so only a text past a sixth of the limit can come out past it.
        if span > Int64(scanner.limits.maxWholeValueBytes / 6) {
            try scanner.limits.checkWrittenBack(node, location())
        }
        return node
    }

    /// Reads one value; `depth` is the nesting level of its container. With `start`, the text
    /// read since that offset is checked against the whole-value limit as each value begins, so
    /// a refused tree never grows much past the limit. A key repeated in an object is kept in
    /// `repeated` (the first one), its second value read and dropped, and the value read on.
    private static func read(_ scanner: JSONScanner, depth: Int, location: @autoclosure () -> String, startedAt start: Int64? = nil,
                             repeated: inout ArchiveError?) throws -> JSONNode {
        if let start { try scanner.limits.checkWholeValue(scanner.offset - start, location()) }
        var scratch: [UInt8] = []
        guard let c = try scanner.peek() else { throw scanner.unexpectedEnd() }
        switch c {
        case JSONByte.openBrace:
            scanner.advance()
            try scanner.checkDepth(depth + 1)
            var members: [ByteKey: JSONNode] = [:]
            if try !scanner.consumeIfClosing(JSONByte.closeBrace) {
                repeat {
                    let key = ByteKey(try scanner.readString(scratch: &scratch))
                    try scanner.expect(JSONByte.colon, "':'")
                    let value = try read(scanner, depth: depth + 1, location: location(), startedAt: start, repeated: &repeated)
                    guard members[key] == nil else {
                        if repeated == nil {
                            repeated = ArchiveError(.invalidValue, "\(location()): the key \(key.text.debugDescription) appears twice in one object")
                        }
                        continue
                    }
                    members[key] = value
                } while try scanner.continues(closer: JSONByte.closeBrace)
            }
            return .object(members)
        case JSONByte.openBracket:
            scanner.advance()
            try scanner.checkDepth(depth + 1)
            var elements: [JSONNode] = []
            if try !scanner.consumeIfClosing(JSONByte.closeBracket) {
                repeat {
                    elements.append(try read(scanner, depth: depth + 1, location: location(), startedAt: start, repeated: &repeated))
                } while try scanner.continues(closer: JSONByte.closeBracket)
            }
            return .array(elements)
        case JSONByte.quote:
            return .string(try scanner.readString(scratch: &scratch))
        case JSONByte.minus, JSONByte.digits:
            try scanner.readNumberLiteral(into: &scratch)
            return .number(String(decoding: scratch, as: UTF8.self))
        default:
            switch try scanner.readLiteral() {
            case .bool(let b): return .bool(b)
            default: return .null
            }
        }
    }

    /// About the memory the tree takes: 16 bytes a value, a container's storage, and its text.
    /// What a queue of trees waiting for another thread counts.
    public var approximateBytes: Int {
        switch self {
        case .object(let members): return members.reduce(64) { $0 + 16 + $1.key.text.utf8.count + $1.value.approximateBytes }
        case .array(let elements): return elements.reduce(32) { $0 + $1.approximateBytes }
        case .string(let text), .number(let text): return 16 + text.utf8.count
        case .bool, .null: return 16
        }
    }

    /// Compact JSON, keys sorted by UTF-8 bytes, strings escaped as the app does.
    public var compactText: String {
        String(decoding: ByteBuffer.collecting { appendCompact(to: &$0) }, as: UTF8.self)
    }

    func appendCompact(to out: inout ByteBuffer) {
        switch self {
        case .object(let members):
            out.append(JSONByte.openBrace)
            for (i, key) in members.keys.sorted().enumerated() {
                if i > 0 { out.append(JSONByte.comma) }
                JSONText.appendString(key.text, to: &out)
                out.append(JSONByte.colon)
                members[key]!.appendCompact(to: &out)
            }
            out.append(JSONByte.closeBrace)
        case .array(let elements):
            out.append(JSONByte.openBracket)
            for (i, element) in elements.enumerated() {
                if i > 0 { out.append(JSONByte.comma) }
                element.appendCompact(to: &out)
            }
            out.append(JSONByte.closeBracket)
        case .string(let s): JSONText.appendString(s, to: &out)
        case .number(let literal): out.append(literal)
        case .bool(let b): out.append(b ? JSONText.trueLiteral : JSONText.falseLiteral)
        case .null: out.append(JSONText.nullLiteral)
        }
    }
}

/// Bytes already in memory, as a source for the scanner.
final class MemorySource: ByteSource {
    private let bytes: [UInt8]
    private var offset = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    var handleOwners: [HandleOwner] { [] }

    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        bytes.withUnsafeBufferPointer { Self.copy(from: $0, at: &offset, into: buffer) }
    }

    /// Copies what fits of `bytes` from `offset` on into `buffer`, and moves `offset` past it.
    static func copy(from bytes: UnsafeBufferPointer<UInt8>, at offset: inout Int, into buffer: UnsafeMutableRawBufferPointer) -> Int {
        let n = min(buffer.count, bytes.count - offset)
        guard n > 0 else { return 0 }
        buffer.copyMemory(from: UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: bytes[offset..<(offset + n)])))
        offset += n
        return n
    }
}

/// What a writer appended, moved (not copied) into a source for the scanner: text read back
/// right after it was written can be tens of megabytes (8 MiB of control characters, escaped).
final class WrittenSource: ByteSource {
    private let written: ByteBuffer
    private var offset = 0

    init(_ written: consuming ByteBuffer) { self.written = written }

    var handleOwners: [HandleOwner] { [] }

    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        written.withBytes { MemorySource.copy(from: $0, at: &offset, into: buffer) }
    }
}
