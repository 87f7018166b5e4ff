/// The tool's extension tables: the Android port's meals and food products, carried with the
/// port's field names (dates converted to the app's form).
public enum ExtensionTable: String, Sendable, CaseIterable {
    case mealEntries
    case foodProducts

    /// The field whose value is unique within the table.
    public var uniqueKey: String { self == .mealEntries ? "id" : "code" }

    /// Converts an Android row: epoch-millisecond date fields (`…At`, `date`, `timestamp`) to
    /// ISO-8601 strings; a meal `updatedAt` of 0 becomes its `createdAt`. A date field holds
    /// epoch milliseconds or `null` (the port writes a missing date so), as in every other
    /// table of the port: a string, a fraction or a boolean there was never written by it, and
    /// kept as found it would leave the app's dialect holding a "date" no reader can read.
    /// - Parameter location: the row (`mealEntries[3]`), for messages.
    /// - Throws: `ArchiveError.invalidValue` for a date field holding anything else, or a date
    ///   outside `ArchiveDate.representable`.
    func fromAndroid(_ object: [ByteKey: JSONNode], location: String) throws -> [ByteKey: JSONNode] {
        var converted = object
        for (key, value) in object where key.text.utf8.reversed().starts(with: "tA".utf8) || key == "date" || key == "timestamp" {
            if case .null = value { continue }
            converted[key] = .string(try ArchiveDate.format(try AndroidDialect.epochMillis(value, location: "\(location).\(key.text)")))
        }
        if self == .mealEntries, object["updatedAt"]?.integerValue == 0, let created = converted["createdAt"] {
            converted["updatedAt"] = created
        }
        return converted
    }

    /// Why the reader refuses `row` as one of this table's, or nil: the one rule for the reader
    /// and for the writer, which refuses what the reader would.
    public func problem(with row: JSONNode) -> String? {
        guard case .object = row else { return "expected a row object" }
        switch row[uniqueKey] {
        case .string?, .number?: return nil
        case nil, .null?: return "missing the required field \"\(uniqueKey)\""
        case .bool?: return "its \"\(uniqueKey)\" is a boolean, where a string or a number belongs"
        case .array?: return "its \"\(uniqueKey)\" is an array, where a string or a number belongs"
        case .object?: return "its \"\(uniqueKey)\" is an object, where a string or a number belongs"
        }
    }

    /// The row's unique value as text, or nil when it has none.
    public func key(of row: JSONNode) -> String? {
        switch row[uniqueKey] {
        case .string(let text)?: return text
        case .number(let literal)?: return literal
        default: return nil
        }
    }
}
