/// Text an archive (or a store) controls, made safe to show on a terminal.
///
/// A terminal acts on control characters: ESC starts a sequence that can clear the screen or
/// retitle the window, BEL rings, and the C1 controls (U+0080–U+009F) act like ESC sequences
/// on some terminals. So a key name, an enum name or an `appVersion` from a file is never
/// printed raw: each such character is shown as its escape (`\u{1B}`), the form Swift's
/// `debugDescription` gives the C0 ones, which the other messages quoting a value use.
public enum ShownText {
    /// `text` in quotes, escaped as `debugDescription` escapes it, C1 controls included: for
    /// a value named inside a message (`unknown field "a\u{1B}b"`). NUL is `\u{0}`, not
    /// `\0`, which before a digit reads as an octal escape (`\01M6…` for NUL, `01M6…`).
    public static func quoted(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            out += scalar == "\0" ? "\\u{0}" : scalar.escaped(asASCII: false)
        }
        return escapingControls(out + "\"")
    }

    /// `text` with every control character but newline and tab shown as its escape: for
    /// text printed as it is (an app version), and as the last guard on anything printed.
    public static func escapingControls(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isControl) else { return text }
        var out = ""
        for scalar in text.unicodeScalars {
            if isControl(scalar) {
                out += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// `escapingControls`, newlines too: for a message that must stay one line whatever a
    /// name in it holds (a path with a newline split an `Error:` line in two).
    public static func oneLine(_ text: String) -> String {
        escapingControls(text).replacingOccurrences(of: "\n", with: "\\u{A}")
    }

    /// `text` with its controls escaped, or quoted and escaped when it holds a line break
    /// (U+2028 and the rest included) or a tab, starts or ends with a space, or is empty: for a
    /// name in a list or a table row, which must not fake another row nor hide what it holds.
    /// Escaped here, not only on the way out, so that a table's columns are as wide as what
    /// shows.
    public static func listed(_ text: String) -> String {
        text.contains(where: { $0.isNewline || $0 == "\t" }) || text.first == " " || text.last == " " || text.isEmpty
            ? quoted(text) : escapingControls(text)
    }

    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        (scalar.value < 0x20 && scalar != "\n" && scalar != "\t") || actsOnATerminal(scalar)
    }

    /// DEL, the C1 controls, the line and paragraph separators (a line break to some
    /// terminals), the bidirectional marks, overrides and isolates (which reorder what
    /// follows on the screen, so a name could show as another) and the invisible ones (zero
    /// width, so two names could show alike): characters JSON allows raw that a terminal acts
    /// on. A JSON report escapes them too, so that its text passes this guard unchanged.
    public static func actsOnATerminal(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x7F...0x9F, 0x061C, 0x200B...0x200F, 0x2028...0x202E, 0x2060...0x2069, 0xFEFF: return true
        default: return false
        }
    }
}
