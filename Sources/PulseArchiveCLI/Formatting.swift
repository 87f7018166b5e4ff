import Foundation
import PulseArchive

enum Formatting {
    /// Bytes in a human unit: `812 B`, `4.2 MB`.
    static func bytes(_ n: Int64) -> String {
        let units = ["B", "KB", "MB", "GB", "TB"]
        var value = Double(n)
        var unit = 0
        while value >= 1000, unit < units.count - 1 {
            value /= 1000
            unit += 1
        }
        return unit == 0 ? "\(n) B" : String(format: "%.1f %@", value, units[unit])
    }

    /// The Android port's extension tables among `counts`' keys, in a fixed order: the import
    /// report lists them after the app's tables, and only when the store has them.
    static func extensionTables(in counts: [String: Int]) -> [String] {
        ExtensionTable.allCases.map(\.rawValue).filter { counts[$0] != nil }
    }

    /// Columns two spaces apart, indented by two; the `numeric` ones right-aligned.
    static func columns(_ header: [String], _ rows: [[String]], numeric: Set<Int>) -> String {
        let all = [header] + rows
        let widths = header.indices.map { column in all.map { $0[column].count }.max() ?? 0 }
        return all.map { row in
            var line = "  " + row.enumerated().map { column, cell in
                let pad = String(repeating: " ", count: widths[column] - cell.count)
                return numeric.contains(column) ? pad + cell : cell + pad
            }.joined(separator: "  ")
            while line.hasSuffix(" ") { line.removeLast() }
            return line
        }.joined(separator: "\n")
    }
}
