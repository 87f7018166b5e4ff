import Foundation
import PulseArchive
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// File-system steps for a store: every directory it creates is 0700, every file 0600.
enum PrivateFiles {
    static func exists(_ path: String) -> Bool {
        FileManager.default.fileExists(atPath: path)
    }

    static func isDirectory(_ path: String) -> Bool {
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && isDirectory.boolValue
    }

    /// Creates `path` and any missing parents, each readable by its owner only.
    static func createDirectory(_ path: String) throws {
        if isDirectory(path) { return }
        var prefix = path.hasPrefix("/") ? "/" : ""
        for component in path.split(separator: "/") {
            prefix += component
            if !isDirectory(prefix) {
                guard mkdir(prefix, 0o700) == 0 || errno == EEXIST else {
                    throw StoreError(.io, "cannot create the directory \(prefix): \(errnoText())")
                }
                guard isDirectory(prefix) else {
                    throw StoreError(.io, "cannot create the directory \(prefix): a file of that name is in the way")
                }
            }
            prefix += "/"
        }
    }

    /// Creates an empty file readable by its owner only, if it does not exist.
    static func touch(_ path: String) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw StoreError(.io, "cannot create \(path): \(errnoText())") }
        _ = close(fd)
    }

    /// Flushes a file or directory to stable storage.
    static func sync(_ path: String) throws {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw StoreError(.io, "cannot open \(path): \(errnoText())") }
        defer { close(fd) }
        guard fsync(fd) == 0 else { throw StoreError(.io, "cannot flush \(path) to disk: \(errnoText())") }
    }

    /// Removes a file or a directory tree, if it is there; an interruption no longer removes it.
    static func remove(_ path: String) {
        try? FileManager.default.removeItem(atPath: path)
        InterruptCleanup.unregister(path)
    }

    /// A new private directory under the system's temporary directory, removed if the process
    /// is interrupted before `remove`.
    static func temporaryDirectory(prefix: String) throws -> String {
        let base = (ProcessInfo.processInfo.environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp")
        var template = Array("\(base)/\(prefix)-XXXXXX".utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw StoreError(.io, "cannot create a temporary directory in \(base): \(errnoText())")
        }
        let directory = String(cString: made)
        InterruptCleanup.register(directory)
        return directory
    }
}

/// Holds the store's lock file for as long as it lives, so that one import or export at a
/// time writes or reads a store.
final class StoreLock {
    private let fd: Int32

    init(directory: String) throws {
        let path = directory + "/.lock"
        fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw StoreError(.io, "cannot open the lock file \(path): \(errnoText())") }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            let busy = errno == EWOULDBLOCK
            let detail = errnoText()
            close(fd)
            if busy {
                throw StoreError(.busy, "another import or export is running on this store (\(directory)); wait for it to finish and try again")
            }
            throw StoreError(.io, "cannot lock \(path): \(detail)")
        }
    }

    deinit {
        flock(fd, LOCK_UN)
        close(fd)
    }
}
