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

    @Test("a gzip stream cut anywhere in the envelope names the place in words: (at the top level), (after \"key\"), (in \"key\"), (in a row)")
    func cutStreamPlaces() throws {
        let text = Array(#"{"formatVersion":2,"appVersion":"x","counts":{"measurements":1},"measurements":[{"id":"0A1B2C3D-4E5F-4A6B-8C7D-000000000001"}]}"#.utf8)
        // Level 0: stored blocks, so a cut at a compressed byte is a cut at a known content byte.
        let sink = MemorySink()
        let writer = try GzipWriter(output: sink, level: 0, keepsTo: nil)
        try text.withUnsafeBytes { try writer.write($0) }
        try writer.finish()
        var places: Set<String> = []
        for length in 0..<sink.bytes.count {
            var visitor = CollectingVisitor()
            do { _ = try ArchiveReader(bytes: Array(sink.bytes[..<length]), name: "cut.json.gz").read(into: &visitor) } catch {
                let message = "\(error)"
                guard message.contains("ends early"), let open = message.range(of: " (", options: .backwards) else { continue }
                let place = String(message[open.upperBound...].dropLast())
                #expect(!["in at ", "in after ", "in in "].contains { place.hasPrefix($0) }, "cut at \(length): \(message)")
                places.insert(place.components(separatedBy: " ").first!)
            }
        }
        #expect(places.isSuperset(of: ["at", "after", "in"]), "\(places)")
    }

    @Test("a flipped bit in the compressed data is named as damage to the gzip file, never only as what the damaged bytes read as (invalid JSON, a UUID that is none)")
    func damageIsNamedAsDamage() throws {
        let seed = ProcessInfo.processInfo.environment["PULSE_TEST_SEED"].flatMap { UInt64($0) } ?? 91_204
        print("ReadAheadTests.damageIsNamedAsDamage: PULSE_TEST_SEED=\(seed)")
        let text = Array(try Data(contentsOf: URL(fileURLWithPath: Repository.sampleFormat1)))
        let sink = MemorySink()
        let writer = try GzipWriter(output: sink, level: 6, keepsTo: nil)
        try text.withUnsafeBytes { try writer.write($0) }
        try writer.finish()
        let archive = Array(sink.bytes)
        var state = seed &* 0x9E37_79B9_7F4A_7C15 | 1
        func next() -> Int {
            state ^= state << 13; state ^= state >> 7; state ^= state << 17
            return Int(truncatingIfNeeded: state >> 11)
        }
        var readAsContent = 0
        for _ in 0..<40 {
            // Inside the deflate data: past the header (with its extra field), before the trailer.
            let offset = 64 + next() % (archive.count - 64 - 8)
            var damaged = archive
            damaged[offset] ^= UInt8(1 << (next() % 8))
            do {
                _ = try ArchiveReader(bytes: damaged, name: "damaged.json.gz").inspect()
                Issue.record("a flip at byte \(offset) went unnoticed")
            } catch let error as ArchiveError {
                #expect(error.kind == .damagedCompression, "flip at byte \(offset): \(error.kind) \(error.message)")
                if error.message.contains("before that, its damaged bytes read as: ") { readAsContent += 1 }
            }
        }
        // The case this is about happened: the content failed first, and the rest of the stream
        // was read to name the damage.
        #expect(readAsContent > 0, "no flip was read as content first")
    }
}
