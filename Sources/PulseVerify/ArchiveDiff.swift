import Foundation
import PulseArchive
import PulseDigest
import PulseDocuments
import PulseStore
import PulseSystem

/// What changed in one table (or in the settings, attachments or documents) from one archive
/// to another: counts of every added, removed and changed key, and the first `show` keys of
/// each kind in key order.
public struct DiffCounts: Sendable, Equatable {
    public var added = 0
    public var removed = 0
    public var changed = 0
    public var addedKeys: [FieldValue] = []
    public var removedKeys: [FieldValue] = []
    public var changedKeys: [FieldValue] = []

    public init() {}

    public var isEmpty: Bool { added == 0 && removed == 0 && changed == 0 }
}

/// A key that more than one row (setting, attachment, document) of one archive has: a problem
/// of that archive, which `import` would refuse (settings and attachments: `verify` reports
/// them). Only the first in file order is compared; the repeats count here, not as changes.
public struct DiffProblem: Sendable, Equatable {
    public enum Side: String, Sendable { case old, new }
    public let side: Side
    /// The table key, or `settings`, `attachments`, `documents`.
    public let category: String
    /// Rows beyond the first that repeat a key.
    public let repeats: Int
    /// The first repeated keys, in key order (at most `max(show, 1)`).
    public let keys: [FieldValue]
}

/// The differences between two archives, as `diff` reports them.
public struct ArchiveDiffReport {
    /// Per table key (the app's archive keys whatever the dialect, extension tables by their
    /// names): every table either archive has.
    public var tables: [String: DiffCounts] = [:]
    public var settings = DiffCounts()
    public var attachments = DiffCounts()
    public var documents = DiffCounts()
    public var problems: [DiffProblem] = []
    /// What each archive is (format, dialect, compression), as its reader found it.
    public let old: ArchiveSummary
    public let new: ArchiveSummary

    init(old: ArchiveSummary, new: ArchiveSummary) {
        self.old = old
        self.new = new
    }

    /// Nothing added, removed or changed anywhere, and no key repeated within either archive
    /// (then only the first row of that key was compared: the two cannot be called identical).
    public var identical: Bool {
        problems.isEmpty && tables.values.allSatisfy(\.isEmpty) && settings.isEmpty && attachments.isEmpty && documents.isEmpty
    }

    /// Every category's counts: the tables, then settings, attachments, documents.
    public var all: [(String, DiffCounts)] {
        tables.sorted { $0.key < $1.key } + [("settings", settings), ("attachments", attachments), ("documents", documents)]
    }
}

/// `diff`: reads OLD then NEW, each in one streaming pass, recording per table every row's
/// unique key with a digest of its canonical content in sorted runs on disk
/// (`SortedKeyRuns`), then merge-joins the two archives' runs table by table: a key only in
/// OLD was removed, only in NEW added, in both with another digest changed. Memory stays flat
/// whatever the archives hold; the keys kept for the report are bounded by `show`.
///
/// Canonical content is the row as the reader yields it (an Android row already mapped to the
/// app's fields and dates) written the way an export writes it (`RowEncoding`: sorted keys,
/// no whitespace, dates in one spelling), so key order, whitespace, dialect and date spelling
/// are no change. The digest is SHA-1 of those bytes (docs/diff.md says why).
public enum ArchiveDiff {
    /// The digest's size in bytes (SHA-1).
    static let digestSize = 20

    /// - Parameters:
    ///   - old, new: the two archives' readers, ready to read.
    ///   - show: how many keys of each kind to keep per category.
    /// - Throws: the reader's `ArchiveError`, which names the file, for an archive that does not read.
    public static func diff(old: ArchiveReader, new: ArchiveReader, show: Int) throws -> ArchiveDiffReport {
        // The two archives are read at once, OLD on a thread of its own: each read is one
        // thread parsing and one recording, into runs of their own (files with no name on disk).
        // Standard input can only be one of them, and it is read by whichever side it is.
        let oldSide = RecordingThread(old)
        // The reader opens its file and decoders on that thread: nothing to hand over.
        try oldSide.start(named: "diff-old", handingOver: [])
        let newRecord = Result { try record(new, side: .new) }
        oldSide.join()
        let (oldRuns, oldSummary) = try oldSide.result!.get()
        let (newRuns, newSummary) = try newRecord.get()
        var report = ArchiveDiffReport(old: oldSummary, new: newSummary)
        let empty = SortedKeyRuns(name: "empty", payloadSize: digestSize)
        let tableNames = Set(oldRuns.keys).union(newRuns.keys).subtracting(DiffRecorder.otherCategories)
        for name in tableNames.sorted() {
            report.tables[name] = try join(name, oldRuns[name] ?? empty, newRuns[name] ?? empty, show: show, problems: &report.problems)
        }
        report.settings = try join("settings", oldRuns["settings"] ?? empty, newRuns["settings"] ?? empty, show: show, problems: &report.problems)
        report.attachments = try join("attachments", oldRuns["attachments"] ?? empty, newRuns["attachments"] ?? empty, show: show, problems: &report.problems)
        report.documents = try join("documents", oldRuns["documents"] ?? empty, newRuns["documents"] ?? empty, show: show, problems: &report.problems)
        return report
    }

    /// Reads OLD into runs on a thread of its own.
    private final class RecordingThread: BackgroundWorker, @unchecked Sendable {
        private let reader: ArchiveReader
        /// Set by the thread; read after `join`.
        private(set) var result: Result<([String: SortedKeyRuns], ArchiveSummary), Error>?

        init(_ reader: ArchiveReader) {
            self.reader = reader
        }

        override func drain() {
            result = Result { try ArchiveDiff.record(reader, side: .old) }
        }
    }

    /// One archive read into runs, on a second thread while this one decompresses and parses.
    fileprivate static func record(_ reader: ArchiveReader, side: DiffProblem.Side) throws -> ([String: SortedKeyRuns], ArchiveSummary) {
        var worker = try BackgroundVisitor(DiffRecorder(side: side, limits: reader.limits))
        var reader = reader
        reader.passesRepeatedNames = true
        let summary: ArchiveSummary
        do {
            summary = try reader.read(into: &worker)
        } catch {
            // The recorder's own error (a full disk) comes first: the reader met it at its next call.
            if let recorderError = worker.stop() { throw recorderError }
            throw error
        }
        let recorder = try worker.finish()
        for runs in recorder.runs.values { try runs.seal() }
        return (recorder.runs, summary)
    }

    /// The merge join of one category's runs.
    private static func join(_ category: String, _ old: SortedKeyRuns, _ new: SortedKeyRuns, show: Int, problems: inout [DiffProblem]) throws -> DiffCounts {
        var counts = DiffCounts()
        let a = try DistinctKeys(old.cursor(), keeping: show), b = try DistinctKeys(new.cursor(), keeping: show)
        var hasA = try a.advance(), hasB = try b.advance()
        while hasA || hasB {
            let order = !hasA ? 1 : !hasB ? -1 : DistinctKeys.compare(a, b)
            if order < 0 {
                counts.removed += 1
                if counts.removedKeys.count < show { counts.removedKeys.append(a.value) }
                hasA = try a.advance()
            } else if order > 0 {
                counts.added += 1
                if counts.addedKeys.count < show { counts.addedKeys.append(b.value) }
                hasB = try b.advance()
            } else {
                if a.payload != b.payload {
                    counts.changed += 1
                    if counts.changedKeys.count < show { counts.changedKeys.append(a.value) }
                }
                hasA = try a.advance()
                hasB = try b.advance()
            }
        }
        for (side, keys) in [(DiffProblem.Side.old, a), (.new, b)] where keys.repeats > 0 {
            problems.append(DiffProblem(side: side, category: category, repeats: keys.repeats, keys: keys.repeatedKeys))
        }
        return counts
    }
}

/// A cursor's keys once each: the first entry of each key (the first row in file order, as the
/// cursor orders ties by row), with the entries after it that repeat the key counted.
private final class DistinctKeys {
    private let cursor: SortedKeyRuns.Cursor
    private let keeping: Int
    private var pending: Bool?
    private(set) var key = SortKey.none
    private(set) var rest: [UInt8] = []
    private(set) var payload: [UInt8] = []
    private(set) var repeats = 0
    private(set) var repeatedKeys: [FieldValue] = []

    init(_ cursor: SortedKeyRuns.Cursor, keeping: Int) {
        self.cursor = cursor
        self.keeping = max(keeping, 1)
    }

    var value: FieldValue { key.value(rest: rest) }

    func advance() throws -> Bool {
        let has: Bool
        if let pending { has = pending } else { has = try cursor.next() }
        guard has else {
            pending = false
            return false
        }
        key = cursor.key
        rest = cursor.rest
        payload = cursor.payload
        var counted = false
        while true {
            let next = try cursor.next()
            pending = next
            guard next, cursor.key == key, cursor.rest == rest else { break }
            repeats += 1
            if !counted, repeatedKeys.count < keeping { repeatedKeys.append(value) }
            counted = true
        }
        return true
    }

    static func compare(_ a: DistinctKeys, _ b: DistinctKeys) -> Int {
        if a.key != b.key { return a.key < b.key ? -1 : 1 }
        return a.key.restCount == 0 ? 0 : KeyEncoding.compare(a.rest, b.rest)
    }
}

/// Records one archive: per table, each row's unique key with the digest of its canonical
/// content; settings by key, attachments by name, documents by path, each with the digest of
/// its value.
struct DiffRecorder: ArchiveVisitor, HandleHolder {
    /// The categories that are not tables.
    static let otherCategories: Set<String> = ["settings", "attachments", "documents"]

    let side: DiffProblem.Side
    let limits: ArchiveLimits
    private(set) var runs: [String: SortedKeyRuns] = [:]
    private var current: (runs: SortedKeyRuns, encoding: RowEncoding)?
    /// Per category that is not a table, the entries so far: the order of a repeated key's entries.
    private var counts: [String: Int] = [:]

    /// None: runs are files, and digests are made and dropped on the recording thread.
    var handleOwners: [HandleOwner] { [] }

    init(side: DiffProblem.Side, limits: ArchiveLimits) {
        self.side = side
        self.limits = limits
    }

    private mutating func runs(_ name: String) -> SortedKeyRuns {
        if let found = runs[name] { return found }
        let made = SortedKeyRuns(name: "\(side.rawValue) \(name)", payloadSize: ArchiveDiff.digestSize)
        runs[name] = made
        return made
    }

    mutating func beginTable(_ table: ArchiveTable) throws {
        current = (runs(table.key), RowEncoding(table: table, limits: limits))
    }

    mutating func visit(row: ArchiveRow, at index: Int, of table: ArchiveTable) throws {
        guard let current else { return }
        let content: [UInt8]
        do {
            content = try ByteBuffer.collecting { try current.encoding.append(row, index: index, to: &$0) }
        } catch {
            // A value an export would refuse (the reader has accepted it): its description
            // stands for it, the same in both archives.
            content = Array(String(describing: row.values).utf8)
        }
        try current.runs.add(row[table.uniqueKeyIndex], row: index, payload: SHA1.hash(content))
    }

    mutating func endTable(_ table: ArchiveTable, rowCount: Int) throws {
        try current?.runs.seal()
        current = nil
    }

    mutating func visitExtensionRow(_ table: ExtensionTable, row: JSONNode, at index: Int) throws {
        try runs(table.rawValue).add(.string(table.key(of: row) ?? ""), row: index, payload: SHA1.hash(DocumentCoder.encode(row)))
    }

    private mutating func add(_ category: String, _ key: String, _ content: some PieceReadable) throws {
        let index = counts[category, default: 0]
        counts[category] = index + 1
        try runs(category).add(.string(key), row: index, payload: SHA1.hash(pieces: content))
    }

    mutating func visitSetting(key: String, value: String) throws {
        try add("settings", key, Array(value.utf8))
    }

    mutating func visitAttachment(name: String, contents: ArchiveBytes) throws {
        try add("attachments", name, contents)
    }

    /// By canonical content: a document written with other whitespace or key order is the same.
    mutating func visitDocument(_ path: DocumentPath, document: JSONNode, originalBytes: [UInt8]?) throws {
        try add("documents", path.path, DocumentCoder.encode(document))
    }

    /// A file whose bytes hold a JSON object is what an export of a store holding it writes as
    /// a document (`DocumentClassifier`): compared by the same canonical content, so an archive
    /// that carried it as a file is not told apart from its re-export (`verify --store` found
    /// both the same, `diff` called it changed). Any other file by its bytes.
    mutating func visitDocumentFile(_ path: DocumentPath, contents: ArchiveBytes) throws {
        if contents.count <= ArchiveLimits.standard.maxWholeValueBytes,
           let node = DocumentClassifier.classify(path, bytes: try contents.collected()).node {
            try add("documents", path.path, DocumentCoder.encode(node))
        } else {
            try add("documents", path.path, contents)
        }
    }
}
