import PulseArchive

/// The type of a column as `tables.json` names it: what a loader needs to read the cell back.
public enum ColumnType: String, Sendable {
    /// Text verbatim (UUIDs upper-case, raw enum strings, the `…JSON` string fields as the
    /// app stores them).
    case text
    case integer
    case real
    case boolean
    /// ISO 8601 UTC with milliseconds: `2026-02-28T21:23:01.310Z`.
    case date
    /// A nested value (a document, an object in an extension row) as compact JSON text.
    case json = "JSON"

    init(_ type: FieldType) {
        switch type {
        case .uuid, .string: self = .text
        case .int: self = .integer
        case .double: self = .real
        case .bool: self = .boolean
        case .date: self = .date
        }
    }
}

/// One column of a written table, as `tables.json` describes it.
public struct TableColumn: Sendable, Equatable {
    public let name: String
    public let type: ColumnType
    /// The unit archive-format.md gives the values, or nil.
    public let unit: String?
    /// The column that names each row's unit, where the unit varies by row (`measurements.value`).
    public let unitColumn: String?

    init(_ name: String, _ type: ColumnType, unit: String? = nil, unitColumn: String? = nil) {
        self.name = name
        self.type = type
        self.unit = unit
        self.unitColumn = unitColumn
    }

    /// The columns of an archive table: every field, in the table's order (archive-format.md §4).
    static func of(_ table: ArchiveTable) -> [TableColumn] {
        table.fields.map { field in
            let unit = Self.unit(of: field.name, in: table)
            let varies = field.name == "value" && table.fieldIndex("unit") != nil
            return TableColumn(field.name, ColumnType(field.type), unit: unit, unitColumn: varies ? "unit" : nil)
        }
    }

    /// The unit of a field where archive-format.md gives one: by the name's suffix
    /// (`distanceMeters`, `totalMinutes`, `totalPauseSeconds`, `heightCm`, `weightKg`,
    /// `totalCostUSD`, `batteryPercent`), and the fields §4 and §8 name one for
    /// (`startEpoch`: Unix seconds; `hrRestingBaseline`: bpm; the goals' burn in kcal).
    static func unit(of name: String, in table: ArchiveTable) -> String? {
        switch (table.key, name) {
        case (_, "startEpoch"): return "s"
        case (_, "hrRestingBaseline"): return "bpm"
        case ("userGoals", "calories"): return "kcal"
        case (_, "percent"): return "%"
        default: break
        }
        let suffixes: [(String, String)] = [
            ("Meters", "m"), ("Minutes", "min"), ("Minute", "min"), ("Seconds", "s"), ("Cm", "cm"), ("Kg", "kg"),
            ("USD", "USD"), ("Percent", "%"),
        ]
        return suffixes.first { name.hasSuffix($0.0) }?.1
    }
}
