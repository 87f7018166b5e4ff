/// Why a file-system step of the system layer failed. Messages name the path and the operating
/// system's reason (`strerror`).
public typealias SystemError = KindedError<SystemErrorKind>

public enum SystemErrorKind: String, Sendable {
    /// A system call on a file or directory failed: create, open, read, write, flush, rename,
    /// list, lock.
    case io
    /// A file that would be created exists already, and may not be replaced (an archive or a
    /// chart at the user's path): the caller's front end says to choose another name.
    case alreadyExists
}
