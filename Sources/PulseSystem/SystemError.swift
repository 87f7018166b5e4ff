/// Why a file-system step of the system layer failed.
///
/// Messages name the path and the operating system's reason (`strerror`), so a caller can show
/// them as they are; the `kind` lets it branch without parsing the message.
public struct SystemError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Kind: String, Sendable, Equatable {
        /// A system call on a file or directory failed: create, open, read, write, flush,
        /// rename, list, lock.
        case io
    }

    public let kind: Kind
    public let message: String

    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    public var description: String { message }
}
