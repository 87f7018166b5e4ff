/// An in-memory pipe: a sink on one thread feeds a source on another, a few chunks at a time,
/// so a writer's output can be read back without touching the disk. Failing either end with an
/// error makes the other throw it.
public final class BytePipe: ByteSink, ByteSource, @unchecked Sendable {
    private let queue: BoundedQueue<[UInt8]>
    /// The chunk being read, on the reading thread only.
    private var current: [UInt8] = []
    private var offset = 0

    public init(capacity: Int = 8) {
        queue = BoundedQueue(capacity: capacity)
    }

    public func write(_ bytes: UnsafeRawBufferPointer) throws { try queue.push(Array(bytes)) }
    public func finish() throws { queue.close() }

    /// Ends the pipe with `error`: the other end throws it.
    public func fail(_ error: Error) { queue.fail(error) }

    public func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        if offset >= current.count {
            guard let next = try queue.pop() else { return 0 }
            current = next
            offset = 0
        }
        let n = min(buffer.count, current.count - offset)
        current.withUnsafeBytes { source in
            buffer.baseAddress!.copyMemory(from: source.baseAddress! + offset, byteCount: n)
        }
        offset += n
        return n
    }
}
