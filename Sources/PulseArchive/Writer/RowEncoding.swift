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
    /// Every member's `"name":`, back to back.
    private let prefixes: [UInt8]

    public init(table: ArchiveTable, limits: ArchiveLimits = .standard) {
        self.table = table
        self.limits = limits
        var prefixes: [UInt8] = []
        members = table.sortedFieldIndices.map { i in
            let start = prefixes.count
            JSONText.appendString(table.fields[i].name, to: &prefixes)
            prefixes.append(JSONByte.colon)
            return Member(field: i, isOptional: table.fields[i].isOptional, prefix: start..<prefixes.count)
        }
        self.prefixes = prefixes
    }

    /// - Throws: `ArchiveError` for a required field without a value, or a value the reader
    ///   would refuse (a date outside `ArchiveDate.representable`, a double that is not
    ///   finite), naming the row and field: an export refuses rather than write a file that
    ///   cannot be imported.
    public func append(_ row: ArchiveRow, index: Int, to out: inout [UInt8]) throws {
        out.append(JSONByte.openBrace)
        var first = true
        try prefixes.withUnsafeBufferPointer { prefixes in
            for member in members {
                let value = row.values[member.field]
                if value.isNull {
                    if member.isOptional { continue }
                    throw ArchiveError(.invalidValue, "\(table.key)[\(index)]: the required field \"\(table.fields[member.field].name)\" has no value")
                }
                if !first { out.append(JSONByte.comma) }
                first = false
                out.append(contentsOf: UnsafeBufferPointer(rebasing: prefixes[member.prefix]))
                switch value {
                case .null: break
                case .int(let v): ArchiveNumber.appendInteger(v, to: &out)
                case .double(let v):
                    if let problem = ArchiveNumber.problem(withDouble: v) { throw unwritable(member.field, index, problem) }
                    ArchiveNumber.appendDouble(v, to: &out)
                case .bool(let v): out.append(contentsOf: v ? JSONText.trueLiteral : JSONText.falseLiteral)
                case .string(let v):
                    if v.utf8.count > limits.maxStringBytes {
                        throw ArchiveError(.limitExceeded, "\(table.key)[\(index)].\(table.fields[member.field].name): cannot be exported: its \(v.utf8.count) bytes "
                            + "pass the string limit of \(limits.maxStringBytes) bytes", table: table.key, limit: .stringBytes)
                    }
                    JSONText.appendString(v, to: &out)
                case .date(let v):
                    if let problem = ArchiveDate.problem(with: v) { throw unwritable(member.field, index, "date \(problem)") }
                    try JSONText.appendDate(v, to: &out)
                }
            }
        }
        out.append(JSONByte.closeBrace)
    }

    private func unwritable(_ field: Int, _ index: Int, _ problem: String) -> ArchiveError {
        ArchiveError(.invalidValue, "\(table.key)[\(index)].\(table.fields[field].name): cannot be exported: \(problem)", table: table.key)
    }
}
