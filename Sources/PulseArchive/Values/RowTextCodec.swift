#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One table's rows as the text an export writes for them, and back again, through the very
/// functions the archive writer and reader use for every row. `verify` uses it for the codec's
/// half of its round trip.
public final class RowTextCodec {
    private let encoding: RowEncoding
    private var text: [UInt8] = []
    private var scratch: [UInt8] = []

    private let limits: ArchiveLimits

    /// - Parameter limits: the limits of the read whose rows are checked.
    public init(table: ArchiveTable, limits: ArchiveLimits = .standard) {
        encoding = RowEncoding(table: table, limits: limits)
        self.limits = limits
    }

    /// Whether an export writes `row` as exactly `original`. When it does, reading the export
    /// gives back what reading `original` gave.
    /// - Throws: `ArchiveError` when the row cannot be written (a required field without a value).
    public func writes(_ row: ArchiveRow, as original: ArraySlice<UInt8>, index: Int) throws -> Bool {
        text.removeAll(keepingCapacity: text.capacity <= 1 << 20)
        try encoding.append(row, index: index, to: &text)
        return text.count == original.count && text.withUnsafeBytes { a in
            original.withUnsafeBytes { b in memcmp(a.baseAddress!, b.baseAddress!, a.count) == 0 }
        }
    }

    /// `row` written as an export writes it, then read back as an import reads it.
    /// - Throws: `ArchiveError` when the row cannot be written, or its text not read back.
    public func writtenAndReadBack(_ row: ArchiveRow, index: Int) throws -> ArchiveRow {
        text.removeAll(keepingCapacity: text.capacity <= 1 << 20)
        try encoding.append(row, index: index, to: &text)
        let table = encoding.table
        // Through a window, not a second whole copy: a row of 8 MiB of control characters is
        // 48 MB of text.
        let scanner = JSONScanner(source: MemorySource(text), limits: limits, capacity: max(16, min(text.count, 256 << 10)))
        var decoder = RowDecoder(table: table)
        guard let decoded = try decoder.readRow(scanner, index: index, scratch: &scratch, problems: ProblemSink(collects: false)) else {
            throw ArchiveError(.invalidValue, "\(table.key)[\(index)]: the written row does not read back", table: table.key)
        }
        try scanner.expectEnd()
        return decoded
    }
}
