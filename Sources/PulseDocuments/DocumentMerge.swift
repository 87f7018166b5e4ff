import Foundation
import PulseArchive

/// What `import --merge` does with a document present on both sides (documents.md: merge).
public enum MergeDecision: Sendable, Equatable {
    /// Keep the store's file untouched.
    case keepStore
    /// Take the archive's file whole.
    case takeArchive
    /// Write this merged document (canonical encoding) at the store's path.
    case merged(JSONNode)
}

/// The merge rules. `now` (milliseconds) prunes per-log tombstones older than 30 days.
public struct DocumentMerger: Sendable {
    public let now: Int64
    static let tombstoneGrace: Int64 = 30 * 86_400_000

    public init(now: Int64) { self.now = now }

    /// Both sides hold a live document with this id.
    public func decide(store: ClassifiedDocument, archive: ClassifiedDocument) -> MergeDecision {
        // Quarantined and unreadable files are never merged or replaced.
        if store.state.isQuarantined { return .keepStore }
        if case .unreadable = store.state { return .keepStore }
        if case .unreadable = archive.state { return .keepStore }
        if case .current = store.state, case .current = archive.state, store.path.kind == .workout,
           let s = store.node, let a = archive.node {
            let merged = mergeWorkouts(s, a)
            return merged == s ? .keepStore : .merged(merged)
        }
        // Splits, and any pair with an older or newer version: the later one wins whole.
        return laterWins(store.node ?? .null, archive.node ?? .null) ? .keepStore : .takeArchive
    }

    /// True when `a` wins over `b`: the larger `updatedAt` (absent is older than any date); on a
    /// tie the one whose canonical encoding sorts later, so merging is commutative.
    func laterWins(_ a: JSONNode, _ b: JSONNode) -> Bool {
        Self.later(a, b, time: Self.updatedAt)
    }

    /// The one ordering rule of the merge: the later time wins (none is older than any); on a
    /// tie, the later canonical encoding.
    private static func later(_ a: JSONNode, _ b: JSONNode, time: (JSONNode) -> Int64?) -> Bool {
        let ta = time(a), tb = time(b)
        if ta != tb { return (ta ?? .min) > (tb ?? .min) }
        return !DocumentCoder.encode(a).lexicographicallyPrecedes(DocumentCoder.encode(b))
    }

    static func updatedAt(_ node: JSONNode) -> Int64? {
        node["updatedAt"]?.stringValue.flatMap(ArchiveDate.parse)
    }

    /// The per-log merge of two version-5 workouts (the app's `WorkoutMergePlanner`).
    public func mergeWorkouts(_ a: JSONNode, _ b: JSONNode) -> JSONNode {
        // 1. Per-log tombstones: the union, the later date for an id on both sides, pruned.
        // Ids are keys the archive controls: equal when their bytes are (`ByteKey`).
        var deleted: [ByteKey: JSONNode] = [:]
        for side in [a, b] {
            for (id, date) in side["deletedLogIDs"]?.objectValue ?? [:] {
                if let existing = deleted[id], !Self.later(date, existing, time: { $0.stringValue.flatMap(ArchiveDate.parse) }) { continue }
                deleted[id] = date
            }
        }
        deleted = deleted.filter { _, date in
            guard let millis = date.stringValue.flatMap(ArchiveDate.parse) else { return true }
            return now - millis <= Self.tombstoneGrace
        }
        // 2–3. Logs: the union by id, less the deleted; on both sides the later log wins.
        var logs: [ByteKey: JSONNode] = [:]
        for side in [a, b] {
            for log in side["logs"]?.arrayValue ?? [] {
                guard let id = log["id"]?.stringValue.map({ ByteKey($0) }), deleted[id] == nil else { continue }
                if let existing = logs[id], laterWins(existing, log) { continue }
                logs[id] = log
            }
        }
        // 4. Ordered by `order`, then id.
        let ordered = logs.values.sorted { x, y in
            let ox = Self.order(x), oy = Self.order(y)
            if ox != oy { return ox < oy }
            return ByteKey(x["id"]?.stringValue ?? "") < ByteKey(y["id"]?.stringValue ?? "")
        }
        // 5. Workout-level fields from the later document; status derived from the logs.
        guard case .object(var merged) = laterWins(a, b) ? a : b else { return a }
        merged["logs"] = .array(ordered)
        if a["deletedLogIDs"] != nil || b["deletedLogIDs"] != nil { merged["deletedLogIDs"] = .object(deleted) }
        merged["status"] = .string(Self.status(of: ordered).rawValue)
        merged["schemaVersion"] = .number("5")
        return .object(merged)
    }

    private static func order(_ log: JSONNode) -> Double {
        if case .number(let literal)? = log["order"] { return Double(literal) ?? 0 }
        return 0
    }

    /// `completed` when every log is completed or skipped and one is completed; `notStarted`
    /// when all are not started; `skipped` when all are skipped; else `inProgress`.
    static func status(of logs: [JSONNode]) -> WorkoutStatus {
        let statuses = logs.map { $0["status"]?.stringValue ?? "" }
        let done = Set([WorkoutStatus.completed.rawValue, WorkoutStatus.skipped.rawValue])
        if !statuses.isEmpty, statuses.allSatisfy(done.contains), statuses.contains(WorkoutStatus.completed.rawValue) { return .completed }
        if statuses.allSatisfy({ $0 == WorkoutStatus.notStarted.rawValue }) { return .notStarted }
        if statuses.allSatisfy({ $0 == WorkoutStatus.skipped.rawValue }) { return .skipped }
        return .inProgress
    }
}
