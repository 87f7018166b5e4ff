import Foundation
import PulseArchive
import PulseSystem

/// Document files held in one private file that has no name on disk
/// (`PrivateFiles.unnamedFile`), with their places in memory: the document tree of a scratch
/// copy of an archive (`verify`'s round trip, `inspect`'s staging). Such an archive may have
/// been encrypted, and its documents in clear must not outlive the command as files a kill
/// leaves behind. Writes and reads may come from different threads, one at a time.
public final class DocumentSpool: @unchecked Sendable {
    /// What messages call the spool ("verify's round trip").
    public let name: String
    private let lock = NSLock()
    /// The documents back to back; made with the first.
    private(set) var file: SystemFile?
    private var length: Int64 = 0
    private var places: [DocumentPath: (offset: Int64, count: Int)] = [:]

    public init(name: String) { self.name = name }

    /// Adds a document file, written in pieces; a path already there is refused, as a file
    /// that exists is.
    public func write(_ contents: some PieceReadable, at path: DocumentPath) throws {
        lock.lock()
        defer { lock.unlock() }
        guard places[path] == nil else { throw DocumentsError(.io, "cannot create \(name)/\(path.path): it is there already") }
        if file == nil { file = try PrivateFiles.unnamedFile(name) }
        var written: Int64 = 0
        try contents.forEachPiece { piece in
            try file!.write(piece, at: length + written)
            written += Int64(piece.count)
        }
        places[path] = (length, Int(written))
        length += written
    }

    /// The paths, in the order of a tree's scan (by their bytes).
    var paths: [DocumentPath] {
        lock.lock()
        defer { lock.unlock() }
        return places.keys.sorted { $0.path.utf8.lexicographicallyPrecedes($1.path.utf8) }
    }

    func size(_ path: DocumentPath) throws(DocumentsError) -> Int64 {
        Int64(try place(path).count)
    }

    func read(_ path: DocumentPath) throws -> [UInt8] {
        try pieces(path).collected()
    }

    /// A document file's bytes, read from the spool in pieces when asked.
    func pieces(_ path: DocumentPath) throws -> SpooledBytes {
        let (offset, count) = try place(path)
        return SpooledBytes(spool: self, path: path, offset: offset, count: count)
    }

    /// One document file of a spool, read in pieces of `ArchiveBytes.pieceSize`.
    public struct SpooledBytes: PieceReadable {
        let spool: DocumentSpool
        let path: DocumentPath
        let offset: Int64
        public let count: Int

        public func forEachPiece(_ body: (UnsafeRawBufferPointer) throws -> Void) throws {
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: ArchiveBytes.pieceSize, alignment: 16)
            defer { buffer.deallocate() }
            var done = 0
            while done < count {
                let wanted = min(buffer.count, count - done)
                let n = try spool.readPiece(into: UnsafeMutableRawBufferPointer(rebasing: buffer[0..<wanted]), at: offset + Int64(done), path: path)
                try body(UnsafeRawBufferPointer(rebasing: buffer[0..<n]))
                done += n
            }
        }
    }

    /// Reads up to `buffer.count` bytes at `offset`, at least one.
    private func readPiece(into buffer: UnsafeMutableRawBufferPointer, at offset: Int64, path: DocumentPath) throws -> Int {
        lock.lock()
        defer { lock.unlock() }
        let n = try file!.read(into: buffer, at: offset)
        guard n > 0 else { throw DocumentsError(.io, "cannot read \(name)/\(path.path): the spool file ends early") }
        return n
    }

    private func place(_ path: DocumentPath) throws(DocumentsError) -> (offset: Int64, count: Int) {
        lock.lock()
        defer { lock.unlock() }
        guard let place = places[path] else { throw DocumentsError(.io, "cannot read \(name)/\(path.path): no such document") }
        return place
    }
}
