/// Something worth telling the user that does not stop the read.
public struct ArchiveWarning: Sendable, Equatable, CustomStringConvertible {
    /// The table concerned (an archive key), or nil for the envelope.
    public let table: String?
    public let message: String

    public init(table: String?, message: String) {
        self.table = table
        self.message = message
    }

    public var description: String { message }
}
