import Testing
@testable import PulseArchive
@testable import PulseTestSupport

/// The writer's buffer against the array it replaced: every operation the writers use, in a
/// seeded random sequence that crosses the buffer's growth at every size, gives the bytes the
/// same operations give an array.
@Suite("The writer's byte buffer")
struct ByteBufferTests {
    @Test("random appends, truncations and clears give what an array gives, across every growth")
    func matchesAnArray() {
        var random = SeededRandom.fromEnvironment("ByteBufferTests.matchesAnArray")
        for initialCapacity in [0, 1, 16, 17, 100] {
            var buffer = ByteBuffer(capacity: initialCapacity)
            var model: [UInt8] = []
            for step in 0..<4_000 {
                switch UInt8.random(in: 0..<10, using: &random) {
                case 0...3:
                    let byte = UInt8.random(in: 0...255, using: &random)
                    buffer.append(byte); model.append(byte)
                case 4...6:
                    // Pieces up to twice the size the buffer has grown to (one append can
                    // more than double it), and at most 8 KiB, so the sizes stay small.
                    let length = Int.random(in: 0...min(8_192, 2 * max(16, model.count)), using: &random)
                    let piece = (0..<length).map { _ in UInt8.random(in: 0...255, using: &random) }
                    piece.withUnsafeBufferPointer { buffer.append($0) }
                    model += piece
                case 7:
                    let start = Int.random(in: 0...model.count, using: &random)
                    buffer.removeAll(from: start); model.removeSubrange(start...)
                case 8:
                    let start = Int.random(in: 0...model.count, using: &random)
                    buffer.withMutableBytes(from: start) { bytes in
                        for i in bytes.indices { bytes[i] ^= 0x20 }
                    }
                    for i in start..<model.count { model[i] ^= 0x20 }
                default:
                    if model.count > 32_768 || UInt8.random(in: 0..<8, using: &random) == 0 {
                        buffer.removeAll(shrinkingAbove: 1_024, to: 64); model.removeAll()
                    } else {
                        buffer.append("é\u{0}x"); model += Array("é\u{0}x".utf8)
                    }
                }
                #expect(buffer.count == model.count && buffer.isEmpty == model.isEmpty, "capacity \(initialCapacity), step \(step)")
            }
            #expect(buffer.bytes == model, "capacity \(initialCapacity)")
            buffer.withBytes { #expect(Array($0) == model) }
        }
    }

    @Test("collecting gives what its body appended, as an array")
    func collecting() throws {
        #expect(ByteBuffer.collecting { _ in }.isEmpty)
        let bytes = ByteBuffer.collecting { buffer in
            for byte in 0...255 { buffer.append(UInt8(byte)) }
            buffer.append([1, 2, 3])
        }
        #expect(bytes == Array(0...255) + [1, 2, 3])
        struct Refused: Error {}
        #expect(throws: Refused.self) { try ByteBuffer.collecting { _ throws(Refused) in throw Refused() } }
    }
}
