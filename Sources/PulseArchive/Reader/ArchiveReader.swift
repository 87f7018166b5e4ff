import Foundation
import PulseAge
import PulseSystem

/// Reads an archive file (plain JSON or gzip, sniffed by its first bytes) in one streaming pass,
/// checking every value and handing rows to a visitor.
///
/// The format version may come after the tables (the app sorts its keys), so a visitor must
/// not apply anything until `read` returns. When a read of a file fails before the version was
/// seen, the reader looks for it in a second, skimming pass: a file from a newer format is
/// reported as such, not as whatever of its content this version fails to understand.
///
/// The source is read once, front to back, and never reopened or rewound, so standard input
/// reads as a file does: the sniff replays the first bytes it read, and the look ahead for the
/// dialect replays what it crossed (`ReplaySource`).
public struct ArchiveReader {
    public let input: ArchiveInput
    /// What messages call the archive: its path, or "standard input".
    public var path: String { input.name }
    public var limits: ArchiveLimits
    /// Called every few thousand rows, for a progress display.
    public var progress: ((ReadProgress) -> Void)?
    /// Records every problem the read can step over in `ArchiveSummary.problems` and goes on,
    /// instead of throwing the first (`verify` reports them all).
    public var collectsProblems = false
    /// Hands each row of the app's dialect to the visitor with its JSON text, byte for byte
    /// (`visit(row:text:at:of:)`): `verify` compares it with what an export writes.
    public var keepsRowText = false
    /// Hands a second settings key, attachment name or document path of one name to the visitor
    /// instead of refusing it: `diff` reports repeats itself, with the rows' (diff.md).
    public var passesRepeatedNames = false
    /// The zone of local days the Android dialect needs (`coachNotificationRecords.dateKey`).
    public var timeZone: TimeZone = .current
    /// Where an attachment or document file too large for memory waits, unnamed, between the
    /// reader and the visitor (`ArchiveBytes`): the system's temporary directory when nil;
    /// `import` names its staging directory, on the store's disk.
    public var spillDirectory: String?

    public init(_ input: ArchiveInput, limits: ArchiveLimits = .standard, progress: ((ReadProgress) -> Void)? = nil) {
        self.input = input
        self.limits = limits
        self.progress = progress
    }

    public init(path: String, limits: ArchiveLimits = .standard, progress: ((ReadProgress) -> Void)? = nil) {
        self.init(.file(path), limits: limits, progress: progress)
    }

    /// Reads an archive held in memory (tests, fuzzing); messages call it `name`.
    public init(bytes: [UInt8], name: String = "<memory>", limits: ArchiveLimits = .standard) {
        self.init(.bytes(bytes, name: name), limits: limits)
    }

    /// Reads and checks the whole archive, streaming its content to `visitor`.
    /// - Throws: `ArchiveError` naming what was wrong and where; the visitor's own errors.
    @discardableResult
    public func read<Visitor: ArchiveVisitor>(into visitor: inout Visitor) throws -> ArchiveSummary {
        do {
            var parse = try open()
            do {
                try parse.readEnvelope(into: &visitor)
                parse.finishSummary()
                return parse.summary
            } catch {
                let error = Self.damage(behind: error, readingOn: parse.readContainerToEnd)
                if !parse.sawFormatVersion { try refineError(error) }
                throw error
            }
        } catch let error as ArchiveError {
            // A refusal names the file first: an import or a nightly job reads many.
            throw error.naming(file: path)
        }
    }

    /// The problems a collecting read had recorded when a later, fatal error stopped it.
    public struct Interrupted: Error {
        public let error: Error
        public let problems: BoundedProblems<ArchiveError>
        public let summary: ArchiveSummary
    }

    /// A collecting read: every problem it can step over is in the summary; a fatal one throws
    /// `Interrupted` with those found before it.
    public func collectProblems<Visitor: ArchiveVisitor>(into visitor: inout Visitor) throws -> ArchiveSummary {
        var reader = self
        reader.collectsProblems = true
        var parse = try reader.open()
        do {
            try parse.readEnvelope(into: &visitor)
            parse.finishSummary()
            return parse.summary
        } catch {
            // The summary counts what was parsed, as a plain file's does, not what was
            // inflated after it to look for damage.
            let parsedBytes = parse.counted.count
            var refined = Self.damage(behind: error, readingOn: parse.readContainerToEnd)
            if !parse.sawFormatVersion {
                do { try refineError(error) } catch { refined = error }
            }
            parse.finishSummary()
            parse.summary.jsonBytes = parsedBytes
            throw Interrupted(error: refined, problems: parse.problems.problems, summary: parse.summary)
        }
    }

    /// Reads and checks the whole archive, keeping nothing but the summary.
    public func inspect() throws -> ArchiveSummary {
        var visitor = DiscardingVisitor()
        return try read(into: &visitor)
    }

    /// What a gzip archive's content can look like when its compressed bytes were damaged:
    /// inflated, a flipped bit reads as other text, and the parser stops on it (invalid JSON,
    /// a UUID that is none) long before the stream's end, where the checksum would have said.
    /// Not a newer `formatVersion`: that refusal comes before any data is read, and stays so.
    private static let symptomsOfDamage: Set<ArchiveError.Kind> = [
        .notAnArchive, .invalidValue, .duplicateKey, .unsafeAttachmentName, .unsafeDocumentPath, .unsupportedFeature,
    ]

    /// `error`, or, when the rest of the gzip stream shows the file damaged, that damage (with
    /// what the content read as): a nightly job is told the file changed after it was written,
    /// not that the exporter wrote bad data. The rest is only inflated and checked; a limit or
    /// an I/O failure on the way leaves `error` as it is.
    private static func damage(behind error: Error, readingOn readToEnd: (() throws -> Void)?) -> Error {
        guard let readToEnd, let symptom = error as? ArchiveError, symptomsOfDamage.contains(symptom.kind) else { return error }
        do {
            try readToEnd()
        } catch let damage as ArchiveError where damage.kind == .damagedCompression {
            return ArchiveError(.damagedCompression, "\(damage.message); before that, its damaged bytes read as: \(symptom.message)")
        } catch {}
        return error
    }

    /// Re-reads the top level for `formatVersion` and the dialect after `error`, so that the
    /// message a user sees is about the real cause.
    private func refineError(_ error: Error) throws -> Never {
        if let archiveError = error as? ArchiveError, archiveError.kind == .io || archiveError.kind == .damagedCompression {
            throw error
        }
        guard input.canReadAgain else { throw error }
        if var probe = try? open(), let version = (try? probe.skimFormatVersion()) ?? nil, version > ArchiveFormat.newestVersion {
            throw ArchiveError.unsupportedVersion(found: version)
        }
        throw error
    }

    private func open() throws -> EnvelopeParser {
        let file: ByteSource
        let size: Int64?
        switch input.origin {
        case .file(let path):
            let opened = try ArchiveFile(path)
            (file, size) = (opened, opened.size())
        case .standardInput(let head):
            let standardInput = try ArchiveFile(standardInput: ())
            (file, size) = (head.isEmpty ? standardInput : PrefixedSource(head, then: standardInput), nil)
        case .stream(let open, let head):
            let stream = ArchiveFile(streaming: open.file)
            (file, size) = (head.isEmpty ? stream : PrefixedSource(head, then: stream), nil)
        case .memory(let bytes):
            (file, size) = (MemorySource(bytes), Int64(bytes.count))
        case .openFile(let open):
            let opened = ArchiveFile(readingFromStart: open.file)
            (file, size) = (opened, opened.size())
        }
        let rawCount = CountedSource(file)
        var (head, raw): ([UInt8], ByteSource) = try PrefixedSource.head(of: rawCount, count: ArchiveSniffer.headSize)
        let encrypted = AgeFormat.looksLikeAge(head)
        if encrypted {
            let decrypted = try EncryptedArchive.open(raw, name: path, keys: input.keys)
            (head, raw) = try PrefixedSource.head(of: decrypted, count: ArchiveSniffer.headSize)
        }
        let kind = try ArchiveSniffer.sniff(head, name: path)
        let content: ByteSource
        var gzip: GzipReader?
        switch kind {
        case .gzip:
            gzip = try GzipReader(source: raw, name: path)
            content = gzip!
        case .plainJSON:
            content = raw
        }
        // A gzip file is inflated ahead on a second thread while this one parses (bytes in
        // memory are small: tests and fuzzing). That thread only inflates: the count and the
        // limits stay on this one, which sees the compressed size each chunk carries, so
        // nothing the parser reads (`counted.count`) is written by the other thread.
        let inMemory: Bool
        if case .memory = input.origin { inMemory = true } else { inMemory = false }
        let readAhead = inMemory ? nil : try gzip.map { reader in try ReadAheadSource(reader) { reader.compressedBytes } }
        let compressed: (() -> Int64)? = readAhead.map { source in { source.compressedBytes } }
            ?? gzip.map { reader in { reader.compressedBytes } }
        let counted = CountingSource(readAhead ?? content, limits: limits, compressed: compressed)
        let replay = ReplaySource(counted)
        let scanner = JSONScanner(source: replay, limits: limits)
        var summary = ArchiveSummary()
        summary.isCompressed = kind == .gzip
        summary.isEncrypted = encrypted
        summary.fileBytes = size ?? 0
        var parser = EnvelopeParser(scanner: scanner, counted: counted, summary: summary, problems: ProblemSink(collects: collectsProblems))
        parser.spillDirectory = spillDirectory
        parser.keepsRowText = keepsRowText
        parser.passesRepeatedNames = passesRepeatedNames
        if kind == .gzip {
            parser.readContainerToEnd = {
                var rest = [UInt8](repeating: 0, count: 64 << 10)
                try rest.withUnsafeMutableBytes { buffer in
                    while try counted.read(into: buffer) > 0 {}
                }
            }
        }
        if size == nil {
            // A pipe's size is known at its end: what was read by then.
            parser.fileBytesAtEnd = { rawCount.count }
        }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        parser.dayKey = { millis in
            let parts = calendar.dateComponents([.year, .month, .day], from: Date(timeIntervalSince1970: Double(millis) / 1000))
            return String(format: "%04d-%02d-%02d", parts.year!, parts.month!, parts.day!)
        }
        // Only when a table shared by both dialects comes before anything that tells them
        // apart: a look ahead from here over the rest of the top level, whose bytes the
        // parser then reads again.
        let limits = self.limits
        parser.probeDialect = { key in
            replay.record()
            defer { replay.replay() }
            let lookAhead = JSONScanner(source: PrefixedSource(scanner.unreadBytes(), then: replay), limits: limits, startingAt: scanner.offset)
            var probe = EnvelopeParser(scanner: lookAhead, counted: counted, summary: ArchiveSummary(), problems: ProblemSink(collects: false))
            // Malformed text ahead is thrown from here, where it was found: read as the app's
            // dialect for want of the key that would have told, the table before it would
            // fail first, on values that are the other dialect's (an Android id "m1" as "not a
            // UUID"), and that message would be the one shown.
            return try probe.skimRemainder(after: key) ?? .ios
        }
        if let progress {
            let total = size ?? 0
            parser.reportRows = { rows in
                progress(ReadProgress(rows: rows, bytesRead: readAhead?.compressedBytes ?? counted.count, totalBytes: total))
            }
        }
        return parser
    }
}

