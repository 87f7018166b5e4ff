/// One subcommand: its declared shape, a validating initializer, and the work.
protocol Subcommand {
    static var spec: CommandSpec { get }
    /// Checks the values of the arguments.
    /// - Throws: `UsageError` for a value that does not fit (exit 64).
    init(_ arguments: ParsedArguments, console: Console) throws
    /// Does the work; returns the exit code.
    func run() throws -> Int32
    /// What `--json` prints on standard output when the command fails with an error (exit 1)
    /// before it printed its report, so that a job reading the report reads an object, not
    /// nothing; nil to print none (the archive is what `export -o -` writes there).
    static func failureReport(_ message: String, arguments: ParsedArguments) -> JSONReport?
}

extension Subcommand {
    static func failureReport(_ message: String, arguments: ParsedArguments) -> JSONReport? {
        .object([("ok", .bool(false)), ("error", .string(message))])
    }
}
