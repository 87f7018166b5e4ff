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
    private var text = ByteBuffer()
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
        text.removeAll(shrinkingAbove: 1 << 20, to: 256)
        try encoding.append(row, index: index, to: &text)
        return text.count == original.count && text.withBytes { a in
            original.withUnsafeBufferPointer { b in a.elementsEqual(b) }
        }
    }

    /// `row` written as an export writes it, then read back as an import reads it.
    /// - Throws: `ArchiveError` when the row cannot be written, or its text not read back.
    public func writtenAndReadBack(_ row: ArchiveRow, index: Int) throws -> ArchiveRow {
        var written = ByteBuffer()
        try encoding.append(row, index: index, to: &written)
        let table = encoding.table
        // Through a window, not a second whole copy: a row of 8 MiB of control characters is
        // 48 MB of text.
        let capacity = max(16, min(written.count, 256 << 10))
        let scanner = JSONScanner(source: WrittenSource(written), limits: limits, capacity: capacity)
        var decoder = RowDecoder(table: table)
        guard let decoded = try decoder.readRow(scanner, index: index, scratch: &scratch, problems: ProblemSink(collects: false)) else {
            throw ArchiveError(.invalidValue, "\(table.key)[\(index)]: the written row does not read back", table: table.key)
        }
        try scanner.expectEnd()
        return decoded
    }
}
