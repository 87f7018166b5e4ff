import PulseArchive
import PulseSystem

/// The rows of an extension table on their way to a CSV file. Their columns are the keys the
/// rows have, known only once every row is seen: so the rows wait in an unnamed scratch file
/// (memory stays flat), one compact JSON object a line, while the keys and the kinds of their
/// values are gathered; then they are read back and written as records.
final class ExtensionSpool {
    /// The kinds of value seen in one column, null aside.
    private struct Kinds: OptionSet {
        let rawValue: Int
        static let text = Kinds(rawValue: 1)
        static let integer = Kinds(rawValue: 2)
        static let real = Kinds(rawValue: 4)
        static let boolean = Kinds(rawValue: 8)
        static let nested = Kinds(rawValue: 16)
        /// A string in the archive's exact date form (`2026-02-28T21:23:01.310Z`).
        static let date = Kinds(rawValue: 32)
        /// An integer a double does not hold exactly (beyond 2^53): with reals, the column is
        /// no real one.
        static let beyondDouble = Kinds(rawValue: 64)
    }

    private let file: ScratchFile
    private var kinds: [ByteKey: Kinds] = [:]
    private var line = ByteBuffer()

    init() throws {
        file = try ScratchFile(in: PrivateFiles.temporaryBase)
    }

    func add(_ row: JSONNode) throws {
        for (key, value) in row.objectValue ?? [:] {
            let kind: Kinds
            switch value {
            case .null: kind = []
            case .string(let text): kind = Self.isArchiveDate(text) ? .date : .text
            case .number(let literal): kind = Self.kind(ofNumber: literal)
            case .bool: kind = .boolean
            case .object, .array: kind = .nested
            }
            kinds[key, default: []].formUnion(kind)
        }
        line.removeAll(shrinkingAbove: 1 << 20, to: 256)
        row.appendJSON(to: &line)
        line.append(0x0A)
        try line.withBytes { try file.append(UnsafeRawBufferPointer($0)) }
    }

    /// Every key any row has, sorted by UTF-8 bytes as an export writes them, with a type that
    /// holds every value of the column: one kind gives its type (integers among reals: real,
    /// unless one is beyond 2^53; dates among other strings: text), anything else is JSON text.
    var columns: [TableColumn] {
        kinds.keys.sorted().map { key in
            let seen = kinds[key]!
            let type: ColumnType
            switch seen {
            case [], .text, [.text, .date]: type = .text
            case .date: type = .date
            case .integer, [.integer, .beyondDouble]: type = .integer
            case .real, [.integer, .real]: type = .real
            case .boolean: type = .boolean
            default: type = .json
            }
            return TableColumn(key.text, type)
        }
    }

    /// What a number's literal needs of its column's type, the cell being the literal: integer
    /// when it is an integer (`420`, not `420.0`) that 64 bits hold; real when a double holds
    /// it finitely (the nearest double, as for the format's double fields); else JSON, whose
    /// reader keeps the literal: `18446744073709551616` was declared integer and `1e400` real,
    /// and a typed loader overflowed or read infinity.
    private static func kind(ofNumber literal: String) -> Kinds {
        if literal.utf8.allSatisfy({ $0 == 0x2D || ($0 >= 0x30 && $0 <= 0x39) }) {
            guard let value = Int64(literal) else { return .nested }
            return value.magnitude > 1 << 53 ? [.integer, .beyondDouble] : .integer
        }
        guard let value = Double(literal), value.isFinite else { return .nested }
        return .real
    }

    /// Whether `text` is a date exactly as the archive writes one: the Android port's dates are
    /// converted to that form on read, so a column of them is a date column.
    private static func isArchiveDate(_ text: String) -> Bool {
        guard text.utf8.count == 24, let millis = ArchiveDate.parse(text) else { return false }
        return (try? ArchiveDate.format(millis)) == text
    }

    /// Reads the rows back and writes each as a record of `file` (whose columns are `columns`).
    func writeRows(to section: SectionFile) throws {
        let keys = section.columns.map { (ByteKey($0.name), $0.type == .json) }
        let unbounded = ArchiveLimits(maxStringBytes: .max, maxWholeValueBytes: .max)
        try forEachLine { bytes in
            let row = try JSONNode.parse(bytes, limits: unbounded, what: "\(section.key) row").objectValue ?? [:]
            try section.writeRow { out in
                for (i, (key, isJSON)) in keys.enumerated() {
                    if i > 0 { out.append(CSVText.comma) }
                    guard let value = row[key] else { continue }
                    Self.appendCell(value, asJSON: isJSON, to: &out)
                }
                out.append(CSVText.recordEnd)
            }
        }
    }

    /// A value as a cell: JSON text in a JSON column; else a string's text, a number's
    /// literal, `true`/`false`; null as an empty field.
    private static func appendCell(_ value: JSONNode, asJSON: Bool, to out: inout ByteBuffer) {
        switch value {
        case .null: return
        case .string(let s) where !asJSON: CSVText.appendField(s, to: &out)
        default:
            var text = ByteBuffer()
            value.appendJSON(to: &text)
            text.withBytes { CSVText.appendField($0, to: &out) }
        }
    }

    /// Hands each line of the scratch file to `body`, without its newline.
    private func forEachLine(_ body: ([UInt8]) throws -> Void) throws {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: ArchiveBytes.pieceSize, alignment: 16)
        defer { buffer.deallocate() }
        var offset: Int64 = 0
        var pending: [UInt8] = []
        while offset < file.count {
            let n = try file.read(into: buffer, at: offset)
            guard n > 0 else { throw ArchiveError(.io, "a scratch file ended after \(offset) of its \(file.count) bytes") }
            offset += Int64(n)
            for byte in UnsafeRawBufferPointer(rebasing: buffer[0..<n]) {
                if byte == 0x0A {
                    try body(pending)
                    pending.removeAll(keepingCapacity: true)
                } else {
                    pending.append(byte)
                }
            }
        }
    }
}
