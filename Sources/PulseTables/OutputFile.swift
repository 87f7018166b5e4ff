import PulseArchive
import PulseSystem

/// A new private file (0600) of the folder being built, written through a buffer: rows are
/// small, and a system call per row would cost more than the row.
final class OutputFile {
    private let file: SystemFile
    /// What the file is called in the finished folder, for messages and the manifest.
    let name: String
    private var buffer = ByteBuffer(capacity: flushSize + (64 << 10))
    private(set) var bytesWritten: Int64 = 0
    private static let flushSize = 1 << 20

    /// - Throws: `SystemError` when the file exists or cannot be created (never over a file,
    ///   never through a link: `O_CREAT|O_EXCL`).
    init(directory: String, name: String) throws {
        self.name = name
        file = try SystemFile.createExclusive("\(directory)/\(name)", reportedAs: "\(name) in \(directory)")
    }

    /// Appends to the buffer with `body`, writing it out once it is full.
    func write(_ body: (inout ByteBuffer) throws -> Void) throws {
        try body(&buffer)
        if buffer.count >= Self.flushSize { try flush() }
    }

    /// Writes `bytes` straight through (an attachment's pieces: no copy into the buffer).
    func writeThrough(_ bytes: UnsafeRawBufferPointer) throws {
        try flush()
        try file.write(bytes)
        bytesWritten += Int64(bytes.count)
    }

    private func flush() throws {
        guard !buffer.isEmpty else { return }
        try buffer.withBytes { try file.write(UnsafeRawBufferPointer($0)) }
        bytesWritten += Int64(buffer.count)
        // A buffer that grew for one large value gives its memory back.
        buffer.removeAll(shrinkingAbove: 4 * Self.flushSize, to: Self.flushSize + (64 << 10))
    }

    /// Writes what is buffered, flushes the file to disk and closes it: the folder is renamed
    /// into place only once every file in it is complete on disk.
    func close() throws {
        try flush()
        buffer.removeAll(shrinkingAbove: 0, to: 0)
        try file.sync()
        try file.close()
    }
}
