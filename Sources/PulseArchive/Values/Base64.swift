/// Standard base64 (RFC 4648 §4, padded), as the app writes attachments and files.
///
/// Our own codec because the values are the largest an archive holds, of any size: it decodes
/// and encodes in pieces (`Decoder`, `Encoder`), so no value is ever held whole as text.
/// Decoding is as strict as Foundation's (padding required, no whitespace), except that `====`
/// is refused rather than read as one zero byte; bits after the last byte are ignored, as there.
public enum Base64 {
    fileprivate static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
    fileprivate static let padding = UInt8(ascii: "=")
    /// The value of each byte in the alphabet, 0xFF for the others.
    fileprivate static let values: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (value, byte) in alphabet.enumerated() { table[Int(byte)] = UInt8(value) }
        return table
    }()

    /// The bytes `text` encodes, or nil when it is not padded standard base64.
    public static func decode(_ text: [UInt8]) -> [UInt8]? {
        var decoder = Decoder()
        var out: [UInt8] = []
        out.reserveCapacity(text.count / 4 * 3)
        text.withUnsafeBytes { decoder.decode($0, appendingTo: &out) }
        return decoder.finish() == nil ? out : nil
    }

    /// Appends the padded base64 of `bytes` to `out`.
    public static func encode(_ bytes: [UInt8], appendingTo out: inout ByteBuffer) {
        var encoder = Encoder()
        bytes.withUnsafeBytes { encoder.encode($0, appendingTo: &out) }
        encoder.finish(appendingTo: &out)
    }

    /// Where and why base64 text was refused.
    public struct Failure: Error, Equatable, Sendable {
        /// The offset, in characters of the base64 text, of the first one refused (its length
        /// when the text ends early).
        public var offset: Int64
        public var reason: String
    }

    /// Decodes base64 text handed over in pieces split anywhere, with the rules of `decode`.
    /// After a failure it ignores the rest; `finish` says whether the whole text was valid.
    public struct Decoder {
        private var group: UInt32 = 0
        /// Characters of the current group of four, padding included.
        private var groupCount = 0
        private var paddingInGroup = 0
        /// A padded group was completed: the text must end there.
        private var ended = false
        /// Characters consumed so far.
        public private(set) var offset: Int64 = 0
        public private(set) var failure: Failure?

        public init() {}

        public mutating func decode(_ text: UnsafeRawBufferPointer, appendingTo out: inout [UInt8]) {
            guard failure == nil, !text.isEmpty else { return }
            let start = offset
            Base64.values.withUnsafeBufferPointer { values in
                var i = 0
                let n = text.count
                while i < n {
                    // Whole groups of four plain characters: nearly all of a value.
                    if groupCount == 0 && !ended {
                        while i + 4 <= n {
                            let a = values[Int(text[i])], b = values[Int(text[i + 1])]
                            let c = values[Int(text[i + 2])], d = values[Int(text[i + 3])]
                            guard a | b | c | d < 64 else { break }
                            out.append(a << 2 | b >> 4)
                            out.append(b << 4 | c >> 2)
                            out.append(c << 6 | d)
                            i += 4
                        }
                        if i == n { break }
                    }
                    let c = text[i]
                    let at = start + Int64(i)
                    if ended {
                        failure = Failure(offset: at, reason: "\(Self.describe(c)) follows the padding that ends the text")
                        return
                    }
                    if c == Base64.padding {
                        guard groupCount >= 2 else {
                            failure = Failure(offset: at, reason: "'=' (padding) at position \(groupCount + 1) of a group of four, where only a character of the alphabet may stand")
                            return
                        }
                        paddingInGroup += 1
                        group <<= 6
                    } else {
                        let v = values[Int(c)]
                        guard v < 64 else {
                            failure = Failure(offset: at, reason: "\(Self.describe(c)) is not in the base64 alphabet")
                            return
                        }
                        guard paddingInGroup == 0 else {
                            failure = Failure(offset: at, reason: "\(Self.describe(c)) follows '=' (padding) within a group of four")
                            return
                        }
                        group = group << 6 | UInt32(v)
                    }
                    groupCount += 1
                    i += 1
                    if groupCount == 4 {
                        out.append(UInt8(truncatingIfNeeded: group >> 16))
                        if paddingInGroup < 2 { out.append(UInt8(truncatingIfNeeded: group >> 8)) }
                        if paddingInGroup < 1 { out.append(UInt8(truncatingIfNeeded: group)) }
                        ended = paddingInGroup > 0
                        group = 0
                        groupCount = 0
                        paddingInGroup = 0
                    }
                }
            }
            offset = start + Int64(text.count)
        }

        /// The first problem of the whole text, or nil when it was valid base64.
        public mutating func finish() -> Failure? {
            if failure == nil && groupCount != 0 {
                failure = Failure(offset: offset, reason: "the text ends within a group of four characters (its length, \(offset), is not a multiple of 4)")
            }
            return failure
        }

        private static func describe(_ c: UInt8) -> String {
            if c >= 0x20 && c < 0x7F { return "'\(Character(Unicode.Scalar(c)))'" }
            return "byte 0x\(String(c, radix: 16, uppercase: true))"
        }
    }

    /// Encodes bytes handed over in pieces split anywhere: the output is that of `encode` over
    /// all of them, written as it goes (groups of three bytes; up to two wait for the next piece).
    public struct Encoder {
        private var carry: (UInt8, UInt8) = (0, 0)
        private var carried = 0

        public init() {}

        public mutating func encode(_ bytes: UnsafeRawBufferPointer, appendingTo out: inout ByteBuffer) {
            var i = 0
            let n = bytes.count
            if carried == 1 && i < n { carry.1 = bytes[i]; carried = 2; i += 1 }
            if carried == 2 && i < n { Self.append(carry.0, carry.1, bytes[i], to: &out); carried = 0; i += 1 }
            if carried > 0 { return }
            while i + 3 <= n {
                Self.append(bytes[i], bytes[i + 1], bytes[i + 2], to: &out)
                i += 3
            }
            if i < n { carry.0 = bytes[i]; carried = 1; i += 1 }
            if i < n { carry.1 = bytes[i]; carried = 2 }
        }

        public mutating func finish(appendingTo out: inout ByteBuffer) {
            let alphabet = Base64.alphabet
            switch carried {
            case 1:
                let n = UInt32(carry.0) << 16
                out.append([alphabet[Int(n >> 18)], alphabet[Int(n >> 12 & 63)], Base64.padding, Base64.padding])
            case 2:
                let n = UInt32(carry.0) << 16 | UInt32(carry.1) << 8
                out.append([alphabet[Int(n >> 18)], alphabet[Int(n >> 12 & 63)], alphabet[Int(n >> 6 & 63)], Base64.padding])
            default:
                break
            }
            carried = 0
        }

        @inline(__always) private static func append(_ a: UInt8, _ b: UInt8, _ c: UInt8, to out: inout ByteBuffer) {
            let n = UInt32(a) << 16 | UInt32(b) << 8 | UInt32(c)
            Base64.alphabet.withUnsafeBufferPointer { alphabet in
                out.append(alphabet[Int(n >> 18)]); out.append(alphabet[Int(n >> 12 & 63)])
                out.append(alphabet[Int(n >> 6 & 63)]); out.append(alphabet[Int(n & 63)])
            }
        }
    }
}
