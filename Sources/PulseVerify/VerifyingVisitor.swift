import Foundation
import PulseSystem
import PulseArchive
import PulseDocuments
import Readiness
import PulseStore

/// What `verify` does with an archive's content on its second thread, while the first
/// decompresses and parses: the round trip, batch by batch; the unique keys and the references
/// sorted in bounded runs for the checks that need a whole table; the readiness days (the
/// reader itself checks the settings blobs, `SettingsBlob`). Nothing grows with the archive but the run files, which have no name on disk.
struct VerifyingVisitor: ArchiveVisitor, HandleHolder {
    /// Child rows that name a row of another table (warnings when it is missing: the app keeps
    /// orphans).
    static let references: [(child: ArchiveTable, column: String, parent: ArchiveTable, what: String)] = [
        (.sleepStageBlocks, "sessionId", .sleepSessions, "a sleep session"),
        (.activitySamples, "sessionId", .activitySessions, "a workout"),
        (.activityGpsPoints, "sessionId", .activitySessions, "a workout"),
        (.activityEvents, "sessionId", .activitySessions, "a workout"),
        (.activitySensorPollEvents, "sessionId", .activitySessions, "a workout"),
        (.coachMessages, "conversationId", .coachConversations, "a conversation"),
        (.coachToolCalls, "conversationId", .coachConversations, "a conversation"),
        (.measurements, "activitySessionId", .activitySessions, "a workout"),
        (.measurements, "rawPacketId", .rawPackets, "a raw packet"),
    ]

    let roundTrip: RollingRoundTrip
    /// Unique keys per table key (extension tables included).
    private var keys: [String: SortedKeyRuns] = [:]
    /// Referenced keys, by index in `references`.
    private var referenced: [Int: SortedKeyRuns] = [:]
    private let calendar: LocalCalendar
    private var readinessRowsPerDay: [Int64: Int] = [:]
    private(set) var problems = BoundedProblems<VerifyProblem>()

    /// The temporary store's connection: it goes with the visitor to the second thread.
    var handleOwners: [HandleOwner] { roundTrip.database.handleOwners }

    init(roundTrip: RollingRoundTrip, timeZone: TimeZone) {
        self.roundTrip = roundTrip
        calendar = LocalCalendar(timeZone: timeZone)
    }

    private mutating func keyRuns(_ name: String) -> SortedKeyRuns {
        if let runs = keys[name] { return runs }
        let runs = SortedKeyRuns(name: name)
        keys[name] = runs
        return runs
    }

    /// The current table's key runs, referencing fields with their runs, and readiness date
    /// field, looked up once per table rather than per row.
    private var current: (keys: SortedKeyRuns, references: [(field: Int, runs: SortedKeyRuns)], readinessDate: Int?)?

    mutating func beginTable(_ table: ArchiveTable) throws {
        var references: [(field: Int, runs: SortedKeyRuns)] = []
        for (i, reference) in Self.references.enumerated() where reference.child == table {
            let runs = referenced[i] ?? SortedKeyRuns(name: "reference-\(i)")
            referenced[i] = runs
            references.append((table.fieldIndex(reference.column)!, runs))
        }
        current = (keyRuns(table.key), references, table == .readinessDailies ? table.fieldIndex("date") : nil)
        try roundTrip.begin(.table(table))
    }

    mutating func visit(row: ArchiveRow, at index: Int, of table: ArchiveTable) throws {
        guard let current else { return }
        try current.keys.add(row[table.uniqueKeyIndex], row: index)
        for reference in current.references where !row[reference.field].isNull {
            try reference.runs.add(row[reference.field], row: index)
        }
        if let field = current.readinessDate, case .date(let instant) = row[field] {
            readinessRowsPerDay[calendar.startOfDay(instant), default: 0] += 1
        }
        try roundTrip.add(row, of: table, at: index)
    }

    /// The checks that need a whole table run as soon as it (and, for a reference, the other
    /// table) has been read, here on the worker while the reader goes on with the next table.
    mutating func endTable(_ table: ArchiveTable, rowCount: Int) throws {
        try current?.keys.seal()
        for reference in current?.references ?? [] { try reference.runs.seal() }
        current = nil
        try roundTrip.end()
        try Self.repeatedKeys(of: table, in: keys[table.key], into: &repeatedKeyProblems)
        ended.insert(table.key)
        for (i, reference) in Self.references.enumerated() where !referencesChecked.contains(i)
            && ended.contains(reference.child.key) && ended.contains(reference.parent.key) {
            referencesChecked.insert(i)
            danglingReferenceProblems += try danglingReference(i)
        }
    }

    mutating func visitExtensionRow(_ table: ExtensionTable, row: JSONNode, at index: Int) throws {
        try keyRuns(table.rawValue).add(.string(table.key(of: row) ?? ""), row: index)
        try roundTrip.addExtensionRow(row, of: table, at: index)
    }

    mutating func visitSetting(key: String, value: String) throws {
        if try !roundTrip.addSetting(key, value) {
            problems.append(VerifyProblem(severity: .error, table: "settings", message: "settings: the key \(key.debugDescription) appears more than once"), table: "settings")
        }
    }

    mutating func visitAttachment(name: String, contents: ArchiveBytes) throws {
        if try !roundTrip.addAttachment(name, contents) {
            problems.append(VerifyProblem(severity: .error, table: "attachments", message: "attachments: the file name \(name.debugDescription) appears more than once"), table: "attachments")
        }
    }

    mutating func visitDocument(_ path: DocumentPath, document: JSONNode, originalBytes: [UInt8]?) throws {
        try roundTrip.addDocument(path, bytes: originalBytes ?? DocumentCoder.encode(document))
    }

    mutating func visitDocumentFile(_ path: DocumentPath, contents: ArchiveBytes) throws {
        try roundTrip.addDocument(path, bytes: contents)
    }

    // MARK: - The checks that need every row

    private var ended = Set<String>()
    private var referencesChecked = Set<Int>()
    private var repeatedKeyProblems = BoundedProblems<VerifyProblem>()
    private var danglingReferenceProblems: [VerifyProblem] = []

    /// Rows repeating a key an earlier row has: errors, in file order per table, worded as the
    /// import's refusal.
    mutating func repeatedKeys() throws -> BoundedProblems<VerifyProblem> {
        for table in ExtensionTable.allCases {
            guard let runs = keys[table.rawValue] else { continue }
            let repeats = try runs.repeats(keeping: BoundedProblems<VerifyProblem>.perTable)
            for repeated in repeats.first {
                repeatedKeyProblems.append(VerifyProblem(severity: .error, table: table.rawValue, message: DuplicateKeyMessage.extensionRow(
                    table, index: repeated.row, key: repeated.key, firstRow: repeated.firstRow)), table: table.rawValue)
            }
            repeatedKeyProblems.count(omitted: repeats.count - repeats.first.count, table: table.rawValue)
        }
        return repeatedKeyProblems
    }

    private static func repeatedKeys(of table: ArchiveTable, in runs: SortedKeyRuns?, into problems: inout BoundedProblems<VerifyProblem>) throws {
        guard let runs else { return }
        let repeats = try runs.repeats(keeping: BoundedProblems<VerifyProblem>.perTable)
        for repeated in repeats.first {
            problems.append(VerifyProblem(severity: .error, table: table.key, message: DuplicateKeyMessage.row(
                table, index: repeated.row, key: repeated.key, firstRow: repeated.firstRow)), table: table.key)
        }
        problems.count(omitted: repeats.count - repeats.first.count, table: table.key)
    }

    /// Child rows whose parent is not in the archive: warnings. References whose tables were
    /// both read are checked already; this checks those left (a parent table the file lacks).
    mutating func danglingReferences() throws -> [VerifyProblem] {
        for i in Self.references.indices where !referencesChecked.contains(i) {
            referencesChecked.insert(i)
            danglingReferenceProblems += try danglingReference(i)
        }
        return danglingReferenceProblems
    }

    private func danglingReference(_ i: Int) throws -> [VerifyProblem] {
        let reference = Self.references[i]
        guard let children = referenced[i] else { return [] }
        let parents = keys[reference.parent.key] ?? SortedKeyRuns(name: "empty")
        let orphans = try parents.countMissing(children)
        guard orphans > 0 else { return [] }
        return [VerifyProblem(severity: .warning, table: reference.child.key, message: """
            \(reference.child.key): \(orphans) row\(orphans == 1 ? "" : "s") refer by \(reference.column) to \(reference.what) \
            not in the archive (kept, as the app keeps them)
            """)]
    }

    /// Days with more than one readiness row in the zone of the check: a warning.
    func crowdedReadinessDays(in timeZone: TimeZone) -> [VerifyProblem] {
        let crowded = readinessRowsPerDay.values.filter { $0 > 1 }.count
        guard crowded > 0 else { return [] }
        return [VerifyProblem(severity: .warning, table: "readinessDailies", message: """
            readinessDailies: \(crowded) day\(crowded == 1 ? " has" : "s have") more than one row in \(timeZone.identifier); \
            the latest computedAt is the day's row
            """)]
    }
}

