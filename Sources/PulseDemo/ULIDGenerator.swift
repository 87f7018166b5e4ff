import PulseArchive

/// Makes ULIDs that sort in the order they were made: within one millisecond the random part
/// of the previous one plus one.
public struct ULIDGenerator {
    private var last: [UInt8]?

    public init() {}

    /// - Parameters:
    ///   - millis: the time, milliseconds since 1970 (48 bits).
    ///   - random: the source of the 80 random bits.
    public mutating func next(at millis: Int64, using random: inout some RandomNumberGenerator) -> ULID {
        var bytes = [UInt8](repeating: 0, count: 16)
        for i in 0..<6 { bytes[i] = UInt8(truncatingIfNeeded: millis >> (8 * (5 - i))) }
        if let last, Array(last[0..<6]) == Array(bytes[0..<6]) || Self.isLater(last, than: bytes) {
            // Same millisecond (or a clock that went back): increment the previous value.
            bytes = last
            var i = 15
            while i >= 0 {
                bytes[i] &+= 1
                if bytes[i] != 0 { break }
                i -= 1
            }
        } else {
            for i in 6..<16 { bytes[i] = UInt8.random(in: 0...255, using: &random) }
        }
        last = bytes
        return ULID(bytes: bytes)
    }

    private static func isLater(_ a: [UInt8], than b: [UInt8]) -> Bool {
        Array(a[0..<6]).lexicographicallyPrecedes(Array(b[0..<6])) == false && Array(a[0..<6]) != Array(b[0..<6])
    }
}
