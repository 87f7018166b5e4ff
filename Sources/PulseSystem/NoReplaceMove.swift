#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Gives a complete file a name that must be free, never replacing a file that appeared at
/// that name meanwhile, on every file system: the commit of every file the tool writes for
/// the user (docs/reliability.md, "Commits on every file system").
///
/// Three primitives, the first the file system has:
/// 1. `link(2)`, then the temporary name removed: fails with EEXIST when the name is taken.
///    FAT file systems (vfat, exFAT: USB sticks) have no hard links (EPERM).
/// 2. the system's no-replace rename (`renameat2(RENAME_NOREPLACE)`, `renamex_np(RENAME_EXCL)`):
///    one step, EEXIST when the name is taken. A kernel vfat has it; FUSE file systems often do
///    not (EINVAL).
/// 3. a placeholder: the name created with `O_CREAT|O_EXCL` (which every file system has, and
///    which fails when the name is taken), holding a line that names the temporary file, then
///    the temporary file renamed over it: a plain rename, which replaces only our own
///    placeholder. Between the two steps the name holds the placeholder, never a partial file;
///    an interruption removes both (the placeholder is registered with `InterruptCleanup`), and
///    after a kill the next commit in the directory removes both (`AtomicFile`).
package enum NoReplaceMove {
    package enum Primitive: String, Sendable {
        case link
        case renameNoReplace = "rename-noreplace"
        case placeholder
    }

    package enum Outcome: Equatable, Sendable {
        case moved(by: Primitive)
        /// Something is at the target: nothing was moved, the source is where it was.
        case targetExists
    }

    /// Moves the complete file `source` to `target` unless something is at `target`.
    /// - Throws: `SystemError(.io)` naming `target` when the file system refuses all three.
    /// - Parameters:
    ///   - directory: the folder both names are in, as a descriptor (`AT_FDCWD`: the names are
    ///     paths): a folder swapped for a link meanwhile is not followed.
    ///   - shown: what messages and the interruption's cleanup call the target (its path).
    package static func move(_ source: String, to target: String, in directory: Int32 = AT_FDCWD, shown: String? = nil) throws(SystemError) -> Outcome {
        let shown = shown ?? target
        switch hardLink(source, to: target, in: directory) {
        case .linked:
            _ = unlinkat(directory, source, 0)
            return .moved(by: .link)
        case .targetExists:
            return .targetExists
        case .failed(let failure):
            throw failed(shown, failure)
        case .unsupported:
            break
        }
        switch TestRefusal.refuses(.renameNoReplace) ? .unsupported(errno: EINVAL) : SystemCalls.renameNoReplace(source, target, in: directory) {
        case .renamed:
            return .moved(by: .renameNoReplace)
        case .targetExists:
            return .targetExists
        case .failed(let failure):
            throw failed(shown, failure)
        case .unsupported:
            return try moveThroughPlaceholder(source, to: target, in: directory, shown: shown)
        }
    }

    /// The outcome of `hardLink`.
    package enum Link: Equatable, Sendable {
        case linked
        case targetExists
        /// The file system has no hard links (or a test refuses them: `TestRefusal`).
        case unsupported(errno: Int32)
        case failed(errno: Int32)
    }

    /// A second name for `source`, unless `target` exists.
    package static func hardLink(_ source: String, to target: String, in directory: Int32 = AT_FDCWD) -> Link {
        if TestRefusal.refuses(.link) { return .unsupported(errno: EPERM) }
        if linkat(directory, source, directory, target, 0) == 0 { return .linked }
        let failure = errno
        switch failure {
        case EEXIST: return .targetExists
        // EPERM: Linux's vfat and exFAT; ENOTSUP/EOPNOTSUPP: Apple's; ENOSYS: FUSE without link;
        // EMLINK: the source has as many names as the file system can count.
        case EPERM, ENOTSUP, EOPNOTSUPP, ENOSYS, EMLINK: return .unsupported(errno: failure)
        default: return .failed(errno: failure)
        }
    }

    // MARK: - The placeholder

    /// What the placeholder for `source` holds: a line a person finding it can act on, naming
    /// the temporary file (whose name holds the writer's process id), so that only the
    /// leftover of that one commit is ever taken for a placeholder.
    package static func placeholderText(for source: String) -> [UInt8] {
        let name = source.split(separator: "/").last.map(String.init) ?? source
        return Array("placeholder of an unfinished commit of \(name): no backup is in this file; it is removed by the next file written into this folder, or remove it yourself\n".utf8)
    }

    /// Whether the file at `path` is the placeholder for `source` (read without following links).
    package static func isPlaceholder(_ path: String, for source: String, in directory: Int32 = AT_FDCWD) -> Bool {
        let expected = placeholderText(for: source)
        // Looked at before it is opened: no device or FIFO of the folder is ever opened.
        var named = stat()
        guard fstatat(directory, path, &named, AT_SYMLINK_NOFOLLOW) == 0, named.st_mode & S_IFMT == S_IFREG, Int(named.st_size) == expected.count else { return false }
        let fd = openat(directory, path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        guard fd >= 0 else { return false }
        defer { _ = close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG, Int(info.st_size) == expected.count else { return false }
        var bytes = [UInt8](repeating: 0, count: expected.count + 1)
        let n = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        return n == expected.count && Array(bytes[0..<n]) == expected
    }

    private static func moveThroughPlaceholder(_ source: String, to target: String, in directory: Int32, shown: String) throws(SystemError) -> Outcome {
        let text = placeholderText(for: source)
        // Made and registered as one step for an interruption, which then removes it.
        let fd: Int32 = InterruptCleanup.uninterrupted {
            let fd = openat(directory, target, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
            guard fd >= 0 else { return -errno }
            InterruptCleanup.register(shown)
            return fd
        }
        guard fd >= 0 else {
            if -fd == EEXIST { return .targetExists }
            throw failed(shown, -fd)
        }
        // The file made here, known by its device and inode: a write that fails (a full stick)
        // leaves it empty or cut, no longer the placeholder's line, and it must go all the same.
        var made = stat()
        let identified = fstat(fd, &made) == 0
        // Flushed, so that after a power loss the name holds the line, never an empty file
        // nobody can tell from a backup cut short.
        let refused = TestRefusal.refuses(.placeholderWrite)
        let written = !refused && text.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) } == text.count && fsync(fd) == 0
        let failure = refused ? ENOSPC : errno
        _ = close(fd)
        guard written else {
            var now = stat()
            if identified, fstatat(directory, target, &now, AT_SYMLINK_NOFOLLOW) == 0, now.st_dev == made.st_dev, now.st_ino == made.st_ino,
               now.st_size <= off_t(text.count) {
                _ = unlinkat(directory, target, 0)
                InterruptCleanup.unregister(shown)
            } else {
                removePlaceholder(target, for: source, in: directory, shown: shown)
            }
            throw failed(shown, failure)
        }
        TestPausePoint.reached("commit.placeholder")
        let renamed: Int32 = InterruptCleanup.uninterrupted {
            // Only our placeholder is there (made exclusively above): this replaces nothing else.
            guard renameat(directory, source, directory, target) == 0 else { return errno }
            InterruptCleanup.unregister(shown)
            return 0
        }
        guard renamed == 0 else {
            removePlaceholder(target, for: source, in: directory, shown: shown)
            throw failed(shown, renamed)
        }
        return .moved(by: .placeholder)
    }

    private static func removePlaceholder(_ target: String, for source: String, in directory: Int32, shown: String) {
        if isPlaceholder(target, for: source, in: directory) { _ = unlinkat(directory, target, 0) }
        InterruptCleanup.unregister(shown)
    }

    private static func failed(_ target: String, _ failure: Int32) -> SystemError {
        errno = failure
        return SystemError(.io, "cannot create \(target): \(errnoText())")
    }
}
