import Foundation

/// Finds age secret keys in text a command is about to print.
///
/// No option takes a secret, yet a secret pasted into the wrong place (`-i=AGE-SECRET-KEY-1…`,
/// an archive's name, `--store`) comes back in the message about that place: "unknown option
/// '…'", "cannot open …". A key has a shape no other text has, so whatever is printed is
/// searched for it, wherever the message came from.
public enum SecretKeyText {
    /// `AGE-SECRET-KEY-1…`, `AGE-SECRET-KEY-PQ-1…` and `AGE-PLUGIN-NAME-1…`, in either case,
    /// the words joined by `-`, `_`, a space or nothing, with at least eight characters after
    /// the `1` (a message may name the prefix alone, `AGE-SECRET-KEY-1…`, which is no secret).
    private static let pattern = try! NSRegularExpression(
        pattern: #"AGE[-_ ]?(?:SECRET[-_ ]?KEY(?:[-_ ]?PQ)?|PLUGIN[-_ ]?[A-Z0-9._+]*)[-_ ]?1[0-9A-Z]{8,}"#,
        options: [.caseInsensitive])

    /// What a secret key's place shows instead of it.
    public static let placeholder = "(a secret key, not shown)"

    /// `text` with every secret key in it replaced by `placeholder`.
    public static func redacted(_ text: String) -> String {
        // Most text holds no key: a cheap look first.
        guard text.range(of: "age", options: .caseInsensitive) != nil else { return text }
        let range = NSRange(text.startIndex..., in: text)
        guard pattern.firstMatch(in: text, range: range) != nil else { return text }
        return pattern.stringByReplacingMatches(in: text, range: range, withTemplate: NSRegularExpression.escapedTemplate(for: placeholder))
    }
}
