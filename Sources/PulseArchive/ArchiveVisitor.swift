/// Receives an archive's content as the reader streams through it, one row at a time.
///
/// The reader has checked each value's type, but not what needs the whole table (unique keys)
/// and not yet the format version, which may come after the tables: a visitor stages rows,
/// it does not apply them, until `read` returns.
public protocol ArchiveVisitor {
    mutating func beginTable(_ table: ArchiveTable) throws
    /// Every visitor implements it (no default): one that forgot would drop every row silently.
    mutating func visit(row: ArchiveRow, at index: Int, of table: ArchiveTable) throws
    /// A row with its JSON text as the file has it, when the read keeps row text
    /// (`ArchiveReader.keepsRowText`); by default the text is dropped.
    mutating func visit(row: ArchiveRow, text: ArraySlice<UInt8>, at index: Int, of table: ArchiveTable) throws
    mutating func endTable(_ table: ArchiveTable, rowCount: Int) throws
    mutating func visitSetting(key: String, value: String) throws
    mutating func visitAttachment(name: String, contents: [UInt8]) throws
    /// A document (`documents`) or stub (`documentStubs`) as a JSON object, with the file's
    /// original bytes when they differ from its canonical encoding.
    mutating func visitDocument(_ path: DocumentPath, document: JSONNode, originalBytes: [UInt8]?) throws
    /// A file of the document tree that is not a JSON object (`documentFiles`), byte for byte.
    mutating func visitDocumentFile(_ path: DocumentPath, contents: [UInt8]) throws
    /// A row of an extension table (the Android port's meals and food products), as an object.
    mutating func visitExtensionRow(_ table: ExtensionTable, row: JSONNode, at index: Int) throws
}

extension ArchiveVisitor {
    public mutating func beginTable(_ table: ArchiveTable) throws {}
    public mutating func visit(row: ArchiveRow, text: ArraySlice<UInt8>, at index: Int, of table: ArchiveTable) throws {
        try visit(row: row, at: index, of: table)
    }
    public mutating func endTable(_ table: ArchiveTable, rowCount: Int) throws {}
    public mutating func visitSetting(key: String, value: String) throws {}
    public mutating func visitAttachment(name: String, contents: [UInt8]) throws {}
    public mutating func visitDocument(_ path: DocumentPath, document: JSONNode, originalBytes: [UInt8]?) throws {}
    public mutating func visitDocumentFile(_ path: DocumentPath, contents: [UInt8]) throws {}
    public mutating func visitExtensionRow(_ table: ExtensionTable, row: JSONNode, at index: Int) throws {}
}

/// Where a read sends the problems it can step over: a strict read throws the first, a
/// collecting read (for `verify`) records them all and goes on.
public final class ProblemSink {
    public let collects: Bool
    /// At most `BoundedProblems.perTable` per table; the rest counted.
    public private(set) var problems = BoundedProblems<ArchiveError>()

    public init(collects: Bool) { self.collects = collects }

    /// Throws `problem` in strict mode; records it in collecting mode.
    public func report(_ problem: ArchiveError) throws {
        guard collects else { throw problem }
        problems.append(problem, table: problem.table)
    }

    /// Runs `body`; a recoverable `ArchiveError` it throws is reported instead.
    /// - Returns: false when a problem was reported.
    @discardableResult
    public func recovering(_ body: () throws -> Void) throws -> Bool {
        do {
            try body()
            return true
        } catch let error as ArchiveError where error.isRecoverable {
            try report(error)
            return false
        }
    }
}

/// A visitor that only lets the reader check every value.
public struct DiscardingVisitor: ArchiveVisitor {
    public init() {}
    public mutating func visit(row: ArchiveRow, at index: Int, of table: ArchiveTable) throws {}
}

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

/// What a read found in an archive.
public struct ArchiveSummary: Sendable, Equatable {
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
