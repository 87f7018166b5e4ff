import CZlib
import PulseSystem

/// One block of the stream for a deflate worker: the uncompressed bytes just before it (the
/// dictionary its matches may reach back into), then its own bytes.
struct DeflateJob: @unchecked Sendable {
    /// The dictionary followed by the block's bytes, in one allocation.
    let window: [UInt8]
    let dictionaryCount: Int
    /// The block that ends the stream: deflated with `Z_FINISH` (its last deflate block has
    /// BFINAL set), every other one with `Z_SYNC_FLUSH` (ends on a byte boundary), so the
    /// pieces, concatenated in order, are one raw deflate stream.
    let isLast: Bool
    let slot: DeflateResults.Slot

    var inputCount: Int { window.count - dictionaryCount }
}

/// A block as a worker deflated it, with the checksums the writer combines in order.
struct DeflatedBlock: Sendable {
    let bytes: [UInt8]
    /// CRC-32 of the block's uncompressed bytes (the gzip trailer's, combined).
    let contentCRC: uLong
    /// CRC-32 of `bytes` (the header's stream checksum, combined).
    let compressedCRC: uLong
}

/// zlib's match search, set after level 6's defaults: a long lazy match (258) and a short
/// hash chain (12) instead of 16 and 128. On archive JSON (docs/performance.md, "the deflate
/// search") this writes a file as small as level 6 does (0.9972 × `gzip -6`'s size against
/// 0.9966 ×) for about three quarters of level 6's CPU: deflate is most of an export's work.
struct DeflateTuning: Sendable, Equatable {
    var goodLength: Int32, maxLazy: Int32, niceLength: Int32, maxChain: Int32

    static let archive = DeflateTuning(goodLength: 8, maxLazy: 258, niceLength: 64, maxChain: 12)
}

/// One raw deflate stream (no zlib or gzip wrapper), reused block after block: reset, primed
/// with the block's dictionary, fed the block. The output depends only on the job, never on
/// which worker or which earlier blocks the stream saw, so the file is the same whatever the
/// number of threads.
final class BlockDeflater {
    /// zlib records the stream's address at `deflateInit2_` and checks it on every call.
    private let stream: UnsafeMutablePointer<z_stream>
    private var started = false
    /// The worker thread that uses the stream, handed over by the writer that made it.
    let owner = HandleOwner("a zlib deflate stream")

    /// What `deflateReset` gives back to the level's defaults: set again after every reset.
    private let tuning: DeflateTuning?

    init(level: Int32, tuning: DeflateTuning? = nil) throws {
        self.tuning = tuning
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
        // Every property is set: from here a throw runs `deinit`, the one place that frees.
        // -15: raw deflate with a 32 KiB window; the writer frames the gzip member itself.
        let status = deflateInit2_(stream, level, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY,
                                   ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size))
        guard status == Z_OK else {
            throw ArchiveError(.io, "cannot start the gzip encoder: \(ZlibStatus.describe(status))")
        }
        started = true
    }

    deinit {
        owner.check()
        if started { deflateEnd(stream) }
        stream.deinitialize(count: 1)
        stream.deallocate()
    }

    /// - Parameter spare: an array whose storage the output may reuse (a block the writer is
    ///   done with): a fresh allocation per block was a page fault per 4 KiB of it, and on two
    ///   cores the faults and the memory map's lock cost a tenth of the export's time.
    /// The job is consumed: its window is released when the block is done, before the writer
    /// can take the block, so the writer's reference to it is the only one and it can refill it.
    func deflate(_ job: consuming DeflateJob, reusing spare: consuming [UInt8] = []) throws -> DeflatedBlock {
        owner.check()
        var output = consume spare
        return try job.window.withUnsafeBufferPointer { window in
            let base = UnsafeMutablePointer(mutating: window.baseAddress)
            try check(deflateReset(stream), "resetting the stream")
            if let tuning {
                try check(deflateTune(stream, tuning.goodLength, tuning.maxLazy, tuning.niceLength, tuning.maxChain), "tuning the search")
            }
            if job.dictionaryCount > 0 {
                try check(deflateSetDictionary(stream, base, uInt(job.dictionaryCount)), "setting the dictionary")
            }
            let input = base.map { $0 + job.dictionaryCount }
            let contentCRC = crc32(crc32(0, nil, 0), input, uInt(job.inputCount))
            stream.pointee.next_in = input
            stream.pointee.avail_in = uInt(job.inputCount)
            // deflateBound covers a finished stream; a sync flush adds an empty stored block.
            let bound = Int(deflateBound(stream, uLong(job.inputCount))) + 16
            // An array, not `repeatElement`: the stdlib fills it at once, where appending a
            // repeated element went element by element through unspecialised generic code in
            // debug builds (under the thread sanitizer, minutes for one test).
            if output.count < bound { output.append(contentsOf: [UInt8](repeating: 0, count: bound - output.count)) }
            var produced = 0
            let flush = job.isLast ? Z_FINISH : Z_SYNC_FLUSH
            while true {
                if produced == output.count { output += [UInt8](repeating: 0, count: 64 * 1024) }
                let room = output.count - produced
                let status = output.withUnsafeMutableBufferPointer { out -> Int32 in
                    stream.pointee.next_out = out.baseAddress! + produced
                    stream.pointee.avail_out = uInt(room)
                    return CZlib.deflate(stream, flush)
                }
                guard status == Z_OK || status == Z_STREAM_END || status == Z_BUF_ERROR else {
                    throw ArchiveError(.io, "gzip compression failed: \(ZlibStatus.describe(status))")
                }
                let left = Int(stream.pointee.avail_out)
                produced += room - left
                // Done: the stream ended (Z_FINISH), or the flush fit with room to spare
                // (zlib's rule: avail_out == 0 means call again with the same flush).
                if status == Z_STREAM_END || (!job.isLast && left > 0) { break }
            }
            output.removeSubrange(produced...)
            let compressedCRC = output.withUnsafeBufferPointer { crc32(crc32(0, nil, 0), $0.baseAddress, uInt($0.count)) }
            return DeflatedBlock(bytes: output, contentCRC: contentCRC, compressedCRC: compressedCRC)
        }
    }

    private func check(_ status: Int32, _ step: String) throws {
        guard status == Z_OK else { throw ArchiveError(.io, "gzip compression failed \(step): \(ZlibStatus.describe(status))") }
    }
}
