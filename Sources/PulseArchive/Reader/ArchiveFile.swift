import PulseSystem

/// The archive file as the reader reads it: the system layer's file, whose failures become the
/// codec's `ArchiveError(.io)`, naming the file, so that every refusal of a read is an
/// `ArchiveError` (`verify` puts a file it cannot open or read in its report).
final class ArchiveFile: ByteSource {
    private let file: SystemFile
    /// Where the next positioned read starts, for a file read from its start; nil for one read
    /// where its descriptor stands.
    private var position: Int64?

    /// Opens an existing archive for reading.
    var handleOwners: [HandleOwner] { file.handleOwners }

    init(_ path: String) throws(ArchiveError) {
        file = try Self.converting { try SystemFile.openForReading(path) }
    }

    /// A file the caller has open, read from its first byte without moving its descriptor.
    init(readingFromStart file: SystemFile) {
        self.file = file
        position = 0
    }

    func read(into buffer: UnsafeMutableRawBufferPointer) throws(ArchiveError) -> Int {
        guard let start = position else { return try Self.converting { try file.read(into: buffer) } }
        let n = try Self.converting { try file.read(into: buffer, at: start) }
        position = start + Int64(n)
        return n
    }

    /// A pipe or device the caller has open, read once where its descriptor stands.
    init(streaming file: SystemFile) {
        self.file = file
    }

    /// Standard input, read once.
    init(standardInput: Void) throws(ArchiveError) {
        file = try Self.converting { try SystemFile.standardInput() }
    }

    func size() -> Int64 { file.size() }

    private static func converting<T>(_ body: () throws -> T) throws(ArchiveError) -> T {
        do {
            return try body()
        } catch let error as SystemError {
            throw ArchiveError(.io, error.message)
        } catch let error as ArchiveError {
            throw error
        } catch {
            throw ArchiveError(.io, "\(error)")
        }
    }
}
