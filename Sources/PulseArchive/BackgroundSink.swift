import Foundation

/// Hands what it is given to another sink on a thread of its own, so that compressing (the
/// sink behind) and producing JSON (the caller) use both cores. At most `capacity` chunks wait
/// in between, so memory stays bounded; the first error the worker meets is thrown by the next
/// `write` or by `finish`.
public final class BackgroundSink: ByteSink, @unchecked Sendable {
    private let next: ByteSink
    private let capacity: Int
    // Everything below is guarded by `condition`.
    private let condition = NSCondition()
    private var queue: [[UInt8]] = []
    private var closed = false
    private var idle = false
    private var failure: Error?

    public init(next: ByteSink, capacity: Int = 4) {
        self.next = next
        self.capacity = capacity
        let thread = Thread { [self] in self.drain() }
        thread.name = "pulse-archive compression"
        thread.start()
    }

    public func write(_ bytes: UnsafeRawBufferPointer) throws {
        condition.lock()
        defer { condition.unlock() }
        while queue.count >= capacity && failure == nil { condition.wait() }
        if let failure { throw failure }
        queue.append(Array(bytes))
        condition.broadcast()
    }

    /// Waits until the worker has written everything, then finishes the sink behind.
    public func finish() throws {
        condition.lock()
        closed = true
        condition.broadcast()
        while !idle { condition.wait() }
        let failure = self.failure
        condition.unlock()
        if let failure { throw failure }
        try next.finish()
    }

    private func drain() {
        while true {
            condition.lock()
            while queue.isEmpty && !closed { condition.wait() }
            if queue.isEmpty {
                idle = true
                condition.broadcast()
                condition.unlock()
                return
            }
            let chunk = queue.removeFirst()
            let failed = failure != nil
            condition.broadcast()
            condition.unlock()
            if failed { continue }
            do {
                try chunk.withUnsafeBytes { try next.write($0) }
            } catch {
                condition.lock()
                failure = error
                condition.broadcast()
                condition.unlock()
            }
        }
    }
}
