import Foundation
import PulseSystem

/// Reads an archive file (plain JSON or gzip, sniffed by its first bytes) in one streaming pass,
/// checking every value and handing rows to a visitor.
///
/// The format version may come after the tables (the app sorts its keys), so a visitor must
/// not apply anything until `read` returns. When a read fails before the version was seen,
/// the reader looks for it in a second, skimming pass: a file from a newer format is reported
/// as such, not as whatever of its content this version fails to understand.
public struct ArchiveReader {
    public let path: String
    /// The archive's bytes when it is read from memory (`init(bytes:)`), else nil.
    private let bytes: [UInt8]?
    public var limits: ArchiveLimits
    /// Called every few thousand rows, for a progress display.
    public var progress: ((ReadProgress) -> Void)?
    /// Records every problem the read can step over in `ArchiveSummary.problems` and goes on,
    /// instead of throwing the first (`verify` reports them all).
    public var collectsProblems = false
    /// Hands each row of the app's dialect to the visitor with its JSON text, byte for byte
    /// (`visit(row:text:at:of:)`): `verify` compares it with what an export writes.
    public var keepsRowText = false
    /// The zone of local days the Android dialect needs (`coachNotificationRecords.dateKey`).
    public var timeZone: TimeZone = .current

    public init(path: String, limits: ArchiveLimits = .standard, progress: ((ReadProgress) -> Void)? = nil) {
        self.path = path
        self.bytes = nil
        self.limits = limits
        self.progress = progress
    }

    /// Reads an archive held in memory (tests, fuzzing); messages call it `name`.
    public init(bytes: [UInt8], name: String = "<memory>", limits: ArchiveLimits = .standard) {
        self.path = name
        self.bytes = bytes
        self.limits = limits
        self.progress = nil
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
            } catch let error where !parse.sawFormatVersion {
                try refineError(error)
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
            var refined: Error = error
            if !parse.sawFormatVersion {
                do { try refineError(error) } catch { refined = error }
            }
            parse.finishSummary()
            throw Interrupted(error: refined, problems: parse.problems.problems, summary: parse.summary)
        }
    }

    /// Reads and checks the whole archive, keeping nothing but the summary.
    public func inspect() throws -> ArchiveSummary {
        var visitor = DiscardingVisitor()
        return try read(into: &visitor)
    }

    /// Re-reads the top level for `formatVersion` and the dialect after `error`, so that the
    /// message a user sees is about the real cause.
    private func refineError(_ error: Error) throws -> Never {
        if let archiveError = error as? ArchiveError, archiveError.kind == .io || archiveError.kind == .damagedCompression {
            throw error
        }
        if var probe = try? open(), let found = try? probe.skimEnvelope() {
            if let version = found.version, version > ArchiveFormat.newestVersion {
                throw ArchiveError.unsupportedVersion(found: version)
            }
        }
        throw error
    }

    private func open() throws -> EnvelopeParser {
        let raw: ByteSource
        let kind: ArchiveSniffer.Kind
        let size: Int64
        if let bytes {
            kind = try ArchiveSniffer.sniff(Array(bytes.prefix(4096)), name: path)
            raw = MemorySource(bytes)
            size = Int64(bytes.count)
        } else {
            let file = try ArchiveFile(path)
            var head = [UInt8](repeating: 0, count: 4096)
            let n = try head.withUnsafeMutableBytes { try file.read(into: $0) }
            kind = try ArchiveSniffer.sniff(Array(head[0..<n]), name: path)
            try file.rewind()
            raw = file
            size = file.size()
        }
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
        let readAhead = bytes == nil ? gzip.map { reader in ReadAheadSource(reader) { reader.compressedBytes } } : nil
        let compressed: (() -> Int64)? = readAhead.map { source in { source.compressedBytes } }
            ?? gzip.map { reader in { reader.compressedBytes } }
        let counted = CountingSource(readAhead ?? content, limits: limits, compressed: compressed)
        let scanner = JSONScanner(source: counted, limits: limits)
        var summary = ArchiveSummary()
        summary.isCompressed = kind == .gzip
        summary.fileBytes = size
        var parser = EnvelopeParser(scanner: scanner, counted: counted, summary: summary, problems: ProblemSink(collects: collectsProblems))
        parser.keepsRowText = keepsRowText
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        parser.dayKey = { millis in
            let parts = calendar.dateComponents([.year, .month, .day], from: Date(timeIntervalSince1970: Double(millis) / 1000))
            return String(format: "%04d-%02d-%02d", parts.year!, parts.month!, parts.day!)
        }
        // Only when a table shared by both dialects comes before anything that tells them apart.
        parser.probeDialect = { [self] in
            var probe = try open()
            return try probe.skimEnvelope().dialect ?? .ios
        }
        if let progress {
            let total = summary.fileBytes
            parser.reportRows = { rows in
                progress(ReadProgress(rows: rows, bytesRead: readAhead?.compressedBytes ?? counted.count, totalBytes: total))
            }
        }
        return parser
    }
}
