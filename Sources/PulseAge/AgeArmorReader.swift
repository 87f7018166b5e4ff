import PulseSystem

/// Decodes the ASCII armor (RFC 7468 strict, as the age tool writes and reads it): whitespace
/// lines before `-----BEGIN AGE ENCRYPTED FILE-----`, then lines of padded canonical base64 of
/// exactly 64 columns but the last (shorter), `-----END AGE ENCRYPTED FILE-----`, then only
/// whitespace. CRLF line ends are accepted. One line is decoded at a time, so memory is flat.
final class AgeArmorReader: ByteSource {
    static let beginLine = Array("-----BEGIN AGE ENCRYPTED FILE-----".utf8)
    static let endLine = Array("-----END AGE ENCRYPTED FILE-----".utf8)
    static let columns = 64
    /// Whitespace tolerated before and after the armor, as the age tool does.
    static let maxWhitespace = 1024

    private let input: AgeInput
    private let name: String
    private var started = false
    private var ended = false
    private var decoded: [UInt8] = []
    private var decodedStart = 0
    private var lineNumber = 0

    var handleOwners: [HandleOwner] { input.handleOwners }

    init(input: AgeInput, name: String) {
        self.input = input
        self.name = name
    }

    private func failure(_ what: String) -> AgeError {
        AgeError(.armor, "\(name): the ASCII armor is malformed at line \(lineNumber): \(what)")
    }

    private func line() throws(AgeError) -> [UInt8] {
        guard let (line, _) = try input.readLine(limit: Self.maxWhitespace + Self.columns, tooLong: .armor) else {
            throw failure("the file ends before -----END AGE ENCRYPTED FILE-----")
        }
        lineNumber += 1
        return line.last == 0x0d ? Array(line.dropLast()) : line
    }

    private static func isSpace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0a || byte == 0x0d || byte == 0x0b || byte == 0x0c
    }

    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        try readDecoded(into: buffer)
    }

    private func readDecoded(into buffer: UnsafeMutableRawBufferPointer) throws(AgeError) -> Int {
        if decodedStart == decoded.count {
            guard !ended else { return 0 }
            try decodeLine()
        }
        let count = Swift.min(decoded.count - decodedStart, buffer.count)
        decoded.withUnsafeBytes { bytes in
            buffer.baseAddress!.copyMemory(from: bytes.baseAddress! + decodedStart, byteCount: count)
        }
        decodedStart += count
        return count
    }

    private func decodeLine() throws(AgeError) {
        var whitespace = 0
        while !started {
            let lineStart = input.offset
            let text = try line()
            if text.allSatisfy(Self.isSpace) {
                // Every byte counts, a CR of CRLF and the line end too, as in `looksLikeAge`.
                whitespace += Int(input.offset - lineStart)
                guard whitespace <= Self.maxWhitespace else { throw failure("too much whitespace before the armor") }
                continue
            }
            guard text == Self.beginLine else {
                throw failure("expected -----BEGIN AGE ENCRYPTED FILE----- (the file is neither a binary age file nor in age's ASCII armor)")
            }
            started = true
        }
        let text = try line()
        decoded = []
        decodedStart = 0
        if text == Self.endLine {
            try endOfArmor()
            return
        }
        guard !text.isEmpty else { throw failure("an empty line") }
        guard text.count <= Self.columns else { throw failure("a line is longer than \(Self.columns) columns") }
        guard let bytes = AgeBase64.decodePadded(text) else { throw failure("not canonical padded base64") }
        if bytes.count < Self.columns / 4 * 3 {
            guard try line() == Self.endLine else { throw failure("a short line that is not followed by -----END AGE ENCRYPTED FILE-----") }
            try endOfArmor()
        }
        decoded = bytes
    }

    /// After the end line: only a little whitespace may follow.
    private func endOfArmor() throws(AgeError) {
        ended = true
        var seen = 0
        var chunk = [UInt8](repeating: 0, count: 256)
        while true {
            let count = try typedAge { try chunk.withUnsafeMutableBytes { bytes in try input.read(into: bytes) } }
            if count == 0 { return }
            guard chunk[..<count].allSatisfy(Self.isSpace) else { throw failure("data after -----END AGE ENCRYPTED FILE-----") }
            seen += count
            guard seen < Self.maxWhitespace else { throw failure("too much whitespace after the armor") }
        }
    }
}
