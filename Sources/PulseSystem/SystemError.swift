/// Why a file-system step of the system layer failed. Messages name the path and the operating
/// system's reason (`strerror`).
public typealias SystemError = KindedError<SystemErrorKind>

public enum SystemErrorKind: String, Sendable {
    /// A system call on a file or directory failed: create, open, read, write, flush, rename,
    /// list, lock.
    case io
}
