import Foundation
import PulseSystem
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A directory of backups as `prune` sees it: the regular files named by the scheme are
/// candidates, each dated (`Backup`); every other entry (other names, directories, symbolic
/// links — even one named like a backup — devices, sockets) is ignored and never touched.
public struct BackupDirectory {
    public let path: String
    /// The candidates, in directory order.
    public let archives: [Backup]
    /// Every other entry's name, sorted.
    public let ignored: [String]

    /// Lists `path` without following any link inside it, and dates each candidate.
    /// - Parameter zone: the zone a name's date-time is read in when nothing else dates it.
    /// - Throws: `SystemError` when `path` is missing, not a directory or unreadable.
    public init(_ path: String, zone: TimeZone = .current) throws(SystemError) {
        self.path = path
        let directory = try Self.openDirectory(path)
        defer { close(directory) }
        var archives: [Backup] = []
        var ignored: [String] = []
        for name in try Self.entryNames(directory, path: path) {
            if let backupName = BackupName(name), let times = Self.times(of: name, gzipHeader: backupName.compressed && !backupName.encrypted, in: directory) {
                archives.append(Backup.dated(backupName, gzipTime: times.gzip, fileTime: times.file, zone: zone))
            } else {
                ignored.append(name)
            }
        }
        self.archives = archives
        self.ignored = ignored.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
    }

    /// What became of one removal.
    public enum Removal: Equatable, Sendable {
        case removed
        /// The entry was gone when its turn came (another prune, a person): not a failure.
        case vanished
        /// The entry is no longer a regular file (replaced by a link or a directory): left alone.
        case notRegularFile
        case failed(String)
    }

    /// Removes the entry `name` of the directory itself: `unlinkat` of that name, after an
    /// `fstatat` that does not follow links, so a link put there is never followed and
    /// anything but a regular file is left alone.
    public func remove(_ name: String) -> Removal {
        let directory: Int32
        do { directory = try Self.openDirectory(path) } catch { return .failed(error.message) }
        defer { close(directory) }
        var info = stat()
        if fstatat(directory, name, &info, AT_SYMLINK_NOFOLLOW) != 0 {
            return errno == ENOENT ? .vanished : .failed("cannot read \(path)/\(name): \(errnoText())")
        }
        guard info.st_mode & S_IFMT == S_IFREG else { return .notRegularFile }
        if unlinkat(directory, name, 0) != 0 {
            return errno == ENOENT ? .vanished : .failed("cannot remove \(path)/\(name): \(errnoText())")
        }
        return .removed
    }

    /// The names in the open directory `directory`, but `.` and `..`.
    private static func entryNames(_ directory: Int32, path: String) throws(SystemError) -> [String] {
        // fdopendir takes over a descriptor of its own.
        let listing = dup(directory)
        guard listing >= 0, let stream = fdopendir(listing) else {
            let text = errnoText()
            if listing >= 0 { close(listing) }
            throw SystemError(.io, "cannot list the directory \(path): \(text)")
        }
        defer { closedir(stream) }
        var names: [String] = []
        while true {
            errno = 0
            guard let entry = readdir(stream) else {
                if errno != 0 { throw SystemError(.io, "cannot list the directory \(path): \(errnoText())") }
                return names
            }
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
    }

    private static func openDirectory(_ path: String) throws(SystemError) -> Int32 {
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else {
            switch errno {
            case ENOENT: throw SystemError(.io, "there is no directory \(path)")
            case ENOTDIR: throw SystemError(.io, "\(path) is not a directory")
            default: throw SystemError(.io, "cannot open the directory \(path): \(errnoText())")
            }
        }
        return fd
    }

    /// The times a regular file shows without a key: its modification time, and, when
    /// `gzipHeader` (a plain `.json.gz`), the MTIME of its gzip header (an `.age` file's first
    /// bytes are age's, a plain `.json` has no header: the file time is all either shows); nil
    /// when `name` is not a regular file. Opened without following a link and without waiting
    /// (a FIFO put there meanwhile is not read), and checked again once open.
    private static func times(of name: String, gzipHeader: Bool, in directory: Int32) -> (file: Int64?, gzip: Int64?)? {
        var info = stat()
        guard fstatat(directory, name, &info, AT_SYMLINK_NOFOLLOW) == 0, info.st_mode & S_IFMT == S_IFREG else { return nil }
        guard gzipHeader else { return (modificationMilliseconds(info), nil) }
        let fd = openat(directory, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        // Unreadable: still a candidate (prune removes by name); its file time dates it.
        guard fd >= 0 else { return (modificationMilliseconds(info), nil) }
        defer { close(fd) }
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return nil }
        var header = [UInt8](repeating: 0, count: 8)
        let count = header.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
        // ID1 ID2 CM (deflate), FLG, then MTIME, four bytes little-endian.
        guard count == 8, header[0] == 0x1f, header[1] == 0x8b, header[2] == 8 else { return (modificationMilliseconds(info), nil) }
        let mtime = header[4..<8].reversed().reduce(Int64(0)) { $0 << 8 | Int64($1) }
        return (modificationMilliseconds(info), mtime)
    }

    /// The modification time in milliseconds since 1970.
    private static func modificationMilliseconds(_ info: stat) -> Int64 {
        #if canImport(Darwin)
        let time = info.st_mtimespec
        #else
        let time = info.st_mtim
        #endif
        return Int64(time.tv_sec) * 1000 + Int64(time.tv_nsec) / 1_000_000
    }

    /// The `-n` an export should give a new backup of the minute `stem` in `path`: one past the
    /// highest of that minute's names there (any entry, plain or `.age`), 1 (no suffix) when
    /// there is none. Never a lower one freed by `prune`, which would sort before a backup
    /// made earlier. Nil when a suffix there is longer than export writes, or the next would
    /// be: a name export wrote must be one it can go past.
    /// - Throws: `SystemError` when `path` cannot be listed.
    public static func nextSequence(forStem stem: String, in path: String) throws(SystemError) -> Int? {
        let directory = try openDirectory(path)
        defer { close(directory) }
        var highest = 0
        for name in try entryNames(directory, path: path) {
            guard let backup = BackupName(name), backup.stem == stem else { continue }
            guard let number = backup.sequenceNumber else { return nil }
            highest = max(highest, number)
        }
        return highest < BackupName.highestSequence ? highest + 1 : nil
    }
}
