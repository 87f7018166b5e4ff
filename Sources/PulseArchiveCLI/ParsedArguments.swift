/// The arguments of one command after parsing.
struct ParsedArguments {
    var positionals: [String] = []
    var values: [String: String] = [:]
    /// Every value of each option, in order (`--recipient` may be given many times).
    var allValues: [String: [String]] = [:]
    var flags: Set<String> = []
    var wantsHelp = false

    /// The option's value (one given twice is refused unless it is repeatable).
    func value(_ name: String) -> String? { values[name] }
    /// Every value given for a repeatable option, in order.
    func values(_ name: String) -> [String] { allValues[name] ?? [] }
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
                    allValues[key, default: []].append(inlineValue)
                } else if index < arguments.count {
                    values[key] = arguments[index]
                    allValues[key, default: []].append(arguments[index])
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
        for option in spec.options where !option.isRepeatable && (allValues[option.names[0]]?.count ?? 0) > 1 {
            throw UsageError(message: "'\(option.names[0])' was given \(allValues[option.names[0]]!.count) times: give it once\(option.names[0] == "--fail-on" ? " (kinds go in one value: --fail-on removed,changed)" : "")")
        }
        for (a, b) in spec.exclusive where (flags.contains(a) || values[a] != nil) && (flags.contains(b) || values[b] != nil) {
            throw UsageError(message: "'\(a)' and '\(b)' cannot be used together")
        }
        if positionals.count > spec.arguments.count {
            throw UsageError(message: "Unexpected argument '\(positionals[spec.arguments.count])'")
        }
        if positionals.count < spec.arguments.count(where: { !$0.isOptional }) {
            throw UsageError(message: "Missing expected argument '<\(spec.arguments[positionals.count].name)>'")
        }
        // An empty value is what an unset variable gives (`--store "$STORE"`); as a path it would
        // resolve to the root directory or to nothing.
        if let index = positionals.firstIndex(of: "") {
            throw UsageError(message: "The argument '<\(spec.arguments[index].name)>' is empty (an unset variable?): name a file")
        }
        if let option = spec.options.first(where: { allValues[$0.names[0]]?.contains("") == true }) {
            throw UsageError(message: "The value of '\(option.names[0]) <\(option.valueName ?? "")>' is empty (an unset variable?)")
        }
    }
}
