import PulseArchive

/// A key as it sorts: a canonical UUID (nearly every key) as its 128 bits, anything else as
/// its `KeyEncoding` bytes, the first 16 in two words and the rest beside. Two keys are equal
/// exactly when their values are, as the store's unique index sees them.
struct SortKey: Equatable, Comparable {
    /// 0 for a UUID, 1 for other bytes.
    let kind: UInt8
    let head: UInt64
    let tail: UInt64
    /// The whole key's length in bytes (16 for a UUID).
    let length: Int

    static let none = SortKey(kind: 0, head: 0, tail: 0, length: 0)
    static let encodedSize = 1 + 8 + 8 + 4

    var restCount: Int { max(0, length - 16) }

    private init(kind: UInt8, head: UInt64, tail: UInt64, length: Int) {
        self.kind = kind
        self.head = head
        self.tail = tail
        self.length = length
    }

    /// The key of `value`; bytes beyond the first 16 are appended to `rest`.
    init(_ value: FieldValue, rest: inout [UInt8], scratch: inout [UInt8]) {
        if case .string(let text) = value, let (head, tail) = UUIDBits.parse(text) {
            self.init(kind: 0, head: head, tail: tail, length: 16)
            return
        }
        scratch.removeAll(keepingCapacity: true)
        KeyEncoding.append(value, to: &scratch)
        var words: (UInt64, UInt64) = (0, 0)
        scratch.withUnsafeBytes { bytes in
            withUnsafeMutableBytes(of: &words) { $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes.prefix(16))) }
        }
        self.init(kind: 1, head: UInt64(bigEndian: words.0), tail: UInt64(bigEndian: words.1), length: scratch.count)
        if scratch.count > 16 { rest.append(contentsOf: scratch[16...]) }
    }

    init(reading bytes: UnsafeRawBufferPointer, at offset: Int) {
        func word(_ at: Int) -> UInt64 { UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: offset + at, as: UInt64.self)) }
        kind = bytes[offset]
        head = word(1)
        tail = word(9)
        length = Int(UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: offset + 17, as: UInt32.self)))
    }

    func append(to out: inout [UInt8]) {
        out.append(kind)
        appendLittleEndian(head, to: &out)
        appendLittleEndian(tail, to: &out)
        appendLittleEndian(UInt32(length), to: &out)
    }

    /// The value back, for messages.
    func value(rest: [UInt8]) -> FieldValue {
        if kind == 0 { return .string(UUIDBits.format(head, tail)) }
        var bytes: [UInt8] = []
        appendBigEndian(head, to: &bytes)
        appendBigEndian(tail, to: &bytes)
        bytes = Array((bytes + rest).prefix(length))
        return KeyEncoding.decode(bytes)
    }

    private func appendBigEndian(_ value: UInt64, to out: inout [UInt8]) {
        var v = value.bigEndian
        withUnsafeBytes(of: &v) { out.append(contentsOf: $0) }
    }

    /// By kind, then the first 16 bytes, then the length; the bytes beyond 16 decide the rest.
    static func < (a: SortKey, b: SortKey) -> Bool {
        if a.kind != b.kind { return a.kind < b.kind }
        if a.head != b.head { return a.head < b.head }
        if a.tail != b.tail { return a.tail < b.tail }
        return a.length < b.length
    }
}
