/// The two JSON forms the contributors string needs, written as the archive writer writes them
/// (the codec's `JSONText`, which the app reads back the same way): the shortest decimal that
/// reads back as the same double, integral values without `.0`; strings escaped as the app
/// escapes (`"`, `\`, `/` and control characters). Here so that the readiness maths depends on
/// no module; `PulseStoreTests` checks that both write the same text.
enum ReadinessJSONText {
    static func number(_ value: Double) -> String {
        if value == value.rounded(), abs(value) < 9.007_199_254_740_992e15 {
            if value == 0 && value.sign == .minus { return "-0" }
            return String(Int64(value))
        }
        var text = value.description
        if text.hasSuffix(".0") { text.removeLast(2) }
        return text
    }

    static func quoted(_ text: String) -> String {
        var out: [UInt8] = [0x22]
        for c in text.utf8 {
            switch c {
            case 0x22: out += [0x5C, 0x22]
            case 0x5C: out += [0x5C, 0x5C]
            case 0x2F: out += [0x5C, 0x2F]
            case 0x0A: out += [0x5C, 0x6E]
            case 0x0D: out += [0x5C, 0x72]
            case 0x09: out += [0x5C, 0x74]
            case 0x08: out += [0x5C, 0x62]
            case 0x0C: out += [0x5C, 0x66]
            case ..<0x20: out += [0x5C, 0x75, 0x30, 0x30, hex[Int(c >> 4)], hex[Int(c & 0xF)]]
            default: out.append(c)
            }
        }
        out.append(0x22)
        return String(decoding: out, as: UTF8.self)
    }

    private static let hex: [UInt8] = Array("0123456789abcdef".utf8)
}
