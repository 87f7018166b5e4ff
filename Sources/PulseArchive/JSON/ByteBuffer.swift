/// The bytes a writer appends to, in one growing allocation. The export appends millions of
/// short pieces (a member's name, a date, a number, a UUID): through `Array.append`, each one
/// asked whether the array was uniquely referenced and copied through the generic sequence
/// path, about a sixth of the JSON encoding's instructions (docs/performance.md). Here an
/// append is a capacity check and a copy.
///
/// The allocation is this value's alone: it cannot be copied (`~Copyable`), never hands out
/// its memory beyond a closure, and every write goes through a method that grows it first, so
/// no write lands outside it.
public struct ByteBuffer: ~Copyable {
    private var storage: UnsafeMutablePointer<UInt8>
    private var capacity: Int
    /// Bytes appended so far.
    public private(set) var count = 0

    public init(capacity: Int = 256) {
        self.capacity = max(capacity, 16)
        storage = .allocate(capacity: self.capacity)
    }

    deinit { storage.deallocate() }

    public var isEmpty: Bool { count == 0 }

    @inline(__always)
    public mutating func append(_ byte: UInt8) {
        if count == capacity { grow(toHold: 1) }
        storage[count] = byte
        count += 1
    }

    @inline(__always)
    public mutating func append(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let base = bytes.baseAddress else { return }
        if capacity - count < bytes.count { grow(toHold: bytes.count) }
        (storage + count).update(from: base, count: bytes.count)
        count += bytes.count
    }

    public mutating func append(_ bytes: [UInt8]) {
        bytes.withUnsafeBufferPointer { append($0) }
    }

    public mutating func append(_ text: some StringProtocol) {
        var text = String(text)
        text.withUTF8 { append($0) }
    }

    /// Drops what was appended from `start` on (a value refused after it was written).
    public mutating func removeAll(from start: Int) {
        precondition(start >= 0 && start <= count, "removeAll(from:) past the end")
        count = start
    }

    /// Drops everything. An allocation past `limit` bytes (grown for one large value) is given
    /// back for one of `newCapacity`; a smaller one is kept for the next bytes.
    public mutating func removeAll(shrinkingAbove limit: Int, to newCapacity: Int) {
        count = 0
        if capacity > limit {
            storage.deallocate()
            capacity = max(newCapacity, 16)
            storage = .allocate(capacity: capacity)
        }
    }

    /// The bytes appended so far, for the length of `body`.
    public func withBytes<R, E: Error>(_ body: (UnsafeBufferPointer<UInt8>) throws(E) -> R) throws(E) -> R {
        try body(UnsafeBufferPointer(start: storage, count: count))
    }

    /// The bytes from `start` on, to change in place (a UUID upper-cased after it was copied).
    mutating func withMutableBytes(from start: Int, _ body: (UnsafeMutableBufferPointer<UInt8>) -> Void) {
        precondition(start >= 0 && start <= count, "withMutableBytes(from:) past the end")
        body(UnsafeMutableBufferPointer(start: storage + start, count: count - start))
    }

    /// The bytes as an array.
    public var bytes: [UInt8] { withBytes { Array($0) } }

    /// What `body` appends to a new buffer, as an array: for a caller that wants an array.
    public static func collecting<E: Error>(_ body: (inout ByteBuffer) throws(E) -> Void) throws(E) -> [UInt8] {
        var buffer = ByteBuffer()
        try body(&buffer)
        return buffer.bytes
    }

    @inline(never)
    private mutating func grow(toHold extra: Int) {
        let (needed, overflow) = count.addingReportingOverflow(extra)
        precondition(!overflow, "a byte buffer past Int.max")
        let newCapacity = max(needed, capacity <= Int.max / 2 ? capacity * 2 : Int.max)
        let grown = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity)
        grown.initialize(from: storage, count: count)
        storage.deallocate()
        storage = grown
        capacity = newCapacity
    }
}
