#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import PulseSystem

/// Holds the store's lock file for as long as it lives: exclusive for a command that changes
/// the store, shared for one that only reads it, so readers run side by side and never beside
/// a writer.
///
/// The exclusive holder writes what it is doing into the file, so that a command refused
/// meanwhile can say what is running. The file is opened without following a link.
final class StoreLock {
    /// Nil when a reader found no lock file in a directory it cannot write: no command can
    /// take the lock there, and none can change the store.
    private let fd: Int32?

    static let fileName = ".lock"

    /// - Parameters:
    ///   - shared: a reader's lock.
    ///   - activity: what the exclusive holder does, for others' messages ("an import").
    /// - Throws: `StoreError.busy` when a conflicting lock is held.
    init(directory: String, shared: Bool = false, activity: String = "another command") throws {
        // Acquired before `fd` is set: a failing init then never reaches `deinit`, which would
        // close the descriptor a second time (and maybe another thread's file, reusing it).
        fd = try Self.acquire(directory: directory, shared: shared, activity: activity)
    }

    deinit {
        if let fd {
            flock(fd, LOCK_UN)
            close(fd)
        }
    }

    private static func acquire(directory: String, shared: Bool, activity: String) throws -> Int32? {
        let path = directory + "/" + fileName
        var fd = open(path, (shared ? O_RDONLY : O_RDWR | O_CREAT) | O_NOFOLLOW | O_CLOEXEC, 0o600)
        if fd < 0 && shared && errno == ENOENT {
            fd = open(path, O_RDONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
            if fd < 0 && [EROFS, EACCES, EPERM].contains(errno) { return nil }
        }
        guard fd >= 0 else {
            if errno == ELOOP { throw StoreFiles.linkError(path, name: fileName) }
            throw StoreError(.io, "cannot open the lock file \(path): \(errnoText())")
        }
        guard flock(fd, (shared ? LOCK_SH : LOCK_EX) | LOCK_NB) == 0 else {
            let busy = errno == EWOULDBLOCK
            let detail = errnoText()
            let holder = busy ? Self.holder(of: fd) : ""
            close(fd)
            if busy {
                throw StoreError(.busy, "the store \(directory) is busy: \(holder); wait for it to finish and try again")
            }
            throw StoreError(.io, "cannot lock \(path): \(detail)")
        }
        if !shared {
            let record = Array("\(activity) (pid \(getpid()))\n".utf8)
            if ftruncate(fd, 0) == 0 { _ = record.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) } }
        }
        return fd
    }

    /// Who holds the lock that refused us: the recorded activity of an exclusive holder, or
    /// readers when only shared locks are held.
    private static func holder(of fd: Int32) -> String {
        if flock(fd, LOCK_SH | LOCK_NB) == 0 {
            flock(fd, LOCK_UN)
            return "another command (an export, a verification against the store or a readiness history) is reading it"
        }
        var buffer = [UInt8](repeating: 0, count: 200)
        let count = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
        let line = count > 0 ? String(decoding: buffer.prefix(count).prefix { $0 != 0x0A }, as: UTF8.self) : ""
        // The file is the store's, not ours: shown only if it reads as a record of ours.
        let printable = !line.isEmpty && line.unicodeScalars.allSatisfy { $0.value >= 0x20 && $0.value != 0x7F && !(0x80...0x9F).contains($0.value) }
        guard printable else { return "another command is changing it" }
        // The record is the last exclusive holder's: a holder that did not write one (another
        // program's lock) leaves an ended command's there, which is not named as the holder.
        if let pid = Self.recordedProcess(line), kill(pid, 0) != 0, errno == ESRCH {
            return "another process holds its lock (the lock file names \(line), which has ended)"
        }
        return line + " is changing it"
    }

    /// The pid in a record `<activity> (pid N)`.
    private static func recordedProcess(_ line: String) -> pid_t? {
        guard line.hasSuffix(")"), let open = line.range(of: "(pid ", options: .backwards) else { return nil }
        return pid_t(line[open.upperBound..<line.index(before: line.endIndex)]).flatMap { $0 > 0 ? $0 : nil }
    }
}
