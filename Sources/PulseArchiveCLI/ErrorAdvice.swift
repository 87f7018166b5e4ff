import PulseArchive
import PulseStore
import PulseSystem
import PulseVerify

/// The command line's part of an error message: what to do, in this tool's terms. The libraries
/// say what went wrong and where, with a kind (and a limit or an advice) to branch on, and never
/// name a command or an option; where the remedy is one, it is added here.
enum ErrorAdvice {
    /// The message printed after "Error: " for a failure `command` let through.
    static func message(_ error: any Error, command: String) -> String {
        switch error {
        case let error as ArchiveError: archive(error.message, kind: error.kind, limit: error.limit)
        case let error as StoreError: store(error, command: command)
        case let error as SystemError: system(error)
        default: "\(error)"
        }
    }

    /// An archive reader's or writer's message with its remedy: the option that raises the
    /// limit it passed, the options that give a key, an update.
    static func archive(_ message: String, kind: ArchiveError.Kind?, limit: ArchiveLimits.Name?) -> String {
        let text = LimitOptions.advice(message, limit: limit)
        switch kind {
        case .encrypted?: return KeyOptions.advice(text, kind: .encrypted)
        case .unsupportedVersion?: return "\(text): \(update)"
        default: return text
        }
    }

    /// One of `verify`'s problems with its remedy, on one line whatever a name in it holds
    /// (an attachment name or a settings key with a line break).
    static func verify(_ problem: VerifyProblem) -> String {
        let text = LimitOptions.advice(ShownText.oneLine(problem.message), limit: problem.limit)
        switch problem.advice {
        case .update?: return "\(text): \(update)"
        case .exportCompressed?: return "\(text); pulse-archive export writes gzip (its CRC-32 covers every byte) unless given --compression none"
        case nil: return text
        }
    }

    static func store(_ error: StoreError, command: String) -> String {
        switch error.kind {
        case .missingStore: "\(error.message); create one with `pulse-archive import` or `pulse-archive demo`"
        case .newerStore: "\(error.message): \(update)"
        case .foreignDatabase: "\(error.message); give --store the directory of a PulseLoop store, or a new directory"
        case .backfillFailed: "\(error.message); run `pulse-archive readiness --backfill` to retry"
        case .storeNotEmpty where command == ImportCommand.spec.name:
            "\(error.message): pass --replace to make it equal to the archive (after a safety backup) or --merge to add only what it lacks"
        case .storeNotEmpty: "\(error.message); choose an empty --store directory"
        default: error.message
        }
    }

    static func system(_ error: SystemError) -> String {
        switch error.kind {
        case .alreadyExists: "\(error.message); choose another name (pulse-archive never overwrites a file)"
        default: error.message
        }
    }

    private static let update = "update pulse-archive"
}
