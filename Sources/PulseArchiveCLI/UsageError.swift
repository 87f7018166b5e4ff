/// A command line that does not fit its command: exit 64 with the usage.
struct UsageError: Error {
    let message: String
}
