/// Reads a source ahead on a thread of its own, a few chunks at a time, so that inflating a
/// gzip archive and parsing its JSON use two cores. Errors reach the reader in their place in
/// the stream; when the reader stops early (it is released), the thread stops too.
package final class ReadAheadSource: ByteSource {
    /// A chunk of the stream, with how much of the compressed file was read to produce it.
    struct Chunk {
        let bytes: [UInt8]
        let compressedBytes: Int64
    }

    /// Chunks, then the end (closed) or the error the source threw, in its place.
    private let queue: BoundedQueue<Result<Chunk, Error>>
    private let producer: Producer
    /// What `read` has not yet returned of the chunk being read.
    private var current: ArraySlice<UInt8> = []
    /// The compressed bytes behind what `read` has returned so far (for progress).
    package private(set) var compressedBytes: Int64 = 0

    /// - Parameter compressedBytes: read on the reading-ahead thread after each chunk.
    package init(_ base: ByteSource, compressedBytes: @escaping () -> Int64, chunkSize: Int = 256 * 1024, capacity: Int = 8) throws {
        queue = BoundedQueue(capacity: capacity)
        producer = Producer(base: base, queue: queue, compressedBytes: compressedBytes, chunkSize: chunkSize)
        try producer.start(named: "pulse-archive read-ahead", handingOver: base.handleOwners)
    }

    deinit {
        queue.fail(CancellationError())
        producer.join()
    }

    /// None of the caller's: the source behind is the thread's.
    package var handleOwners: [HandleOwner] { [] }

    package func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        while current.isEmpty && !buffer.isEmpty {
            guard let next = try queue.pop()?.get() else { return 0 }
            current = next.bytes[...]
            compressedBytes = next.compressedBytes
        }
        let n = min(buffer.count, current.count)
        UnsafeMutableRawBufferPointer(rebasing: buffer[..<n]).copyBytes(from: current.prefix(n))
        current = current.dropFirst(n)
        return n
    }

    /// The thread's side: reads the base source into chunks until its end or an error.
    private final class Producer: BackgroundWorker, @unchecked Sendable {
        let base: ByteSource
        let queue: BoundedQueue<Result<Chunk, Error>>
        let compressedBytes: () -> Int64
        let chunkSize: Int

        init(base: ByteSource, queue: BoundedQueue<Result<Chunk, Error>>, compressedBytes: @escaping () -> Int64, chunkSize: Int) {
            self.base = base
            self.queue = queue
            self.compressedBytes = compressedBytes
            self.chunkSize = chunkSize
        }

        override func drain() {
            do {
                while true {
                    var chunk = [UInt8](repeating: 0, count: chunkSize)
                    let n: Int
                    do {
                        n = try chunk.withUnsafeMutableBytes { try base.read(into: $0) }
                    } catch {
                        // Behind the chunks before it: the reader sees them first.
                        try queue.push(.failure(error))
                        break
                    }
                    if n == 0 { break }
                    chunk.removeSubrange(n...)
                    try queue.push(.success(Chunk(bytes: chunk, compressedBytes: compressedBytes())))
                }
                queue.close()
            } catch {
                // The reader stopped reading (it failed the queue): nothing more to do.
            }
        }
    }
}
