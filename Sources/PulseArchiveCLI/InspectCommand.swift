import PulseArchive
import PulseGadgetbridge
import PulseStore

/// `inspect FILE [--json]`: reads and checks a whole archive without a store.
struct InspectCommand: Subcommand {
    static let spec = CommandSpec(
        name: "inspect",
        abstract: "Check an archive and show what it holds.",
        discussion: "Reads and validates the whole archive exactly as import would, without a store. A file import would refuse is refused here too, with the same message and exit code 1.",
        arguments: [.init(name: "file", help: "The archive: plain JSON or gzip, iOS or tool-written; or a Gadgetbridge database or backup ZIP.")],
        options: [.json, .quiet, .maxSize, .maxInflateRatio, .maxStringSize, .maxObjectSize, .identity, .passphraseFile]
    )

    let file: String
    let input: ArchiveInput
    let json: Bool
    let quiet: Bool
    let limits: ArchiveLimits
    let console: Console

    init(_ arguments: ParsedArguments, console: Console) throws {
        file = arguments.positionals[0]
        input = try ArgumentValues.archiveInput(file).decrypting(with: KeyOptions.decryptionKeys(arguments, console: console))
        limits = try ArgumentValues.limits(arguments)
        json = arguments.flag("--json")
        quiet = arguments.flag("--quiet")
        self.console = console
    }

    func run() throws -> Int32 {
        let input: ArchiveInput
        switch try GadgetbridgeCommands.source(file, input: self.input, limits: limits) {
        case .gadgetbridge(let database): return try GadgetbridgeCommands.inspect(database, json: json, console: console)
        case .archive(let archive): input = archive
        }
        let progress = ProgressLine("Reading", console: console, quiet: quiet)
        let reader = ArchiveReader(input, limits: limits, progress: progress.update)
        defer { progress.finish() }
        let summary = try ArchiveValidation.validate(reader)
        progress.finish()
        for warning in summary.warnings { console.warn(warning.message) }
        if json {
            try console.out(ArchiveReport.inspect(summary).text)
        } else {
            try console.out(ArchiveReport.inspectText(summary, file: input.name))
        }
        return 0
    }
}
