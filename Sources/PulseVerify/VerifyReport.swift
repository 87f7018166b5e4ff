import PulseArchive

public struct VerifyReport: Sendable {
    /// The problems kept: at most `BoundedProblems.perTable` errors and as many warnings per
    /// table, so that a file with a problem in each of millions of rows is reported in bounded
    /// memory; the rest are counted in `omittedErrors` and `omittedWarnings`.
    public private(set) var problems: [VerifyProblem] = []
    /// Problems past the bound, by table (`""` for the file as a whole).
    public private(set) var omittedErrors: [String: Int] = [:]
    public private(set) var omittedWarnings: [String: Int] = [:]
    private var kept: [String: (errors: Int, warnings: Int)] = [:]
    /// Rows per table; documents as `splits`, `workouts`, `stubs`.
    public var tables: [String: Int] = [:]
    /// Whether `tables` covers the whole file: false when the read stopped at an error (a cut
    /// file, damage), and `tables` then counts what came before it. A report that lists part
    /// of the tables must say so, or it reads as an archive without the rest.
    public var tablesComplete = true
    /// Per table (and `splits`, `workouts`, `stubs`, `settings`, `attachments`), with `--store`.
    public var storeDiff: [String: StoreDifference]?
    /// Documents by class: `current`, `older`, `newer`, `unreadable`, `stub`.
    public var documentClasses: [String: Int] = [:]
    /// Whether the round trip through a temporary store ran, and held every row and document.
    public var roundTrip: Bool?
    public var summary: ArchiveSummary?
    /// The format version and container a read that stopped at an error had established
    /// (our files and the Android port's state the version first): a cut file's header still
    /// says what it is. Nil when the error came first, and when `summary` says it all.
    public var formatBeforeError: (version: Int64, isCompressed: Bool)?

    /// Sound: no error (warnings allowed).
    public var ok: Bool { errorCount == 0 }
    /// Every error found, the omitted ones included.
    public var errorCount: Int { problems.count { $0.severity == .error } + omittedErrors.values.reduce(0, +) }
    public var warningCount: Int { problems.count { $0.severity == .warning } + omittedWarnings.values.reduce(0, +) }

    /// Keeps `problem`, or counts it when its table has its share already.
    mutating func add(_ problem: VerifyProblem) {
        let table = problem.table ?? ""
        var counts = kept[table] ?? (0, 0)
        switch problem.severity {
        case .error where counts.errors < BoundedProblems<VerifyProblem>.perTable:
            counts.errors += 1
            problems.append(problem)
        case .warning where counts.warnings < BoundedProblems<VerifyProblem>.perTable:
            counts.warnings += 1
            problems.append(problem)
        case .error: omittedErrors[table, default: 0] += 1
        case .warning: omittedWarnings[table, default: 0] += 1
        }
        kept[table] = counts
    }

    /// Adds problems already bounded where they were found; those they only counted are errors.
    mutating func add(errors bounded: BoundedProblems<VerifyProblem>) {
        for problem in bounded.kept { add(problem) }
        for (table, count) in bounded.omitted { omittedErrors[table, default: 0] += count }
    }

    /// Adds the reader's problems, all errors.
    mutating func add(errors bounded: BoundedProblems<ArchiveError>) {
        for problem in bounded.kept {
            add(VerifyProblem(severity: .error, table: problem.table, message: problem.message, limit: problem.limit,
                              advice: VerifyProblem.advice(for: problem)))
        }
        for (table, count) in bounded.omitted { omittedErrors[table, default: 0] += count }
    }

    mutating func error(_ table: String?, _ message: String, limit: ArchiveLimits.Name? = nil, advice: VerifyProblem.Advice? = nil) {
        add(VerifyProblem(severity: .error, table: table, message: message, limit: limit, advice: advice))
    }

    mutating func warning(_ table: String?, _ message: String, advice: VerifyProblem.Advice? = nil) {
        add(VerifyProblem(severity: .warning, table: table, message: message, advice: advice))
    }
}

extension VerifyReport {
    /// The report of a verification that could not run to its end (the machine, the store, a
    /// key file): `message` as its one error, nothing read, no round trip.
    public init(couldNotFinish message: String) {
        self.init()
        error(nil, message)
        tablesComplete = false
    }
}
