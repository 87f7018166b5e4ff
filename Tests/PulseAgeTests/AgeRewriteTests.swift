import Foundation
import Testing
import PulseAge
import PulseSystem

/// A sink over bytes in memory that can rewrite them, as a file can.
private final class RewritableBytes: RewritableSink {
    var handleOwners: [HandleOwner] { [] }

    private(set) var bytes: [UInt8] = []
    var bytesWritten: Int64 { Int64(bytes.count) }
    func write(_ buffer: UnsafeRawBufferPointer) throws { bytes += buffer }
    func finish() throws {}
    func patch(_ patch: [UInt8], at offset: Int64) throws { bytes.replaceSubrange(Int(offset)..<Int(offset) + patch.count, with: patch) }
}

/// The first chunk of an encrypted stream rewritten after later chunks were written (what a
/// gzip header's checksum needs), over an output that can rewrite; refused over one that cannot.
@Suite("Age: rewriting the first chunk")
struct AgeRewriteTests {
    static func plaintext(_ count: Int) -> [UInt8] { (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) } }

    @Test("over a rewritable output, a patch in the first chunk after several chunks decrypts as patched", arguments: [100, 65_536, 65_537, 3 * 65_536 + 5])
    func patchAfterLaterChunks(size: Int) throws {
        let identity = try AgeX25519Identity.generate()
        let output = RewritableBytes()
        let sink = try AgeEncryptingSink(output: output, recipients: [identity.recipient])
        var expected = Self.plaintext(size)
        try expected.withUnsafeBytes { try sink.write($0) }
        let patch: [UInt8] = [0xDE, 0xAD, 0xBE, 0xEF, 0x01, 0x02]
        try sink.patch(patch, at: 16)
        expected.replaceSubrange(16..<22, with: patch)
        #expect(sink.bytesWritten == Int64(size))
        try sink.finish()
        let decrypted = AgeTest.decrypt(output.bytes, keys: AgeKeys(identities: [identity]))
        #expect(decrypted.error == nil, "\(String(describing: decrypted.error))")
        #expect(decrypted.plaintext == expected)
    }

    @Test("a patch past the first chunk, or of a sealed first chunk over an output that cannot rewrite, is refused")
    func refusedPatches() throws {
        let identity = try AgeX25519Identity.generate()
        let rewritable = try AgeEncryptingSink(output: RewritableBytes(), recipients: [identity.recipient])
        try Self.plaintext(70_000).withUnsafeBytes { try rewritable.write($0) }
        #expect(throws: AgeError.self) { try rewritable.patch([1], at: 65_536) }
        let plain = try AgeEncryptingSink(output: AgeBytesSink(), recipients: [identity.recipient])
        try Self.plaintext(70_000).withUnsafeBytes { try plain.write($0) }
        #expect(throws: AgeError.self) { try plain.patch([1], at: 0) }
    }
}
