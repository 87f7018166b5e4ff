/// The declared shape of one command: what `--help` prints and what the parser accepts.
struct CommandSpec {
    struct Argument {
        let name: String
        let help: String
    }

    struct Option {
        /// Long name first, then any short alias (`["--output", "-o"]`).
        let names: [String]
        /// Nil for a flag; the placeholder (`dir`) for an option that takes a value.
        let valueName: String?
        let help: String

        static func flag(_ names: String..., help: String) -> Option { Option(names: names, valueName: nil, help: help) }
        static func value(_ names: String..., valueName: String, help: String) -> Option {
            Option(names: names, valueName: valueName, help: help)
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
        parts += arguments.map { "<\($0.name)>" }
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

/// A command line that does not fit its command: exit 64 with the usage.
struct UsageError: Error {
    let message: String
}

/// The arguments of one command after parsing.
struct ParsedArguments {
    var positionals: [String] = []
    var values: [String: String] = [:]
    var flags: Set<String> = []
    var wantsHelp = false

    func value(_ name: String) -> String? { values[name] }
    func flag(_ name: String) -> Bool { flags.contains(name) }

    /// Parses `arguments` against `spec`.
    init(_ arguments: [String], spec: CommandSpec) throws(UsageError) {
        var index = 0
        var onlyPositionals = false
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if onlyPositionals || !argument.hasPrefix("-") || argument == "-" {
                positionals.append(argument)
                continue
            }
            if argument == "--" { onlyPositionals = true; continue }
            if argument == "-h" || argument == "--help" { wantsHelp = true; continue }
            var name = argument
            var inlineValue: String?
            if let equals = argument.firstIndex(of: "="), argument.hasPrefix("--") {
                name = String(argument[..<equals])
                inlineValue = String(argument[argument.index(after: equals)...])
            }
            guard let option = spec.options.first(where: { $0.names.contains(name) }) else {
                throw UsageError(message: "Unknown option '\(name)'")
            }
            let key = option.names[0]
            if let valueName = option.valueName {
                if let inlineValue {
                    values[key] = inlineValue
                } else if index < arguments.count {
                    values[key] = arguments[index]
                    index += 1
                } else {
                    throw UsageError(message: "Missing value for '\(name) <\(valueName)>'")
                }
            } else {
                if inlineValue != nil { throw UsageError(message: "The flag '\(name)' takes no value") }
                flags.insert(key)
            }
        }
        if wantsHelp { return }
        for (a, b) in spec.exclusive where (flags.contains(a) || values[a] != nil) && (flags.contains(b) || values[b] != nil) {
            throw UsageError(message: "'\(a)' and '\(b)' cannot be used together")
        }
        if positionals.count > spec.arguments.count {
            throw UsageError(message: "Unexpected argument '\(positionals[spec.arguments.count])'")
        }
        if positionals.count < spec.arguments.count {
            throw UsageError(message: "Missing expected argument '<\(spec.arguments[positionals.count].name)>'")
        }
        // An empty value is what an unset variable gives (`--store "$STORE"`); as a path it would
        // resolve to the root directory or to nothing.
        if let index = positionals.firstIndex(of: "") {
            throw UsageError(message: "The argument '<\(spec.arguments[index].name)>' is empty (an unset variable?): name a file")
        }
        if let option = spec.options.first(where: { values[$0.names[0]] == "" }) {
            throw UsageError(message: "The value of '\(option.names[0]) <\(option.valueName ?? "")>' is empty (an unset variable?)")
        }
    }
}
