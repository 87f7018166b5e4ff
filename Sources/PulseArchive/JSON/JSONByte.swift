/// The bytes of JSON's grammar by name: the scanner, the reader, `JSONNode` and the writer
/// compare and write raw UTF-8 bytes, and `0x7B` says less than `JSONByte.openBrace`.
enum JSONByte {
    static let openBrace: UInt8 = 0x7B       // {
    static let closeBrace: UInt8 = 0x7D      // }
    static let openBracket: UInt8 = 0x5B     // [
    static let closeBracket: UInt8 = 0x5D    // ]
    static let colon: UInt8 = 0x3A           // :
    static let comma: UInt8 = 0x2C           // ,
    static let quote: UInt8 = 0x22           // "
    static let backslash: UInt8 = 0x5C       // \
    static let slash: UInt8 = 0x2F           // /
    static let minus: UInt8 = 0x2D           // -
    static let plus: UInt8 = 0x2B            // +
    static let dot: UInt8 = 0x2E             // .
    static let zero: UInt8 = 0x30            // 0
    static let digits: ClosedRange<UInt8> = 0x30...0x39
    static let exponent: UInt8 = 0x65        // e
    static let upperExponent: UInt8 = 0x45   // E
    static let space: UInt8 = 0x20
    static let tab: UInt8 = 0x09
    static let lineFeed: UInt8 = 0x0A
    static let carriageReturn: UInt8 = 0x0D
    /// The byte order mark a file may start with (`EF BB BF`).
    static let byteOrderMark: [UInt8] = [0xEF, 0xBB, 0xBF]

    /// Whitespace between tokens: space, tab, line feed, carriage return.
    @inline(__always) static func isWhitespace(_ c: UInt8) -> Bool {
        c == space || c == lineFeed || c == carriageReturn || c == tab
    }

    /// The first byte of a number: `-` or a digit.
    @inline(__always) static func startsNumber(_ c: UInt8) -> Bool {
        c == minus || digits.contains(c)
    }

    /// A control character (below U+0020), which a JSON string must escape.
    @inline(__always) static func isControl(_ c: UInt8) -> Bool { c < space }
}

/// The kind of JSON value a reader requires next, told by its first byte.
enum JSONValueStart {
    case object, array, string, number

    func matches(_ c: UInt8) -> Bool {
        switch self {
        case .object: c == JSONByte.openBrace
        case .array: c == JSONByte.openBracket
        case .string: c == JSONByte.quote
        case .number: JSONByte.startsNumber(c)
        }
    }
}
