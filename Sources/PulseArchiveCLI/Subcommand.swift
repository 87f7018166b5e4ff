/// One subcommand: its declared shape, a validating initializer, and the work.
protocol Subcommand {
    static var spec: CommandSpec { get }
    /// Checks the values of the arguments.
    /// - Throws: `UsageError` for a value that does not fit (exit 64).
    init(_ arguments: ParsedArguments, console: Console) throws
    /// Does the work; returns the exit code.
    func run() throws -> Int32
}
