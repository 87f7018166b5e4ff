/// One field of a stored row as its type reads it, after checking that the store keeps it that
/// way. A store edited by hand (or by another program) can hold text in an integer column, a
/// real in a boolean, 2 in a boolean, a blob in a text column: reading those as the type asks
/// (SQLite converts: 'abc' → 0, 1.5 → 1, inf → Int64.max) would write another value than the
/// store holds, without a word. Export, `tables --store` and `diff --store` refuse such a
/// value instead, naming it: the one rule for every reader of a store's rows.
package enum StoredField {
    case null
    case integer(Int64)
    case real(Double)
    case bool(Bool)
    case date(Int64)
    /// The bytes as stored, valid until the row moves on.
    case text(UnsafeBufferPointer<UInt8>)

    /// - Parameter kind: the field's kind, as the row says it (`row.kind(field:)`), asked once
    ///   by a caller that also needs it to tell a null.
    /// - Parameter isKey: the field is its table's unique key, kept unique by the store's index
    ///   in the spelling it has: a UUID key must be upper-case, as the store keeps it, since a
    ///   reader takes `a…` and `A…` for one key and would refuse the archive with both.
    /// - Throws: `Mismatch` (what the store holds instead) when the field's kind is not one its
    ///   type is kept as.
    @inline(__always)
    static func read(_ row: some StoredRow, field: Int, type: FieldType, kind: StoredKind, isKey: Bool = false) throws(Mismatch) -> StoredField {
        switch (type, kind) {
        case (_, .null): return .null
        case (.int, .integer): return .integer(row.integer(field: field))
        case (.date, .integer): return .date(row.integer(field: field))
        case (.bool, .integer):
            let value = row.integer(field: field)
            guard value == 0 || value == 1 else { throw Mismatch("the store holds \(value) where a boolean (0 or 1) belongs") }
            return .bool(value == 1)
        case (.double, .real): return .real(row.real(field: field))
        case (.double, .integer):
            let value = row.integer(field: field)
            // An integral double kept as an integer (SQLite may): exact, or refused.
            guard let exact = Double(exactly: value) else {
                throw Mismatch("the store holds the integer \(value), which no double holds exactly")
            }
            return .real(exact)
        case (.string, .text): return .text(row.text(field: field))
        case (.uuid, .text):
            // A UUID in either case, as the reader takes it (the writers write it upper-case);
            // anything else the reader refuses.
            let bytes = row.text(field: field)
            guard CanonicalUUID.isUUID(bytes) else {
                throw Mismatch("the store holds \(ValueParsing.quoted(Array(bytes))) where a UUID belongs (was the store edited by another program?)")
            }
            if isKey, CanonicalUUID.hasLowerCase(bytes) {
                throw Mismatch("the store holds the key \(ValueParsing.quoted(Array(bytes))) with lower-case letters, where it keeps keys upper-case: "
                    + "its index would let the same key in upper case repeat it, and no reader takes an archive with a repeated key "
                    + "(was the store edited by another program? upper() in SQL mends it)")
            }
            return .text(bytes)
        default:
            throw Mismatch("the store holds \(kind.described) where \(type.described) belongs (was the store edited by another program?)")
        }
    }

    /// Text a store keeps, as a `String`; refused when it is not valid UTF-8. JSON cannot
    /// carry such bytes, and repairing them (U+FFFD, as `String(decoding:)` does) would write
    /// another value than the store holds; nothing this tool or the app writes is invalid.
    package static func string(_ bytes: UnsafeBufferPointer<UInt8>) throws(Mismatch) -> String {
        if let text = String(validating: bytes, as: UTF8.self) { return text }
        var parser = Unicode.UTF8.ForwardParser()
        var rest = bytes.makeIterator()
        var offset = 0
        while case .valid(let scalar) = parser.parseScalar(from: &rest) { offset += scalar.count }
        // The parser stops at the first byte of an invalid sequence: never ASCII, always inside.
        throw Mismatch("the store holds text that is not valid UTF-8 (byte 0x\(String(bytes[offset], radix: 16, uppercase: true)) at offset \(offset))")
    }

    /// `string(_:)` for a field of a table's row: a refusal names the table, row and field.
    static func string(_ bytes: UnsafeBufferPointer<UInt8>, _ table: ArchiveTable, _ index: Int, _ field: Int) throws -> String {
        do throws(Mismatch) { return try string(bytes) } catch {
            throw ArchiveError.unexportable(table, index, field, error.problem)
        }
    }

    /// A text column outside the tables (a settings key or value, an attachment's name) as a
    /// `String`, by the rule of every table's text column.
    package static func text(_ row: some StoredRow, field: Int) throws(Mismatch) -> String {
        let kind = row.kind(field: field)
        guard case .text(let bytes) = try read(row, field: field, type: .string, kind: kind) else {
            throw Mismatch("the store holds nothing where text belongs")
        }
        return try string(bytes)
    }

    /// What the store holds instead of a value of the field's type.
    package struct Mismatch: Error {
        package let problem: String
        init(_ problem: String) { self.problem = problem }
    }
}

extension StoredKind {
    package var described: String {
        switch self {
        case .null: "nothing"
        case .integer: "an integer"
        case .real: "a real number"
        case .text: "text"
        case .blob: "a blob"
        }
    }
}

extension FieldType {
    var described: String {
        switch self {
        case .uuid: "a UUID (text)"
        case .date: "a date (integer milliseconds)"
        case .string: "text"
        case .int: "an integer"
        case .double: "a number"
        case .bool: "a boolean (0 or 1)"
        }
    }
}

/// A stored row as `ArchiveRow` values, read by `StoredField`'s rule: for the readers of a
/// store that want values (`tables --store`, `diff`, `verify`'s store side), refusing what an
/// export refuses, with the same message.
public struct StoredRowValues {
    let table: ArchiveTable
    private let types: [FieldType]

    public init(table: ArchiveTable) {
        self.table = table
        types = table.fields.map(\.type)
    }

    /// - Throws: `ArchiveError.invalidValue` naming the row (`index`) and field a store keeps
    ///   in a form its type cannot read.
    public func row(_ row: some StoredRow, index: Int) throws -> ArchiveRow {
        var values = ArchiveRow(table: table)
        for (field, type) in types.enumerated() {
            let value: StoredField
            do throws(StoredField.Mismatch) {
                value = try StoredField.read(row, field: field, type: type, kind: row.kind(field: field), isKey: field == table.uniqueKeyIndex)
            } catch {
                throw ArchiveError.unexportable(table, index, field, error.problem)
            }
            switch value {
            case .null:
                // Refused here as the export refuses it, so `tables --store` writes no row an
                // export would not.
                if !table.fields[field].isOptional { throw ArchiveError.requiredFieldWithoutValue(table, index, field) }
            case .integer(let v): values[field] = .int(v)
            case .real(let v): values[field] = .double(v)
            case .bool(let v): values[field] = .bool(v)
            case .date(let v): values[field] = .date(v)
            // A UUID as the export writes it: upper-case (`read` checked it is one).
            case .text(let bytes) where type == .uuid: values[field] = .string(CanonicalUUID.canonical(bytes) ?? "")
            case .text(let bytes): values[field] = .string(try StoredField.string(bytes, table, index, field))
            }
        }
        return values
    }
}

extension ArchiveError {
    /// A required field a row has no value for: no archive may hold the row.
    static func requiredFieldWithoutValue(_ table: ArchiveTable, _ index: Int, _ field: Int) -> ArchiveError {
        ArchiveError(.invalidValue, "\(table.key)[\(index)]: the required field \"\(table.fields[field].name)\" has no value")
    }

    /// A value of a table's row that no archive may hold as it is, named by table, row and field.
    static func unexportable(_ table: ArchiveTable, _ index: Int, _ field: Int, _ problem: String) -> ArchiveError {
        unexportable("\(table.key)[\(index)].\(table.fields[field].name)", problem, table: table.key)
    }

    /// A value kept outside the tables (a setting, an attachment) that no archive may hold as
    /// it is, named by `place`.
    package static func unexportable(_ place: String, _ problem: String, table: String) -> ArchiveError {
        ArchiveError(.invalidValue, "\(place): cannot be exported: \(problem)", table: table)
    }
}
