import Foundation

/// How the writer writes the rows of one table: objects with sorted keys, nil optionals
/// omitted. The members' `"name":` prefixes are built once per table, not once per row.
/// Public for `diff`, whose canonical content of a row is the row as an export writes it.
public struct RowEncoding {
    /// A field in the order it is written, with the `"name":` that starts its member.
    private struct Member {
        let field: Int
        let isOptional: Bool
        let prefix: Range<Int>
    }

    let table: ArchiveTable
    /// The reader's limits: a string past `maxStringBytes` is refused, named, not written.
    let limits: ArchiveLimits
    private let members: [Member]
    /// Each field's type, by field index.
    private let types: [FieldType]
    /// Every member's `"name":`, back to back.
    private let prefixes: [UInt8]

    public init(table: ArchiveTable, limits: ArchiveLimits = .standard) {
        self.table = table
        self.limits = limits
        var prefixes = ByteBuffer()
        var members: [Member] = []
        for i in table.sortedFieldIndices {
            let start = prefixes.count
            JSONText.appendString(table.fields[i].name, to: &prefixes)
            prefixes.append(JSONByte.colon)
            members.append(Member(field: i, isOptional: table.fields[i].isOptional, prefix: start..<prefixes.count))
        }
        self.members = members
        self.prefixes = prefixes.bytes
        types = table.fields.map(\.type)
    }

    /// - Throws: `ArchiveError` for a required field without a value, or a value the reader
    ///   would refuse (a date outside `ArchiveDate.representable`, a double that is not
    ///   finite), naming the row and field: an export refuses rather than write a file that
    ///   cannot be imported.
    public func append(_ row: ArchiveRow, index: Int, to out: inout ByteBuffer) throws {
        try appendMembers(index: index, to: &out, isNull: { row.values[$0].isNull }) { field, out in
            switch row.values[field] {
            case .null: break
            case .int(let v): ArchiveNumber.appendInteger(v, to: &out)
            case .double(let v): try appendDouble(v, field, index, to: &out)
            case .bool(let v): out.append(v ? JSONText.trueLiteral : JSONText.falseLiteral)
            case .string(let v) where types[field] == .uuid:
                try appendString(try canonicalUUID(v, field, index), field, index, to: &out)
            case .string(let v): try appendString(v, field, index, to: &out)
            case .date(let v): try appendDate(v, field, index, to: &out)
            }
        }
    }

    /// The same text as `append(_:index:to:)` writes for the row's values, read from where they
    /// are kept: an export of a store encodes every column this way.
    func append(stored row: some StoredRow, index: Int, to out: inout ByteBuffer) throws {
        // The kind `isNull` asked for is the one `read` checks: one question per field.
        var kind = StoredKind.null
        try appendMembers(index: index, to: &out, isNull: { kind = row.kind(field: $0); return kind == .null }) { field, out in
            let value: StoredField
            do throws(StoredField.Mismatch) { value = try StoredField.read(row, field: field, type: types[field], kind: kind, isKey: field == table.uniqueKeyIndex) } catch {
                throw ArchiveError.unexportable(table, index, field, error.problem)
            }
            switch value {
            case .null: break
            case .integer(let v): ArchiveNumber.appendInteger(v, to: &out)
            case .date(let v): try appendDate(v, field, index, to: &out)
            case .bool(let v): out.append(v ? JSONText.trueLiteral : JSONText.falseLiteral)
            case .real(let v): try appendDouble(v, field, index, to: &out)
            case .text(let bytes) where types[field] == .uuid:
                // Checked by `read` (hex digits and hyphens): nothing to escape; written
                // upper-case, as the dialect writes UUIDs and the reader keeps them.
                out.append(JSONByte.quote)
                CanonicalUUID.appendUpperCased(bytes, to: &out)
                out.append(JSONByte.quote)
            case .text(let bytes):
                try checkLength(bytes.count, field, index)
                out.append(JSONByte.quote)
                if JSONText.appendEscapedIfASCII(bytes, to: &out) {
                    out.append(JSONByte.quote)
                } else {
                    out.removeAll(from: out.count - 1)
                    try appendString(StoredField.string(bytes, table, index, field), field, index, to: &out)
                }
            }
        }
    }

    /// Writes the members in key order around what `value` appends for each: a null is
    /// omitted when the field is optional and refused when it is not.
    private func appendMembers(index: Int, to out: inout ByteBuffer, isNull: (Int) -> Bool,
                               value: (_ field: Int, _ out: inout ByteBuffer) throws -> Void) throws {
        out.append(JSONByte.openBrace)
        var first = true
        try prefixes.withUnsafeBufferPointer { prefixes in
            for member in members {
                if isNull(member.field) {
                    if member.isOptional { continue }
                    throw ArchiveError.requiredFieldWithoutValue(table, index, member.field)
                }
                if !first { out.append(JSONByte.comma) }
                first = false
                out.append(UnsafeBufferPointer(rebasing: prefixes[member.prefix]))
                try value(member.field, &out)
            }
        }
        out.append(JSONByte.closeBrace)
    }

    private func appendDouble(_ value: Double, _ field: Int, _ index: Int, to out: inout ByteBuffer) throws {
        if let problem = ArchiveNumber.problem(withDouble: value) { throw ArchiveError.unexportable(table, index, field, problem) }
        ArchiveNumber.appendDouble(value, to: &out)
    }

    private func appendDate(_ millis: Int64, _ field: Int, _ index: Int, to out: inout ByteBuffer) throws {
        if let problem = ArchiveDate.problem(with: millis) { throw ArchiveError.unexportable(table, index, field, "date \(problem)") }
        try JSONText.appendDate(millis, to: &out)
    }

    private func appendString(_ text: String, _ field: Int, _ index: Int, to out: inout ByteBuffer) throws {
        var text = text
        try text.withUTF8 { try appendValidText($0, field, index, to: &out) }
    }

    /// A string's UTF-8 bytes, quoted and escaped, refused past the reader's string limit.
    private func appendValidText(_ utf8: UnsafeBufferPointer<UInt8>, _ field: Int, _ index: Int, to out: inout ByteBuffer) throws {
        try checkLength(utf8.count, field, index)
        out.append(JSONByte.quote)
        JSONText.appendEscaped(utf8, to: &out)
        out.append(JSONByte.quote)
    }

    /// A UUID field's value upper-case, as the dialect writes it; refused when the reader
    /// would not take it (`CanonicalUUID.isUUID`).
    private func canonicalUUID(_ text: String, _ field: Int, _ index: Int) throws -> String {
        var text = text
        if text.withUTF8({ CanonicalUUID.isUUID($0) && !CanonicalUUID.hasLowerCase($0) }) { return text }
        guard let canonical = CanonicalUUID.canonical(text) else {
            throw ArchiveError.unexportable(table, index, field, "\(ValueParsing.quoted(Array(text.utf8))) is not a UUID")
        }
        return canonical
    }

    private func checkLength(_ utf8Count: Int, _ field: Int, _ index: Int) throws {
        if utf8Count > limits.maxStringBytes {
            throw ArchiveError(.limitExceeded, "\(table.key)[\(index)].\(table.fields[field].name): cannot be exported: its \(utf8Count) bytes "
                + "pass the string limit of \(limits.maxStringBytes) bytes", table: table.key, limit: .stringBytes)
        }
    }
}
