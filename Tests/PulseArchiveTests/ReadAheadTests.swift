import Foundation
import Testing
@testable import PulseArchive
import PulseSystem
@testable import PulseTestSupport

/// An endless source that counts its reads, or fails at a given read.
private final class CountingTestSource: ByteSource, @unchecked Sendable {
    var handleOwners: [HandleOwner] { [] }

    private let lock = NSLock()
    private var reads = 0
    let failAt: Int?

    init(failAt: Int? = nil) { self.failAt = failAt }

    var readCount: Int { lock.withLock { reads } }

    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        let n = lock.withLock { reads += 1; return reads }
        if let failAt, n == failAt { throw ArchiveError(.damagedCompression, "damaged at read \(n)") }
        for i in 0..<buffer.count { buffer[i] = UInt8(truncatingIfNeeded: n) }
        return buffer.count
    }
}

@Suite("Reading a gzip archive ahead on a second thread")
struct ReadAheadTests {
    @Test("bytes arrive in order, and an error arrives in its place, after the bytes before it")
    func orderAndErrors() throws {
        let source = CountingTestSource(failAt: 4)
        let readAhead = try ReadAheadSource(source, compressedBytes: { 0 }, chunkSize: 16, capacity: 2)
        var buffer = [UInt8](repeating: 0, count: 16)
        for expected in 1...3 {
            #expect(try buffer.withUnsafeMutableBytes { try readAhead.read(into: $0) } == 16)
            #expect(buffer.allSatisfy { $0 == UInt8(expected) })
        }
        #expect(throws: ArchiveError.self) { try buffer.withUnsafeMutableBytes { try readAhead.read(into: $0) } }
    }

    @Test("a reader that stops early stops the thread: it reads at most its capacity ahead")
    func stopsWithTheReader() throws {
        let source = CountingTestSource()
        do {
            let readAhead = try ReadAheadSource(source, compressedBytes: { 0 }, chunkSize: 16, capacity: 2)
            var buffer = [UInt8](repeating: 0, count: 16)
            _ = try buffer.withUnsafeMutableBytes { try readAhead.read(into: $0) }
        }
        // Releasing the reader joined its thread: whatever it read, it read before the release
        // returned, so the count is final here (no waiting to see whether it moves).
        #expect(source.readCount <= 5, "the thread read \(source.readCount) chunks ahead of a reader that took one")
    }
}
