import PulseSystem

/// Why `verify` itself could not finish (as opposed to the problems it finds in an archive,
/// which are `VerifyProblem`s in its report).
public typealias VerifyError = KindedError<VerifyErrorKind>

public enum VerifyErrorKind: String, Sendable {
    /// A file verify wrote into its private scratch directory (a sorted run of keys) does not
    /// read back whole: cut short by the disk, or changed by another process.
    case damagedScratchFile
}
