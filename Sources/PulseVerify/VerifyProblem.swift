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
    /// What the user can do, when that is for a front end to say in its own terms (the message
    /// names no command or option).
    public var advice: Advice?

    /// A remedy a front end words.
    public enum Advice: String, Sendable {
        /// A newer version reads the archive: its format is newer than this version reads.
        case update
        /// Export compressed: plain JSON carries no checksum, the gzip container does.
        case exportCompressed
    }

    public init(severity: Severity, table: String?, message: String, limit: ArchiveLimits.Name? = nil, advice: Advice? = nil) {
        self.severity = severity
        self.table = table
        self.message = message
        self.limit = limit
        self.advice = advice
    }

    /// The remedy for a reader's error, when a front end has one.
    static func advice(for error: ArchiveError?) -> Advice? {
        error?.kind == .unsupportedVersion ? .update : nil
    }
}
