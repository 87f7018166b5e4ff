extension CommandSpec.Option {
    static let store = CommandSpec.Option.value("--store", valueName: "dir",
        help: "The store directory (default: $PULSE_STORE, else ./pulse-store).")
    static let json = CommandSpec.Option.flag("--json", help: "Print one JSON object on stdout instead of text.")
    static let quiet = CommandSpec.Option.flag("--quiet", "-q", help: "Show no progress line and no summary on stderr.")
    static let maxSize = CommandSpec.Option.value("--max-size", valueName: "bytes",
        help: "Refuse an archive whose JSON is larger than this (default: 64 GiB).")
    static let maxInflateRatio = CommandSpec.Option.value("--max-inflate-ratio", valueName: "n",
        help: "Refuse a gzip archive that inflates more than n times its size (default: 200).")
    static let maxStringSize = CommandSpec.Option.value("--max-string-size", valueName: "bytes",
        help: "Refuse a string longer than this; an attachment or file carries 3/4 of it as base64 (default: 8 MiB). Memory grows with it.")
    static let maxObjectSize = CommandSpec.Option.value("--max-object-size", valueName: "bytes",
        help: "Refuse a document, Android row, meal or food row, or settings blob whose JSON is larger than this (default: 2 MiB). Memory grows with it.")
}
