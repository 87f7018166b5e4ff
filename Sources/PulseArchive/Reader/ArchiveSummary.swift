/// What a read found in an archive.
public struct ArchiveSummary: Sendable, Equatable {
    /// An empty summary: what an import of rows mapped from another app (Gadgetbridge) reports.
    package init() {}

    public var formatVersion: Int64 = 0
    public var dialect: ArchiveDialect = .ios
    public var appVersion: String = ""
    /// Milliseconds since 1970.
    public var exportedAt: Int64 = 0
    /// The file's `counts`, as declared (never trusted), by the file's own names (SQL table
    /// names in the Android port's files; `declaredCount(of:)` maps them).
    public var declaredCounts: [ByteKey: Int64] = [:]
    /// Rows actually found, per table key present in the file.
    public var rowsFound: [String: Int] = [:]
    public var settingsCount = 0
    public var attachmentsCount = 0
    /// Whether the file carries the document tree (any of the three document keys).
    public var hasDocuments = false
    /// Documents found: `splits`, `workouts`, `stubs` (document files counted by their path).
    public var documentCounts: [String: Int] = [:]
    /// Tool-only extension fields found with a value, `table.field` → rows (the Android port's
    /// extras: kept, never dropped).
    public var extensionFields: [String: Int] = [:]
    public var isCompressed = false
    /// Size of the file on disk.
    public var fileBytes: Int64 = 0
    /// True when the file was encrypted (age); `fileBytes` is then its encrypted size.
    public var isEncrypted = false
    /// Size of the JSON text (after decompression).
    public var jsonBytes: Int64 = 0
    public var warnings: [ArchiveWarning] = []
    /// Problems found by a collecting read (`ArchiveReader.collectsProblems`); empty otherwise,
    /// since a strict read throws the first. Bounded per table; the rest counted.
    public var problems = BoundedProblems<ArchiveError>()

    /// `splits`, `workouts` and `stubs` when the file carries the document tree (zero counts
    /// included), else nothing: the document rows of a report's `tables`.
    public var documentTables: [String: Int] {
        guard hasDocuments else { return [:] }
        return ["splits": documentCounts["splits"] ?? 0, "workouts": documentCounts["workouts"] ?? 0, "stubs": documentCounts["stubs"] ?? 0]
    }

    /// What a report's `tables` lists: the rows of each table, and the documents of each
    /// document table.
    public var tableCounts: [String: Int] {
        rowsFound.merging(documentTables) { rows, _ in rows }
    }

    /// The count the file declares for a table key; the Android port names its SQL table.
    public func declaredCount(of key: String) -> Int64? {
        declaredCounts[ByteKey(dialect == .android ? AndroidDialect.countName(ofTable: key) : key)]
    }

    /// Tables whose declared count differs from the rows found, with both numbers. The Android
    /// port counts only some of its tables (any list may be absent): only those it counts are
    /// compared, an absent list as zero rows.
    public var countMismatches: [(table: String, declared: Int64?, found: Int)] {
        var result: [(String, Int64?, Int)] = []
        for key in ArchiveTable.all.map(\.key) + ExtensionTable.allCases.map(\.rawValue) {
            let declared = declaredCount(of: key)
            if dialect == .android {
                let found = rowsFound[key] ?? 0
                if let declared, declared != Int64(found) { result.append((key, declared, found)) }
                continue
            }
            let found = rowsFound[key]
            if let found, declared != Int64(found), declared != nil || found > 0 {
                result.append((key, declared, found))
            }
        }
        return result
    }

}
