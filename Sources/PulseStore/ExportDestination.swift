import PulseSystem

/// Where an export writes its archive.
public enum ExportDestination {
    /// Exactly this path; refused when a file is there (an export never replaces one).
    case file(String)
    /// A new file in `directory` ("" for the current directory, named without `./`) named
    /// `<stem><suffix>` for `firstAttempt` 1, else `<stem>-<firstAttempt><suffix>`, then the
    /// next numbers: the first name free when the archive is complete. A nightly job that runs
    /// twice within the minute of the default name gets a second archive, not a refusal. The
    /// caller starts past every name of the minute already there, so a name `prune` freed is
    /// not handed to a newer archive that would then sort before an older one. No number past
    /// `lastAttempt` is tried: the caller's scheme could not go past it again.
    case newFile(directory: String, stem: String, suffix: String, firstAttempt: Int = 1, lastAttempt: Int = .max)
    /// A stream that cannot seek (standard output, a pipe): the archive goes out once it is
    /// complete and checked, from a private temporary file, because the gzip header carries a
    /// checksum of what follows it and is written last.
    case stream(ByteSink)

    /// The name `newFile` tries `attempt` times in (1 is the bare stem).
    static func candidate(directory: String, stem: String, suffix: String, attempt: Int) -> String {
        let separator = directory.isEmpty || directory.hasSuffix("/") ? "" : "/"
        return directory + separator + stem + (attempt == 1 ? "" : "-\(attempt)") + suffix
    }

    /// How many names `newFile` tries before it gives up (a directory where thousands of
    /// archives share one minute is not a backup directory).
    static let attempts = 1000
}
