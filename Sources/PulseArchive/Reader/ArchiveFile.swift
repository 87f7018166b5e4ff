import PulseSystem

/// The archive file as the reader reads it: the system layer's file, whose failures become the
/// codec's `ArchiveError(.io)`, naming the file, so that every refusal of a read is an
/// `ArchiveError` (`verify` puts a file it cannot open or read in its report).
final class ArchiveFile: ByteSource {
    private let file: SystemFile

    /// Opens an existing archive for reading.
    var handleOwners: [HandleOwner] { file.handleOwners }

    init(_ path: String) throws(ArchiveError) {
        file = try Self.converting { try SystemFile.openForReading(path) }
    }

    func read(into buffer: UnsafeMutableRawBufferPointer) throws(ArchiveError) -> Int {
        try Self.converting { try file.read(into: buffer) }
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
