import PulseArchive
import PulseDigest
import PulseDocuments
import PulseStore
import PulseSQLite

/// `verify --store`: the archive against a store, table by table and by unique key, as the
/// round trip's batches pass through the temporary store. A batch is compared with the store
/// (attached to the temporary store's connection) before it is emptied; what the store holds
/// beyond the archive is counted at the end from the keys that matched.
final class StoreComparison {
    /// A compared table: its name in both databases, its key, the columns compared, which of
    /// them hold doubles (compared by their bits too: SQL says `-0.0 IS 0.0`), and which hold
    /// UUIDs (compared in either case: an export writes a store's `abc…` as `ABC…`, the same
    /// UUID).
    private struct Compared {
        let name: String
        let key: String
        let columns: [String]
        var doubles: Set<String> = []
        var uuids: Set<String> = []
    }

    private static let compared: [Compared] = ArchiveTable.all.map { table in
        func named(_ type: FieldType) -> Set<String> { Set(table.fields.filter { $0.type == type }.map(\.name)) }
        return Compared(name: table.key, key: table.uniqueKey, columns: table.fields.map(\.name), doubles: named(.double), uuids: named(.uuid))
    }
        + ExtensionTable.allCases.map { Compared(name: $0.rawValue, key: $0.uniqueKey, columns: [$0.uniqueKey, "row"]) }
        + [Compared(name: "settings", key: "key", columns: ["key", "value"]), Compared(name: "attachments", key: "file", columns: ["file", "contents"])]

    private let database: SQLiteDatabase
    private var differences: [String: StoreDifference] = [:]
    /// Archive rows found in the store under their key, per table.
    private var matched: [String: Int] = [:]

    /// - Parameter database: the temporary store's connection (opened with
    ///   `attachesReadOnly`); the store is attached to it read-only.
    /// - Parameter immutable: the store could be opened only immutable (`PulseStore.openReadOnly`).
    init(database: SQLiteDatabase, storePath: String, immutable: Bool) throws {
        self.database = database
        try database.attachReadOnly(storePath, as: "store", immutable: immutable)
    }

    /// Compares the rows `table` holds in the temporary store now (one batch) with the store.
    func compareBatch(of table: String) throws {
        guard let compared = Self.compared.first(where: { $0.name == table }) else { return }
        let t = StoreSchema.quoted(compared.name), k = StoreSchema.quoted(compared.key)
        let same = compared.columns.map { column in
            let a = "a.\(StoreSchema.quoted(column))", b = "b.\(StoreSchema.quoted(column))"
            if compared.doubles.contains(column) { return "(\(a) IS \(b) AND double_bits(\(a)) IS double_bits(\(b)))" }
            if compared.uuids.contains(column) { return "upper(\(a)) IS upper(\(b))" }
            // An attachment over 1 MiB is compared here by its length only, and then in pieces
            // (`changedLargeAttachments`): SQL would hold both values whole.
            guard compared.name == "attachments" && column == StoreAttachments.column else { return "\(a) IS \(b)" }
            return "(length(\(a)) = length(\(b)) AND CASE WHEN length(\(a)) > \(ArchiveBytes.inlineLimit) THEN 1 ELSE \(a) IS \(b) END)"
        }.joined(separator: " AND ")
        let counts = try database.cached("""
            SELECT count(*) - count(b.\(k)), count(b.\(k)), count(b.\(k)) - coalesce(sum(\(same)), 0)
            FROM main.\(t) a LEFT JOIN store.\(t) b ON b.\(k) = a.\(k)
            """)
        defer { counts.reset() }
        guard try counts.step() else { return }
        differences[table, default: StoreDifference()].missing += Int(counts.int64(at: 0))
        matched[table, default: 0] += Int(counts.int64(at: 1))
        differences[table, default: StoreDifference()].changed += Int(counts.int64(at: 2))
    }

    /// Settings and attachments stay in the temporary store to the end: compared in one go.
    func compareSettingsAndAttachments() throws {
        try compareBatch(of: "settings")
        try compareBatch(of: "attachments")
        differences["attachments", default: StoreDifference()].changed += try changedLargeAttachments()
    }

    /// Attachments over 1 MiB of the same name and length in both, whose bytes differ:
    /// compared in pieces, never held whole.
    private func changedLargeAttachments() throws -> Int {
        let pairs = try database.prepare(
            #"SELECT a.rowid, b.rowid, length(a."contents") FROM main."attachments" a JOIN store."attachments" b ON b."file" = a."file" "#
            + #"WHERE length(a."contents") > \#(ArchiveBytes.inlineLimit) AND length(a."contents") = length(b."contents")"#)
        var changed = 0
        while try pairs.step() {
            let count = Int(pairs.int64(at: 2))
            let ours = StoreAttachments.StoredBytes(database: database, schema: "main", rowid: pairs.int64(at: 0), count: count)
            let theirs = StoreAttachments.StoredBytes(database: database, schema: "store", rowid: pairs.int64(at: 1), count: count)
            if try SHA1.hash(pieces: ours) != SHA1.hash(pieces: theirs) { changed += 1 }
        }
        return changed
    }

    /// Every table's difference, with the store's rows the archive does not hold, and the
    /// documents (`splits`, `workouts`, `stubs`) when the archive carries the tree.
    func finish(archiveTree: DocumentTree?, storeDirectory: String) throws -> [String: StoreDifference] {
        var result = differences
        for compared in Self.compared {
            let stored = Int(try database.integer("SELECT count(*) FROM store.\(StoreSchema.quoted(compared.name))"))
            result[compared.name, default: StoreDifference()].extra = stored - (matched[compared.name] ?? 0)
        }
        if let archiveTree {
            result.merge(try Self.documentDifferences(archiveTree, try DocumentTree(scanning: storeDirectory))) { a, _ in a }
        }
        return result
    }

    /// The difference between two document trees, by path, in `splits`, `workouts`, `stubs`.
    static func documentDifferences(_ archive: DocumentTree, _ store: DocumentTree) throws -> [String: StoreDifference] {
        var result = ["splits": StoreDifference(), "workouts": StoreDifference(), "stubs": StoreDifference()]
        let ours = Set(archive.documents), theirs = Set(store.documents)
        for path in ours.subtracting(theirs) { result[path.group]!.missing += 1 }
        for path in theirs.subtracting(ours) { result[path.group]!.extra += 1 }
        for path in ours.intersection(theirs) {
            // A file too large to be a document is compared by its bytes, in pieces.
            let wholeLimit = Int64(ArchiveLimits.standard.maxWholeValueBytes)
            if try archive.size(path) > wholeLimit || store.size(path) > wholeLimit {
                let a = try archive.pieces(path), b = try store.pieces(path)
                if try a.count != b.count || SHA1.hash(pieces: a) != SHA1.hash(pieces: b) { result[path.group]!.changed += 1 }
                continue
            }
            let a = try archive.read(path), b = try store.read(path)
            if a != b, (try? JSONNode.parse(a)) == nil || (try? JSONNode.parse(a)) != (try? JSONNode.parse(b)) {
                result[path.group]!.changed += 1
            }
        }
        return result
    }
}
