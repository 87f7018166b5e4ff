import Foundation
import PulseArchive
import PulseBackups
import PulseStore
import PulseSystem
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `export [--store DIR] [-o FILE] [--format-version 1|2] [--compression gzip|none] [--rsyncable] [--threads N] [--json]`
struct ExportCommand: Subcommand {
    static let spec = CommandSpec(
        name: "export",
        abstract: "Write an archive of the whole store.",
        discussion: "Writes one gzip-compressed archive (or, with --compression none, the plain JSON it inflates to), atomically: the file appears complete or not at all, and an existing file is never overwritten. Prints the path.",
        options: [
            .store,
            .value("--output", "-o", valueName: "file", help: "Where to write: a new file; a directory to write pulseloop-backup-<yyyy-MM-dd-HHmm>.json.gz (.json with --compression none) in (-2, -3 … past every backup of that minute there; default: here); or - for standard output. A name ending .age needs --recipient, --recipients-file or --passphrase, and an encrypted export's name must end .age; a gzip export's name ends .gz, a plain one's does not (before .age: .gz.age or .json.age, or a bare .age, which says neither)."),
            .value("--compression", valueName: "gzip|none", help: "gzip (default), or none for the plain JSON the gzip archive inflates to: the stream to give restic, borg or kopia, which deduplicate and compress it themselves (docs/backups.md)."),
            .value("--format-version", valueName: "n", help: "2 (default), or 1 for apps on the format-1 line (no readinessDailies)."),
            .flag("--rsyncable", help: "End the gzip blocks at points chosen by the content as well, with deflate reset there: a change stays local in the compressed file too (rsync, Syncthing, backups of the archive directory). Still one gzip member, about 2 % larger."),
            .value("--threads", valueName: "n", help: "Compression threads, 1 to \(GzipWriter.maxThreads) (default: the processors available; more than those run as that many). The archive's bytes do not depend on it."),
            .recipient, .recipientsFile, .passphrase, .passphraseFile,
            .json, .quiet, .maxStringSize, .maxObjectSize,
        ]
    )

    let store: String
    let output: ExportDestination
    let formatVersion: Int64
    /// False for `--compression none`: the plain JSON, byte for byte what the gzip form inflates to.
    let compressed: Bool
    let threads: Int
    let rsyncable: Bool
    let json: Bool
    let quiet: Bool
    let limits: ArchiveLimits
    /// Age encryption of the finished archive, when recipients or a passphrase were given.
    let sealing: ExportOptions.Sealing?
    let exportedAt: Int64
    let console: Console

    init(_ arguments: ParsedArguments, console: Console) throws {
        store = try console.storeDirectory(arguments)
        formatVersion = Int64(try ArgumentValues.integer(arguments.value("--format-version"), option: "--format-version", range: 1...2) ?? 2)
        compressed = try Self.compression(arguments.value("--compression"))
        // Both shape only the gzip stream: with plain JSON they would be silently ignored.
        if !compressed, let option = ["--rsyncable", "--threads"].first(where: { arguments.value($0) != nil || arguments.flag($0) }) {
            throw UsageError(message: "\(option) shapes the gzip stream, and --compression none writes none: drop one of them")
        }
        output = try Self.destination(arguments.value("--output"), at: Date(), encrypted: KeyOptions.encrypts(arguments), compressed: compressed,
                                      passphraseVariableSet: console.environment[KeyOptions.variable] != nil,
                                      zone: { try ArgumentValues.timeZone(nil, environment: console.environment, commandHasOption: false) })
        if case .stream = output, isatty(STDOUT_FILENO) == 1 {
            let why = compressed || KeyOptions.encrypts(arguments) ? "an archive is binary" : "the plain archive is the whole store as JSON, not for reading there"
            throw UsageError(message: "Standard output is a terminal: \(why); redirect it (-o - > FILE, or a pipe) or name a file with -o")
        }
        // More deflate threads than processors gain nothing (the bytes are the same whatever
        // their number), and each costs its stack and its own malloc arena: under an
        // address-space limit (`ulimit -v`) 16 of them did not fit.
        threads = min(try ArgumentValues.integer(arguments.value("--threads"), option: "--threads", range: 1...GzipWriter.maxThreads)
            ?? GzipWriter.availableThreads, GzipWriter.availableThreads)
        rsyncable = arguments.flag("--rsyncable")
        json = arguments.flag("--json")
        // With -o -, the report asked for goes to standard error: closed, it would be lost.
        if json, case .stream = output, StandardStreams.closedAtStart.contains(STDERR_FILENO) {
            throw UsageError(message: "--json with -o - writes its report on standard error, which is closed (2>&-): redirect standard error, or drop --json")
        }
        quiet = arguments.flag("--quiet")
        limits = try ArgumentValues.limits(arguments)
        exportedAt = try ArgumentValues.exportTime(environment: console.environment)
        sealing = try KeyOptions.sealing(arguments, console: console)
        self.console = console
        if let warning = Self.recordedTimeWarning(output, exportedAt: exportedAt, now: ArgumentValues.nowMillis(), environment: console.environment) {
            console.err(warning)
        }
        // Someone who set the variable may believe the archive is encrypted: say it is not.
        if sealing == nil, console.environment[KeyOptions.variable] != nil {
            console.err("warning: \(KeyOptions.variable) is set, but export encrypts with it only when --passphrase is given: this archive is not encrypted")
        }
    }

    /// A backup (a name of the scheme) that records another time than now, by more than two
    /// clocks may differ: `prune` dates backups by the time they record, so one a nightly job
    /// made under a `SOURCE_DATE_EPOCH` an hour ago sorted before the evening's, and
    /// `--keep-daily` removed it, the backup just made and verified, exit 0.
    static func recordedTimeWarning(_ output: ExportDestination, exportedAt: Int64, now: Int64, environment: [String: String]) -> String? {
        let name: BackupName? = switch output {
        case .newFile(_, let stem, let suffix, _, _): BackupName(stem + suffix)
        case .file(let path): BackupName(String(path.split(separator: "/").last ?? ""))
        case .stream: nil
        }
        let (offset, overflow) = exportedAt.subtractingReportingOverflow(now)
        guard let name, environment["SOURCE_DATE_EPOCH"] != nil, overflow || offset.magnitude > RetentionPolicy.clockTolerance.magnitude else { return nil }
        // A time no zone's clock could have shown with the name's minute is not taken: prune
        // dates that backup by its name (`Backup.dated`), and the recorded time changes nothing.
        let recordedSecond = exportedAt >= 0 ? exportedAt / 1000 : (exportedAt - 999) / 1000
        guard name.possibleInstants.contains(recordedSecond) else { return nil }
        // Rounded to the nearest unit: the variable was set a moment before now was read.
        let minutes = offset.magnitude / 60_000 + (offset.magnitude % 60_000 >= 30_000 ? 1 : 0)
        let apart = minutes < 120 ? "\(minutes) minutes" : minutes < 2_880 ? "\((minutes + 30) / 60) hours" : "\((minutes + 720) / 1_440) days"
        let recorded = (try? ArchiveDate.format(exportedAt)) ?? String(exportedAt)
        let consequence = offset < 0 ? "among the others this one counts as made then, and a policy may remove it as older"
            : "until then it keeps this one outside its policy, as made after now"
        return "warning: SOURCE_DATE_EPOCH sets the time this backup records to \(recorded), \(apart) \(offset < 0 ? "before" : "after") now: "
            + "prune dates backups by that time, so \(consequence); unset SOURCE_DATE_EPOCH for a backup job (docs/backups.md)"
    }

    /// `--compression gzip|none`: true for gzip (the default).
    static func compression(_ value: String?) throws -> Bool {
        switch value {
        case nil, "gzip": return true
        case "none": return false
        case let other?: throw UsageError(message: "'--compression' must be gzip or none, not '\(other)'")
        }
    }

    /// `-o` as given; `-` for standard output; a new file with the default name in the
    /// directory `-o` names (a backup job's `-o /backups/`), or here without `-o`.
    /// - Parameter zone: the local zone, asked only when the default name is needed.
    /// - Parameter encrypted: the default name ends `.age`; a name given must end `.age`
    ///   exactly when the export encrypts (`requireTruthfulName`).
    /// - Parameter compressed: the default name ends `.json.gz` (before any `.age`), else
    ///   `.json`; a name given must end `.gz` exactly when the export compresses.
    static func destination(_ output: String?, at date: Date, encrypted: Bool, compressed: Bool, passphraseVariableSet: Bool = false,
                            zone: () throws -> TimeZone) throws -> ExportDestination {
        if output == "-" {
            // Written to the /dev/null that holds its place, the archive would be lost.
            if StandardStreams.closedAtStart.contains(STDOUT_FILENO) {
                throw UsageError(message: "Standard output is closed (>&-): '-o -' would write the archive nowhere; redirect it to a file or a pipe, or name a file")
            }
            return .stream(FileSink(try SystemFile.standardOutput()))
        }
        // `-o /backups/` means the folder (its default name inside); without the folder there
        // is no name to check, and advice to call the file `/backups/.gz` would be wrong.
        if let output, output.hasSuffix("/"), !PrivateFiles.isDirectory(output) {
            var info = stat()
            let bare = String(output.dropLast())
            let what = !bare.isEmpty && lstat(bare, &info) == 0 ? "but \(bare) is not one" : "but there is no folder \(output): create it first, or give a file name"
            throw SystemError(.io, "'-o \(output)' ends in /, so it names a folder, \(what)")
        }
        if let output, !PrivateFiles.isDirectory(output) {
            try requireTruthfulName(output, encrypted: encrypted, compressed: compressed, passphraseVariableSet: passphraseVariableSet)
            // Refused before a passphrase is asked for or any work is done; the commit checks
            // again (never over a file that appears meanwhile).
            var info = stat()
            if lstat(output, &info) == 0 { throw SystemError(.alreadyExists, "\(output) already exists") }
            return .file(output)
        }
        let directory = output ?? ""
        let stem = defaultStem(at: date, zone: try zone())
        guard let first = try BackupDirectory.nextSequence(forStem: stem, in: directory.isEmpty ? "." : directory) else {
            throw StoreError(.refused, "\(directory.isEmpty ? "." : directory) holds a backup of the minute \(stem) with the highest suffix export writes (-\(BackupName.highestSequence)) or a longer one, so no next name is left: name the file with -o")
        }
        return .newFile(directory: directory, stem: stem, suffix: (compressed ? ".json.gz" : ".json") + (encrypted ? ".age" : ""), firstAttempt: first,
                        lastAttempt: BackupName.highestSequence)
    }

    /// A name ending `.age` promises age data, and people, scripts, `gunzip` and `prune` go by
    /// it: plaintext under it would sit unprotected where the owner believes it encrypted, and
    /// age data under a `.json.gz` name is a file `gunzip` cannot read. So the name must say
    /// what the file is, checked before the store is opened or a passphrase asked. Letter case
    /// is ignored, as on the file systems of USB sticks (`.AGE` is `.age` there). The same for
    /// gzip: plain JSON under a `.gz` name is a file `gunzip` refuses, and a gzip archive under
    /// another name is one a backup tool or a person takes for the plain stream.
    /// A name ending in a dot or a space is refused too (`ArgumentValues.requireLastingName`).
    /// A name without an extension that is no folder here is most likely a folder that is
    /// missing (a backup disk not mounted): refused with both readings, rather than advice to
    /// call the file `x.gz`, or a plain export written as a file named like the folder (the
    /// night's prune then failed on it, and the next export found it taken).
    static func requireTruthfulName(_ path: String, encrypted: Bool, compressed: Bool, passphraseVariableSet: Bool) throws {
        try ArgumentValues.requireLastingName(path, option: "-o")
        let last = path.split(separator: "/", omittingEmptySubsequences: false).last ?? ""
        if !last.dropFirst().contains(".") {
            let suffix = (compressed ? ".json.gz" : ".json") + (encrypted ? ".age" : "")
            throw UsageError(message: "'-o \(path)' is no folder here and names a file without an extension: to write into a folder, create it first "
                + "(a trailing / says it is one: '-o \(path)/'); to name the file, name it \(path)\(suffix)")
        }
        let lowercased = path.lowercased()
        let saysAge = lowercased.hasSuffix(".age")
        if saysAge, !encrypted {
            var message = "'-o \(path)' ends in .age, which promises an encrypted archive, but no --recipient, --recipients-file or --passphrase was given: add one to encrypt, or drop .age from the name"
            if passphraseVariableSet {
                message += " (\(KeyOptions.variable) is set, but export encrypts with it only when --passphrase is given)"
            }
            throw UsageError(message: message)
        }
        if !saysAge, encrypted {
            throw UsageError(message: "'-o \(path)' is to hold an encrypted (age) archive, but its name does not end in .age: name it \(path).age (gunzip, prune and people go by the name)")
        }
        let inner = saysAge ? String(path.dropLast(4)) : path
        let saysGzip = inner.lowercased().hasSuffix(".gz")
        let age = saysAge ? String(path.suffix(4)) : ""
        if saysGzip, !compressed {
            throw UsageError(message: "'-o \(path)' ends in .gz, which promises a gzip archive, but --compression none writes plain JSON: name it \(inner.dropLast(3))\(age), or drop --compression none")
        }
        // Another compressor's extension promises data no JSON reader reads as it is.
        if !compressed, let other = [".tgz", ".zst", ".bz2", ".xz", ".lz4", ".zip", ".7z", ".z"].first(where: { inner.lowercased().hasSuffix($0) }) {
            throw UsageError(message: "'-o \(path)' ends in \(other), which promises compressed data, but --compression none writes plain JSON: name it \(inner.dropLast(other.count)).json\(age)")
        }
        // Inside an age file the compression is invisible to gunzip and backup tools alike, so
        // a bare `x.age` (the name scripts used before `--compression` existed) promises
        // nothing about it; any other extension before `.age` (`x.json.age`, `x.tar.age`)
        // claims what it says, and only `.gz` says gzip.
        let innerName = inner.split(separator: "/", omittingEmptySubsequences: false).last ?? ""
        let claimsPlain = !saysAge || innerName.dropFirst().contains(".")
        if !saysGzip, compressed, claimsPlain {
            throw UsageError(message: "'-o \(path)' is to hold a gzip archive, but its name does not end in .gz: name it \(inner).gz\(age) (gunzip, prune and people go by the name), or give --compression none for plain JSON")
        }
    }

    /// `pulseloop-backup-<yyyy-MM-dd-HHmm>`, in local time: the app's name for its archives.
    static func defaultStem(at date: Date, zone: TimeZone) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = zone
        formatter.dateFormat = "yyyy-MM-dd-HHmm"
        return "pulseloop-backup-\(formatter.string(from: date))"
    }

    /// None with `-o -`: standard output is the archive's (its `--json` goes to standard error,
    /// where the `Error:` line says the same).
    static func failureReport(_ message: String, arguments: ParsedArguments) -> JSONReport? {
        arguments.value("--output") == "-" ? nil : .object([("ok", .bool(false)), ("error", .string(message))])
    }

    func run() throws -> Int32 {
        console.announceUpgrade(of: store, quiet: quiet)
        let progress = ProgressLine("Exporting", console: console, quiet: quiet)
        defer { progress.finish() }
        var options = ExportOptions(formatVersion: formatVersion, appVersion: "pulse-archive \(PulseArchiveCommand.version)",
                                    exportedAt: exportedAt, compressed: compressed, limits: limits,
                                    progress: progress.update(done:of:), sealing: sealing)
        options.compressionThreads = threads
        options.rsyncable = rsyncable
        let result = try PulseStore.exportArchive(storeDirectory: store, to: output, options: options)
        progress.finish()
        for warning in result.warnings { console.warn(warning.message) }
        // With the archive on standard output, the report goes to standard error.
        let report: (String) throws -> Void = { text in if case .stream = output { try console.resultOnStandardError(text) } else { try console.out(text) } }
        if json {
            try report(JSONReport.object([
                ("path", .string(result.path)),
                ("formatVersion", .int(result.formatVersion)),
                ("tables", .counts(result.tables.merging(result.documents) { a, _ in a })),
                ("bytes", .object([("compressed", .int(result.fileBytes)), ("uncompressed", .int(result.jsonBytes))])),
                // `bytes.compressed` is the file's size in either form: this says which it is.
                ("compression", .string(compressed ? "gzip" : "none")),
            ]).text)
        } else {
            let rows = result.tables.values.reduce(0, +)
            let documents = result.documents.values.reduce(0, +)
            // `--quiet` keeps a cron job's mail empty, as every other command's does.
            if !quiet { console.err("Exported \(ProgressLine.grouped(rows)) rows and \(documents) documents from \(store) (format \(result.formatVersion), \(Formatting.bytes(result.fileBytes)))") }
            if case .stream = output {} else { try console.outPath(result.path) }
        }
        return 0
    }
}
