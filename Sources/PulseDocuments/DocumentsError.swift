/// Why the document store could not do what it was asked.
///
/// Messages name the path and the operating system's reason; the `kind` lets a caller branch
/// without parsing the message.
public struct DocumentsError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Kind: String, Sendable, Equatable {
        /// Examining or listing the document tree failed at the operating-system level.
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
