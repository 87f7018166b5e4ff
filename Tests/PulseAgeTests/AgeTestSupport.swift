import CZlib
import Foundation
import PulseAge
import PulseDigest
import PulseSystem

/// Bytes in memory as a `ByteSource`, handing out at most `step` bytes per read (to exercise
/// the readers' buffering) and remembering how far it was read.
final class AgeBytesSource: ByteSource {
    var handleOwners: [HandleOwner] { [] }

    let bytes: [UInt8]
    let step: Int
    private(set) var position = 0

    init(_ bytes: [UInt8], step: Int = 1 << 20) {
        self.bytes = bytes
        self.step = step
    }

    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        let count = min(buffer.count, step, bytes.count - position)
        bytes.withUnsafeBytes { buffer.baseAddress!.copyMemory(from: $0.baseAddress! + position, byteCount: count) }
        position += count
        return count
    }
}

/// Collects what is written, and whether `finish` was called.
final class AgeBytesSink: ByteSink {
    var handleOwners: [HandleOwner] { [] }

    private(set) var bytes: [UInt8] = []
    private(set) var finished = false

    func write(_ buffer: UnsafeRawBufferPointer) throws { bytes += buffer }
    func finish() throws { finished = true }
}

/// Collects what it is given, and rewrites it where asked, as a file would.
final class AgeRewritableBytesSink: RewritableSink {
    var handleOwners: [HandleOwner] { [] }

    private(set) var bytes: [UInt8] = []
    var bytesWritten: Int64 { Int64(bytes.count) }

    func write(_ buffer: UnsafeRawBufferPointer) throws { bytes += buffer }
    func patch(_ patch: [UInt8], at offset: Int64) throws {
        bytes.replaceSubrange(Int(offset)..<Int(offset) + patch.count, with: patch)
    }
    func finish() throws {}
}

enum AgeTest {
    /// The format's public test vectors, carried by the repository (Tests/Resources/README.md).
    static let testkit = Repository.root + "/Tests/Resources/age-testkit"

    /// Everything a decryptor releases (read in pieces of `readSize`), its SHA-256, and the
    /// error that ended it, if any.
    static func decrypt(_ file: [UInt8], keys: AgeKeys, name: String = "test.age", readSize: Int = 10_000, step: Int = 1 << 20)
        -> (plaintext: [UInt8], sha256: [UInt8], error: AgeError?)
    {
        var plaintext: [UInt8] = []
        let hasher = SHA256()
        do {
            let source = try AgeDecryptingSource(source: AgeBytesSource(file, step: step), name: name, keys: keys)
            var buffer = [UInt8](repeating: 0, count: readSize)
            while true {
                let count = try buffer.withUnsafeMutableBytes { try source.read(into: $0) }
                if count == 0 { break }
                plaintext += buffer[..<count]
                buffer.withUnsafeBytes { hasher.update(UnsafeRawBufferPointer(rebasing: $0[..<count])) }
            }
            return (plaintext, hasher.finish(), nil)
        } catch let error as AgeError {
            return (plaintext, hasher.finish(), error)
        } catch {
            return (plaintext, hasher.finish(), AgeError(.io, "unexpected error type: \(error)"))
        }
    }

    /// - Parameter announced: whether the plaintext's length is given to the sink (recorded at
    ///   the start), else the file is written as `age` writes one, without a length record.
    static func encrypt(_ plaintext: [UInt8], recipients: [AgeX25519Recipient], writeSize: Int = 50_000, announced: Bool = true) throws -> [UInt8] {
        let sink = AgeBytesSink()
        let encryptor = try AgeEncryptingSink(output: sink, recipients: recipients, plaintextLength: announced ? Int64(plaintext.count) : nil)
        try write(plaintext, to: encryptor, writeSize: writeSize)
        return sink.bytes
    }

    /// `encrypt` over a sink that can rewrite what it wrote, as a file can: the length is
    /// recorded at the end, in place.
    static func encryptRewriting(_ plaintext: [UInt8], recipients: [AgeX25519Recipient], writeSize: Int = 50_000) throws -> [UInt8] {
        let sink = AgeRewritableBytesSink()
        let encryptor = try AgeEncryptingSink(output: sink, recipients: recipients)
        try write(plaintext, to: encryptor, writeSize: writeSize)
        return sink.bytes
    }

    static func encrypt(_ plaintext: [UInt8], passphrase: String, workFactor: Int) throws -> [UInt8] {
        let sink = AgeBytesSink()
        let encryptor = try AgeEncryptingSink(output: sink, passphrase: Array(passphrase.utf8), workFactor: workFactor)
        try write(plaintext, to: encryptor, writeSize: 50_000)
        return sink.bytes
    }

    private static func write(_ plaintext: [UInt8], to sink: AgeEncryptingSink, writeSize: Int) throws {
        var index = 0
        while index < plaintext.count {
            let end = min(index + writeSize, plaintext.count)
            try plaintext[index..<end].withUnsafeBytes { try sink.write($0) }
            index = end
        }
        try sink.finish()
    }

    /// Equality as a plain Bool, so that a failed expectation does not print megabytes.
    static func same(_ a: [UInt8], _ b: [UInt8]) -> Bool { a == b }

    static func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

    /// Deterministic bytes that do not repeat within a chunk.
    static func pattern(_ count: Int) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 2_654_435_761 >> 13) }
    }

    /// Inflates a zlib stream (some test vectors are stored compressed).
    static func inflateZlib(_ input: [UInt8]) -> [UInt8]? {
        var stream = z_stream()
        guard inflateInit_(&stream, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else { return nil }
        defer { inflateEnd(&stream) }
        var output: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        var input = input
        return input.withUnsafeMutableBufferPointer { inBuffer -> [UInt8]? in
            stream.next_in = inBuffer.baseAddress
            stream.avail_in = uInt(inBuffer.count)
            while true {
                let status = chunk.withUnsafeMutableBufferPointer { out -> Int32 in
                    stream.next_out = out.baseAddress
                    stream.avail_out = uInt(out.count)
                    return inflate(&stream, Z_NO_FLUSH)
                }
                output += chunk[..<(chunk.count - Int(stream.avail_out))]
                if status == Z_STREAM_END { return output }
                guard status == Z_OK else { return nil }
            }
        }
    }
}
