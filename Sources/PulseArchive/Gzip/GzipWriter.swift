import CZlib
import Foundation
import PulseSystem

/// Compresses what it is given into one gzip member and writes it to a sink, deflating blocks
/// of the content on worker threads.
///
/// The content is cut into blocks (`blockSize`, and with `rsyncable` also at content-defined
/// points, `ContentBoundaries`). Each block is deflated on its own by one of `threads` workers,
/// primed with the 32 KiB of content before it as a dictionary (none after an rsyncable
/// boundary: the reset that keeps a change local), and ends on a byte boundary (sync flush),
/// the last one with the final block; the writer puts them back in order, so the pieces make
/// one raw deflate stream, and combines their CRC-32s (`crc32_combine`). Which worker deflates
/// a block never changes its bytes: the file is the same for every number of threads. At most
/// `2 × threads + 2` blocks are in flight, so memory stays flat.
///
/// Every byte of the file is covered by a checksum: the trailer's CRC-32 and length cover the
/// content; deflate has bits that do not change the content (padding, unused code lengths), so
/// the header also carries a CRC-32 of everything after it (extra subfield `PA`, ignored by
/// other gzip readers), patched in when the stream is complete, and a header CRC (FHCRC) over
/// it all. The patch is why the output must be a `RewritableSink`: a sink that could not take
/// it would get a header whose checksum no reader accepts.
/// The header's MTIME is the instant the caller gives (an export's `exportedAt`), so two
/// exports of the same data at the same instant are identical, and `prune` can read when a
/// backup was made without decompressing it (docs/backups.md); none (0) by default.
///
/// Used from one thread at a time (the caller's): the workers' zlib streams are theirs, and
/// the output is written, in order, on the caller's thread.
public final class GzipWriter: ByteSink {
    /// pigz's block size: large enough that the sync flush and the fresh Huffman tables of
    /// each block cost under 1 %, small enough that two cores get a share of a small file.
    public static let defaultBlockSize = 128 * 1024
    /// The dictionary deflate's window can use: 32 KiB.
    static let dictionarySize = 32 * 1024
    /// More threads than any machine this runs on can keep busy with one stream.
    public static let maxThreads = 64
    /// The processors this process may use, within 1…`maxThreads`.
    public static var availableThreads: Int {
        min(max(1, ProcessInfo.processInfo.activeProcessorCount), maxThreads)
    }

    private let output: RewritableSink
    /// Where the header begins in the output, for the patch.
    private let headerOffset: Int64
    private let header: [UInt8]
    private let blockSize: Int
    /// The limits whose inflate-ratio rule the output keeps to; nil for none (tests that build
    /// a decompression bomb).
    private let keepsTo: ArchiveLimits?
    private let workers: DeflateWorkers
    private let maxInFlight: Int
    /// Content-defined boundaries, when rsyncable.
    private var boundaries: ContentBoundaries?

    /// The block being filled: its dictionary, then its bytes.
    private var window: [UInt8] = []
    private var dictionaryCount = 0
    /// The block is full or ends at a boundary; it is queued when more content comes (so the
    /// block that ends the stream is known to be the last one).
    private var blockClosed = false
    /// The next block starts without a dictionary (the block closed at a content boundary).
    private var resetNext = false

    /// Blocks queued, oldest first, kept until written (their content, for the stored form).
    private var inFlight: [DeflateJob] = []
    /// Windows of written blocks, to be filled again (at most `maxInFlight`).
    private var spareWindows: [[UInt8]] = []

    /// What went out after the header, and the checksums of the content and of that.
    private var writtenContent: Int64 = 0
    private var writtenCompressed: Int64 = 0
    private var contentCRC: uLong = crc32(0, nil, 0)
    private var streamCRC: uLong = crc32(0, nil, 0)

    public var handleOwners: [HandleOwner] { output.handleOwners }

    /// - Parameters:
    ///   - level: zlib's compression level, 6 by default (what `gzip` uses); at 6 the search
    ///     is `DeflateTuning.archive`'s.
    ///   - blockSize: the content of one block (at most; rsyncable blocks may end sooner).
    ///   - keepsTo: content that would inflate past `writerInflateRatio` of these limits is
    ///     stored instead of compressed, block by block, so the reader's inflate-ratio guard
    ///     never refuses a file this writer made, whatever the content (an 8 MiB attachment of
    ///     zeros).
    ///   - modificationTime: the header's MTIME, seconds since 1970 (0: none), as
    ///     `headerTime(millisecondsSince1970:)` gives it.
    ///   - threads: the deflate threads, 1…`maxThreads`; the output does not depend on it.
    ///   - rsyncable: also end blocks at content-defined points, with no dictionary after them.
    public init(output: RewritableSink, level: Int32 = 6, blockSize: Int = GzipWriter.defaultBlockSize,
                keepsTo: ArchiveLimits? = .standard, modificationTime: UInt32 = 0,
                threads: Int = 1, rsyncable: Bool = false) throws {
        precondition(blockSize > 0 && (1...Self.maxThreads).contains(threads), "block size \(blockSize), threads \(threads)")
        self.output = output
        self.blockSize = blockSize
        self.keepsTo = keepsTo
        boundaries = rsyncable ? ContentBoundaries() : nil
        maxInFlight = 2 * threads + 2
        headerOffset = output.bytesWritten
        header = GzipFraming.header(modificationTime: modificationTime, level: level)
        workers = try DeflateWorkers(threads: threads, level: level, tuning: level == 6 ? .archive : nil, capacity: maxInFlight)
        window.reserveCapacity(blockSize)
        try header.withUnsafeBytes { try output.write($0) }
    }

    /// The MTIME for an instant in milliseconds since 1970: its whole seconds, or 0 (gzip's
    /// "no time") for an instant its 32 unsigned bits cannot hold (before 1970, after 2106).
    public static func headerTime(millisecondsSince1970 milliseconds: Int64) -> UInt32 {
        let seconds = milliseconds / 1000
        guard milliseconds >= 0, seconds <= Int64(UInt32.max) else { return 0 }
        return UInt32(seconds)
    }

    public func write(_ bytes: UnsafeRawBufferPointer) throws {
        var offset = 0
        while offset < bytes.count {
            if blockClosed { try startNextBlock() }
            let filled = window.count - dictionaryCount
            var take = min(blockSize - filled, bytes.count - offset)
            let slice = UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + take])
            if let boundary = boundaries?.scan(slice, blockCount: filled) {
                take = boundary
                resetNext = true
                blockClosed = true
            }
            window.append(contentsOf: UnsafeBufferPointer(start: slice.baseAddress?.assumingMemoryBound(to: UInt8.self), count: take))
            if window.count - dictionaryCount == blockSize { blockClosed = true }
            offset += take
        }
    }

    /// Queues the closed block and starts the next one with the end of this one's window as
    /// its dictionary (the content since the last reset, at most 32 KiB), or none.
    private func startNextBlock() throws {
        let closed = window
        try queue(last: false)
        let keep = resetNext ? 0 : min(Self.dictionarySize, closed.count)
        var next = spareWindows.popLast() ?? []
        next.removeAll(keepingCapacity: true)
        next.reserveCapacity(keep + blockSize)
        next += closed[(closed.count - keep)...]
        window = next
        dictionaryCount = keep
        blockClosed = false
        resetNext = false
    }

    private func queue(last: Bool) throws {
        while inFlight.count >= maxInFlight { try writeOldest() }
        let job = DeflateJob(window: window, dictionaryCount: dictionaryCount, isLast: last, slot: DeflateResults.Slot())
        do {
            try workers.jobs.push(job)
        } catch {
            // A worker failed and ended the queue: its error is the one to tell.
            throw workers.results.failure ?? error
        }
        inFlight.append(job)
        while let oldest = inFlight.first, workers.results.isReady(oldest.slot) { try writeOldest() }
    }

    /// Waits for the oldest block and writes it: as deflated, or stored when its ratio would
    /// take the file past the writer's inflate ratio.
    private func writeOldest() throws {
        let job = inFlight.removeFirst()
        let block = try workers.results.wait(for: job.slot)
        var bytes = block.bytes, compressedCRC = block.compressedCRC
        let content = writtenContent + Int64(job.inputCount)
        if let limits = keepsTo,
           limits.exceedsInflateRatio(content: content, compressed: writtenCompressed + Int64(bytes.count),
                                      ratio: limits.writerInflateRatio, grace: limits.inflateRatioGrace / 2) {
            bytes = GzipFraming.storedBlocks(job.window[job.dictionaryCount...], last: job.isLast)
            compressedCRC = GzipFraming.crc(bytes)
        }
        contentCRC = pulse_crc32_combine(contentCRC, block.contentCRC, Int64(job.inputCount))
        streamCRC = pulse_crc32_combine(streamCRC, compressedCRC, Int64(bytes.count))
        writtenContent = content
        writtenCompressed += Int64(bytes.count)
        try bytes.withUnsafeBytes { try output.write($0) }
        // Handed back with no other reference left, so they are refilled in place.
        _ = consume bytes
        workers.results.recycle((consume block).bytes)
        if spareWindows.count < maxInFlight { spareWindows.append((consume job).window) }
    }

    public func finish() throws {
        try queue(last: true)
        while !inFlight.isEmpty { try writeOldest() }
        workers.stop()
        let trailer = GzipFraming.trailer(contentCRC: UInt32(truncatingIfNeeded: contentCRC), contentBytes: writtenContent)
        streamCRC = GzipFraming.crc(trailer, after: streamCRC)
        try trailer.withUnsafeBytes { try output.write($0) }
        let patch = GzipFraming.patch(header: header, streamCRC: UInt32(truncatingIfNeeded: streamCRC))
        try output.patch(patch, at: headerOffset + Int64(GzipFraming.streamCRCOffset))
        try output.finish()
    }
}
