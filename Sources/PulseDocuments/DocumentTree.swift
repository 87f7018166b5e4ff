import Foundation
import PulseArchive
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import PulseSystem

/// A document tree on disk (`Splits/`, `Workouts/YYYY/MM/`, `Stubs/` under a root), walked
/// without following links. Files that are not `<ULID>.json` in their place (iCloud conflict
/// twins, `.icloud` placeholders, `.DS_Store`) are reported and left alone, never deleted.
/// Or the documents of a spool (`DocumentSpool`), which has no name on disk.
public struct DocumentTree: Sendable {
    public static let folders = ["Splits", "Workouts", "Stubs"]

    /// The directory, or the spool's name.
    public let root: String
    private let spool: DocumentSpool?
    /// Document files, by path.
    public private(set) var documents: [DocumentPath] = []
    /// Regular files that are not documents, relative to the root.
    public private(set) var skipped: [String] = []
    /// Symbolic links and special files, relative to the root: never followed or read.
    public private(set) var unsafe: [String] = []
    /// Entries whose names are not UTF-8, relative to the root, their bytes shown as `\xFF`:
    /// no path of this tool can name them, so they can be neither archived nor carried into a
    /// new tree (an import that replaced the tree would lose them).
    public private(set) var unnamed: [String] = []

    /// Walks the tree under `root` (a missing folder is an empty one).
    public init(scanning root: String) throws(DocumentsError) {
        self.root = root
        spool = nil
        for folder in Self.folders {
            try walk(folder)
        }
        documents.sort { $0.path.utf8.lexicographicallyPrecedes($1.path.utf8) }
        skipped.sort()
        unsafe.sort()
        unnamed.sort()
    }

    /// The documents of `spool`, as they are now.
    public init(spool: DocumentSpool) {
        root = spool.name
        self.spool = spool
        documents = spool.paths
    }

    public func absolutePath(_ relative: String) -> String {
        precondition(spool == nil, "a spool's documents have no path")
        return root + "/" + relative
    }

    /// The file's bytes, read without following a link.
    /// - Throws: the system layer's `SystemError(.io)`, naming the file.
    public func read(_ path: DocumentPath) throws -> [UInt8] {
        if let spool { return try spool.read(path) }
        return try Self.readFile(absolutePath(path.path))
    }

    /// The file's size in bytes, without following a link.
    public func size(_ path: DocumentPath) throws(DocumentsError) -> Int64 {
        if let spool { return try spool.size(path) }
        var info = stat()
        guard lstat(absolutePath(path.path), &info) == 0 else {
            throw DocumentsError(.io, "cannot read \(absolutePath(path.path)): \(errnoText())")
        }
        return Int64(info.st_size)
    }

    /// Two document paths that differ only in letter case, if the tree holds such a pair: one
    /// file on the app's case-insensitive file system, and an archive the reader refuses.
    public func caseCollision() -> (String, DocumentPath)? {
        var seen: [String: String] = [:]
        for path in documents {
            if let earlier = seen.updateValue(path.path, forKey: path.caseFolded) { return (earlier, path) }
        }
        return nil
    }

    /// A file too large to be read as a document is classified by its size alone, unread
    /// (its `bytes` empty): it travels as a file, in pieces (`FileBytes`), however large.
    public func classify(_ path: DocumentPath) throws -> ClassifiedDocument {
        if try size(path) > Int64(ArchiveLimits.standard.maxWholeValueBytes) {
            return DocumentClassifier.classifyUnread(path)
        }
        return DocumentClassifier.classify(path, bytes: try read(path))
    }

    /// The file's bytes, read in pieces when asked.
    public func pieces(_ path: DocumentPath) throws -> any PieceReadable {
        if let spool { return try spool.pieces(path) }
        return FileBytes(path: absolutePath(path.path), count: Int(try size(path)))
    }

    /// A regular file read in pieces, without following a link.
    public struct FileBytes: PieceReadable {
        public let path: String
        public let count: Int

        public func forEachPiece(_ body: (UnsafeRawBufferPointer) throws -> Void) throws {
            let file = try SystemFile.openForReading(path, followingLinks: false)
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: ArchiveBytes.pieceSize, alignment: 16)
            defer { buffer.deallocate() }
            var total = 0
            while true {
                let n = try file.read(into: buffer)
                if n == 0 { break }
                total += n
                guard total <= count else { break }
                try body(UnsafeRawBufferPointer(rebasing: buffer[0..<n]))
            }
            guard total == count else {
                throw DocumentsError(.io, "\(path) changed while it was read (\(count) bytes expected, \(total) found)")
            }
        }
    }

    private mutating func walk(_ relative: String) throws(DocumentsError) {
        let absolute = absolutePath(relative)
        var info = stat()
        guard lstat(absolute, &info) == 0 else {
            if errno == ENOENT { return }
            throw DocumentsError(.io, "cannot read \(absolute): \(errnoText())")
        }
        switch info.st_mode & S_IFMT {
        case S_IFDIR:
            let (names, others) = try Self.entries(absolute)
            unnamed += others.map { relative + "/" + $0 }
            for name in names { try walk(relative + "/" + name) }
        case S_IFREG:
            if let path = try? DocumentPath(relative) { documents.append(path) } else { skipped.append(relative) }
        default:
            unsafe.append(relative)
        }
    }

    /// The names in `directory`, sorted, and apart from them the names that are not UTF-8,
    /// shown with their other bytes as `\xFF` (a name repaired to U+FFFD would be another
    /// file's, or none).
    static func entries(_ directory: String) throws(DocumentsError) -> (names: [String], notUTF8: [String]) {
        guard let handle = opendir(directory) else { throw DocumentsError(.io, "cannot list \(directory): \(errnoText())") }
        defer { closedir(handle) }
        var names: [String] = [], notUTF8: [String] = []
        while let entry = readdir(handle) {
            withUnsafePointer(to: entry.pointee.d_name) {
                $0.withMemoryRebound(to: CChar.self, capacity: 256) { cName in
                    if let name = String(validatingCString: cName) {
                        if name != "." && name != ".." { names.append(name) }
                    } else {
                        var shown: [UInt8] = []
                        for byte in UnsafeRawBufferPointer(start: cName, count: strlen(cName)) {
                            if (0x20..<0x7F).contains(byte) { shown.append(byte) } else { shown += Array("\\x".utf8); HexText.append(byte, to: &shown) }
                        }
                        notUTF8.append(String(decoding: shown, as: UTF8.self))
                    }
                }
            }
        }
        return (names.sorted(), notUTF8.sorted())
    }

    /// Reads a regular file, refusing to follow a link at the last component.
    static func readFile(_ path: String) throws -> [UInt8] {
        try SystemFile.openForReading(path, followingLinks: false).readToEnd()
    }
}
