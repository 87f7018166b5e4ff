#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import PulseArchive

/// Key values as bytes that compare equal exactly when SQLite's unique index would call
/// the values equal: a type tag, then text as UTF-8 or an integer as big-endian with the sign
/// bit flipped (so bytes sort like numbers).
enum KeyEncoding {
    private static let textTag: UInt8 = 1, integerTag: UInt8 = 2, otherTag: UInt8 = 3

    static func append(_ value: FieldValue, to bytes: inout [UInt8]) {
        switch value {
        case .string(let text):
            bytes.append(textTag)
            bytes.append(contentsOf: text.utf8)
        case .int(let v), .date(let v):
            bytes.append(integerTag)
            var big = (UInt64(bitPattern: v) ^ (1 << 63)).bigEndian
            withUnsafeBytes(of: &big) { bytes.append(contentsOf: $0) }
        case .double(let v):
            bytes.append(otherTag)
            var big = v.bitPattern.bigEndian
            withUnsafeBytes(of: &big) { bytes.append(contentsOf: $0) }
        case .bool(let v):
            bytes.append(otherTag)
            bytes.append(v ? 1 : 0)
        case .null:
            bytes.append(0)
        }
    }

    /// The value back, for messages (doubles and booleans, never keys, come back as text).
    static func decode(_ bytes: [UInt8]) -> FieldValue {
        guard let tag = bytes.first else { return .null }
        switch tag {
        case textTag: return .string(String(decoding: bytes.dropFirst(), as: UTF8.self))
        case integerTag where bytes.count == 9:
            let raw = bytes.dropFirst().reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            return .int(Int64(bitPattern: raw ^ (1 << 63)))
        default: return .string(bytes.dropFirst().map { String($0, radix: 16) }.joined())
        }
    }

    static func compare(_ a: [UInt8], _ b: [UInt8]) -> Int {
        a.withUnsafeBufferPointer { a in b.withUnsafeBufferPointer { b in compare(a, b) } }
    }

    static func compare(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Int {
        let common = min(a.count, b.count)
        if common > 0 {
            let order = memcmp(a.baseAddress!, b.baseAddress!, common)
            if order != 0 { return Int(order) }
        }
        return a.count - b.count
    }
}
