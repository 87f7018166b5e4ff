import PulseArchive
import PulseDigest

extension SHA1 {
    /// The SHA-1 of a value read in pieces (an attachment or document file of any size): the
    /// fingerprint `verify` and `diff` compare, computed without holding the value.
    static func hash(pieces contents: some PieceReadable) throws -> [UInt8] {
        let digest = IncrementalDigest.sha1()
        try contents.forEachPiece { digest.update($0) }
        return digest.finish()
    }
}
