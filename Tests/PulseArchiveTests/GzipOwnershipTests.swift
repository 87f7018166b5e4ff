import Foundation
import Testing
import PulseSystem
@testable import PulseArchive

/// A worker that runs a closure on its thread, handing nothing over.
private final class ClosureWorker: BackgroundWorker, @unchecked Sendable {
    private let body: () -> Void
    init(_ body: @escaping () -> Void) { self.body = body }
    override func drain() { body() }
}

/// The codec's C handles follow the rule of docs/architecture.md, "One owner per C handle"
/// (the SQLite side is in PulseSQLiteTests).
@Suite("One owner per zlib stream")
struct GzipOwnershipTests {
    @Test("a zlib stream used by a thread it was not handed to traps")
    func gzipStreamUsedByAnotherThread() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let reader = try! GzipReader(source: MemorySource([0x1f, 0x8b]), name: "test")
            let worker = ClosureWorker {
                var buffer = [UInt8](repeating: 0, count: 16)
                _ = try? buffer.withUnsafeMutableBytes { try reader.read(into: $0) }
            }
            try worker.start(named: "pulse-archive test", handingOver: [])
            worker.join()
        }
        let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(stderr.contains("a zlib inflate stream used by a thread that does not own it"), "\(stderr)")
    }

    @Test("a deflate worker's zlib stream used by a thread it was not handed to traps")
    func deflateStreamUsedByAnotherThread() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let deflater = try! BlockDeflater(level: 6)
            let job = DeflateJob(window: [1, 2, 3], dictionaryCount: 0, isLast: true, slot: DeflateResults.Slot())
            let worker = ClosureWorker { _ = try? deflater.deflate(job) }
            try worker.start(named: "pulse-archive test", handingOver: [])
            worker.join()
        }
        let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(stderr.contains("a zlib deflate stream used by a thread that does not own it"), "\(stderr)")
    }
}
