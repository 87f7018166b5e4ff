import Foundation
import PulseSystem
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A directory of backups as `prune` sees it: the regular files named by the scheme are
/// candidates; every other entry (other names, directories, symbolic links — even one named
/// like a backup — devices, sockets) is ignored and never touched.
public struct BackupDirectory {
    public let path: String
    /// The candidates, in directory order.
    public let archives: [BackupName]
    /// Every other entry's name, sorted.
    public let ignored: [String]

    /// Lists `path` without following any link inside it.
    /// - Throws: `SystemError` when `path` is missing, not a directory or unreadable.
    public init(_ path: String) throws(SystemError) {
        self.path = path
        let directory = try Self.openDirectory(path)
        defer { close(directory) }
        // fdopendir takes over a descriptor of its own.
        let listing = dup(directory)
        guard listing >= 0, let stream = fdopendir(listing) else {
            let text = errnoText()
            if listing >= 0 { close(listing) }
            throw SystemError(.io, "Cannot list the directory \(path): \(text)")
        }
        defer { closedir(stream) }
        var archives: [BackupName] = []
        var ignored: [String] = []
        while true {
            errno = 0
            guard let entry = readdir(stream) else {
                if errno != 0 { throw SystemError(.io, "Cannot list the directory \(path): \(errnoText())") }
                break
            }
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            if name == "." || name == ".." { continue }
            if let backup = BackupName(name), Self.isRegularFile(name, in: directory) {
                archives.append(backup)
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
            return errno == ENOENT ? .vanished : .failed("Cannot read \(path)/\(name): \(errnoText())")
        }
        guard info.st_mode & S_IFMT == S_IFREG else { return .notRegularFile }
        if unlinkat(directory, name, 0) != 0 {
            return errno == ENOENT ? .vanished : .failed("Cannot remove \(path)/\(name): \(errnoText())")
        }
        return .removed
    }

    private static func openDirectory(_ path: String) throws(SystemError) -> Int32 {
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else {
            switch errno {
            case ENOENT: throw SystemError(.io, "The directory \(path) does not exist")
            case ENOTDIR: throw SystemError(.io, "\(path) is not a directory")
            default: throw SystemError(.io, "Cannot open the directory \(path): \(errnoText())")
            }
        }
        return fd
    }

    private static func isRegularFile(_ name: String, in directory: Int32) -> Bool {
        var info = stat()
        guard fstatat(directory, name, &info, AT_SYMLINK_NOFOLLOW) == 0 else { return false }
        return info.st_mode & S_IFMT == S_IFREG
    }
}
