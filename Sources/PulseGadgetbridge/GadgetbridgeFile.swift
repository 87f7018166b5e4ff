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
    /// The entry of the backup ZIP that holds the database.
    public static let databaseEntry = "database/Gadgetbridge"

    /// The form of the file at `path` by its first bytes, or nil when it is neither an SQLite
    /// file nor a ZIP (an archive, then). A file that cannot be read is nil too: the archive
    /// reader names the problem as it always has.
    public static func form(of path: String) -> Form? {
        guard let file = try? SystemFile.openForReading(path), let head = try? file.read(upTo: 16) else { return nil }
        try? file.close()
        if head.count == 16, head == sqliteMagic { return .database }
        if head.count >= 4, Array(head.prefix(4)) == zipMagic { return .backup }
        return nil
    }

    /// Opens the database the file holds, read-only: the user's file in place
    /// (`immutable=1`: no lock, no `-wal`/`-shm` beside it, never written), or the ZIP's entry
    /// copied out first into a private temporary directory (see `ExtractedDatabase`).
    public static func open(_ path: String, limits: ArchiveLimits) throws -> GadgetbridgeDatabase {
        switch form(of: path) {
        case .database:
            let size = try SystemFile.openForReading(path).size()
            guard size <= limits.maxUncompressedBytes else {
                throw ArchiveError(.limitExceeded, "\(path) holds \(size) bytes, more than the limit of \(limits.maxUncompressedBytes)",
                                   limit: .uncompressedBytes)
            }
            return try GadgetbridgeDatabase(path: path, shownAs: path, form: .database, bytes: (size, size), extracted: nil)
        case .backup:
            let extracted = try ExtractedDatabase(zip: path, limits: limits)
            return try GadgetbridgeDatabase(path: extracted.path, shownAs: "\(path) (\(databaseEntry))", form: .backup,
                                            bytes: (extracted.compressedBytes, extracted.bytes), extracted: extracted)
        case nil:
            throw GadgetbridgeError(.notGadgetbridge, "\(path) is neither an SQLite database nor a ZIP file")
        }
    }
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

    init(zip: String, limits: ArchiveLimits) throws {
        let archive = try ZipArchive(path: zip)
        guard let entry = try archive.entry(named: GadgetbridgeFile.databaseEntry) else {
            throw GadgetbridgeError(.notGadgetbridge, "\(zip) is a ZIP but not a Gadgetbridge backup: it has no entry \(GadgetbridgeFile.databaseEntry)")
        }
        directory = try PrivateFiles.temporaryDirectory(prefix: "pulse-archive-gadgetbridge")
        path = directory + "/Gadgetbridge"
        do {
            let file = try SystemFile.createExclusive(path, reportedAs: "the copy of \(GadgetbridgeFile.databaseEntry)")
            bytes = try archive.copy(entry, named: GadgetbridgeFile.databaseEntry, to: file, limits: limits)
            try file.close()
        } catch {
            PrivateFiles.remove(directory)
            throw error
        }
        compressedBytes = entry.compressedSize
    }

    deinit { PrivateFiles.remove(directory) }
}
