import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A private scratch file with no name, for a value too large to hold in memory (an attachment
/// on its way from the archive to the store).
///
/// It has no name from the moment it exists (`SystemFile.createUnnamed`: `O_TMPFILE`, elsewhere created 0600 and unlinked
/// at once), so a SIGKILL leaves nothing behind and no other process can open it. Written once
/// from the start, then read at offsets (`pread`), so readers on any thread share it without a
/// file position: a descriptor is the kernel's, exempt from the rule of one owner.
public final class ScratchFile: @unchecked Sendable {
    private let file: SystemFile
    /// Bytes written so far; fixed once the writer hands the file on.
    public private(set) var count: Int64 = 0

    /// A new empty file in `directory` (the system's temporary directory by default).
    public init(in directory: String? = nil) throws {
        let directory = directory ?? PrivateFiles.temporaryBase
        file = try SystemFile.createUnnamed(in: directory, name: "a scratch file in \(directory) (a large value on its way to the store)")
    }

    /// Appends `bytes` at the end.
    public func append(_ bytes: UnsafeRawBufferPointer) throws {
        try file.write(bytes, at: count)
        count += Int64(bytes.count)
    }

    /// Reads up to `buffer.count` bytes at `offset`; fewer only at the end.
    public func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws -> Int {
        var done = 0
        while done < buffer.count {
            let n = try file.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[done...]), at: offset + Int64(done))
            if n == 0 { break }
            done += n
        }
        return done
    }
}
