import PulseArchive
import PulseSQLite
import PulseSystem

/// Why `verify` itself could not finish (as opposed to the problems it finds in an archive,
/// which are `VerifyProblem`s in its report).
public typealias VerifyError = KindedError<VerifyErrorKind>

public enum VerifyErrorKind: String, Sendable {
    /// A file verify wrote into its private scratch directory (a sorted run of keys) does not
    /// read back whole: cut short by the disk, or changed by another process.
    case damagedScratchFile
    /// The machine failed verify: memory, open files, space in the temporary directory, a
    /// system call. Nothing is said of the archive, neither sound nor damaged: a job must not
    /// read it as a damaged backup (EMFILE once made a sound archive's round trip "false").
    case couldNotFinish
}

extension VerifyError {
    /// `error` as verify's failure to finish, saying that the archive is not judged.
    static func couldNotFinish(_ error: any Error) -> VerifyError {
        if let error = error as? VerifyError, error.kind == .couldNotFinish { return error }
        return VerifyError(.couldNotFinish, "verify could not finish, for no fault of the archive (which it neither passes nor fails): \(error)")
    }
}

extension VerifyErrorKind: MachineFailureKind {
    /// Both: a scratch file cut short is the disk's doing, not the archive's.
    public var isMachineFailure: Bool { true }
}
