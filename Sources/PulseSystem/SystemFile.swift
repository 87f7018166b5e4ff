#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An open file descriptor, closed when the value is released.
///
/// Every file it creates is private to its owner (0600), whatever the umask, because the
/// files hold health data. Failures are `SystemError(.io)` naming the path; the codec's reader
/// turns them into its own `ArchiveError(.io)` at its boundary.
public final class SystemFile {
    /// What its messages call the file: its path, or the name it was created for (an export's
    /// partial file is named by the archive it becomes, the name a person looks for).
    public let path: String
    private(set) var fd: Int32

    private init(path: String, fd: Int32) {
        self.path = path
        self.fd = fd
    }

    deinit {
        if fd >= 0 { _ = posixClose(fd) }
    }

    /// Opens an existing file for reading.
    /// - Parameter followingLinks: false refuses a symbolic link at the last component.
    public static func openForReading(_ path: String, followingLinks: Bool = true) throws -> SystemFile {
        let fd = open(path, O_RDONLY | O_CLOEXEC | (followingLinks ? 0 : O_NOFOLLOW))
        guard fd >= 0 else { throw SystemError(.io, "cannot open \(path): \(errnoText())") }
        var info = stat()
        if fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR {
            _ = posixClose(fd)
            throw SystemError(.io, "cannot read \(path): it is a directory")
        }
        return SystemFile(path: path, fd: fd)
    }

    /// Creates a new file that must not exist yet, readable and writable by its owner only.
    /// - Parameter name: the path a failure names, when `path` is a temporary name for it.
    public static func createExclusive(_ path: String, reportedAs name: String? = nil) throws -> SystemFile {
        try createExclusive(path, in: AT_FDCWD, path: path, reportedAs: name)
    }

    /// `createExclusive` of `entry` in the folder open as `directory`: the folder the file
    /// goes into stays the one opened, whatever its path names meanwhile.
    /// - Parameters:
    ///   - path: the file's path.
    ///   - name: what the file's messages call it, when not its path.
    package static func createExclusive(_ entry: String, in directory: Int32, path: String, reportedAs name: String? = nil) throws -> SystemFile {
        let fd = openat(directory, entry, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { throw SystemError(.io, "cannot create \(name ?? path): \(errnoText())") }
        _ = fchmod(fd, 0o600)
        return SystemFile(path: name ?? path, fd: fd)
    }

    /// Standard input, read like a file (a pipe cannot be rewound or reopened). A duplicate of
    /// descriptor 0, so releasing it leaves the process's standard input open.
    public static func standardInput() throws -> SystemFile {
        // Held by /dev/null since the start (`StandardStreams`): it would read as empty.
        if StandardStreams.closedAtStart.contains(0) { throw SystemError(.io, "cannot read standard input: it was closed (<&-)") }
        let fd = fcntl(0, F_DUPFD_CLOEXEC, 0)
        guard fd >= 0 else { throw SystemError(.io, "cannot read standard input: \(errnoText())") }
        return SystemFile(path: "standard input", fd: fd)
    }

    /// Standard output, written like a file. A duplicate of descriptor 1, so releasing it
    /// leaves the process's standard output open.
    public static func standardOutput() throws -> SystemFile {
        // Held by /dev/null since the start (`StandardStreams`): what is written would be lost.
        if StandardStreams.closedAtStart.contains(1) { throw SystemError(.io, "cannot write standard output: it was closed (>&-)") }
        let fd = fcntl(1, F_DUPFD_CLOEXEC, 0)
        guard fd >= 0 else { throw SystemError(.io, "cannot write standard output: \(errnoText())") }
        return SystemFile(path: "standard output", fd: fd)
    }

    /// Creates a new private file (0600) to write and read back; it must not exist yet.
    public static func createReadWrite(_ path: String) throws -> SystemFile {
        let fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { throw SystemError(.io, "cannot create \(path): \(errnoText())") }
        _ = fchmod(fd, 0o600)
        return SystemFile(path: path, fd: fd)
    }

    /// A new private file that has no name in `directory`, to write and read back: whatever
    /// becomes of the process (a SIGKILL too), nothing of it stays on disk once the descriptor
    /// is gone. Linux makes it without a name (`O_TMPFILE`); where the system or the file system
    /// cannot, it is created as `pulse-archive-<pid>-XXXXXX` and unlinked before anything is
    /// written to it (the pid lets a later run remove the empty file a kill in between leaves,
    /// `PrivateFiles.removeStaleTemporaries`).
    /// - Parameter name: what messages call the file, followed by "in <directory>": a full
    ///   `$TMPDIR` was reported as "cannot write the run file of reference-2: No space left on
    ///   device", and nothing said which disk.
    public static func createUnnamed(in directory: String, name: String) throws -> SystemFile {
        if let fd = SystemCalls.openUnnamed(in: directory) {
            _ = fchmod(fd, 0o600)
            return SystemFile(path: "\(name) in \(directory)", fd: fd)
        }
        return try createUnlinked(in: directory, name: name)
    }

    /// `createUnnamed`'s way where `O_TMPFILE` is not to be had: a new file, unlinked at once.
    /// - Throws: where the file system keeps an open file it was told to remove (FUSE renames
    ///   it to a hidden name, and fusefat then leaves it, decrypted data and all, and fails to
    ///   read it back): refused before anything is written, naming the directory.
    static func createUnlinked(in directory: String, name: String) throws -> SystemFile {
        if SystemCalls.isFUSE(directory) { throw keepsRemovedFiles(directory, name: name) }
        var template = Array("\(directory)/\(PrivateFiles.temporaryPrefix)-\(getpid())-XXXXXX".utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { path -> Int32 in
            let fd = mkstemp(path.baseAddress!)
            if fd >= 0 { _ = unlink(path.baseAddress!) }
            return fd
        }
        guard fd >= 0 else { throw SystemError(.io, "cannot create \(name) in \(directory): \(errnoText())") }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_nlink == 0 else {
            _ = posixClose(fd)
            throw keepsRemovedFiles(directory, name: name)
        }
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        _ = fchmod(fd, 0o600)
        return SystemFile(path: "\(name) in \(directory)", fd: fd)
    }

    /// The refusal of a temporary directory that cannot hold a file without a name.
    package static func keepsRemovedFiles(_ directory: String, name: String) -> SystemError {
        SystemError(.io, "cannot create \(name) in \(directory): its file system cannot hold a file without a name "
            + "(no O_TMPFILE, and a file removed while open is kept under another name, as FUSE and NFS do), so what is written there "
            + "would stay on it; set TMPDIR (and SQLITE_TMPDIR) to a folder on a local disk")
    }

    /// Reads up to `buffer.count` bytes at `offset`, leaving the file position alone.
    public func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws -> Int {
        while true {
            let n = pread(fd, buffer.baseAddress, buffer.count, off_t(offset))
            if n >= 0 { return n }
            if errno == EINTR { continue }
            throw SystemError(.io, "cannot read \(path): \(errnoText())")
        }
    }

    /// Reads up to `buffer.count` bytes; 0 means end of file.
    public func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        while true {
            let n = posixRead(fd, buffer.baseAddress, buffer.count)
            if n >= 0 { return n }
            if errno == EINTR { continue }
            throw SystemError(.io, "cannot read \(path): \(errnoText())")
        }
    }

    /// Writes all of `bytes`.
    public func write(_ bytes: UnsafeRawBufferPointer) throws {
        var offset = 0
        while offset < bytes.count {
            let n = posixWrite(fd, bytes.baseAddress! + offset, bytes.count - offset)
            if n < 0 {
                if errno == EINTR { continue }
                throw SystemError(.io, "cannot write \(path): \(errnoText())")
            }
            offset += n
            written += Int64(n)
        }
    }

    /// The bytes `write(_:)` has handed to the system, a write that failed part way included:
    /// what a reader at the other end of a pipe received.
    public private(set) var written: Int64 = 0

    /// Writes `bytes` at `offset`, leaving the file position alone.
    public func write(_ bytes: [UInt8], at offset: Int64) throws {
        try bytes.withUnsafeBytes { try write($0, at: offset) }
    }

    /// Writes `bytes` at `offset`, leaving the file position alone; a short write goes on.
    public func write(_ bytes: UnsafeRawBufferPointer, at offset: Int64) throws {
        var done = 0
        while done < bytes.count {
            let n = pwrite(fd, bytes.baseAddress! + done, bytes.count - done, off_t(offset + Int64(done)))
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { throw SystemError(.io, "cannot write \(path): \(errnoText())") }
            done += n
        }
    }

    /// Flushes the file's data to stable storage.
    public func sync() throws {
        guard fsync(fd) == 0 else { throw SystemError(.io, "cannot flush \(path) to disk: \(errnoText())") }
    }

    /// Where the next `write` lands; 0 for what has none (a pipe).
    public func position() -> Int64 {
        max(0, Int64(lseek(fd, 0, SEEK_CUR)))
    }

    /// Moves the file position back to the start, to read what was written.
    public func rewind() throws {
        guard lseek(fd, 0, SEEK_SET) == 0 else { throw SystemError(.io, "cannot read \(path) from its start: \(errnoText())") }
    }

    /// The file's size in bytes.
    public func size() -> Int64 {
        var info = stat()
        return fstat(fd, &info) == 0 ? Int64(info.st_size) : 0
    }

    /// Sets the file's modification time (and access time) to `milliseconds` since 1970: an
    /// export records when it was made there, where `prune` reads it without a key.
    public func setModificationTime(millisecondsSince1970 milliseconds: Int64) throws {
        let seconds = milliseconds >= 0 ? milliseconds / 1000 : (milliseconds - 999) / 1000
        let instant = timespec(tv_sec: time_t(seconds), tv_nsec: Int((milliseconds - seconds * 1000) * 1_000_000))
        let times = [instant, instant]
        guard futimens(fd, times) == 0 else { throw SystemError(.io, "cannot set the modification time of \(path): \(errnoText())") }
    }

    /// Closes now, reporting a failure (a full disk can surface only at close).
    public func close() throws {
        guard fd >= 0 else { return }
        let result = posixClose(fd)
        fd = -1
        guard result == 0 else { throw SystemError(.io, "cannot close \(path): \(errnoText())") }
    }
}

// The C functions, under names that do not clash with the methods above.
@inline(__always) private func posixRead(_ fd: Int32, _ buf: UnsafeMutableRawPointer?, _ n: Int) -> Int { read(fd, buf, n) }
@inline(__always) private func posixWrite(_ fd: Int32, _ buf: UnsafeRawPointer, _ n: Int) -> Int { write(fd, buf, n) }
@inline(__always) private func posixClose(_ fd: Int32) -> Int32 { close(fd) }

extension SystemFile: ByteSource {
    /// None: a descriptor is the kernel's, whose calls are safe from any thread. The rule of
    /// one owner is for the libraries that keep state of their own without locks (SQLite
    /// opened without its mutexes, zlib streams, libcrypto contexts).
    public var handleOwners: [HandleOwner] { [] }
}

extension SystemFile {
    /// Writes the rest of the file to `sink`, a megabyte at a time.
    public func copy(to sink: ByteSink) throws {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
        defer { buffer.deallocate() }
        while true {
            let n = try read(into: buffer)
            if n == 0 { return }
            try sink.write(UnsafeRawBufferPointer(rebasing: buffer[0..<n]))
        }
    }

    /// The rest of the file when it holds at most `limit` bytes, else its first `limit` bytes:
    /// bounded whatever the file is (a device that never ends, a pipe).
    public func read(upTo limit: Int) throws -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: limit)
        var filled = 0
        while filled < limit {
            let n = try bytes.withUnsafeMutableBytes { try read(into: UnsafeMutableRawBufferPointer(rebasing: $0[filled...])) }
            if n == 0 { break }
            filled += n
        }
        bytes.removeSubrange(filled...)
        return bytes
    }

    /// The whole rest of the file.
    public func readToEnd() throws -> [UInt8] {
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let n = try buffer.withUnsafeMutableBytes { try read(into: $0) }
            if n == 0 { return bytes }
            bytes += buffer[0..<n]
        }
    }
}
