import Testing
@testable import PulseArchive
@testable import PulseTestSupport

/// The export's one-pass escape of a stored text looks at eight bytes at a time: it must write
/// what the byte-by-byte escape writes, and give up on any byte that is not ASCII, wherever in
/// the eight the byte that matters falls.
@Suite("The eight-bytes-at-a-time escape of stored text")
struct EscapeScanTests {
    /// What the scan wrote after `prefix`, or nil when it gave up (then `prefix` must be intact).
    static func scan(_ bytes: [UInt8], after prefix: [UInt8]) -> [UInt8]? {
        var buffer = ByteBuffer()
        buffer.append(prefix)
        let ascii = bytes.withUnsafeBufferPointer { JSONText.appendEscapedIfASCII($0, to: &buffer) }
        let out = buffer.bytes
        if !ascii {
            #expect(out == prefix, "a refused text left bytes behind")
            return nil
        }
        #expect(Array(out.prefix(prefix.count)) == prefix)
        return Array(out.dropFirst(prefix.count))
    }

    static func escaped(_ bytes: [UInt8]) -> [UInt8] {
        ByteBuffer.collecting { JSONText.appendEscaped(bytes, to: &$0) }
    }

    @Test("every byte value at every place of a 17-byte text")
    func everyByteEverywhere() {
        for value in 0...255 {
            for position in 0..<17 {
                var text = [UInt8](repeating: 0x61, count: 17)
                text[position] = UInt8(value)
                let result = Self.scan(text, after: [0x7B])
                if value >= 0x80 {
                    #expect(result == nil, "byte \(value) at \(position) was written")
                } else {
                    #expect(result == Self.escaped(text), "byte \(value) at \(position)")
                }
            }
        }
    }

    @Test("seeded random texts of ASCII with now and then a byte to escape or not ASCII")
    func randomTexts() {
        var random = SeededRandom.fromEnvironment("escape scan")
        for _ in 0..<20_000 {
            let count = Int.random(in: 0...40, using: &random)
            let text = (0..<count).map { _ -> UInt8 in
                switch Int.random(in: 0..<20, using: &random) {
                case 0: return [0x22, 0x5C, 0x2F, 0x00, 0x1F, 0x0A, 0x20, 0x7F].randomElement(using: &random)!
                case 1: return UInt8.random(in: 0x80...0xFF, using: &random)
                default: return UInt8.random(in: 0x20...0x7E, using: &random)
                }
            }
            let result = Self.scan(text, after: [])
            if text.contains(where: { $0 >= 0x80 }) {
                #expect(result == nil, "seed \(random.seed): \(text) was written")
            } else {
                #expect(result == Self.escaped(text), "seed \(random.seed): \(text)")
            }
        }
    }
}
