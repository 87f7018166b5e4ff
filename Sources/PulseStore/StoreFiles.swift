#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import PulseArchive
import PulseSystem

/// The files a store keeps beside its database, and the rules for touching them.
///
/// A link among them would make the tool write outside the store (a dangling `pulse.sqlite`
/// link is created and filled where it points), or into another store while holding this
/// store's lock. So, as for the document tree, a store whose files are links is refused, and
/// every open of them refuses a link as well (`O_NOFOLLOW`, `SQLITE_OPEN_NOFOLLOW`), which
/// also covers a link made between the check and the open.
enum StoreFiles {
    static let database = PulseStore.databaseFileName
    static let wal = database + "-wal"

    /// The database, SQLite's files beside it, and the lock file.
    static let names = [database, wal, database + "-shm", database + "-journal", StoreLock.fileName]

    /// Refuses a store in which any of `names` is a link or not a regular file.
    static func requireRegularFiles(in directory: String) throws {
        for name in names {
            let path = directory + "/" + name
            var info = stat()
            guard lstat(path, &info) == 0 else { continue }
            switch info.st_mode & S_IFMT {
            case S_IFREG: continue
            case S_IFLNK: throw linkError(path, name: name)
            default:
                throw StoreError(.refused, "the store's \(name) (\(path)) is not a regular file; a store is opened only through the files it made itself: remove it and try again")
            }
        }
    }

    static func linkError(_ path: String, name: String) -> StoreError {
        StoreError(.refused, "the store's \(name) (\(path)) is a symbolic link; links in a store are never followed (a write would go where the link points, outside the store or into another one): replace it with the file itself and try again")
    }

    /// Whether `path` is there as anything at all, a dangling link included.
    static func exists(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0
    }

    /// Whether the store in `directory` has its database at `path` (as `exists`): false only
    /// when the system says there is no such file. A folder that cannot be looked into is said
    /// so (a store of another user was reported as no store at all, with the advice to create one).
    static func databaseExists(_ path: String, store directory: String) throws -> Bool {
        var info = stat()
        if lstat(path, &info) == 0 { return true }
        let failure = errno
        if failure == ENOENT || failure == ENOTDIR { return false }
        errno = failure
        throw SystemError(.io, "cannot open the store at \(directory): \(errnoText())")
    }

    /// Whether the process may create files in `directory` (false on a read-only mount, an
    /// immutable directory, or one whose mode denies it).
    static func isWritable(_ directory: String) -> Bool {
        access(directory, W_OK) == 0
    }

    /// Whether the WAL beside the database holds anything: changes SQLite has not yet copied
    /// into the database file, which an immutable open would not see.
    static func walHasContent(in directory: String) -> Bool {
        var info = stat()
        return lstat(directory + "/" + wal, &info) == 0 && info.st_size > 0
    }
}
