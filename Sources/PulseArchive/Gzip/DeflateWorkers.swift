import Foundation
import PulseSystem

/// Where deflate workers leave finished blocks for the writer, which takes them in order.
/// One lock for every slot and the failure, so the writer waiting for a block also wakes when
/// a worker failed: the blocks still queued behind that failure are never deflated, and a wait
/// for one of them must not wait forever.
final class DeflateResults: @unchecked Sendable {
    /// One block's place: filled once by a worker, read once by the writer.
    final class Slot: @unchecked Sendable {
        // Guarded by the results' condition.
        fileprivate var block: DeflatedBlock?
    }

    private let condition = NSCondition()
    // Guarded by `condition`.
    private var firstFailure: Error?
    /// Output arrays the writer is done with, for the workers to fill again (at most
    /// `spareLimit`), so memory is allocated once, not once per block.
    private var spareOutputs: [[UInt8]] = []
    private let spareLimit: Int

    init(spareLimit: Int) {
        self.spareLimit = spareLimit
    }

    /// Hands back a block's bytes once written.
    func recycle(_ bytes: [UInt8]) {
        condition.lock()
        if spareOutputs.count < spareLimit { spareOutputs.append(bytes) }
        condition.unlock()
    }

    /// An array to deflate into: one handed back, or an empty one.
    func spareOutput() -> [UInt8] {
        condition.lock()
        defer { condition.unlock() }
        return spareOutputs.popLast() ?? []
    }

    func deliver(_ block: DeflatedBlock, to slot: Slot) {
        condition.lock()
        slot.block = block
        condition.broadcast()
        condition.unlock()
    }

    /// Ends the work with `error` (the first one wins).
    func fail(_ error: Error) {
        condition.lock()
        if firstFailure == nil { firstFailure = error }
        condition.broadcast()
        condition.unlock()
    }

    var failure: Error? {
        condition.lock()
        defer { condition.unlock() }
        return firstFailure
    }

    func isReady(_ slot: Slot) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        return slot.block != nil || firstFailure != nil
    }

    /// The slot's block, once a worker delivered it, taken out of the slot (so the writer holds
    /// the only reference and can hand its bytes back); throws the first failure instead.
    func wait(for slot: Slot) throws -> DeflatedBlock {
        condition.lock()
        defer { condition.unlock() }
        while slot.block == nil && firstFailure == nil { condition.wait() }
        if let firstFailure { throw firstFailure }
        defer { slot.block = nil }
        return slot.block!
    }
}

/// The deflate threads of one gzip member: each owns one `BlockDeflater` (its zlib stream,
/// handed over at start and back at `stop`), takes the next job from a shared queue and
/// leaves the result in the job's slot. Jobs are taken in order but finish in any order; the
/// writer puts them back in order.
final class DeflateWorkers {
    let jobs: BoundedQueue<DeflateJob>
    let results: DeflateResults
    private let workers: [Worker]

    /// - Parameter capacity: the most jobs ever queued; the writer waits for results before it
    ///   queues more, so this only has to hold what it allows in flight.
    init(threads: Int, level: Int32, tuning: DeflateTuning?, capacity: Int) throws {
        let jobs = BoundedQueue<DeflateJob>(capacity: capacity), results = DeflateResults(spareLimit: capacity + threads)
        self.jobs = jobs
        self.results = results
        // All streams are started before any thread, so a failure to start throws here.
        let deflaters = try (0..<threads).map { _ in try BlockDeflater(level: level, tuning: tuning) }
        var started: [Worker] = []
        for (i, deflater) in deflaters.enumerated() {
            let worker = Worker(deflater: deflater, jobs: jobs, results: results)
            do {
                try worker.start(named: "pulse-archive deflate \(i + 1)", handingOver: [deflater.owner])
                started.append(worker)
            } catch where !started.isEmpty {
                // The system gives no more threads (an address-space or process limit): the
                // ones running deflate every block, and the bytes do not depend on how many.
                break
            }
        }
        workers = started
    }

    /// Stops the threads and takes their streams back (so they are freed on the calling
    /// thread); what was still queued is dropped. Any number of times.
    func stop() {
        jobs.fail(CancellationError())
        for worker in workers { worker.join() }
    }

    deinit { stop() }

    private final class Worker: BackgroundWorker, @unchecked Sendable {
        let deflater: BlockDeflater
        let jobs: BoundedQueue<DeflateJob>
        let results: DeflateResults

        init(deflater: BlockDeflater, jobs: BoundedQueue<DeflateJob>, results: DeflateResults) {
            self.deflater = deflater
            self.jobs = jobs
            self.results = results
        }

        override func drain() {
            // The JSON thread paces every block: on a machine with as many deflate threads as
            // cores, an even share leaves it two thirds of a core (docs/performance.md).
            SystemCalls.lowerCurrentThreadPriority()
            do {
                while let job = try jobs.pop() {
                    let slot = job.slot
                    let block = try deflater.deflate(consume job, reusing: results.spareOutput())
                    results.deliver(block, to: slot)
                }
            } catch is CancellationError {
                // Stopped by the writer: nobody waits for the rest.
            } catch {
                results.fail(error)
                jobs.fail(error)
            }
        }
    }
}
