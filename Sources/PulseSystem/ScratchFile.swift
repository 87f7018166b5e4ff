import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A private scratch file with no name, for a value too large to hold in memory (an attachment
/// on its way from the archive to the store).
///
/// It has no name from the moment it exists (`O_TMPFILE`; elsewhere created 0600 and unlinked
/// at once), so a SIGKILL leaves nothing behind and no other process can open it. Written once
/// from the start, then read at offsets (`pread`), so readers on any thread share it without a
/// file position: a descriptor is the kernel's, exempt from the rule of one owner.
public final class ScratchFile: @unchecked Sendable {
    private let fd: Int32
    /// Bytes written so far; fixed once the writer hands the file on.
    public private(set) var count: Int64 = 0

    /// A new empty file in `directory` (the system's temporary directory by default).
    public init(in directory: String? = nil) throws {
        let directory = directory ?? Self.temporaryDirectory
        if let fd = SystemCalls.openUnnamed(in: directory) {
            self.fd = fd
            return
        }
        // No O_TMPFILE here (another system, or a file system without it): a random name,
        // exclusive and private, gone again before anything is written.
        var template = Array("\(directory)/.pulse-spill-XXXXXX".utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard fd >= 0 else { throw SystemError(.io, "cannot create a scratch file in \(directory): \(errnoText())") }
        let name = String(cString: template)
        _ = fchmod(fd, 0o600)
        guard unlink(name) == 0 else {
            let failure = errnoText()
            _ = close(fd)
            throw SystemError(.io, "cannot unlink the scratch file \(name): \(failure)")
        }
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        self.fd = fd
    }

    deinit { _ = close(fd) }

    static var temporaryDirectory: String {
        ProcessInfo.processInfo.environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
    }

    /// Appends `bytes` at the end.
    public func append(_ bytes: UnsafeRawBufferPointer) throws {
        var done = 0
        while done < bytes.count {
            let n = pwrite(fd, bytes.baseAddress! + done, bytes.count - done, off_t(count + Int64(done)))
            if n < 0 {
                if errno == EINTR { continue }
                throw SystemError(.io, "cannot write a scratch file in \(Self.temporaryDirectory) (a large value on its way to the store): \(errnoText())")
            }
            done += n
        }
        count += Int64(done)
    }

    /// Reads up to `buffer.count` bytes at `offset`; fewer only at the end.
    public func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws -> Int {
        var done = 0
        while done < buffer.count {
            let n = pread(fd, buffer.baseAddress! + done, buffer.count - done, off_t(offset + Int64(done)))
            if n < 0 {
                if errno == EINTR { continue }
                throw SystemError(.io, "cannot read back a scratch file: \(errnoText())")
            }
            if n == 0 { break }
            done += n
        }
        return done
    }
}
