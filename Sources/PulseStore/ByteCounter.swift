import PulseSystem

/// Counts the uncompressed bytes on their way to the next sink.
final class ByteCounter: ByteSink {
    var handleOwners: [HandleOwner] { next.handleOwners }

    private let next: ByteSink
    private(set) var count: Int64 = 0

    init(next: ByteSink) { self.next = next }

    func write(_ bytes: UnsafeRawBufferPointer) throws {
        count += Int64(bytes.count)
        try next.write(bytes)
    }

    func finish() throws { try next.finish() }
}
