/// Hands what it is given to another sink on a thread of its own, so that compressing (the
/// sink behind) and producing JSON (the caller) use both cores. At most `capacity` chunks wait
/// in between, so memory stays bounded; the first error the worker meets is thrown by the next
/// `write` or by `finish`.
public final class BackgroundSink: BackgroundWorker, ByteSink, @unchecked Sendable {
    private let next: ByteSink
    private let queue: BoundedQueue<[UInt8]>

    public init(next: ByteSink, capacity: Int = 4) {
        self.next = next
        queue = BoundedQueue(capacity: capacity)
        super.init()
        start(named: "pulse-archive compression")
    }

    public func write(_ bytes: UnsafeRawBufferPointer) throws { try queue.push(Array(bytes)) }

    /// Waits until the worker has written everything, then finishes the sink behind.
    public func finish() throws {
        queue.close()
        join()
        if let error = queue.error { throw error }
        try next.finish()
    }

    override func drain() {
        do {
            while let chunk = try queue.pop() {
                try chunk.withUnsafeBytes { try next.write($0) }
            }
        } catch {
            queue.fail(error)
        }
    }
}
