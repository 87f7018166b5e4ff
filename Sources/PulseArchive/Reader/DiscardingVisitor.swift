/// A visitor that only lets the reader check every value.
public struct DiscardingVisitor: ArchiveVisitor {
    public init() {}
    public mutating func visit(row: ArchiveRow, at index: Int, of table: ArchiveTable) throws {}
}
