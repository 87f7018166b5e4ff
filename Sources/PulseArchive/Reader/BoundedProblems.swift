/// The problems a report keeps: the first `perTable` of each table, the rest only counted.
///
/// A file with an error in each of three million rows is reported in bounded memory and a
/// readable length ("… and 2 999 900 more"), and its totals stay exact.
public struct BoundedProblems<Problem: Sendable & Equatable>: Sendable, Equatable {
    /// How many problems of one table are kept.
    public static var perTable: Int { 100 }

    public private(set) var kept: [Problem] = []
    /// The problems past the bound, by table (`""` for the file as a whole).
    public private(set) var omitted: [String: Int] = [:]
    private var keptPerTable: [String: Int] = [:]

    public init() {}

    public mutating func append(_ problem: Problem, table: String?) {
        let group = table ?? ""
        if keptPerTable[group, default: 0] < Self.perTable {
            keptPerTable[group, default: 0] += 1
            kept.append(problem)
        } else {
            omitted[group, default: 0] += 1
        }
    }

    /// Counts problems of `table` that were not even built (a caller that knows only how many
    /// there are past its own bound).
    public mutating func count(omitted count: Int, table: String?) {
        guard count > 0 else { return }
        omitted[table ?? "", default: 0] += count
    }

    public var omittedCount: Int { omitted.values.reduce(0, +) }
}
