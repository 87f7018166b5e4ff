import Testing
@testable import PulseArchive

/// How a value from a file is quoted in a message.
@Suite("Quoted values in messages")
struct ShownTextTests {
    @Test("every scalar is quoted as debugDescription quotes it, terminal controls escaped, but NUL, which is \\u{0} (\\0 before a digit reads as an octal escape)")
    func quotedAsDebugDescription() {
        #expect(ShownText.quoted("Splits/\u{0}01M6") == #""Splits/\u{0}01M6""#)
        #expect(ShownText.quoted("m\u{0}x") == #""m\u{0}x""#)
        var differing: [UInt32] = []
        for value in UInt32(1)..<0x3_0000 {
            guard let scalar = Unicode.Scalar(value) else { continue }
            let text = "a" + String(scalar) + "0"
            if ShownText.quoted(text) != ShownText.escapingControls(text.debugDescription) { differing.append(value) }
        }
        #expect(differing.isEmpty, "\(differing.prefix(10).map { String($0, radix: 16) })")
    }
}
