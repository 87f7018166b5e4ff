import Foundation

/// The `contributorsJSON` string stored with each readiness row (readiness.md §9): a compact
/// array of the scored contributors in ranked order.
public enum ContributorsJSON {
    /// Keys in the order the tool writes them; numbers in the archive's shortest form.
    /// JSON has no infinity, so a contributor with a non-finite number (an HRV deviation of
    /// +∞ % when the night's mean overflows a double against a small baseline) cannot be
    /// encoded: the string is then `[]`, as the specification says of a failed encoding.
    public static func encode(_ contributors: [ReadinessContributor]) -> String {
        let encodable = contributors.allSatisfy { c in
            [c.earned, c.maxPoints, c.value, c.baseline ?? 0, c.deviation ?? 0].allSatisfy(\.isFinite)
        }
        guard encodable else { return "[]" }
        let objects = contributors.map { c -> String in
            var members = [
                "\"kindRaw\":" + ReadinessJSONText.quoted(c.kind.rawValue),
                "\"earned\":" + ReadinessJSONText.number(c.earned),
                "\"maxPoints\":" + ReadinessJSONText.number(c.maxPoints),
                "\"value\":" + ReadinessJSONText.number(c.value),
            ]
            if let baseline = c.baseline { members.append("\"baseline\":" + ReadinessJSONText.number(baseline)) }
            if let deviation = c.deviation { members.append("\"deviation\":" + ReadinessJSONText.number(deviation)) }
            members.append("\"detail\":" + ReadinessJSONText.quoted(c.detail))
            return "{" + members.joined(separator: ",") + "}"
        }
        return "[" + objects.joined(separator: ",") + "]"
    }

    /// A contributor as stored: the kind stays a string, so a newer app's kinds are kept.
    public struct Stored: Sendable, Equatable {
        public var kindRaw: String
        public var earned: Double
        public var maxPoints: Double
        public var value: Double
        public var baseline: Double?
        public var deviation: Double?
        public var detail: String
    }

    /// Reads a stored string tolerantly: unknown keys ignored, malformed JSON an empty list.
    public static func decode(_ text: String) -> [Stored] {
        guard let array = (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [Any] else { return [] }
        return array.compactMap { element in
            guard let object = element as? [String: Any],
                  let kind = object["kindRaw"] as? String,
                  let earned = (object["earned"] as? NSNumber)?.doubleValue,
                  let maxPoints = (object["maxPoints"] as? NSNumber)?.doubleValue,
                  let value = (object["value"] as? NSNumber)?.doubleValue
            else { return nil }
            return Stored(kindRaw: kind, earned: earned, maxPoints: maxPoints, value: value,
                          baseline: (object["baseline"] as? NSNumber)?.doubleValue,
                          deviation: (object["deviation"] as? NSNumber)?.doubleValue,
                          detail: object["detail"] as? String ?? "")
        }
    }
}
