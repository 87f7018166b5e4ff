import Foundation
import PulseArchive

/// The app's `DocumentCoder`: pretty-printed JSON with 2-space indent and `"key" : value`,
/// keys sorted by UTF-8 bytes, `/` escaped, no trailing newline; empty containers in
/// Foundation's pretty form. Values are written as held (number literals verbatim), so a
/// canonical file comes back byte for byte.
public enum DocumentCoder {
    public static func encode(_ node: JSONNode) -> [UInt8] {
        var out: [UInt8] = []
        write(node, level: 0, to: &out)
        return out
    }

    private static func indent(_ level: Int, _ out: inout [UInt8]) {
        out.append(contentsOf: repeatElement(0x20, count: level * 2))
    }

    private static func write(_ node: JSONNode, level: Int, to out: inout [UInt8]) {
        switch node {
        case .object(let members):
            out.append(contentsOf: Array("{\n".utf8))
            if members.isEmpty { out.append(0x0A) }
            for (i, key) in members.keys.sorted().enumerated() {
                if i > 0 { out.append(contentsOf: Array(",\n".utf8)) }
                indent(level + 1, &out)
                out.append(contentsOf: Array(JSONText.quoted(key.text).utf8))
                out.append(contentsOf: Array(" : ".utf8))
                write(members[key]!, level: level + 1, to: &out)
            }
            if !members.isEmpty { out.append(0x0A) }
            indent(level, &out)
            out.append(0x7D)
        case .array(let elements):
            out.append(contentsOf: Array("[\n".utf8))
            if elements.isEmpty { out.append(0x0A) }
            for (i, element) in elements.enumerated() {
                if i > 0 { out.append(contentsOf: Array(",\n".utf8)) }
                indent(level + 1, &out)
                write(element, level: level + 1, to: &out)
            }
            if !elements.isEmpty { out.append(0x0A) }
            indent(level, &out)
            out.append(0x5D)
        default:
            out.append(contentsOf: Array(node.compactText.utf8))
        }
    }

    /// A date in the canonical form: ISO-8601 UTC, whole seconds.
    public static func dateString(_ millis: Int64) -> String {
        let text = (try? ArchiveDate.format(millis - ((millis % 1000) + 1000) % 1000)) ?? ""
        return text.replacingOccurrences(of: ".000Z", with: "Z")
    }

    /// Decodes a typed view from a node; dates may carry fractions and offsets.
    public static func decode<T: Decodable>(_ type: T.Type, from node: JSONNode) throws -> T {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            let text = try decoder.singleValueContainer().decode(String.self)
            guard let millis = ArchiveDate.parse(text) else {
                throw DecodingError.dataCorruptedError(in: try decoder.singleValueContainer(), debugDescription: "unrecognized date \(text)")
            }
            return Date(timeIntervalSince1970: Double(millis) / 1000)
        }
        return try decoder.decode(T.self, from: Data(node.compactText.utf8))
    }
}
