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
    /// A stream of plain JSON to read once (`init(plainJSON:)`), else nil.
    private let stream: ByteSource?
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
        self.stream = nil
        self.limits = limits
        self.progress = progress
    }

    /// Reads plain JSON from a stream that can be read only once (a pipe from a writer).
    public init(plainJSON stream: ByteSource, name: String, limits: ArchiveLimits = .standard) {
        self.path = name
        self.bytes = nil
        self.stream = stream
        self.limits = limits
        self.progress = nil
    }

    /// Reads an archive held in memory (tests, fuzzing); messages call it `name`.
    public init(bytes: [UInt8], name: String = "<memory>", limits: ArchiveLimits = .standard) {
        self.path = name
        self.bytes = bytes
        self.stream = nil
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
        if let stream {
            kind = .plainJSON
            raw = stream
            size = 0
        } else if let bytes {
            kind = try ArchiveSniffer.sniff(Array(bytes.prefix(4096)), name: path)
            raw = MemorySource(bytes)
            size = Int64(bytes.count)
        } else {
            let file = try SystemFile.openForReading(path)
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


/// How far a read has come: rows decoded and file bytes consumed.
public struct ReadProgress: Sendable {
    public var rows: Int
    public var bytesRead: Int64
    public var totalBytes: Int64
}

/// Tells a gzip file from a plain JSON one by its first bytes.
enum ArchiveSniffer {
    enum Kind { case gzip, plainJSON }

    /// - Parameter head: the first bytes of the file (up to 4 KiB).
    static func sniff(_ head: [UInt8], name: String) throws -> Kind {
        let n = head.count
        guard n > 0 else { throw ArchiveError.notAnArchive("the file \(name) is empty") }
        if n >= 2, head[0] == 0x1F, head[1] == 0x8B { return .gzip }
        var i = 0
        if n >= 3, head[0] == 0xEF, head[1] == 0xBB, head[2] == 0xBF { i = 3 }
        while i < n, [0x20, 0x0A, 0x0D, 0x09].contains(head[i]) { i += 1 }
        if i < n, head[i] == 0x7B { return .plainJSON }
        throw ArchiveError.notAnArchive("\(name) is neither gzip nor a JSON object")
    }
}

/// The state of one pass over the top-level object.
struct EnvelopeParser {
    let scanner: JSONScanner
    let counted: CountingSource
    var summary: ArchiveSummary
    private(set) var sawFormatVersion = false
    private var scratch: [UInt8] = []
    /// Keys an archive controls are compared as bytes (`ByteKey`), everywhere.
    private var keysSeen = Set<ByteKey>()
    private var unknownFields: [String: NameTally] = [:]
    private var rowsRead = 0
    /// Document paths by their case-folded spelling: the app's file system ignores case, so
    /// two paths that differ only in case would be one file there.
    private var documentPaths: [String: String] = [:]
    /// Nil until something in the file tells the dialects apart.
    private var dialect: ArchiveDialect?
    var dayKey: (Int64) -> String = { _ in "" }
    var probeDialect: () throws -> ArchiveDialect = { .ios }
    private var unknownNames = NameTally()
    var reportRows: ((Int) -> Void)?
    var keepsRowText = false

    let problems: ProblemSink

    init(scanner: JSONScanner, counted: CountingSource, summary: ArchiveSummary, problems: ProblemSink) {
        self.scanner = scanner
        self.counted = counted
        self.summary = summary
        self.problems = problems
    }

    /// Envelope keys the app requires besides the tables (the Android port: only `exportedAt`).
    private static let requiredKeys = ["exportedAt", "appVersion", "counts", "settings", "attachments"]

    mutating func readEnvelope<Visitor: ArchiveVisitor>(into visitor: inout Visitor) throws {
        try scanner.skipByteOrderMark()
        try scanner.expect(0x7B, "'{' to open the archive object")
        if try !scanner.consumeIfClosing(0x7D) {
            repeat {
                let key = try scanner.readString(scratch: &scratch)
                try scanner.expect(0x3A, "':'")
                guard keysSeen.insert(ByteKey(key)).inserted else {
                    throw ArchiveError.notAnArchive("the top-level key \(ShownText.quoted(key)) appears twice")
                }
                // Every key the format knows is ASCII; any other is unknown without being
                // looked up in a `String`-keyed table (whose hashing normalises).
                if key.utf8.allSatisfy({ $0 < 0x80 }) {
                    try readMember(key, into: &visitor)
                } else {
                    try skipUnknownTopLevel(key)
                }
            } while try scanner.continues(closer: 0x7D)
        }
        try scanner.expectEnd()
        guard sawFormatVersion else { throw ArchiveError.notAnArchive("missing formatVersion") }
        summary.dialect = dialect ?? .ios
        if summary.dialect == .android {
            // Any list may be absent in the port's files: an absent table has no rows.
            if !keysSeen.contains(ByteKey("exportedAt")) { try problems.report(ArchiveError.notAnArchive("missing required key \"exportedAt\"")) }
            return
        }
        for key in Self.requiredKeys where !keysSeen.contains(ByteKey(key)) {
            try problems.report(ArchiveError.notAnArchive("missing required key \"\(key)\"", table: key))
        }
        for table in ArchiveTable.all where table.isRequired && !keysSeen.contains(ByteKey(table.key)) {
            try problems.report(ArchiveError.notAnArchive("missing required table \"\(table.key)\"", table: table.key))
        }
    }

    mutating func finishSummary() {
        summary.jsonBytes = counted.count
        summary.problems = problems.problems
        for (name, count) in unknownNames.counts.sorted(by: { $0.key < $1.key }) {
            summary.warnings.append(ArchiveWarning(table: String(name.text.prefix { $0 != "." }),
                                                   message: "\(name) has no app value (kept verbatim) in \(count) row\(count == 1 ? "" : "s")"))
        }
        if unknownNames.others > 0 {
            summary.warnings.append(ArchiveWarning(table: nil, message: "\(unknownNames.others) more values have no app value (kept verbatim), "
                + "past the first \(NameTally.namedLimit) names or longer than \(NameTally.longestNamed) bytes"))
        }
        for (table, fields) in unknownFields.sorted(by: { $0.key < $1.key }) {
            for (field, count) in fields.counts.sorted(by: { $0.key < $1.key }) {
                summary.warnings.append(ArchiveWarning(
                    table: table,
                    message: "\(table): unknown field \(ShownText.quoted(field.text)) in \(count) row\(count == 1 ? "" : "s") (ignored)"))
            }
            if fields.others > 0 {
                summary.warnings.append(ArchiveWarning(
                    table: table,
                    message: "\(table): \(fields.others) more unknown fields (ignored), past the first \(NameTally.namedLimit) names or longer than \(NameTally.longestNamed) bytes"))
            }
        }
    }

    // Every recoverable problem below is thrown only after the offending value was consumed
    // whole, so a collecting read can report it and carry on with the next value.

    private mutating func decideDialect(byKey key: String) throws {
        guard dialect == nil else { return }
        if AndroidDialect.androidOnlyKeys.contains(key) {
            dialect = .android
        } else if AndroidDialect.iosOnlyKeys.contains(key) {
            dialect = .ios
        } else if ArchiveTable.named(key) != nil || ExtensionTable(rawValue: key) != nil {
            dialect = try probeDialect()
        }
    }

    private mutating func readMember<Visitor: ArchiveVisitor>(_ key: String, into visitor: inout Visitor) throws {
        if key != "exportedAt" { try decideDialect(byKey: key) }
        if dialect == .android, let table = AndroidDialect.table(forKey: key) {
            try problems.recovering { try readAndroidTable(table, key: key, into: &visitor) }
            return
        }
        if let table = ExtensionTable(rawValue: key) {
            try problems.recovering { try readExtensionTable(table, into: &visitor) }
            return
        }
        switch key {
        case "formatVersion":
            try readFormatVersion()
        case "exportedAt":
            guard let c = try scanner.peek() else { throw scanner.unexpectedEnd() }
            let isNumber = c == 0x2D || (c >= 0x30 && c <= 0x39)
            if dialect == nil { dialect = isNumber ? .android : .ios }
            if isNumber {
                try problems.recovering {
                    try scanner.readNumberLiteral(into: &scratch)
                    guard let millis = ArchiveNumber.integer(scratch) else { throw invalid("exportedAt", "expected epoch milliseconds") }
                    if let problem = ArchiveDate.problem(with: millis) { throw invalid("exportedAt", problem) }
                    summary.exportedAt = millis
                }
            } else {
                try problems.recovering { summary.exportedAt = try readDate(at: "exportedAt", depth: 1) }
            }
        case "appVersion":
            try problems.recovering { summary.appVersion = try readStringValue(at: "appVersion", depth: 1) }
        case "counts":
            try problems.recovering { try readCounts() }
        case "settings":
            try problems.recovering { try readSettings(into: &visitor) }
        case "attachments":
            try problems.recovering { try readAttachments(into: &visitor) }
        case "documents", "documentStubs", "documentFiles":
            try problems.recovering { try readDocuments(key, into: &visitor) }
        default:
            if let table = ArchiveTable.named(key) {
                try problems.recovering { try readTable(table, into: &visitor) }
            } else {
                try skipUnknownTopLevel(key)
            }
        }
    }

    private mutating func skipUnknownTopLevel(_ key: String) throws {
        summary.warnings.append(ArchiveWarning(table: nil, message: "unknown top-level key \(ShownText.quoted(key)) (ignored)"))
        try scanner.skipValue(depth: 1)
    }

    private mutating func readFormatVersion() throws {
        guard let c = try scanner.peek(), c == 0x2D || (c >= 0x30 && c <= 0x39) else {
            throw ArchiveError.notAnArchive("missing formatVersion (it is not an integer)")
        }
        try scanner.readNumberLiteral(into: &scratch)
        guard let version = ArchiveNumber.integer(scratch) else {
            throw ArchiveError.notAnArchive("missing formatVersion (\(String(decoding: scratch, as: UTF8.self)) is not an integer)")
        }
        sawFormatVersion = true
        if version > ArchiveFormat.newestVersion { throw ArchiveError.unsupportedVersion(found: version) }
        if version < ArchiveFormat.oldestVersion {
            throw ArchiveError.notAnArchive("formatVersion \(version) is below \(ArchiveFormat.oldestVersion), which no PulseLoop app writes")
        }
        summary.formatVersion = version
    }

    // MARK: - Envelope values

    private mutating func readStringValue(at location: String, depth: Int) throws -> String {
        try requireKind(0x22, "a string", at: location, depth: depth)
        try scanner.readStringBytes(into: &scratch)
        guard let text = String(validating: scratch, as: UTF8.self) else { throw invalid(location, "the string is not valid UTF-8") }
        return text
    }

    private mutating func readDate(at location: String, depth: Int) throws -> Int64 {
        try requireKind(0x22, "a date string", at: location, depth: depth)
        try scanner.readStringBytes(into: &scratch)
        guard let millis = scratch.withUnsafeBufferPointer({ ArchiveDate.parse($0) }) else {
            throw invalid(location, "unrecognized date \(ValueParsing.quoted(scratch))")
        }
        if let problem = ArchiveDate.problem(with: millis) { throw invalid(location, "date \(ValueParsing.quoted(scratch)): \(problem)") }
        return millis
    }

    private mutating func readCounts() throws {
        try requireKind(0x7B, "an object", at: "counts", depth: 1)
        try scanner.expect(0x7B, "'{'")
        try scanner.checkDepth(2)
        if try scanner.consumeIfClosing(0x7D) { return }
        repeat {
            let name = ByteKey(try scanner.readString(scratch: &scratch))
            try scanner.expect(0x3A, "':'")
            try problems.recovering {
                try requireKind(0x30, "an integer", at: "counts.\(name)", depth: 2)
                try scanner.readNumberLiteral(into: &scratch)
                guard let count = ArchiveNumber.integer(scratch) else {
                    throw invalid("counts.\(name)", "\(String(decoding: scratch, as: UTF8.self)) is not a 64-bit integer")
                }
                guard summary.declaredCounts[name] == nil else {
                    throw ArchiveError(.duplicateKey, "counts: the key \"\(name)\" appears twice", table: "counts")
                }
                summary.declaredCounts[name] = count
            }
        } while try scanner.continues(closer: 0x7D)
    }

    private mutating func readSettings<Visitor: ArchiveVisitor>(into visitor: inout Visitor) throws {
        try requireKind(0x7B, "an object", at: "settings", depth: 1)
        try scanner.expect(0x7B, "'{'")
        try scanner.checkDepth(2)
        if try scanner.consumeIfClosing(0x7D) { return }
        var keys = Set<ByteKey>()
        repeat {
            let name = try scanner.readString(scratch: &scratch)
            try scanner.expect(0x3A, "':'")
            try problems.recovering {
                let value = try readStringValue(at: "settings.\(name)", depth: 2)
                guard keys.insert(ByteKey(name)).inserted else {
                    throw ArchiveError(.duplicateKey, "the settings key \"\(name)\" appears twice", table: "settings")
                }
                try SettingsBlob.check(key: name, value: value, limits: scanner.limits)
                try visitor.visitSetting(key: name, value: value)
                summary.settingsCount += 1
            }
        } while try scanner.continues(closer: 0x7D)
    }

    /// Reads the members of one entry object of `attachments` or a document array; a member
    /// whose value does not fit is consumed and its problem returned with the others.
    private mutating func readEntry(at location: String, _ member: (inout EnvelopeParser, String) throws -> Void) throws -> [ArchiveError] {
        var entryProblems: [ArchiveError] = []
        try requireKind(0x7B, "an object", at: location, depth: 2)
        try scanner.expect(0x7B, "'{'")
        try scanner.checkDepth(3)
        var members = Set<ByteKey>()
        if try !scanner.consumeIfClosing(0x7D) {
            repeat {
                let key = try scanner.readString(scratch: &scratch)
                try scanner.expect(0x3A, "':'")
                // As in a row, a member given twice is refused, not "the last one wins".
                guard members.insert(ByteKey(key)).inserted else {
                    try scanner.skipValue(depth: 3)
                    entryProblems.append(invalid("\(location).\(key)", "the field appears twice in the entry"))
                    continue
                }
                do {
                    try member(&self, key)
                } catch let error as ArchiveError where error.isRecoverable {
                    entryProblems.append(error)
                }
            } while try scanner.continues(closer: 0x7D)
        }
        return entryProblems
    }

    private mutating func readBase64(at location: String) throws -> [UInt8] {
        try requireKind(0x22, "a string", at: location, depth: 3)
        try scanner.readStringBytes(into: &scratch)
        // Decoded straight from the scanner's bytes: through `Data` it took three more copies of
        // the largest value an archive holds.
        guard let bytes = Base64.decode(scratch) else { throw invalid(location, "invalid base64") }
        return bytes
    }

    private mutating func readAttachments<Visitor: ArchiveVisitor>(into visitor: inout Visitor) throws {
        var names = Set<ByteKey>()
        try readArray(at: "attachments") { parser, index in
            let location = "attachments[\(index)]"
            var name: String?
            var contents: [UInt8]?
            try parser.problems.recovering {
                try parser.readEntryChecked(at: location) { parser, key in
                    switch key {
                    case "file": name = try parser.readStringValue(at: "\(location).file", depth: 3)
                    case "base64": contents = try parser.readBase64(at: "\(location).base64")
                    default: try parser.skipUnknown(key, in: "attachments")
                    }
                }
                guard let name else { throw parser.invalid(location, "missing required field \"file\"", table: "attachments") }
                guard let contents else { throw parser.invalid(location, "missing required field \"base64\"", table: "attachments") }
                try AttachmentName.validate(name)
                guard names.insert(ByteKey(name)).inserted else {
                    throw ArchiveError(.duplicateKey, "the attachment name \"\(name)\" appears twice", table: "attachments")
                }
                try visitor.visitAttachment(name: name, contents: contents)
                parser.summary.attachmentsCount += 1
            }
        }
    }

    // MARK: - Documents

    /// One of the document arrays: `{"path", "document"[, "base64"]}` entries, or
    /// `{"path", "base64"}` for `documentFiles`.
    private mutating func readDocuments<Visitor: ArchiveVisitor>(_ key: String, into visitor: inout Visitor) throws {
        summary.hasDocuments = true
        try readArray(at: key) { parser, index in
            let location = "\(key)[\(index)]"
            var pathText: String?
            var document: JSONNode?
            var bytes: [UInt8]?
            try parser.problems.recovering {
                try parser.readEntryChecked(at: location) { parser, member in
                    switch member {
                    case "path":
                        pathText = try parser.readStringValue(at: "\(location).path", depth: 3)
                    case "document" where key != "documentFiles":
                        try parser.requireKind(0x7B, "an object", at: "\(location).document", depth: 3)
                        document = try JSONNode.readWhole(parser.scanner, depth: 3, location: "\(location).document")
                    case "base64":
                        bytes = try parser.readBase64(at: "\(location).base64")
                    default:
                        try parser.skipUnknown(member, in: key)
                    }
                }
                guard let pathText else { throw parser.invalid(location, "missing required field \"path\"", table: "documents") }
                let path = try DocumentPath(pathText)
                if let earlier = parser.documentPaths[path.caseFolded] {
                    guard ByteKey(earlier) != ByteKey(path.path) else {
                        throw ArchiveError(.duplicateKey, "the document path \"\(path.path)\" appears twice", table: "documents")
                    }
                    throw ArchiveError(.duplicateKey, path.caseCollision(with: earlier), table: "documents")
                }
                parser.documentPaths[path.caseFolded] = path.path
                if key == "documentFiles" {
                    guard let bytes else { throw parser.invalid(location, "missing required field \"base64\"", table: "documents") }
                    try visitor.visitDocumentFile(path, contents: bytes)
                } else {
                    guard path.isStub == (key == "documentStubs") else {
                        throw parser.invalid("\(location).path", "\(path.path) does not belong in \(key)", table: "documents")
                    }
                    guard let document else { throw parser.invalid(location, "missing required field \"document\"", table: "documents") }
                    // `base64` carries the file's own bytes when they are not the canonical
                    // encoding: they must hold the same document, or one of the two is lost.
                    // Parsed whole to be compared, so they meet the whole-value limit as the document does.
                    if let bytes { try parser.scanner.limits.checkWholeValue(bytes.count, "\(location).base64") }
                    if let bytes, (try? JSONNode.parse(bytes, limits: parser.scanner.limits)) != document {
                        throw parser.invalid(location, "the document at \(path.path) and its base64 bytes disagree (the bytes are not that document's JSON)", table: "documents")
                    }
                    try visitor.visitDocument(path, document: document, originalBytes: bytes)
                }
                parser.summary.documentCounts[path.group, default: 0] += 1
            }
        }
    }

    // MARK: - Tables

    private mutating func readTable<Visitor: ArchiveVisitor>(_ table: ArchiveTable, into visitor: inout Visitor) throws {
        try visitor.beginTable(table)
        var decoder = RowDecoder(table: table)
        decoder.keepsText = keepsRowText
        let count = try readArray(at: table.key) { parser, index in
            if let row = try decoder.readRow(parser.scanner, index: index, scratch: &parser.scratch, problems: parser.problems) {
                if parser.keepsRowText {
                    try parser.problems.recovering { try visitor.visit(row: row, text: decoder.rowText[...], at: index, of: table) }
                } else {
                    try parser.problems.recovering { try visitor.visit(row: row, at: index, of: table) }
                }
            }
            parser.countRow()
        }
        unknownFields[table.key, default: NameTally()].add(decoder.unknownFields)
        summary.rowsFound[table.key] = count
        try visitor.endTable(table, rowCount: count)
    }

    /// Counts a row for the progress report.
    private mutating func countRow() {
        rowsRead += 1
        if rowsRead & 0x3FFF == 0 { reportRows?(rowsRead) }
    }

    // MARK: - The Android dialect and the extension tables

    /// An Android table: each row read whole, then mapped into the app's row.
    private mutating func readAndroidTable<Visitor: ArchiveVisitor>(_ table: ArchiveTable, key: String, into visitor: inout Visitor) throws {
        try visitor.beginTable(table)
        let known = AndroidDialect.knownFields(table)
        let count = try readArray(at: key) { parser, index in
            let location = "\(key)[\(index)]"
            try parser.problems.recovering {
                let object = try parser.readRowObject(at: location, table: table.key)
                for field in object.keys where !known.contains(field) { parser.unknownFields[table.key, default: NameTally()].add(field) }
                var unknownNames: [ByteKey] = []
                let row = try AndroidDialect.mapRow(object, table: table, location: location, dayKey: parser.dayKey) { field, name in
                    unknownNames.append(ByteKey("\(table.key).\(field) \(ShownText.quoted(name))"))
                }
                for name in unknownNames { parser.unknownNames.add(name) }
                for (i, field) in table.fields.enumerated() where field.isExtension && !row[i].isNull {
                    parser.summary.extensionFields["\(table.key).\(field.name)", default: 0] += 1
                }
                try visitor.visit(row: row, at: index, of: table)
            }
            parser.countRow()
        }
        summary.rowsFound[table.key] = count
        try visitor.endTable(table, rowCount: count)
    }

    /// Meals and food products: objects carried whole, keyed by `id` / `code`.
    private mutating func readExtensionTable<Visitor: ArchiveVisitor>(_ table: ExtensionTable, into visitor: inout Visitor) throws {
        summary.rowsFound[table.rawValue] = try readArray(at: table.rawValue) { parser, index in
            let location = "\(table.rawValue)[\(index)]"
            try parser.problems.recovering {
                var object = try parser.readRowObject(at: location, table: table.rawValue)
                if parser.dialect == .android { object = try table.fromAndroid(object, location: location) }
                guard table.key(of: .object(object)) != nil else {
                    throw parser.invalid(location, "missing the required field \"\(table.uniqueKey)\"", table: table.rawValue)
                }
                try visitor.visitExtensionRow(table, row: .object(object), at: index)
            }
        }
    }

    /// A row read whole as a JSON object.
    private mutating func readRowObject(at location: String, table: String) throws -> [ByteKey: JSONNode] {
        guard let object = try JSONNode.readWhole(scanner, depth: 2, location: location).objectValue else {
            throw invalid(location, "expected a row object", table: table)
        }
        return object
    }

    /// Reads one top-level array, handing each element's index to `element`.
    /// - Returns: the number of elements.
    @discardableResult
    private mutating func readArray(at key: String, _ element: (inout EnvelopeParser, Int) throws -> Void) throws -> Int {
        try requireKind(0x5B, "an array", at: key, depth: 1)
        try scanner.expect(0x5B, "'['")
        try scanner.checkDepth(2)
        var count = 0
        if try !scanner.consumeIfClosing(0x5D) {
            repeat {
                try element(&self, count)
                count += 1
            } while try scanner.continues(closer: 0x5D)
        }
        return count
    }

    /// `readEntry`, reporting all but the last of the entry's problems and throwing the last.
    private mutating func readEntryChecked(at location: String, _ member: (inout EnvelopeParser, String) throws -> Void) throws {
        let entryProblems = try readEntry(at: location, member)
        for problem in entryProblems.dropLast() { try problems.report(problem) }
        if let last = entryProblems.last { throw last }
    }

    /// Skips a member nobody reads, remembering it for the warnings.
    private mutating func skipUnknown(_ member: String, in section: String) throws {
        unknownFields[section, default: NameTally()].add(ByteKey(member))
        try scanner.skipValue(depth: 3)
    }

    // MARK: - Helpers

    /// Checks the next value's JSON type; on a mismatch the value is skipped, then reported.
    private func requireKind(_ opener: UInt8, _ expected: String, at location: String, depth: Int) throws {
        guard let c = try scanner.peek() else { throw scanner.unexpectedEnd() }
        let matches = opener == 0x30 ? (c == 0x2D || (c >= 0x30 && c <= 0x39)) : c == opener
        if !matches {
            try scanner.skipValue(depth: depth)
            throw invalid(location, "expected \(expected), found \(ValueParsing.jsonKind(c))")
        }
    }

    private func invalid(_ location: String, _ detail: String, table: String? = nil) -> ArchiveError {
        let owner = table ?? String(location.prefix { $0 != "[" && $0 != "." })
        return ArchiveError(.invalidValue, "\(location): \(detail)", table: owner)
    }

    // MARK: - Skimming

    /// The version and dialect, from a pass that reads only the top-level scalars.
    mutating func skimEnvelope() throws -> (version: Int64?, dialect: ArchiveDialect?) {
        var version: Int64?
        var dialect: ArchiveDialect?
        try scanner.skipByteOrderMark()
        try scanner.expect(0x7B, "'{'")
        if try scanner.consumeIfClosing(0x7D) { return (nil, nil) }
        repeat {
            let key = try scanner.readString(scratch: &scratch)
            try scanner.expect(0x3A, "':'")
            let c = try scanner.peek()
            let isNumber = c.map { $0 == 0x2D || ($0 >= 0x30 && $0 <= 0x39) } ?? false
            if key == "formatVersion", isNumber {
                try scanner.readNumberLiteral(into: &scratch)
                version = ArchiveNumber.integer(scratch)
            } else if key == "exportedAt" {
                dialect = dialect ?? (isNumber ? .android : .ios)
                try scanner.skipValue(depth: 1)
            } else if AndroidDialect.androidOnlyKeys.contains(key) {
                dialect = .android
                try scanner.skipValue(depth: 1)
            } else {
                try scanner.skipValue(depth: 1)
            }
        } while try scanner.continues(closer: 0x7D)
        return (version, dialect)
    }
}
