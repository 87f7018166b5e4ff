import PulseSystem

/// Reads a `ByteSource` through one fixed buffer, for the header's lines and the payload's
/// chunks, never asking the source for more than one buffer ahead. Errors of the source are
/// passed on as `AgeError`: its own unchanged (the armor's), others as `.io` naming the file.
final class AgeInput: ByteSource {
    private let source: ByteSource
    private let name: String
    private var buffer: [UInt8]
    private var start = 0
    private var end = 0
    private var atEnd = false
    /// Bytes handed out so far: the offset in the (decoded) age file of the next byte.
    private(set) var offset: Int64 = 0

    var handleOwners: [HandleOwner] { source.handleOwners }

    init(source: ByteSource, name: String, bufferSize: Int = 64 * 1024) {
        self.source = source
        self.name = name
        buffer = [UInt8](repeating: 0, count: bufferSize)
    }

    /// Reads from the source; an end of stream is remembered.
    private func fill() throws(AgeError) {
        guard !atEnd else { return }
        if start == end { start = 0; end = 0 }
        if end == buffer.count {
            // Move the unread tail to the front to make room.
            buffer.withUnsafeMutableBytes { bytes in
                bytes.baseAddress!.copyMemory(from: bytes.baseAddress! + start, byteCount: end - start)
            }
            end -= start
            start = 0
        }
        let count = try typedAge {
            try buffer.withUnsafeMutableBytes { bytes in
                try Self.read(source, into: UnsafeMutableRawBufferPointer(rebasing: bytes[end...]), name: name)
            }
        }
        if count == 0 { atEnd = true }
        end += count
    }

    static func read(_ source: ByteSource, into buffer: UnsafeMutableRawBufferPointer, name: String) throws(AgeError) -> Int {
        do {
            return try source.read(into: buffer)
        } catch let error as AgeError {
            throw error
        } catch {
            throw AgeError(.io, "\(name): reading failed: \(error)")
        }
    }

    /// The bytes buffered ahead, reading once if none are: empty only at the end.
    func peek(atLeast count: Int) throws(AgeError) -> ArraySlice<UInt8> {
        while end - start < count && !atEnd && end - start < buffer.count { try fill() }
        return buffer[start..<end]
    }

    /// The next line without its `\n`, or nil at the end of the stream. A last line without
    /// `\n` is returned with `terminated` false. A line longer than `limit` is an error.
    func readLine(limit: Int, tooLong: AgeErrorKind = .damagedHeader) throws(AgeError) -> (line: [UInt8], terminated: Bool)? {
        var line: [UInt8] = []
        while true {
            if start == end {
                try fill()
                if start == end { return line.isEmpty ? nil : (line, false) }
            }
            let slice = buffer[start..<end]
            if let newline = slice.firstIndex(of: UInt8(ascii: "\n")) {
                line += buffer[start..<newline]
                offset += Int64(newline + 1 - start)
                start = newline + 1
                guard line.count <= limit else { throw AgeError(tooLong, "\(name): a line is longer than \(limit) bytes") }
                return (line, true)
            }
            line += slice
            offset += Int64(slice.count)
            start = end
            guard line.count <= limit else { throw AgeError(tooLong, "\(name): a line is longer than \(limit) bytes") }
        }
    }

    /// Fills `destination` completely unless the stream ends first; returns the count.
    func readFully(into destination: UnsafeMutableRawBufferPointer) throws(AgeError) -> Int {
        var filled = 0
        while filled < destination.count {
            let count = try read(into: UnsafeMutableRawBufferPointer(rebasing: destination[filled...]))
            if count == 0 { break }
            filled += count
        }
        return filled
    }

    func read(into destination: UnsafeMutableRawBufferPointer) throws(AgeError) -> Int {
        guard destination.count > 0 else { return 0 }
        if start < end {
            let count = Swift.min(end - start, destination.count)
            buffer.withUnsafeBytes { bytes in
                destination.baseAddress!.copyMemory(from: bytes.baseAddress! + start, byteCount: count)
            }
            start += count
            offset += Int64(count)
            return count
        }
        guard !atEnd else { return 0 }
        // Nothing buffered: read straight into the caller's memory.
        let count = try Self.read(source, into: destination, name: name)
        if count == 0 { atEnd = true }
        offset += Int64(count)
        return count
    }
}

/// Runs `body`, whose only errors are `AgeError`s but whose type cannot say so (a closure
/// passed to a standard-library `withUnsafe…` that is not typed-throws).
func typedAge<R>(_ body: () throws -> R) throws(AgeError) -> R {
    do {
        return try body()
    } catch let error as AgeError {
        throw error
    } catch {
        throw AgeError(.io, "\(error)")
    }
}
