import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A directory built under a private temporary name beside its target and renamed into place
/// only when complete, so the target is either absent (or the empty directory it was) or
/// complete: a failure, an interruption or a kill never leaves half of it. `AtomicFile`'s
/// sibling, for commands that write a folder of files (`tables`).
///
/// The target must be new or an empty directory, never a link (not followed, refused). The
/// commit is one `rename(2)`, which for a directory refuses every target but an absent name or
/// an empty directory: so it can never replace anything that holds data, even a directory that
/// gained files meanwhile. An absent target is taken with the no-replace rename where the file
/// system has it, so not even an empty directory made meanwhile is replaced.
package final class AtomicDirectory {
    package let targetPath: String
    /// The staging directory: `.<name>.staging-<pid>-XXXXXX` beside the target, 0700.
    package let stagingPath: String
    private let targetWasEmptyDirectory: Bool
    private var committed = false

    /// - Throws: `SystemError(.alreadyExists)` when the target is a link, a file or a directory
    ///   that is not empty; `.io` when the staging directory cannot be made.
    package init(targetPath: String) throws {
        var target = targetPath
        while target.count > 1 && target.hasSuffix("/") { target.removeLast() }
        self.targetPath = target
        targetWasEmptyDirectory = try Self.checkTarget(target)
        let parent = AtomicFile.directory(of: target)
        let name = target.split(separator: "/").last.map(String.init) ?? target
        Self.removeAbandonedStaging(in: parent)
        stagingPath = try InterruptCleanup.registering {
            var template = Array((parent + "/" + PrivateFiles.temporaryName(beside: name, suffix: ".staging-\(getpid())-XXXXXX")).utf8CString)
            guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
                throw SystemError(.io, "cannot create a directory beside \(target) in \(parent): \(errnoText())")
            }
            let path = String(cString: made)
            return (path, path: path)
        }
        liveLock = LiveEntry.hold(stagingPath)
    }

    deinit {
        if !committed { PrivateFiles.remove(stagingPath) }
        LiveEntry.release(liveLock)
    }

    /// Says to the sweeps of other processes that the staging directory is in use.
    private var liveLock: Int32?

    /// Whether the target may be taken: absent (false) or an empty directory (true).
    private static func checkTarget(_ target: String) throws -> Bool {
        var info = stat()
        guard lstat(target, &info) == 0 else {
            guard errno == ENOENT else { throw SystemError(.io, "cannot look at \(target): \(errnoText())") }
            return false
        }
        switch info.st_mode & S_IFMT {
        case S_IFLNK:
            throw SystemError(.alreadyExists, "\(target) is a symbolic link, which is never followed: the folder must be new or an empty directory")
        case S_IFDIR:
            guard let dir = opendir(target) else { throw SystemError(.io, "cannot read the directory \(target): \(errnoText())") }
            defer { closedir(dir) }
            while let entry = readdir(dir) {
                let entryName = withUnsafePointer(to: entry.pointee.d_name) {
                    $0.withMemoryRebound(to: CChar.self, capacity: 256) { String(cString: $0) }
                }
                if entryName != "." && entryName != ".." {
                    throw SystemError(.alreadyExists, "\(target) is not empty: the folder must be new or an empty directory")
                }
            }
            // The commit renames over the empty directory, which the kernel refuses for `.`,
            // `..` and a mount point (EBUSY): said now, before the work, not after it.
            let last = target.split(separator: "/").last.map(String.init) ?? target
            var parentInfo = stat()
            let isMountPoint = lstat(AtomicFile.directory(of: target), &parentInfo) == 0 && parentInfo.st_dev != info.st_dev
            if last == "." || last == ".." || isMountPoint {
                throw SystemError(.alreadyExists, "\(target) is an empty directory, but \(isMountPoint ? "a mount point" : "'\(last)'"), which a folder cannot be renamed over (it appears complete or not at all): name a new folder inside it, such as \(target)/tables")
            }
            return true
        default:
            throw SystemError(.alreadyExists, "\(target) already exists and is not a directory: the folder must be new or an empty directory")
        }
    }

    /// Renames the staging directory into place, flushed first, then flushes the parent.
    /// - Throws: `SystemError(.alreadyExists)` when the target gained an entry (or appeared)
    ///   meanwhile: it is left as it is, and the staging directory is removed.
    package func commit() throws {
        try PrivateFiles.sync(stagingPath)
        TestPausePoint.reached("commit")
        try InterruptCleanup.keeping([stagingPath]) {
            // A test may refuse the no-replace rename (`TestRefusal`), as a FUSE file system does.
            let outcome: SystemCalls.NoReplaceRename = targetWasEmptyDirectory || TestRefusal.refuses(.renameNoReplace)
                ? .unsupported(errno: EINVAL) : SystemCalls.renameNoReplace(stagingPath, targetPath)
            switch outcome {
            case .renamed:
                break
            case .targetExists:
                throw SystemError(.alreadyExists, "\(targetPath) appeared while it was written, and is left as it is")
            case .failed(let failure):
                errno = failure
                throw SystemError(.io, "cannot create \(targetPath): \(errnoText())")
            case .unsupported:
                // A directory's rename replaces nothing but an empty directory.
                guard rename(stagingPath, targetPath) == 0 else {
                    if errno == ENOTEMPTY || errno == EEXIST || errno == ENOTDIR || errno == EISDIR {
                        throw SystemError(.alreadyExists, "\(targetPath) changed while it was written (it is no longer new or empty), and is left as it is")
                    }
                    throw SystemError(.io, "cannot create \(targetPath): \(errnoText())")
                }
            }
            committed = true
            return "\(targetPath) was written in full"
        }
        try? PrivateFiles.sync(AtomicFile.directory(of: targetPath))
    }

    /// Removes the staging directories a killed run left in `parent`, whatever folder each was
    /// for (`.<name>.staging-<pid>-XXXXXX`, ours, its pid no local process and its
    /// `LiveEntry` lock free): what they hold may be an encrypted archive's rows in clear, so
    /// the next run beside them removes them, not only the next run for the same name.
    private static func removeAbandonedStaging(in parent: String) {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: parent)) ?? []
        for entry in entries where entry.hasPrefix(".") {
            guard let marker = entry.range(of: ".staging-", options: .backwards), marker.lowerBound > entry.index(after: entry.startIndex) else { continue }
            let rest = entry[marker.upperBound...].split(separator: "-", omittingEmptySubsequences: false)
            guard rest.count == 2, rest[1].count == 6, let pid = pid_t(rest[0]), pid > 0 else { continue }
            var info = stat()
            let path = "\(parent)/\(entry)"
            // No mode check: FAT and exFAT keep no modes (a stick shows 0755 or 0777 for all).
            guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFDIR,
                  info.st_uid == getuid(), LiveEntry.isAbandoned(path, writer: pid) else { continue }
            PrivateFiles.removeTree(path)
        }
    }
}
