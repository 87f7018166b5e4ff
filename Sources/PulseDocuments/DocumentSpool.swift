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

    /// Adds a document file; a path already there is refused, as a file that exists is.
    public func write(_ bytes: [UInt8], at path: DocumentPath) throws {
        lock.lock()
        defer { lock.unlock() }
        guard places[path] == nil else { throw DocumentsError(.io, "cannot create \(name)/\(path.path): it is there already") }
        if file == nil { file = try PrivateFiles.unnamedFile(name) }
        try file!.write(bytes, at: length)
        places[path] = (length, bytes.count)
        length += Int64(bytes.count)
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
        let (offset, count) = try place(path)
        lock.lock()
        defer { lock.unlock() }
        var bytes = [UInt8](repeating: 0, count: count)
        var filled = 0
        while filled < count {
            let n = try bytes.withUnsafeMutableBytes { try file!.read(into: UnsafeMutableRawBufferPointer(rebasing: $0[filled...]), at: offset + Int64(filled)) }
            guard n > 0 else { throw DocumentsError(.io, "cannot read \(name)/\(path.path): the spool file ends early") }
            filled += n
        }
        return bytes
    }

    private func place(_ path: DocumentPath) throws(DocumentsError) -> (offset: Int64, count: Int) {
        lock.lock()
        defer { lock.unlock() }
        guard let place = places[path] else { throw DocumentsError(.io, "cannot read \(name)/\(path.path): no such document") }
        return place
    }
}
