/// Buffers JSON text in the app's dialect and hands it to a sink in large chunks.
final class JSONOutput {
    private let sink: ByteSink
    private var buffer: [UInt8] = []
    private let flushThreshold: Int
    private(set) var bytesWritten: Int64 = 0

    init(sink: ByteSink, flushThreshold: Int = 256 * 1024) {
        self.sink = sink
        self.flushThreshold = flushThreshold
        buffer.reserveCapacity(flushThreshold + 4096)
    }

    func flushIfFull() throws {
        if buffer.count >= flushThreshold { try flush() }
    }

    func flush() throws {
        guard !buffer.isEmpty else { return }
        try buffer.withUnsafeBytes { try sink.write($0) }
        bytesWritten += Int64(buffer.count)
        buffer.removeAll(keepingCapacity: true)
    }

    @inline(__always) func byte(_ c: UInt8) { buffer.append(c) }

    func raw(_ text: StaticString) {
        text.withUTF8Buffer { buffer.append(contentsOf: $0) }
    }

    /// `"key":`
    func key(_ name: [UInt8]) {
        buffer.append(0x22)
        appendEscaped(name)
        buffer.append(0x22)
        buffer.append(0x3A)
    }

    func string(_ text: String) {
        buffer.append(0x22)
        var text = text
        text.withUTF8 { appendEscaped($0) }
        buffer.append(0x22)
    }

    /// A string whose bytes need no escaping (UUIDs, dates); the caller guarantees it.
    func plainString(_ bytes: UnsafeBufferPointer<UInt8>) {
        buffer.append(0x22)
        buffer.append(contentsOf: bytes)
        buffer.append(0x22)
    }

    func int(_ value: Int64) {
        if value == 0 { buffer.append(0x30); return }
        var digits: (UInt64, Int) = (value.magnitude, 0)
        if value < 0 { buffer.append(0x2D) }
        var tmp = [UInt8](repeating: 0, count: 20)
        while digits.0 > 0 {
            tmp[digits.1] = UInt8(0x30 + digits.0 % 10)
            digits.0 /= 10
            digits.1 += 1
        }
        for i in stride(from: digits.1 - 1, through: 0, by: -1) { buffer.append(tmp[i]) }
    }

    /// The shortest decimal that reads back as the same double; integral values without `.0`.
    func double(_ value: Double) {
        if value == value.rounded(), abs(value) < 9.007_199_254_740_992e15 {
            if value == 0 && value.sign == .minus { raw("-0"); return }
            int(Int64(value))
            return
        }
        var text = value.description
        if text.hasSuffix(".0") { text.removeLast(2) }
        text.withUTF8 { buffer.append(contentsOf: $0) }
    }

    func bool(_ value: Bool) {
        if value { raw("true") } else { raw("false") }
    }

    func date(_ millis: Int64) throws {
        buffer.append(0x22)
        try ArchiveDate.append(millis, to: &buffer)
        buffer.append(0x22)
    }

    /// Escapes as the app does: `"`, `\` and control characters, and `/` as `\/`.
    private func appendEscaped(_ bytes: some Collection<UInt8>) {
        for c in bytes {
            switch c {
            case 0x22: buffer.append(0x5C); buffer.append(0x22)
            case 0x5C: buffer.append(0x5C); buffer.append(0x5C)
            case 0x2F: buffer.append(0x5C); buffer.append(0x2F)
            case 0x0A: buffer.append(0x5C); buffer.append(0x6E)
            case 0x0D: buffer.append(0x5C); buffer.append(0x72)
            case 0x09: buffer.append(0x5C); buffer.append(0x74)
            case 0x08: buffer.append(0x5C); buffer.append(0x62)
            case 0x0C: buffer.append(0x5C); buffer.append(0x66)
            case 0..<0x20:
                raw("\\u00")
                buffer.append(Self.hex[Int(c >> 4)])
                buffer.append(Self.hex[Int(c & 0xF)])
            default:
                buffer.append(c)
            }
        }
    }

    private static let hex: [UInt8] = Array("0123456789abcdef".utf8)
}
