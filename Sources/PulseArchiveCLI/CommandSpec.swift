/// The declared shape of one command: what `--help` prints and what the parser accepts.
struct CommandSpec {
    struct Argument {
        let name: String
        let help: String
        /// May be left out (`tables`' file, when `--store` names the source); only the last.
        var isOptional = false
    }

    struct Option {
        /// Long name first, then any short alias (`["--output", "-o"]`).
        let names: [String]
        /// Nil for a flag; the placeholder (`dir`) for an option that takes a value.
        let valueName: String?
        let help: String
        /// May be given more than once, each value kept (`--identity`, `--table`). Any other
        /// option given twice is a usage error: the last value winning silently turned
        /// `--fail-on removed --fail-on added` into a guard that no longer checked for removals.
        var isRepeatable = false

        static func flag(_ names: String..., help: String) -> Option { Option(names: names, valueName: nil, help: help) }
        static func value(_ names: String..., valueName: String, help: String) -> Option {
            Option(names: names, valueName: valueName, help: help)
        }
        static func repeatable(_ names: String..., valueName: String, help: String) -> Option {
            Option(names: names, valueName: valueName, help: help, isRepeatable: true)
        }
    }

    let name: String
    let abstract: String
    var discussion: String? = nil
    var arguments: [Argument] = []
    var options: [Option] = []
    /// Pairs of options that exclude each other.
    var exclusive: [(String, String)] = []

    static let help = Option.flag("--help", "-h", help: "Show help information.")

    var usage: String {
        var parts = ["pulse-archive", name]
        parts += arguments.map { $0.isOptional ? "[<\($0.name)>]" : "<\($0.name)>" }
        var skip = Set<String>()
        for option in options {
            guard !skip.contains(option.names[0]) else { continue }
            if let pair = exclusive.first(where: { $0.0 == option.names[0] }),
               let other = options.first(where: { $0.names[0] == pair.1 }) {
                parts.append("[\(option.names[0]) | \(other.names[0])]")
                skip.insert(other.names[0])
                continue
            }
            parts.append("[\(option.names[0])\(option.valueName.map { " <\($0)>" } ?? "")]")
        }
        return parts.joined(separator: " ")
    }

    var helpText: String {
        var text = "OVERVIEW: \(abstract)\n"
        if let discussion { text += "\n\(discussion)\n" }
        text += "\nUSAGE: \(usage)\n"
        if !arguments.isEmpty {
            text += "\nARGUMENTS:\n"
            for argument in arguments { text += HelpFormatter.row("<\(argument.name)>", argument.help) }
        }
        text += "\nOPTIONS:\n"
        for option in options + [Self.help] {
            let label = option.names.reversed().joined(separator: ", ") + (option.valueName.map { " <\($0)>" } ?? "")
            text += HelpFormatter.row(label, option.help)
        }
        return text
    }
}

