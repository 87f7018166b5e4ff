import Foundation
import Testing
import PulseSystem
@testable import PulseArchive
@testable import PulseTestSupport

/// Attachments and document files of any size (docs/reliability.md, "Memory"): the pieces the
/// scanner hands over, the base64 decoded and encoded in pieces, and values spilled to an
/// unnamed file, each equal to what the whole-value path gives, wherever the pieces split.
@Suite("Large values: read, decoded and encoded in pieces")
struct LargeValueTests {
    /// The seed of every random draw here, printed so that a failure can be replayed.
    static let seed: UInt64 = {
        let seed = ProcessInfo.processInfo.environment["PULSE_TEST_SEED"].flatMap { UInt64($0) } ?? 24_007
        print("LargeValueTests: PULSE_TEST_SEED=\(seed)")
        return seed
    }()

    static func randomBytes(_ count: Int, seed: UInt64) -> [UInt8] {
        var state = seed &* 0x9E37_79B9_7F4A_7C15 | 1
        return (0..<count).map { _ in
            state ^= state << 13; state ^= state >> 7; state ^= state << 17
            return UInt8(truncatingIfNeeded: state >> 24)
        }
    }

    static func encoded(_ bytes: [UInt8]) -> [UInt8] {
        ByteBuffer.collecting { Base64.encode(bytes, appendingTo: &$0) }
    }

    /// Decodes `text` in the pieces `cuts` make.
    static func decode(_ text: [UInt8], cuts: [Int]) -> (bytes: [UInt8], failure: Base64.Failure?) {
        var decoder = Base64.Decoder()
        var out: [UInt8] = []
        var start = 0
        for end in cuts + [text.count] {
            text[start..<end].withUnsafeBytes { decoder.decode($0, appendingTo: &out) }
            start = end
        }
        return (out, decoder.finish())
    }

    @Test("base64 decoded in two pieces split at every position, for every length up to 3 groups and both paddings, is Foundation's decoding")
    func decodeEverySplit() throws {
        for length in 0...9 {
            let bytes = Self.randomBytes(length, seed: Self.seed + UInt64(length))
            let text = Self.encoded(bytes)
            #expect(Data(base64Encoded: Data(text)).map { [UInt8]($0) } == bytes, "the encoder agrees with Foundation at \(length) bytes")
            for cut in 0...text.count {
                let (decoded, failure) = Self.decode(text, cuts: [cut])
                #expect(failure == nil && decoded == bytes, "\(length) bytes split at \(cut): \(String(describing: failure))")
            }
        }
    }

    @Test("invalid base64 is refused at the same character, whatever the pieces: bad alphabet, misplaced padding, data after padding, a cut-short group")
    func invalidEverySplit() throws {
        let cases: [(String, Int64)] = [
            ("AAAA*AAA", 4), ("AAAAAA=A", 7), ("AA==AAAA", 4), ("A===", 1), ("====", 0), ("AAAAA", 5), ("AAAA AAA", 4),
            ("AAAAAA\nA", 6), ("AB=C", 3), ("AAA=\u{00e9}", 4),
        ]
        for (text, offset) in cases {
            let bytes = Array(text.utf8)
            #expect(Base64.decode(bytes) == nil, "\(text) is refused whole")
            for cut in 0...bytes.count {
                let (_, failure) = Self.decode(bytes, cuts: [cut])
                #expect(failure?.offset == offset, "\(text.debugDescription) split at \(cut): \(String(describing: failure))")
            }
        }
    }

    @Test("a large value decoded in pieces of every size from 1 to 9 bytes is the value")
    func decodeManyPieces() throws {
        let bytes = Self.randomBytes(3_001, seed: Self.seed)
        let text = Self.encoded(bytes)
        for size in 1...9 {
            let (decoded, failure) = Self.decode(text, cuts: Array(stride(from: size, to: text.count, by: size)))
            #expect(failure == nil && decoded == bytes, "pieces of \(size)")
        }
    }

    @Test("base64 encoded from pieces split at every position (and two splits) is the encoding of the whole")
    func encodeEverySplit() throws {
        for length in 0...10 {
            let bytes = Self.randomBytes(length, seed: Self.seed + 100 + UInt64(length))
            let whole = Self.encoded(bytes)
            #expect(String(decoding: whole, as: UTF8.self) == Data(bytes).base64EncodedString())
            for first in 0...length {
                for second in first...length {
                    var encoder = Base64.Encoder()
                    let out = ByteBuffer.collecting { out in
                        for range in [0..<first, first..<second, second..<length] {
                            bytes[range].withUnsafeBytes { encoder.encode($0, appendingTo: &out) }
                        }
                        encoder.finish(appendingTo: &out)
                    }
                    #expect(out == whole, "\(length) bytes split at \(first) and \(second)")
                }
            }
        }
    }

    /// A JSON string with every escape, `\/` most of all (the app's base64 has one per `/`).
    static let escapedString = #""A\/B\/\/C\\D\"E\u0041\u00e9\ud83c\udfc3\n\t\/xyz\/""#
    static let unescaped: [UInt8] = Array("A/B//C\\D\"EAé🏃\n\t/xyz/".utf8)

    @Test("a string read in pieces through a buffer of every size from 1 to its length: each escape whole, the pieces together the string")
    func stringPiecesEveryBoundary() throws {
        let text = Array(Self.escapedString.utf8)
        for capacity in 1...text.count {
            let scanner = JSONScanner(source: MemorySource(text), limits: .standard, capacity: capacity)
            var joined: [UInt8] = []
            try scanner.readStringPieces { joined.append(contentsOf: $0) }
            #expect(joined == Self.unescaped, "buffer of \(capacity) bytes")
            try scanner.expectEnd()
        }
    }

    @Test("a string read in pieces has no string limit, but is still strict JSON")
    func stringPiecesLimits() throws {
        var limits = ArchiveLimits.standard
        limits.maxStringBytes = 4
        let long = Array("\"AAAAAAAAAAAAAAAA\\/AAAA\"".utf8)
        var count = 0
        try JSONScanner(source: MemorySource(long), limits: limits, capacity: 5).readStringPieces { count += $0.count }
        #expect(count == 21)
        for bad in ["\"AA\u{01}A\"", "\"AA\\qA\"", "\"AAAA"] {
            #expect(throws: ArchiveError.self, "\(bad.debugDescription)") {
                try JSONScanner(source: MemorySource(Array(bad.utf8)), limits: limits, capacity: 3).readStringPieces { _ in }
            }
        }
    }

    @Test("a value past the inline limit is spilled to a file with no name and read back in pieces; a small one stays in memory")
    func spilled() throws {
        let dir = TemporaryDirectory()
        let large = Self.randomBytes(ArchiveBytes.inlineLimit * 2 + 12_345, seed: Self.seed)
        var builder = ArchiveBytes.Builder(spillingIn: dir.path)
        for start in stride(from: 0, to: large.count, by: 100_003) {
            try large[start..<min(large.count, start + 100_003)].withUnsafeBytes { try builder.append($0) }
        }
        let value = builder.finish()
        #expect(value.count == large.count && value.bytesInMemory == 0)
        #expect(try value.collected() == large)
        var pieces = 0
        try value.forEachPiece { #expect($0.count <= ArchiveBytes.pieceSize); pieces += 1 }
        #expect(pieces == (large.count + ArchiveBytes.pieceSize - 1) / ArchiveBytes.pieceSize)
        // No name: nothing in the directory it was spilled in.
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).isEmpty)

        var small = ArchiveBytes.Builder(spillingIn: dir.path)
        try [UInt8]([1, 2, 3]).withUnsafeBytes { try small.append($0) }
        #expect(small.finish().bytesInMemory == 3)
    }

    @Test("an archive whose attachment is over the old string limit reads, spilled, its `\\/` escapes split by the reader's buffer at each position of a base64 group")
    func largeAttachmentRead() throws {
        let dir = TemporaryDirectory()
        let bytes = Self.randomBytes(7 << 20, seed: Self.seed)
        var content = InMemoryContent()
        content.attachments = [("photo.jpg", bytes)]
        let path = dir.file("plain.json")
        try writeArchive(content, to: path, compressed: false)
        // The app's encoder writes every `/` as `\/`.
        let canonical = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        let appText = Array(String(decoding: canonical, as: UTF8.self).replacingOccurrences(of: "/", with: "\\/").utf8)
        let marker = Array("\"base64\":\"".utf8)
        let start = try #require((0..<appText.count).first { appText[$0..<min(appText.count, $0 + marker.count)].elementsEqual(marker) }) + marker.count
        // The first escape at each position of a group of four (counted in base64 characters).
        var escapes: [Int: Int] = [:]
        var character = 0, i = start
        while escapes.count < 4 {
            if appText[i] == UInt8(ascii: "\\") {
                escapes[character % 4] = escapes[character % 4] ?? i
                i += 1
            }
            character += 1
            i += 1
        }
        let buffer = 256 << 10
        for (position, escape) in escapes.sorted(by: { $0.key < $1.key }) {
            // Whitespace after the opening brace puts the reader's first buffer boundary just
            // before the backslash, between it and the slash, and just after.
            for shift in [-1, 0, 1] {
                let text = [appText[0]] + [UInt8](repeating: UInt8(ascii: " "), count: buffer - escape - 1 + shift) + appText.dropFirst()
                var visitor = CollectingVisitor()
                try ArchiveReader(bytes: text).read(into: &visitor)
                #expect(visitor.attachments["photo.jpg"] == bytes, "escape at position \(position) of its group, boundary shifted \(shift)")
            }
        }
    }
}
