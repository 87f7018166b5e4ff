/// Hands what it is given to another sink on a thread of its own, so that compressing (the
/// sink behind) and producing JSON (the caller) use both cores. At most `capacity` chunks wait
/// in between, so memory stays bounded; the first error the worker meets is thrown by the next
/// `write` or by `finish`.
///
/// Released without `finish` (an export that failed), it stops its thread and waits for it, so
/// the thread, the sink behind and its file descriptor go with it: the thread holds only the
/// worker, never this object, so an owner that drops it is always heard.
public final class BackgroundSink: ByteSink {
    private let next: ByteSink
    private let queue: BoundedQueue<[UInt8]>
    private let worker: Worker

    public init(next: ByteSink, capacity: Int = 4) {
        self.next = next
        queue = BoundedQueue(capacity: capacity)
        worker = Worker(next: next, queue: queue)
        worker.start(named: "pulse-archive compression", handingOver: next.handleOwners)
    }

    deinit {
        queue.fail(CancellationError())
        worker.join()
    }

    /// None of the caller's: the sink behind belongs to the worker until `finish`.
    public var handleOwners: [HandleOwner] { [] }

    public func write(_ bytes: UnsafeRawBufferPointer) throws { try queue.push(Array(bytes)) }

    /// Waits until the worker has written everything, then finishes the sink behind.
    public func finish() throws {
        queue.close()
        worker.join()
        if let error = queue.error { throw error }
        try next.finish()
    }

    /// The thread's side: writes each chunk to the sink behind until the queue ends.
    private final class Worker: BackgroundWorker, @unchecked Sendable {
        let next: ByteSink
        let queue: BoundedQueue<[UInt8]>

        init(next: ByteSink, queue: BoundedQueue<[UInt8]>) {
            self.next = next
            self.queue = queue
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
}
