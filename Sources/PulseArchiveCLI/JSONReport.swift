import Foundation
import PulseArchive

/// A JSON value for `--json` output, keys kept in the order they were added.
indirect enum JSONReport {
    case object([(String, JSONReport)])
    case array([JSONReport])
    case string(String)
    case int(Int64)
    case double(Double)
    case bool(Bool)
    case null

    static func int(_ value: Int) -> JSONReport { .int(Int64(value)) }

    /// An object from a dictionary, keys sorted.
    static func counts(_ values: [String: Int]) -> JSONReport {
        .object(values.sorted { $0.key < $1.key }.map { ($0.key, .int($0.value)) })
    }

    var text: String {
        var out = ""
        write(to: &out)
        return out
    }

    private func write(to out: inout String) {
        switch self {
        case .object(let members):
            out += "{"
            for (i, (key, value)) in members.enumerated() {
                if i > 0 { out += "," }
                out += Self.quote(key) + ":"
                value.write(to: &out)
            }
            out += "}"
        case .array(let elements):
            out += "["
            for (i, element) in elements.enumerated() {
                if i > 0 { out += "," }
                element.write(to: &out)
            }
            out += "]"
        case .string(let s): out += Self.quote(s)
        case .int(let v): out += String(v)
        case .double(let v):
            if v.isFinite, v == v.rounded(), abs(v) < 1e15 { out += String(Int64(v)) } else if v.isFinite { out += "\(v)" } else { out += "null" }
        case .bool(let v): out += v ? "true" : "false"
        case .null: out += "null"
        }
    }

    private static func quote(_ s: String) -> String {
        var out = "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            // C0 controls, and what JSON allows raw but a terminal acts on (`ShownText`).
            case _ where scalar.value < 0x20 || ShownText.actsOnATerminal(scalar): out += String(format: "\\u%04x", scalar.value)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}
