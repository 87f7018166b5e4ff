import PulseArchive
import PulseSystem
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The newest archive did not read: `prune` removes nothing, so a broken backup never causes
/// the good ones before it to be deleted.
public struct UnreadableNewestArchive: Error, CustomStringConvertible {
    public let path: String
    /// The reader's error (an `ArchiveError` for a damaged, refused or unreadable archive).
    public let cause: Error

    public var description: String {
        "refusing to prune: the newest archive \(path) does not read (\(cause)); nothing was removed. Replace it with a good backup (or move it out of the directory), then prune again"
    }
}

/// The check `prune` makes of the newest archive before it removes anything.
public enum NewestArchiveCheck {
    /// Reads the archive at `path` all the way, as `inspect` reads it; an encrypted one (`.age`)
    /// only as far as `checkAgeHeaderWithoutKeys` can without keys.
    /// - Throws: `UnreadableNewestArchive`.
    public static func check(_ name: BackupName, at path: String, limits: ArchiveLimits) throws(UnreadableNewestArchive) {
        do {
            if name.encrypted {
                try checkAgeHeaderWithoutKeys(path)
            } else {
                _ = try ArchiveReader(path: path, limits: limits).inspect()
            }
        } catch {
            throw UnreadableNewestArchive(path: path, cause: error)
        }
    }

    /// The first line of every age file, `age-encryption.org/v1`.
    static let ageVersionLine = Array("age-encryption.org/v1\n".utf8)

    /// The check of an encrypted archive without keys, for now: its first bytes are age's
    /// version line. To be replaced by a real read of the age header once the age module lands
    /// (and by a read of the whole archive when keys are given).
    static func checkAgeHeaderWithoutKeys(_ path: String) throws(SystemError) {
        let fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { throw SystemError(.io, "cannot open it: \(errnoText())") }
        defer { close(fd) }
        var head = [UInt8](repeating: 0, count: ageVersionLine.count)
        var filled = 0
        while filled < head.count {
            let n = head.withUnsafeMutableBytes { read(fd, $0.baseAddress! + filled, $0.count - filled) }
            if n < 0 {
                if errno == EINTR { continue }
                throw SystemError(.io, "cannot read it: \(errnoText())")
            }
            if n == 0 { break }
            filled += n
        }
        guard filled == head.count, head == ageVersionLine else {
            throw SystemError(.io, "not an age-encrypted file: it does not begin with the line age-encryption.org/v1")
        }
    }
}
