import Foundation

/// An in-memory pipe: a sink on one thread feeds a source on another, a few chunks at a time,
/// so a writer's output can be read back without touching the disk. Closing either end with an
/// error unblocks the other, which then throws it.
public final class BytePipe: ByteSink, ByteSource, @unchecked Sendable {
    private let capacity: Int
    // Guarded by `condition`.
    private let condition = NSCondition()
    private var chunks: [[UInt8]] = []
    private var current: [UInt8] = []
    private var offset = 0
    private var finished = false
    private var failure: Error?

    public init(capacity: Int = 8) {
        self.capacity = capacity
    }

    // MARK: The writing end

    public func write(_ bytes: UnsafeRawBufferPointer) throws {
        condition.lock()
        defer { condition.unlock() }
        while chunks.count >= capacity && failure == nil { condition.wait() }
        if let failure { throw failure }
        chunks.append(Array(bytes))
        condition.broadcast()
    }

    public func finish() throws {
        condition.lock()
        finished = true
        condition.broadcast()
        condition.unlock()
    }

    /// Ends the pipe with `error`: the other end throws it.
    public func fail(_ error: Error) {
        condition.lock()
        if failure == nil { failure = error }
        condition.broadcast()
        condition.unlock()
    }

    // MARK: The reading end

    public func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        if offset >= current.count {
            condition.lock()
            while chunks.isEmpty && !finished && failure == nil { condition.wait() }
            if let failure {
                condition.unlock()
                throw failure
            }
            if chunks.isEmpty {
                condition.unlock()
                return 0
            }
            current = chunks.removeFirst()
            offset = 0
            condition.broadcast()
            condition.unlock()
        }
        let n = min(buffer.count, current.count - offset)
        current.withUnsafeBytes { source in
            buffer.baseAddress!.copyMemory(from: source.baseAddress! + offset, byteCount: n)
        }
        offset += n
        return n
    }
}
