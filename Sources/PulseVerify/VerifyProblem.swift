import PulseArchive

/// One finding of `verify`.
public struct VerifyProblem: Sendable, Equatable {
    public enum Severity: String, Sendable { case error, warning }
    public var severity: Severity
    /// A table key, `settings`, `attachments`, `documents`, or nil for the file as a whole.
    public var table: String?
    public var message: String
    /// The limit the archive passed, when that is the problem (a front end says how to raise it).
    public var limit: ArchiveLimits.Name?

    public init(severity: Severity, table: String?, message: String, limit: ArchiveLimits.Name? = nil) {
        self.severity = severity
        self.table = table
        self.message = message
        self.limit = limit
    }
}
