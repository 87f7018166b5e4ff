import Foundation
import PulseAge
import PulseArchive
import PulseSystem

/// `prune`: the policy applied to a directory of backups, after the newest has been read.
public enum Prune {
    public struct Outcome {
        /// Newest first, with the rules that keep each.
        public let kept: [RetentionPolicy.Kept]
        /// Removed, or with `dryRun` to be removed; newest first.
        public let removed: [String]
        /// Planned for removal but left: gone meanwhile, or no longer a regular file.
        public let skipped: [(file: String, reason: String)]
        /// Planned for removal, and the removal failed.
        public let failed: [(file: String, reason: String)]
        /// Entries that are not candidates, sorted.
        public let ignored: [String]
        /// What exports killed while writing a backup left (their writer gone): partial files,
        /// and the placeholders of commits at backups' names; removed, or with `dryRun` to be
        /// removed. Sorted.
        public let abandoned: [String]
        public let dryRun: Bool
        /// The newest archive made by now, which was read first and is never removed.
        public let newest: BackupName?
        /// Archives made after now (a clock set wrong when they were made): kept, outside the
        /// policy, newest first. Also in `kept`.
        public let future: [Backup]
        /// How far the newest archive was checked before anything was removed (nil: no archive).
        public let newestCheck: NewestArchiveCheck.Depth?
        /// What the newest archive was found to be where its name says otherwise ("not
        /// encrypted"), or nil.
        public let newestMisnamed: String?
    }

    /// Lists `directory`, plans with `policy`, reads the newest archive and, unless `dryRun`,
    /// removes what no rule keeps.
    /// - Throws: `SystemError` when the directory cannot be listed; `UnreadableNewestArchive`
    ///   when the newest does not read (nothing is removed, even with `dryRun` it is reported).
    /// - Precondition: `policy` is not empty (the command line refuses an empty one).
    /// - Parameter keysGiven: keys were given on purpose (an identity, a passphrase file): an
    ///   encrypted newest archive they do not open is refused, not checked by its header only.
    /// - Parameter zone: the zone a name's date-time is read in for a backup nothing else dates.
    /// - Parameter now: milliseconds since 1970; a backup made after it is kept outside the policy.
    public static func run(directory: String, policy: RetentionPolicy, dryRun: Bool, limits: ArchiveLimits, keys: AgeKeys? = nil,
                           keysGiven: Bool = false, zone: TimeZone = .current, now: Int64,
                           read: (ArchiveReader) throws -> ArchiveSummary = { try $0.inspect() }) throws -> Outcome {
        precondition(!policy.isEmpty, "a prune policy needs at least one rule that keeps archives")
        // What killed exports left here (a partial file, a commit's placeholder at a backup's
        // name) is no backup: removed first, as the next export here would, so that it is
        // neither listed nor taken for the newest; reported, and the dry run says the same.
        // Only those of backups' names: `.notes.partial-pulse-archive-1` is not an export's.
        let abandoned = AtomicFile.removeAbandonedPartials(in: directory, targets: { BackupName($0) != nil }, dryRun: dryRun).sorted()
        let listing = try BackupDirectory(directory, zone: zone)
        // A commit's placeholder at a backup's name (`NoReplaceMove`, where the file system has
        // no hard links: a FAT stick) is no backup: an export committing now (ignored), or one
        // a kill left (with its partial file, abandoned; in a dry run still there).
        let partialFiles = listing.ignored.filter(AtomicFile.isPartialFile)
        var livePlaceholders: [String] = []
        let archives = listing.archives.filter { backup in
            let fileName = backup.name.fileName
            if abandoned.contains(fileName) { return false }
            guard partialFiles.contains(where: { NoReplaceMove.isPlaceholder(join(directory, fileName), for: $0) }) else { return true }
            livePlaceholders.append(fileName)
            return false
        }
        let plan = policy.plan(archives, now: now)
        var newestCheck: NewestArchiveCheck.Depth?
        var newestMisnamed: String?
        if let newest = plan.newest {
            (newestCheck, newestMisnamed) = try NewestArchiveCheck.check(newest, at: join(directory, newest.fileName), limits: limits, keys: keys,
                                                                         headerOnly: !keysGiven, read: read)
        }
        var removed: [String] = []
        var skipped: [(file: String, reason: String)] = []
        var failed: [(file: String, reason: String)] = []
        for name in plan.removed.map(\.name) {
            // Never the newest: the plan keeps it, and this says so again where files go.
            guard name.fileName != plan.newest?.fileName else { continue }
            if dryRun {
                removed.append(name.fileName)
                continue
            }
            // One removal at a time under the interruption's lock: a Ctrl-C already sent stops
            // the prune before the next removal, and one that comes after says how many went
            // (a removal is not undone, so "interrupted" alone would hide it).
            var removal = BackupDirectory.Removal.removed
            try InterruptCleanup.keeping([]) {
                removal = listing.remove(name.fileName)
                guard removal == .removed else { return nil }
                let count = removed.count + 1, total = plan.removed.count
                return "\(count) of the \(total) backups the policy removes \(count == 1 ? "is" : "are") gone\(count < total ? "; prune again to remove the rest" : "")"
            }
            TestPausePoint.reached("prune.removed")
            switch removal {
            case .removed: removed.append(name.fileName)
            case .vanished: skipped.append((name.fileName, "gone already"))
            case .notRegularFile: skipped.append((name.fileName, "no longer a regular file; left alone"))
            case .failed(let reason): failed.append((name.fileName, reason))
            }
        }
        return Outcome(kept: plan.kept, removed: removed, skipped: skipped, failed: failed,
                       ignored: (listing.ignored.filter { !abandoned.contains($0) } + livePlaceholders).sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) },
                       abandoned: abandoned, dryRun: dryRun, newest: plan.newest,
                       future: plan.future,
                       newestCheck: newestCheck, newestMisnamed: newestMisnamed)
    }

    private static func join(_ directory: String, _ name: String) -> String {
        directory.hasSuffix("/") ? directory + name : directory + "/" + name
    }
}
