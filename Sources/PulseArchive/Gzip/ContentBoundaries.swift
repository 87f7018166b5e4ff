/// Where `--rsyncable` ends a block: points chosen by the content around them, not by their
/// offset, so bytes inserted or changed early in the stream do not move the boundaries after
/// them, and the blocks after the next boundary compress to the same bytes as before.
///
/// The hash is a gear hash (as in FastCDC): per byte, `hash = hash << 1 + gear[byte]`, so a
/// byte's influence leaves the 64-bit hash after 64 more bytes and the top bits depend on the
/// last 64 bytes only: a rolling hash over a 64-byte window with no byte to subtract. A
/// boundary falls after a byte where the top `bits` bits are zero (one position in 2^bits, on
/// average), once the block holds `minimum` bytes (no tiny blocks where a pattern repeats).
/// gzip --rsyncable sums a 4 KiB window instead; its boundaries cluster where the sum drifts
/// slowly, as in text of one alphabet.
struct ContentBoundaries {
    /// 2^16: a boundary every 64 KiB on average (docs/performance.md, "Parallel and
    /// rsyncable gzip": the size cost of each reset against the locality).
    static let bits: UInt64 = 16
    static let minimum = 16 * 1024

    private var hash: UInt64 = 0

    /// 256 fixed pseudo-random values (splitmix64 from a fixed seed): part of the format of an
    /// rsyncable file, never to change, or the same data would cut at other points.
    private static let gear: [UInt64] = {
        var state: UInt64 = 0x5055_4C53_4541_5243  // "PULSEARC"
        return (0..<256).map { _ in
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }()

    /// Hashes `bytes` up to and including the first boundary; returns how many bytes that is,
    /// or nil when there is none in `bytes` (all of them hashed).
    /// - Parameter blockCount: the bytes already in the block before `bytes`.
    mutating func scan(_ bytes: UnsafeRawBufferPointer, blockCount: Int) -> Int? {
        let shift = 64 - Self.bits
        var hash = self.hash
        defer { self.hash = hash }
        return Self.gear.withUnsafeBufferPointer { gear -> Int? in
            for i in 0..<bytes.count {
                hash = (hash << 1) &+ gear[Int(bytes[i])]
                if hash >> shift == 0, blockCount + i + 1 >= Self.minimum { return i + 1 }
            }
            return nil
        }
    }
}
