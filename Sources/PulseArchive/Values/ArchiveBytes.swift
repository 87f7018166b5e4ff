import PulseSystem

/// Bytes read in pieces: an attachment or a document file, which the app writes of any size,
/// so no step between the archive and the store may need them whole.
public protocol PieceReadable {
    /// The number of bytes.
    var count: Int { get }
    /// Hands the bytes to `body` in order, in pieces of at most `ArchiveBytes.pieceSize`.
    /// `body` must not keep the pointer.
    func forEachPiece(_ body: (UnsafeRawBufferPointer) throws -> Void) throws
}

extension PieceReadable {
    /// All the bytes at once: only for a value known to be small (tests, the inline case).
    public func collected() throws -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(count)
        try forEachPiece { out.append(contentsOf: $0) }
        return out
    }
}

extension Array: PieceReadable where Element == UInt8 {
    public func forEachPiece(_ body: (UnsafeRawBufferPointer) throws -> Void) throws {
        try withUnsafeBytes { all in
            var start = 0
            while start < all.count {
                let end = Swift.min(all.count, start + ArchiveBytes.pieceSize)
                try body(UnsafeRawBufferPointer(rebasing: all[start..<end]))
                start = end
            }
        }
    }
}

/// A value's bytes as the reader decoded them: in memory when small, else in an unnamed
/// scratch file (`ScratchFile`), so memory stays flat whatever an attachment weighs.
public struct ArchiveBytes: PieceReadable, Sendable {
    /// Values up to this size stay in memory: the worker's queue carries them like rows.
    public static let inlineLimit = 1 << 20
    /// The pieces a spilled value is read back in.
    public static let pieceSize = 256 << 10

    private enum Storage: Sendable {
        case inline([UInt8])
        case spilled(ScratchFile)
    }

    private let storage: Storage
    public let count: Int

    public init(_ bytes: [UInt8]) {
        storage = .inline(bytes)
        count = bytes.count
    }

    private init(spilled file: ScratchFile) {
        storage = .spilled(file)
        count = Int(file.count)
    }

    /// What the value holds in memory (0 when spilled): what a queue between threads weighs.
    public var bytesInMemory: Int {
        if case .inline(let bytes) = storage { return bytes.count }
        return 0
    }

    public func forEachPiece(_ body: (UnsafeRawBufferPointer) throws -> Void) throws {
        switch storage {
        case .inline(let bytes):
            try bytes.forEachPiece(body)
        case .spilled(let file):
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: Self.pieceSize, alignment: 16)
            defer { buffer.deallocate() }
            var offset: Int64 = 0
            while offset < file.count {
                let n = try file.read(into: buffer, at: offset)
                guard n > 0 else { throw ArchiveError(.io, "a scratch file ended after \(offset) of its \(file.count) bytes") }
                try body(UnsafeRawBufferPointer(rebasing: buffer[0..<n]))
                offset += Int64(n)
            }
        }
    }

    /// Collects a value's bytes as they are decoded: in memory up to `inlineLimit`, then in a
    /// scratch file.
    public struct Builder {
        private var inline: [UInt8] = []
        private var file: ScratchFile?
        private let directory: String?

        /// - Parameter directory: where a large value is spilled (the system's temporary
        ///   directory when nil).
        public init(spillingIn directory: String? = nil) {
            self.directory = directory
        }

        public mutating func append(_ bytes: UnsafeRawBufferPointer) throws {
            guard !bytes.isEmpty else { return }
            if file == nil && inline.count + bytes.count <= ArchiveBytes.inlineLimit {
                inline.append(contentsOf: bytes)
                return
            }
            if file == nil {
                let spill = try ScratchFile(in: directory)
                try inline.withUnsafeBytes { try spill.append($0) }
                inline = []
                file = spill
            }
            try file!.append(bytes)
        }

        public func finish() -> ArchiveBytes {
            file.map { ArchiveBytes(spilled: $0) } ?? ArchiveBytes(inline)
        }
    }
}
