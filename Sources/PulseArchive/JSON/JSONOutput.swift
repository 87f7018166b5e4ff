import PulseSystem

/// Buffers JSON text in the app's dialect and hands it to a sink in large chunks.
final class JSONOutput {
    private let sink: ByteSink
    private var buffer: ByteBuffer
    private let flushThreshold: Int
    private(set) var bytesWritten: Int64 = 0

    init(sink: ByteSink, flushThreshold: Int = 256 * 1024) {
        self.sink = sink
        self.flushThreshold = flushThreshold
        buffer = ByteBuffer(capacity: flushThreshold + 4096)
    }

    func flushIfFull() throws {
        if buffer.count >= flushThreshold { try flush() }
    }

    /// Hands the buffer to the sink in pieces of the flush threshold: one value can be tens of
    /// megabytes of text (8 MiB of control characters, escaped), and a sink that copies what it
    /// is given (`GzipWriter`'s blocks) then holds a piece, not a second copy.
    func flush() throws {
        guard !buffer.isEmpty else { return }
        try buffer.withBytes { bytes in
            var start = 0
            while start < bytes.count {
                let end = min(bytes.count, start + flushThreshold)
                try sink.write(UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: bytes[start..<end])))
                start = end
            }
        }
        bytesWritten += Int64(buffer.count)
        // A buffer that grew for one large value gives its memory back.
        buffer.removeAll(shrinkingAbove: 4 * (flushThreshold + 4096), to: flushThreshold + 4096)
    }

    @inline(__always) func byte(_ c: UInt8) { buffer.append(c) }

    /// Lets `body` append to the buffer directly: one access for a whole row.
    func appending(_ body: (inout ByteBuffer) throws -> Void) rethrows {
        try body(&buffer)
    }

    /// `"key":`
    func key(_ name: [UInt8]) {
        buffer.append(JSONByte.quote)
        JSONText.appendEscaped(name, to: &buffer)
        buffer.append(JSONByte.quote)
        buffer.append(JSONByte.colon)
    }

    func string(_ text: String) {
        JSONText.appendString(text, to: &buffer)
    }

    func int(_ value: Int64) {
        JSONText.appendInteger(value, to: &buffer)
    }

    func node(_ value: JSONNode) {
        value.appendCompact(to: &buffer)
    }

    /// A value the reader will hold whole, refused (nothing of it kept) when its text passes
    /// the whole-value limit.
    func wholeValue(_ value: JSONNode, limits: ArchiveLimits, _ what: @autoclosure () -> String) throws {
        let start = buffer.count
        value.appendCompact(to: &buffer)
        do {
            try limits.checkWholeValue(buffer.count - start, what())
        } catch {
            buffer.removeAll(from: start)
            throw error
        }
    }

    /// `"<base64 of bytes>"`, encoded straight into the buffer.
    func base64(_ bytes: [UInt8]) {
        buffer.append(JSONByte.quote)
        Base64.encode(bytes, appendingTo: &buffer)
        buffer.append(JSONByte.quote)
    }

    /// `"<base64 of contents>"`, encoded as the pieces come and flushed as the buffer fills:
    /// a value of any size passes through a buffer's worth of memory.
    func base64(pieces contents: some PieceReadable) throws {
        buffer.append(JSONByte.quote)
        var encoder = Base64.Encoder()
        try contents.forEachPiece { piece in
            encoder.encode(piece, appendingTo: &buffer)
            try flushIfFull()
        }
        encoder.finish(appendingTo: &buffer)
        buffer.append(JSONByte.quote)
    }

    func date(_ millis: Int64) throws {
        try JSONText.appendDate(millis, to: &buffer)
    }
}

