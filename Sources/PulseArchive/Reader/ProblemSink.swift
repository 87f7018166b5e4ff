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
