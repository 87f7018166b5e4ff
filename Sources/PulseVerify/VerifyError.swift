/// Why `verify` itself could not finish (as opposed to the problems it finds in an archive,
/// which are `VerifyProblem`s in its report).
public struct VerifyError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Kind: String, Sendable, Equatable {
        /// A file verify wrote into its private scratch directory (a sorted run of keys) does
        /// not read back whole: cut short by the disk, or changed by another process.
        case damagedScratchFile
    }

    public let kind: Kind
    public let message: String

    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    public var description: String { message }
}
