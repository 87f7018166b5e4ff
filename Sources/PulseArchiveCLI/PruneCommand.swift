import Foundation
import PulseAge
import PulseArchive
import PulseBackups
import PulseStore

/// `prune DIR --keep-… N [--dry-run] [--json]`: removes the backups no rule keeps.
struct PruneCommand: Subcommand {
    static let keepOptions: [(RetentionPolicy.Rule, String)] = [
        (.last, "--keep-last"), (.hourly, "--keep-hourly"), (.daily, "--keep-daily"),
        (.weekly, "--keep-weekly"), (.monthly, "--keep-monthly"), (.yearly, "--keep-yearly"),
    ]

    static let spec = CommandSpec(
        name: "prune",
        abstract: "Remove the backups in a directory that no --keep rule keeps.",
        discussion: """
            Candidates are the regular files named pulseloop-backup-<yyyy-MM-dd-HHmm>[-n].json[.gz][.age] (plain JSON, gzip, either encrypted); every other entry is listed as ignored and never touched. They are sorted newest first by when each was made: the gzip header's time, else the file's modification time (both set by export; a plain .json or an .age shows only the latter; one that no zone's clock could show as the name's minute does not count), else the name's date-time in the local zone; backups of one second by their names (then -n). Periods are in the local time the name records. --keep-last N keeps the N newest; each --keep-<period> N keeps the newest archive of each of the N newest hours, days, ISO weeks, months or years that have one (restic's forget policy, each period counted once); an archive is kept when any rule keeps it. N = 0 turns a rule off; at least one rule must be on. The newest archive is never removed, and is read all the way first (an encrypted one without a key: its header, and its length must be one a complete age file can have): when it does not read, nothing is removed and the exit code is 1.
            """,
        arguments: [.init(name: "dir", help: "The directory of backups.")],
        options: [
            .value("--keep-last", valueName: "n", help: "Keep the n newest archives."),
            .value("--keep-hourly", valueName: "n", help: "Keep the newest archive of each of the last n hours that have one."),
            .value("--keep-daily", valueName: "n", help: "Keep the newest archive of each of the last n days that have one."),
            .value("--keep-weekly", valueName: "n", help: "Keep the newest archive of each of the last n ISO weeks (Monday to Sunday) that have one."),
            .value("--keep-monthly", valueName: "n", help: "Keep the newest archive of each of the last n months that have one."),
            .value("--keep-yearly", valueName: "n", help: "Keep the newest archive of each of the last n years that have one."),
            .flag("--dry-run", "-n", help: "Print the plan and remove nothing."),
            .json, .maxSize, .maxInflateRatio, .maxStringSize, .maxObjectSize, .identity, .passphraseFile,
        ]
    )

    let directory: String
    let policy: RetentionPolicy
    let dryRun: Bool
    let json: Bool
    let limits: ArchiveLimits
    let keys: AgeKeys
    /// An identity, a passphrase file or the variable was given.
    let keysGiven: Bool
    /// The local zone: a backup nothing else dates is dated by its name read in it.
    let zone: TimeZone
    let console: Console

    init(_ arguments: ParsedArguments, console: Console) throws {
        directory = arguments.positionals[0]
        var policy = RetentionPolicy()
        for (rule, option) in Self.keepOptions {
            let count = try ArgumentValues.integer(arguments.value(option), option: option, range: 0...Int.max) ?? 0
            switch rule {
            case .last: policy.last = count
            case .hourly: policy.hourly = count
            case .daily: policy.daily = count
            case .weekly: policy.weekly = count
            case .monthly: policy.monthly = count
            case .yearly: policy.yearly = count
            }
        }
        guard !policy.isEmpty else {
            throw UsageError(message: "prune needs at least one --keep-last, --keep-hourly, --keep-daily, --keep-weekly, --keep-monthly or --keep-yearly with n ≥ 1: without one it would remove every archive but the newest")
        }
        self.policy = policy
        dryRun = arguments.flag("--dry-run")
        json = arguments.flag("--json")
        limits = try ArgumentValues.limits(arguments)
        keys = try KeyOptions.decryptionKeys(arguments, console: console)
        keysGiven = KeyOptions.keysGiven(arguments, console: console)
        zone = try ArgumentValues.timeZone(nil, environment: console.environment, commandHasOption: false)
        self.console = console
    }

    /// The newest archive did not read: worded with this tool's options, and thrown so that
    /// `--json` prints its failure object (it printed nothing).
    private struct Refusal: Error, CustomStringConvertible {
        let description: String
    }

    func run() throws -> Int32 {
        let outcome: Prune.Outcome
        do {
            // Read as `inspect` reads: every value checked and the rows staged (a repeated key too).
            outcome = try Prune.run(directory: directory, policy: policy, dryRun: dryRun, limits: limits, keys: keys, keysGiven: keysGiven,
                                    zone: zone, now: ArgumentValues.nowMillis(), read: { try ArchiveValidation.validate($0) })
        } catch let refusal as UnreadableNewestArchive where refusal.reason == .keysDoNotOpen {
            let cause = ErrorAdvice.message(refusal.cause, command: Self.spec.name)
            throw Refusal(description: "refusing to prune: the keys given do not open the newest archive \(refusal.path) (\(cause)); nothing was removed. Give --identity or the passphrase it was encrypted with (or no key, to check it as far as its header), then prune again")
        } catch let refusal as UnreadableNewestArchive where refusal.reason == .needsKey {
            throw Refusal(description: "refusing to prune: \(refusal.cause); nothing was removed. Give --identity or the passphrase (--passphrase-file, \(KeyOptions.variable)) to read it all the way, then prune again")
        } catch let refusal as UnreadableNewestArchive where refusal.reason == .couldNotCheck {
            let cause = ErrorAdvice.message(refusal.cause, command: Self.spec.name)
            throw Refusal(description: "refusing to prune: the newest archive \(refusal.path) could not be checked, for no fault of its own (\(cause)); nothing was removed. Prune again when the machine has what it lacked")
        } catch let refusal as UnreadableNewestArchive {
            let cause = ErrorAdvice.message(refusal.cause, command: Self.spec.name)
            throw Refusal(description: "refusing to prune: the newest archive \(refusal.path) does not read (\(cause)); nothing was removed. Replace it with a good backup or move it out of the directory, then prune again")
        }
        for (_, reason) in outcome.failed { console.err("Error: \(reason)") }
        for backup in outcome.future {
            let madeAt = (try? ArchiveDate.format(backup.madeAt)) ?? String(backup.madeAt)
            console.err("warning: \(ShownText.quoted(backup.name.fileName)) was made after now (\(madeAt), by its \(Self.dateSource(backup.madeAtSource))): "
                + "kept, and left out of the policy, so that the backups made since stay the newest; was a clock wrong when it was made? "
                + "Move it out of the directory once you have checked it")
        }
        if let found = outcome.newestMisnamed, let newest = outcome.newest?.fileName {
            console.err("warning: the newest archive \(ShownText.quoted(newest)) is \(found), which its name does not say: \(found.hasPrefix("not encrypted") ? "anyone who can read the file can read it; " : "")export names what it writes truthfully, so this file was renamed or made otherwise")
        }
        if outcome.newestCheck == .header, let newest = outcome.newest?.fileName {
            console.err("warning: the newest archive \(ShownText.quoted(newest)) is encrypted and no key was given: it was checked only as far as its age header and its length (the one its header records: not cut short); give --identity or a passphrase to check it all the way")
        }
        try console.out(json ? Self.json(outcome).text : Self.text(outcome))
        return outcome.failed.isEmpty ? 0 : 1
    }

    static func dateSource(_ source: Backup.Source) -> String {
        switch source {
        case .gzipHeader: "gzip header"
        case .fileTime: "file's time"
        case .name: "name"
        }
    }

    static func json(_ outcome: Prune.Outcome) -> JSONReport {
        let problems = { (list: [(file: String, reason: String)]) -> JSONReport in
            .array(list.map { .object([("file", .string($0.file)), ("reason", .string($0.reason))]) })
        }
        return .object([
            ("kept", .array(outcome.kept.map {
                .object([("file", .string($0.name.fileName)), ("reasons", .array($0.reasons.map { .string($0) })),
                         ("madeAt", .string((try? ArchiveDate.format($0.backup.madeAt)) ?? "")),
                         ("madeAtFrom", .string($0.backup.madeAtSource.rawValue))])
            })),
            ("removed", .array(outcome.removed.map { .string($0) })),
            ("ignored", .array(outcome.ignored.map { .string($0) })),
            ("abandoned", .array(outcome.abandoned.map { .string($0) })),
            ("future", .array(outcome.future.map { .string($0.name.fileName) })),
            ("dryRun", .bool(outcome.dryRun)),
            ("skipped", problems(outcome.skipped)),
            ("failed", problems(outcome.failed)),
            ("newestCheck", outcome.newestCheck.map { .string($0.rawValue) } ?? .null),
            ("newestMisnamed", outcome.newestMisnamed.map { .string($0) } ?? .null),
        ])
    }

    static func text(_ outcome: Prune.Outcome) -> String {
        let shown = ShownText.listed
        var rows: [[String]] = []
        for kept in outcome.kept { rows.append(["keep", shown(kept.name.fileName), kept.reasons.joined(separator: ", ")]) }
        for file in outcome.removed { rows.append([outcome.dryRun ? "would remove" : "removed", shown(file), ""]) }
        for (file, reason) in outcome.skipped { rows.append(["skipped", shown(file), reason]) }
        for (file, reason) in outcome.failed { rows.append(["failed", shown(file), reason]) }
        for file in outcome.abandoned {
            rows.append([outcome.dryRun ? "would remove" : "removed", shown(file), "a partial file an export killed while writing left (its process is gone)"])
        }
        for file in outcome.ignored { rows.append(["ignored", shown(file), "not a backup (only a regular file named by the scheme is one)"]) }
        var text = rows.isEmpty ? "  (no entries)" : Formatting.columns(["action", "file", "why"], rows, numeric: [])
        text += "\n\(outcome.kept.count) kept, \(outcome.removed.count) \(outcome.dryRun ? "to remove" : "removed"), \(outcome.ignored.count) ignored"
        if !outcome.abandoned.isEmpty {
            text += ", \(outcome.abandoned.count) partial file\(outcome.abandoned.count == 1 ? "" : "s") of killed exports \(outcome.dryRun ? "to remove" : "removed")"
        }
        if !outcome.skipped.isEmpty { text += ", \(outcome.skipped.count) skipped" }
        if !outcome.failed.isEmpty { text += ", \(outcome.failed.count) failed" }
        if outcome.dryRun { text += " (dry run: nothing was removed)" }
        return text
    }
}
