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
    /// - Parameters: placedAt, table: the entry the body reads, for a problem that does not
    ///   name it (`ArchiveError.located`).
    public func recovering(placedAt location: String? = nil, table: String? = nil, _ body: () throws -> Void) throws -> Bool {
        do {
            try body()
            return true
        } catch let error as ArchiveError {
            let placed = location.map { error.located(at: $0, table: table ?? $0) } ?? error
            guard placed.isRecoverable else { throw placed }
            try report(placed)
            return false
        }
    }
}
