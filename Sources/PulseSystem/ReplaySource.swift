#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A source whose bytes, from a marked point on, can be read twice: once by a look ahead,
/// then again by the reader that was interrupted for it.
///
/// The archive reader needs this when a table comes before anything that tells the two JSON
/// dialects apart: it looks ahead for the deciding key, then parses the table. A pipe cannot be
/// reopened or rewound, so what the look ahead reads is kept — the first megabyte in memory,
/// the rest in a private file that has no name on disk — and handed out again before the
/// source goes on. Memory stays flat whatever the look ahead has to cross.
public final class ReplaySource: ByteSource {
    private let base: ByteSource
    private var state = State.passing
    /// Recorded bytes kept in memory before they go to `spill`.
    private let memoryLimit: Int
    private var memory: [UInt8] = []
    private var spill: SpillFile?
    /// Bytes recorded so far, and (replaying) how many were handed out again.
    private var recorded: Int64 = 0
    private var replayed: Int64 = 0

    private enum State { case passing, recording, replaying }

    public var handleOwners: [HandleOwner] { base.handleOwners }

    public init(_ base: ByteSource, memoryLimit: Int = 1 << 20) {
        self.base = base
        self.memoryLimit = memoryLimit
    }

    /// Keeps every byte read from now on, for `replay`. Only one recording at a time.
    public func record() {
        precondition(state == .passing, "a ReplaySource records one look ahead at a time")
        state = .recording
        memory = []
        spill = nil
        recorded = 0
    }

    /// Hands out the recorded bytes again, then goes on with the source.
    public func replay() {
        precondition(state == .recording, "replay follows record")
        state = .replaying
        replayed = 0
    }

    public func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        switch state {
        case .passing:
            return try base.read(into: buffer)
        case .recording:
            let n = try base.read(into: buffer)
            if n > 0 { try keep(UnsafeRawBufferPointer(rebasing: buffer[0..<n])) }
            return n
        case .replaying:
            if replayed == recorded {
                state = .passing
                memory = []
                spill = nil
                return try base.read(into: buffer)
            }
            let n: Int
            if replayed < Int64(memory.count) {
                n = min(buffer.count, memory.count - Int(replayed))
                memory.withUnsafeBytes { bytes in
                    buffer.baseAddress!.copyMemory(from: bytes.baseAddress! + Int(replayed), byteCount: n)
                }
            } else {
                let wanted = Int(min(Int64(buffer.count), recorded - replayed))
                n = try spill!.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[0..<wanted]), at: replayed - Int64(memory.count))
            }
            replayed += Int64(n)
            return n
        }
    }

    private func keep(_ bytes: UnsafeRawBufferPointer) throws {
        let room = max(0, memoryLimit - memory.count)
        if room > 0 {
            memory.append(contentsOf: bytes.prefix(room))
        }
        if bytes.count > room {
            if spill == nil { spill = try SpillFile() }
            try spill!.append(UnsafeRawBufferPointer(rebasing: bytes[room...]))
        }
        recorded += Int64(bytes.count)
    }
}

/// A private file with no name (`PrivateFiles.unnamedFile`), so nothing is left behind
/// whatever becomes of the process: what it holds may be decrypted.
final class SpillFile {
    private let file: SystemFile
    private var length: Int64 = 0

    init() throws {
        file = try PrivateFiles.unnamedFile("the reader's look-ahead file")
    }

    func append(_ bytes: UnsafeRawBufferPointer) throws {
        try file.write(bytes)
        length += Int64(bytes.count)
    }

    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws -> Int {
        try file.read(into: buffer, at: offset)
    }
}

/// Bytes already read from a source (its first bytes, sniffed), then the rest of it: the
/// sniff needs no rewind, so a pipe reads as a file does.
public final class PrefixedSource: ByteSource {
    private let prefix: [UInt8]
    private var offset = 0
    private let rest: ByteSource

    public init(_ prefix: [UInt8], then rest: ByteSource) {
        self.prefix = prefix
        self.rest = rest
    }

    public var handleOwners: [HandleOwner] { rest.handleOwners }

    /// Reads up to `count` bytes from `source` (fewer only at its end: a pipe hands out what it
    /// has), and returns them with a source that reads them again before the rest.
    public static func head(of source: ByteSource, count: Int) throws -> (head: [UInt8], source: PrefixedSource) {
        var head = [UInt8](repeating: 0, count: count)
        var filled = 0
        while filled < count {
            let n = try head.withUnsafeMutableBytes { try source.read(into: UnsafeMutableRawBufferPointer(rebasing: $0[filled...])) }
            if n == 0 { break }
            filled += n
        }
        head.removeSubrange(filled...)
        return (head, PrefixedSource(head, then: source))
    }

    /// Fills the buffer from the prefix and then, in the same call, from the rest: a read is as
    /// large as it would be without the sniff.
    public func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        guard offset < prefix.count else { return try rest.read(into: buffer) }
        let n = min(buffer.count, prefix.count - offset)
        prefix.withUnsafeBytes { buffer.baseAddress!.copyMemory(from: $0.baseAddress! + offset, byteCount: n) }
        offset += n
        guard n < buffer.count else { return n }
        return n + (try rest.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[n...])))
    }
}
