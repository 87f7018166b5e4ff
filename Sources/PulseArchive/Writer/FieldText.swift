/// A field's value as the writer writes it, without JSON's quotes and escapes: the text of a
/// table cell (`tables`' CSV). Numbers and dates come from the writer's own formatting, so a
/// cell holds exactly what an export writes for the value: one rule, never a second one.
public enum FieldText {
    /// Appends `value`'s text: an integer in decimal, a double as its shortest round-trip text
    /// (`-0` for negative zero), `true`/`false`, a date as `yyyy-MM-ddTHH:mm:ss.SSSZ`, a string's
    /// UTF-8 bytes verbatim, nothing for null.
    /// - Throws: `ArchiveError.invalidValue` for what the writer refuses too (a double that is
    ///   not finite, a date outside `ArchiveDate.representable`); the caller names the field.
    public static func append(_ value: FieldValue, to out: inout ByteBuffer) throws {
        switch value {
        case .null: break
        case .int(let v): ArchiveNumber.appendInteger(v, to: &out)
        case .double(let v):
            if let problem = ArchiveNumber.problem(withDouble: v) { throw ArchiveError(.invalidValue, problem) }
            ArchiveNumber.appendDouble(v, to: &out)
        case .bool(let v): out.append(v ? JSONText.trueLiteral : JSONText.falseLiteral)
        case .string(let v): out.append(v)
        case .date(let v): try ArchiveDate.append(v, to: &out)
        }
    }
}

extension JSONNode {
    /// Appends the value as compact JSON, keys sorted by UTF-8 bytes: what an export writes
    /// for a document or an extension row.
    public func appendJSON(to out: inout ByteBuffer) {
        appendCompact(to: &out)
    }
}
