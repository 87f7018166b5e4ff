#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import PulseArchive
import PulseSystem

/// A Gadgetbridge file, recognised by its content (the export has no extension): the SQLite
/// database itself, or the backup ZIP holding it as `database/Gadgetbridge`.
public enum GadgetbridgeFile {
    public enum Form: String, Sendable {
        /// "Export DB": the database file itself.
        case database
        /// "Full backup": a ZIP whose `database/Gadgetbridge` is the database.
        case backup
    }

    static let sqliteMagic = Array("SQLite format 3\u{0}".utf8)
    static let zipMagic: [UInt8] = [0x50, 0x4B, 0x03, 0x04]
    /// A ZIP with no entries starts with its end record: a ZIP still, not an archive of ours.
    static let emptyZipMagic: [UInt8] = [0x50, 0x4B, 0x05, 0x06]
    /// The entry of the backup ZIP that holds the database.
    public static let databaseEntry = "database/Gadgetbridge"

    /// The form of the file at `path` by its first bytes, or nil when it is neither an SQLite
    /// file nor a ZIP (an archive, then). A file that cannot be read is nil too: the archive
    /// reader names the problem as it always has.
    public static func form(of path: String) -> Form? {
        guard let file = try? SystemFile.openForReading(path), let head = try? file.read(upTo: headLength) else { return nil }
        try? file.close()
        return form(ofHead: head)
    }

    /// How many first bytes `form(ofHead:)` needs.
    public static let headLength = 16

    /// The form a file's first bytes say, or nil.
    public static func form(ofHead head: [UInt8]) -> Form? {
        if head.starts(with: sqliteMagic) { return .database }
        if head.starts(with: zipMagic) || head.starts(with: emptyZipMagic) { return .backup }
        return nil
    }

    /// Opens a Gadgetbridge file arriving on standard input or a pipe named `name` (`head`: its
    /// first bytes, already read; `rest`: the remainder), spooled first into a private
    /// temporary copy, since SQLite and libzip need a file (`ExtractedDatabase`); `--max-size`
    /// bounds the copy.
    public static func open(streamHead head: [UInt8], rest: SystemFile, name: String, limits: ArchiveLimits) throws -> GadgetbridgeDatabase {
        let spooled = try ExtractedDatabase(name: "the copy of \(name) in the temporary directory") { file in
            try file.write(head, at: 0)
            var total = Int64(head.count)
            var buffer = [UInt8](repeating: 0, count: 1 << 16)
            while true {
                let count = try buffer.withUnsafeMutableBytes { try rest.read(into: $0) }
                if count == 0 { break }
                total += Int64(count)
                guard total <= limits.maxUncompressedBytes else {
                    throw ArchiveError(.limitExceeded, "\(name) holds more than the limit of \(limits.maxUncompressedBytes) bytes", limit: .uncompressedBytes)
                }
                try buffer.withUnsafeBytes { try file.write(UnsafeRawBufferPointer(rebasing: $0[0..<count]), at: total - Int64(count)) }
            }
            return (total, total)
        }
        switch form(ofHead: head) {
        case .database:
            return try GadgetbridgeDatabase(path: spooled.path, shownAs: name, form: .database, bytes: (spooled.bytes, spooled.bytes), extracted: spooled)
        case .backup:
            let extracted = try ExtractedDatabase(zip: spooled.path, shownAs: name, limits: limits)
            return try GadgetbridgeDatabase(path: extracted.path, shownAs: "\(name) (\(databaseEntry))", form: .backup,
                                            bytes: (spooled.bytes, extracted.bytes), extracted: extracted)
        case nil:
            throw GadgetbridgeError(.notGadgetbridge, "\(name) is neither an SQLite database nor a ZIP file")
        }
    }

    /// Opens the database the file holds, read-only: the user's file in place
    /// (`immutable=1`: no lock, no `-wal`/`-shm` beside it, never written), or the ZIP's entry
    /// copied out first into a private temporary directory (see `ExtractedDatabase`).
    ///
    /// A link to the database is followed: it is the user's input, only read (the rule never
    /// to follow links is about files the tool writes); SQLite opens the real file, beside
    /// which its `-wal` lies. A non-empty `-wal` holds rows not yet checkpointed (what
    /// `adb pull` of a live database gives), which `immutable=1` would skip: the database and
    /// its `-wal` are then copied into a private temporary directory and the copy opened
    /// normally, so SQLite applies the log to the copy, never to the user's files.
    public static func open(_ path: String, limits: ArchiveLimits) throws -> GadgetbridgeDatabase {
        switch form(of: path) {
        case .database:
            let target = realPath(path)
            let size = try SystemFile.openForReading(target).size()
            let logSize = (try? SystemFile.openForReading(target + "-wal"))?.size() ?? 0
            guard size + logSize <= limits.maxUncompressedBytes else {
                throw ArchiveError(.limitExceeded, "\(path) holds \(size + logSize) bytes, more than the limit of \(limits.maxUncompressedBytes)",
                                   limit: .uncompressedBytes)
            }
            guard logSize > 0 else {
                return try GadgetbridgeDatabase(path: target, shownAs: path, form: .database, bytes: (size, size), extracted: nil)
            }
            let copy = try ExtractedDatabase(name: "the copy of \(path)") { file in
                try SystemFile.openForReading(target).copy(to: FileSink(file))
                return (size, size)
            }
            let log = try SystemFile.createExclusive(copy.path + "-wal", reportedAs: "the copy of \(path)-wal")
            try SystemFile.openForReading(target + "-wal").copy(to: FileSink(log))
            try log.close()
            return try GadgetbridgeDatabase(path: copy.path, shownAs: path, form: .database, bytes: (size + logSize, size + logSize),
                                            extracted: copy, withWriteAheadLog: true)
        case .backup:
            let extracted = try ExtractedDatabase(zip: path, limits: limits)
            return try GadgetbridgeDatabase(path: extracted.path, shownAs: "\(path) (\(databaseEntry))", form: .backup,
                                            bytes: (extracted.compressedBytes, extracted.bytes), extracted: extracted)
        case nil:
            throw GadgetbridgeError(.notGadgetbridge, "\(path) is neither an SQLite database nor a ZIP file")
        }
    }
}

/// The file a path names, links resolved (the path itself when it cannot be resolved: opening
/// it then names the problem).
func realPath(_ path: String) -> String {
    guard let resolved = realpath(path, nil) else { return path }
    defer { free(resolved) }
    return String(cString: resolved)
}

/// The database of a backup ZIP, copied out into a file of its own in a private temporary
/// directory (0700, the file 0600): SQLite needs a path. The directory is registered with
/// `InterruptCleanup` (removed on SIGINT/SIGTERM/SIGHUP) and named
/// `pulse-archive-gadgetbridge-<pid>-XXXXXX`, so that the stale-temporaries sweep of the next
/// run removes what a kill -9 left; otherwise it goes when this object does.
final class ExtractedDatabase {
    let directory: String
    let path: String
    let bytes: Int64
    let compressedBytes: Int64

    /// Copies the ZIP's `database/Gadgetbridge` out.
    /// - Parameter name: what messages call the ZIP (default: its path).
    convenience init(zip: String, shownAs name: String? = nil, limits: ArchiveLimits) throws {
        let archive = try ZipArchive(path: zip, shownAs: name)
        let shown = name ?? zip
        guard let entry = try archive.entry(named: GadgetbridgeFile.databaseEntry) else {
            throw GadgetbridgeError(.notGadgetbridge, "\(shown) is a ZIP but not a Gadgetbridge backup: it has no entry \(GadgetbridgeFile.databaseEntry)")
        }
        try self.init(name: "the copy of \(GadgetbridgeFile.databaseEntry)") { file in
            (try archive.copy(entry, named: GadgetbridgeFile.databaseEntry, to: file, limits: limits), entry.compressedSize)
        }
    }

    /// A new private copy, its bytes written by `write`, which returns (bytes, compressed bytes).
    /// - Parameter name: what messages call the copy.
    init(name: String, _ write: (SystemFile) throws -> (Int64, Int64)) throws {
        directory = try PrivateFiles.temporaryDirectory(prefix: "pulse-archive-gadgetbridge")
        path = directory + "/Gadgetbridge"
        do {
            let file = try SystemFile.createExclusive(path, reportedAs: name)
            (bytes, compressedBytes) = try write(file)
            try file.close()
        } catch {
            PrivateFiles.remove(directory)
            throw error
        }
    }

    deinit { PrivateFiles.remove(directory) }
}
