import PulseSystem

/// Why the document store could not do what it was asked. Messages name the path and the
/// operating system's reason.
public typealias DocumentsError = KindedError<DocumentsErrorKind>

public enum DocumentsErrorKind: String, Sendable {
    /// Examining or listing the document tree failed at the operating-system level.
    case io
}
