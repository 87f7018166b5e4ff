/// An error kind that tells the machine's failure (memory, threads, open files, room in the
/// temporary directory, a system call) from a fault in the data being read.
///
/// A command that checks a backup must not blame the backup when the machine failed it:
/// `verify` then says it could not finish, `prune` that it could not check the newest archive,
/// instead of "damaged" or "does not read" (which sends a user to replace a sound backup).
public protocol MachineFailureKind {
    var isMachineFailure: Bool { get }
}

/// An error that can say whether the machine failed (`MachineFailureKind`).
public protocol MachineFailureReporting: Error {
    var isMachineFailure: Bool { get }
}

extension KindedError: MachineFailureReporting where Kind: MachineFailureKind {
    public var isMachineFailure: Bool { kind.isMachineFailure }
}

extension SystemErrorKind: MachineFailureKind {
    /// Every system call's failure: the data read arrives through the reader's own errors.
    public var isMachineFailure: Bool { true }
}

public enum MachineFailure {
    /// Whether `error` is the machine's failure rather than the data's.
    public static func caused(_ error: any Error) -> Bool {
        (error as? any MachineFailureReporting)?.isMachineFailure ?? false
    }
}
