enum HelpFormatter {
    /// A two-column help row: the label padded to 26 columns, the text wrapped beside it.
    static func row(_ label: String, _ help: String) -> String {
        let indent = String(repeating: " ", count: 28)
        var lines: [String] = []
        var line = ""
        for word in help.split(separator: " ") {
            if line.count + word.count + 1 > 52, !line.isEmpty {
                lines.append(line)
                line = ""
            }
            line += (line.isEmpty ? "" : " ") + word
        }
        if !line.isEmpty { lines.append(line) }
        var text = "  " + label
        if label.count > 24 {
            text += "\n" + indent
        } else {
            text += String(repeating: " ", count: 26 - label.count)
        }
        text += lines.joined(separator: "\n" + indent) + "\n"
        return text
    }
}
