import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What `opendir` and `fdopendir` return.
#if canImport(Glibc)
package typealias DirectoryStream = OpaquePointer
#elseif canImport(Darwin)
package typealias DirectoryStream = UnsafeMutablePointer<DIR>
#endif

/// File-system steps for the store and for scratch space: every directory they create is 0700,
/// every file 0600.
package enum PrivateFiles {
    package static func exists(_ path: String) -> Bool {
        FileManager.default.fileExists(atPath: path)
    }

    package static func isDirectory(_ path: String) -> Bool {
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && isDirectory.boolValue
    }

    /// Creates `path` and any missing parents, each readable by its owner only.
    ///
    /// Each `mkdir` runs under `InterruptCleanup.uninterrupted`: once an interruption has begun to
    /// remove a temporary directory (a new store, a staging or scratch directory), no thread
    /// can create it again as the parent of something it is still writing, and leave it behind.
    /// A failure part way removes the folders it made.
    package static func createDirectory(_ path: String) throws(SystemError) {
        if isDirectory(path) { return }
        _ = try create(path, registering: .none)
    }

    /// `createDirectory`, each folder it makes registered with `InterruptCleanup` to be removed
    /// on an interruption if it is empty then (a folder for a file not yet written: the safety
    /// backup's `backups/`).
    /// - Returns: the folders it made, outermost first, for `removeWhileEmpty` on a failure.
    package static func createDirectoryRemovedIfEmpty(_ path: String) throws(SystemError) -> [String] {
        try create(path, registering: .allIfEmpty).folders
    }

    /// A directory `createTemporaryDirectoryIfMissing` made, and the missing parents it made
    /// on the way (outermost first): what a failure removes again (`removeCreated`).
    package struct CreatedDirectory: Sendable {
        /// As registered with `InterruptCleanup` (without trailing slashes).
        package let path: String
        package let parents: [String]
    }

    /// `createDirectory`, and the directory `path` names registered with `InterruptCleanup` in
    /// the same step as the `mkdir` that made it, when this call made it (not when it was there,
    /// or another process made it meanwhile). The parents it makes are registered to be removed
    /// if they are empty once it is gone; after a commit they hold what it made, and stay.
    /// - Returns: nil when this call did not create it.
    package static func createTemporaryDirectoryIfMissing(_ path: String) throws(SystemError) -> CreatedDirectory? {
        let made = try create(path, registering: .lastAsTemporary)
        guard made.includesLast, let last = made.folders.last else { return nil }
        return CreatedDirectory(path: last, parents: made.folders.dropLast())
    }

    /// Removes what `createTemporaryDirectoryIfMissing` made: the directory and what it holds,
    /// then each parent it made, innermost first, only while it is empty (another command may
    /// have made its own folder in one meanwhile: never removed with it).
    package static func removeCreated(_ created: CreatedDirectory) {
        remove(created.path)
        removeWhileEmpty(created.parents)
    }

    /// Removes `folders` (each the parent of the next), innermost first, until one is not
    /// empty; an interruption no longer removes any of them.
    package static func removeWhileEmpty(_ folders: [String]) {
        var removing = true
        for folder in folders.reversed() {
            removing = removing && rmdir(folder) == 0
            InterruptCleanup.unregister(folder)
        }
    }

    private enum Registration { case none, lastAsTemporary, allIfEmpty }

    /// - Returns: the folders this call made, outermost first, and whether the last of them is
    ///   `path` itself.
    private static func create(_ path: String, registering: Registration) throws(SystemError) -> (folders: [String], includesLast: Bool) {
        let components = path.split(separator: "/")
        var prefix = path.hasPrefix("/") ? "/" : ""
        var made: [String] = []
        var includesLast = false
        for (index, component) in components.enumerated() {
            prefix += component
            if !isDirectory(prefix) {
                let isLast = index == components.count - 1
                let failure = InterruptCleanup.uninterrupted { () -> Int32 in
                    guard mkdir(prefix, 0o700) == 0 else { return errno }
                    switch registering {
                    case .none: break
                    case .lastAsTemporary where isLast: InterruptCleanup.register(prefix)
                    case .lastAsTemporary, .allIfEmpty: InterruptCleanup.registerIfEmpty(prefix)
                    }
                    made.append(prefix)
                    includesLast = isLast
                    return 0
                }
                guard failure == 0 || failure == EEXIST else {
                    errno = failure
                    let error = SystemError(.io, "cannot create the directory \(prefix): \(errnoText())")
                    removeWhileEmpty(made)
                    throw error
                }
                guard isDirectory(prefix) else {
                    removeWhileEmpty(made)
                    throw SystemError(.io, "cannot create the directory \(prefix): a file of that name is in the way")
                }
            }
            prefix += "/"
        }
        return (made, includesLast)
    }

    /// The name of a temporary entry beside one called `name`: `.<name><suffix>`, `name` cut
    /// to its first 190 bytes (at the end of a character), so that the whole stays within the
    /// 255 bytes a file name may have with the longest suffix (`.partial-pulse-archive-<pid>`)
    /// and the `.removing-<pid>` an interruption adds when it sets the entry aside. Before, a
    /// target of 230 bytes, whose own name fitted, was refused as "File name too long". The cut
    /// does not depend on the suffix, so a sweep finds the entries by `temporaryName(beside:
    /// name, suffix: "<the suffix's fixed start>")`.
    package static func temporaryName(beside name: String, suffix: String) -> String {
        var kept = Substring(name)
        while kept.utf8.count > 190 { kept.removeLast() }
        return "." + kept + suffix
    }

    /// Creates an empty file readable by its owner only, if it does not exist. A link there
    /// is refused, not followed: it would create or open the file it points to.
    package static func touch(_ path: String) throws(SystemError) {
        let fd = open(path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw SystemError(.io, "cannot create \(path): \(errnoText())") }
        _ = close(fd)
    }

    /// A second name for the file `source` at `destination`, which must not exist: a hard link
    /// (nothing copied), or a private copy where the file system has no hard links (vfat,
    /// exFAT: USB sticks) or a test refuses them (`TestRefusal`). Links are never followed.
    package static func linkOrCopy(_ source: String, to destination: String) throws {
        switch NoReplaceMove.hardLink(source, to: destination) {
        case .linked:
            return
        case .targetExists:
            errno = EEXIST
            throw SystemError(.io, "cannot create \(destination): \(errnoText())")
        case .failed(let failure):
            errno = failure
            throw SystemError(.io, "cannot create \(destination): \(errnoText())")
        case .unsupported:
            let input = try SystemFile.openForReading(source, followingLinks: false)
            let output = try SystemFile.createExclusive(destination)
            do {
                let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
                defer { buffer.deallocate() }
                while case let n = try input.read(into: buffer), n > 0 {
                    try output.write(UnsafeRawBufferPointer(rebasing: buffer[0..<n]))
                }
                try output.close()
            } catch {
                _ = unlink(destination)
                throw error
            }
        }
    }

    /// Flushes a file or directory to stable storage.
    package static func sync(_ path: String) throws(SystemError) {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw SystemError(.io, "cannot open \(path): \(errnoText())") }
        defer { close(fd) }
        guard fsync(fd) == 0 else { throw SystemError(.io, "cannot flush \(path) to disk: \(errnoText())") }
    }

    /// Removes a file or a directory tree, if it is there; an interruption no longer removes it.
    package static func remove(_ path: String) {
        removeTree(path)
        InterruptCleanup.unregister(path)
        liveLocks.release(path)
    }

    /// Removes `path` and, when it is a folder, everything in it, depth first, never following
    /// a link (a link is removed as itself).
    ///
    /// Foundation's `removeItem` first (one descriptor at a time, which a process out of them
    /// may still have), then, for what it left, a walk through descriptors: `removeItem` tries
    /// `rmdir` first and empties the folder only on ENOTEMPTY, fusefat answers EPERM, and the
    /// ring database a Gadgetbridge import unpacked stayed in a `$TMPDIR` on a stick, in clear,
    /// after every run.
    /// - Returns: whether nothing is left at `path`.
    @discardableResult
    package static func removeTree(_ path: String) -> Bool {
        try? FileManager.default.removeItem(atPath: path)
        var info = stat()
        if lstat(path, &info) != 0 && errno == ENOENT { return true }
        removeEntry(path, in: AT_FDCWD)
        return lstat(path, &info) != 0 && errno == ENOENT
    }

    private static func removeEntry(_ name: String, in parent: Int32) {
        var info = stat()
        guard fstatat(parent, name, &info, AT_SYMLINK_NOFOLLOW) == 0 else { return }
        guard info.st_mode & S_IFMT == S_IFDIR else {
            _ = unlinkat(parent, name, 0)
            return
        }
        let descriptor = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        if descriptor >= 0 {
            if let folder = fdopendir(descriptor) {
                // Every name first, then the removals: a folder is not changed while it is read.
                for entryName in entryNames(readFrom: folder) { removeEntry(entryName, in: dirfd(folder)) }
                closedir(folder)
            } else {
                _ = close(descriptor)
            }
        }
        _ = unlinkat(parent, name, AT_REMOVEDIR)
    }

    /// The names an open folder stream holds, `.` and `..` left out, read to its end.
    package static func entryNames(readFrom folder: DirectoryStream) -> [String] {
        var names: [String] = []
        while let entry = readdir(folder) {
            let entryName = withUnsafePointer(to: entry.pointee.d_name) {
                $0.withMemoryRebound(to: CChar.self, capacity: Int(NAME_MAX) + 1) { String(cString: $0) }
            }
            if entryName != "." && entryName != ".." { names.append(entryName) }
        }
        return names
    }

    /// The `LiveEntry` locks of the temporary directories this process made, by path.
    private static let liveLocks = LiveLocks()

    private final class LiveLocks: @unchecked Sendable {
        private var lock = pthread_mutex_t()
        // Guarded by `lock`.
        private var descriptors: [String: Int32] = [:]

        init() { pthread_mutex_init(&lock, nil) }

        func hold(_ path: String) {
            guard let descriptor = LiveEntry.hold(path) else { return }
            pthread_mutex_lock(&lock)
            descriptors[path] = descriptor
            pthread_mutex_unlock(&lock)
        }

        func release(_ path: String) {
            pthread_mutex_lock(&lock)
            let descriptor = descriptors.removeValue(forKey: path)
            pthread_mutex_unlock(&lock)
            LiveEntry.release(descriptor)
        }
    }

    /// What the names of our temporary entries start with.
    package static let temporaryPrefix = "pulse-archive"

    /// The system's temporary directory: `$TMPDIR`, else `/tmp`. SQLite puts its own temporary
    /// files (an unnamed database, its sorts) there too, unless `$SQLITE_TMPDIR` says otherwise.
    package static var temporaryBase: String {
        ProcessInfo.processInfo.environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
    }

    /// A new private directory under the system's temporary directory, removed if the process
    /// is interrupted before `remove`. Its name carries the process id
    /// (`<prefix>-<pid>-XXXXXX`), so that a later run removes it if the process was killed
    /// (`removeStaleTemporaries`).
    package static func temporaryDirectory(prefix: String) throws -> String {
        let base = temporaryBase
        return try InterruptCleanup.registering {
            var template = Array("\(base)/\(prefix)-\(getpid())-XXXXXX".utf8CString)
            guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
                throw SystemError(.io, "cannot create a temporary directory in \(base): \(errnoText())")
            }
            let directory = String(cString: made)
            liveLocks.hold(directory)
            return (directory, path: directory)
        }
    }

    /// A private scratch file that has no name on disk (`SystemFile.createUnnamed`) in the
    /// system's temporary directory: for decrypted data that no kill may leave behind.
    /// - Parameter name: what messages call it ("verify's key runs").
    package static func unnamedFile(_ name: String) throws -> SystemFile {
        try SystemFile.createUnnamed(in: temporaryBase, name: name)
    }

    /// Removes what killed runs left in `base`: entries named `pulse-archive…-<pid>-XXXXXX`
    /// (a temporary directory, or a file killed between its creation and its unlink, or either
    /// renamed aside by an interrupted removal) whose process no longer exists, and that belong
    /// to this user. An entry of a live process (here, or one that holds its `LiveEntry` lock
    /// from another PID namespace or host), of another user, or without a pid in its name is
    /// left alone.
    package static func removeStaleTemporaries(in base: String) {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: base)) ?? []
        for name in names where name.hasPrefix(temporaryPrefix + "-") {
            var info = stat()
            guard let pid = processID(inTemporaryName: name), lstat(base + "/" + name, &info) == 0, info.st_uid == getuid(),
                  LiveEntry.isAbandoned(base + "/" + name, writer: pid) else { continue }
            removeTree(base + "/" + name)
        }
    }

    /// The pid in `pulse-archive[-<word>…]-<pid>-XXXXXX` (after an optional `.removing-<pid>`
    /// suffix is taken off; words of lower-case letters, six letters or digits at the end), or
    /// nil for any other name.
    static func processID(inTemporaryName name: String) -> pid_t? {
        var name = Substring(name)
        if let aside = name.range(of: ".removing-") { name = name[..<aside.lowerBound] }
        let parts = name.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count >= 4, parts[0] == "pulse", parts[1] == "archive",
              parts[2..<parts.count - 2].allSatisfy({ !$0.isEmpty && $0.allSatisfy { $0 >= "a" && $0 <= "z" } }),
              parts[parts.count - 1].count == 6, parts[parts.count - 1].allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) }),
              let pid = pid_t(parts[parts.count - 2]), pid > 0 else { return nil }
        return pid
    }
}
