import Foundation

/// The state of one pass over the top-level object.
struct EnvelopeParser {
    let scanner: JSONScanner
    let counted: CountingSource
    var summary: ArchiveSummary
    private(set) var sawFormatVersion = false
    var scratch: [UInt8] = []
    /// Keys an archive controls are compared as bytes (`ByteKey`), everywhere.
    private var keysSeen = SeenNames()
    private var countNamesSeen = SeenNames()
    /// Unknown top-level keys and `counts` names that are no table: the first named in warnings,
    /// the rest counted (a file of 200,000 unknown keys printed 84 MB of warnings).
    var unknownTopLevel = NameTally()
    var unknownCountNames = NameTally()
    var unknownFields: [String: NameTally] = [:]
    var rowsRead = 0
    /// Document paths by their case-folded spelling: the app's file system ignores case, so
    /// two paths that differ only in case would be one file there.
    var documentPaths: [String: String] = [:]
    /// Nil until something in the file tells the dialects apart.
    var dialect: ArchiveDialect?
    var dayKey: (Int64) -> String = { _ in "" }
    /// Looks ahead, from the value about to be read, for what tells the dialects apart.
    var probeDialect: (_ key: String) throws -> ArchiveDialect = { _ in .ios }
    /// The file's size once it is read, for a source whose size is not known before (a pipe).
    var fileBytesAtEnd: (() -> Int64)?
    /// Reads a gzip stream on to its end, where its checksum is checked; nil for plain JSON.
    var readContainerToEnd: (() throws -> Void)?
    var unknownNames = NameTally()
    var reportRows: ((Int) -> Void)?
    var keepsRowText = false
    var passesRepeatedNames = false
    /// Where a large attachment or document file is spilled (`ArchiveReader.spillDirectory`).
    var spillDirectory: String?

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
        try scanner.expect(JSONByte.openBrace, "'{' to open the archive object")
        if try !scanner.consumeIfClosing(JSONByte.closeBrace) {
            // What the scanner finds outside any entry is placed by the top-level key it is in
            // or after (a bare byte offset in a file of one line is no place).
            // Between two members the problem is in no table.
            var previous: String?
            let between = { previous.map { "after \(ShownText.quoted($0))" } ?? "at the top level" }
            repeat {
                let key = try ArchiveError.placing(at: between(), table: nil) { try scanner.readString(scratch: &scratch) }
                try ArchiveError.placing(at: "in \(ShownText.quoted(key))", table: key) {
                    try scanner.expect(JSONByte.colon, "':'")
                    guard keysSeen.insert(key) else {
                        throw ArchiveError.notAnArchive("the top-level key \(ShownText.quoted(key)) appears twice")
                    }
                    // Every key the format knows is ASCII; any other is unknown without being
                    // looked up in a `String`-keyed table (whose hashing normalises).
                    if key.utf8.allSatisfy({ $0 < 0x80 }) {
                        try readMember(key, into: &visitor)
                    } else {
                        try skipUnknownTopLevel(key)
                    }
                }
                previous = key
            } while try ArchiveError.placing(at: between(), table: nil) { try scanner.continues(closer: JSONByte.closeBrace) }
        }
        try scanner.expectEnd()
        guard sawFormatVersion else { throw ArchiveError.notAnArchive("missing formatVersion") }
        summary.dialect = dialect ?? .ios
        if summary.dialect == .android {
            // Any list may be absent in the port's files: an absent table has no rows.
            if !keysSeen.contains("exportedAt") { try problems.report(ArchiveError.notAnArchive("missing required key \"exportedAt\"")) }
            return
        }
        for key in Self.requiredKeys where !keysSeen.contains(key) {
            try problems.report(ArchiveError.notAnArchive("missing required key \"\(key)\"", table: key))
        }
        for table in ArchiveTable.all where table.isRequired && !keysSeen.contains(table.key) {
            try problems.report(ArchiveError.notAnArchive("missing required table \"\(table.key)\"", table: table.key))
        }
        // A count of no table is compared with nothing: said, as an unknown key is. (The
        // Android port counts by SQL names, some of tables it does not export.)
        // Kept are the tables' names in either dialect and the first few others: in the app's
        // dialect, the Android port's names are no table either.
        for name in summary.declaredCounts.keys.sorted() where !Self.appTableNames.contains(name) {
            summary.warnings.append(ArchiveWarning(table: "counts", message: "counts names \(ShownText.quoted(name.text)), which is no table (ignored)"))
        }
        if unknownCountNames.others > 0 {
            summary.warnings.append(ArchiveWarning(table: "counts", message: "counts names \(unknownCountNames.others) more that are no table (ignored), "
                + "past the first \(NameTally.namedLimit) names or longer than \(NameTally.longestNamed) bytes"))
        }
    }

    /// The tables' keys, the names `counts` gives them by in the app's dialect.
    private static let appTableNames = Set((ArchiveTable.all.map(\.key) + ExtensionTable.allCases.map(\.rawValue)).map { ByteKey($0) })
    /// The names `counts` may give a table by in either dialect: its key, the Android port's SQL name.
    private static let tableCountNames = appTableNames.union(appTableNames.map { ByteKey(AndroidDialect.countName(ofTable: $0.text)) })

    mutating func finishSummary() {
        summary.jsonBytes = counted.count
        if let fileBytesAtEnd { summary.fileBytes = fileBytesAtEnd() }
        summary.problems = problems.problems
        for (name, _) in unknownTopLevel.counts.sorted(by: { $0.key < $1.key }) {
            summary.warnings.append(ArchiveWarning(table: nil, message: "unknown top-level key \(ShownText.quoted(name.text)) (ignored)"))
        }
        if unknownTopLevel.others > 0 {
            summary.warnings.append(ArchiveWarning(table: nil, message: "\(unknownTopLevel.others) more unknown top-level keys (ignored), "
                + "past the first \(NameTally.namedLimit) names or longer than \(NameTally.longestNamed) bytes"))
        }
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
            dialect = try probeDialect(key)
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
            let isNumber = JSONByte.startsNumber(c)
            if dialect == nil { dialect = isNumber ? .android : .ios }
            if isNumber {
                try problems.recovering {
                    try scanner.readNumberLiteral(into: &scratch)
                    guard let millis = ArchiveNumber.integer(scratch) else { throw invalid("exportedAt", ArchiveNumber.notEpochMillis(scratch)) }
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
        unknownTopLevel.add(ByteKey(key))
        try scanner.skipValue(depth: 1)
    }

    private mutating func readFormatVersion() throws {
        guard let c = try scanner.peek(), JSONByte.startsNumber(c) else {
            throw ArchiveError.notAnArchive("missing formatVersion (it is not an integer)")
        }
        try scanner.readNumberLiteral(into: &scratch)
        guard let version = ArchiveNumber.integer(scratch) else {
            // A whole number past 64 bits is a version newer than any, not "not an integer".
            if scratch.count <= 64, scratch.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) {
                throw ArchiveError.unsupportedVersion(literal: String(decoding: scratch, as: UTF8.self))
            }
            throw ArchiveError.notAnArchive("formatVersion \(String(decoding: scratch, as: UTF8.self)) is not an integer")
        }
        sawFormatVersion = true
        if version > ArchiveFormat.newestVersion { throw ArchiveError.unsupportedVersion(found: version) }
        if version < ArchiveFormat.oldestVersion {
            throw ArchiveError.notAnArchive("formatVersion \(version) is below \(ArchiveFormat.oldestVersion), which no PulseLoop app writes")
        }
        summary.formatVersion = version
    }

    // MARK: - Envelope values

    mutating func readStringValue(at location: String, depth: Int) throws -> String {
        try requireKind(.string, "a string", at: location, depth: depth)
        try scanner.readStringBytes(into: &scratch)
        guard let text = String(validating: scratch, as: UTF8.self) else { throw invalid(location, "the string is not valid UTF-8") }
        return text
    }

    private mutating func readDate(at location: String, depth: Int) throws -> Int64 {
        try requireKind(.string, "a date string", at: location, depth: depth)
        try scanner.readStringBytes(into: &scratch)
        guard let millis = scratch.withUnsafeBufferPointer({ ArchiveDate.parse($0) }) else {
            throw invalid(location, "unrecognized date \(ValueParsing.quoted(scratch))")
        }
        if let problem = ArchiveDate.problem(with: millis) { throw invalid(location, "date \(ValueParsing.quoted(scratch)): \(problem)") }
        return millis
    }

    private mutating func readCounts() throws {
        try requireKind(.object, "an object", at: "counts", depth: 1)
        try scanner.expect(JSONByte.openBrace, "'{'")
        try scanner.checkDepth(2)
        if try scanner.consumeIfClosing(JSONByte.closeBrace) { return }
        repeat {
            let name = ByteKey(try scanner.readString(scratch: &scratch))
            try scanner.expect(JSONByte.colon, "':'")
            try problems.recovering {
                try requireKind(.number, "an integer", at: "counts.\(name)", depth: 2)
                try scanner.readNumberLiteral(into: &scratch)
                guard let count = ArchiveNumber.integer(scratch) else {
                    throw invalid("counts.\(name)", "\(String(decoding: scratch, as: UTF8.self)) is not a 64-bit integer")
                }
                guard countNamesSeen.insert(name.text) else {
                    throw ArchiveError(.duplicateKey, "counts: the key \(ShownText.quoted(name.text)) appears twice", table: "counts")
                }
                // A name of no table is kept among the first few (`NameTally`), the rest counted.
                if Self.tableCountNames.contains(name) || unknownCountNames.add(name) {
                    summary.declaredCounts[name] = count
                }
            }
        } while try scanner.continues(closer: JSONByte.closeBrace)
    }

    /// Reads one top-level array, handing each element's index to `element`.
    /// - Returns: the number of elements.
    @discardableResult
    mutating func readArray(at key: String, _ element: (inout EnvelopeParser, Int) throws -> Void) throws -> Int {
        try requireKind(.array, "an array", at: key, depth: 1)
        try scanner.expect(JSONByte.openBracket, "'['")
        try scanner.checkDepth(2)
        var count = 0
        if try !scanner.consumeIfClosing(JSONByte.closeBracket) {
            // The three document arrays are one table to a report: `documents`.
            let table = key.hasPrefix("document") ? "documents" : key
            repeat {
                try ArchiveError.placing(at: "\(key)[\(count)]", table: table) { try element(&self, count) }
                count += 1
                // Broken between two entries (a missing comma): placed before the next.
            } while try ArchiveError.placing(at: "\(key)[\(count)]", table: table) { try scanner.continues(closer: JSONByte.closeBracket) }
        }
        return count
    }

    /// Skips a member nobody reads, remembering it for the warnings.
    mutating func skipUnknown(_ member: String, in section: String) throws {
        unknownFields[section, default: NameTally()].add(ByteKey(member))
        try scanner.skipValue(depth: 3)
    }

    // MARK: - Helpers

    /// Checks the next value's JSON type; on a mismatch the value is skipped, then reported.
    func requireKind(_ kind: JSONValueStart, _ expected: String, at location: String, depth: Int) throws {
        guard let c = try scanner.peek() else { throw scanner.unexpectedEnd() }
        if !kind.matches(c) {
            try scanner.skipValue(depth: depth)
            throw invalid(location, "expected \(expected), found \(ValueParsing.jsonKind(c))")
        }
    }

    func invalid(_ location: String, _ detail: String, table: String? = nil) -> ArchiveError {
        let owner = table ?? String(location.prefix { $0 != "[" && $0 != "." })
        return ArchiveError(.invalidValue, "\(location): \(detail)", table: owner)
    }

    // MARK: - Skimming

    /// The format version, from a pass that reads only the top-level scalars.
    mutating func skimFormatVersion() throws -> Int64? {
        var version: Int64?
        try scanner.skipByteOrderMark()
        try scanner.expect(JSONByte.openBrace, "'{'")
        if try scanner.consumeIfClosing(JSONByte.closeBrace) { return nil }
        repeat {
            let key = try scanner.readString(scratch: &scratch)
            try scanner.expect(JSONByte.colon, "':'")
            if key == "formatVersion", let c = try scanner.peek(), JSONByte.startsNumber(c) {
                try scanner.readNumberLiteral(into: &scratch)
                version = ArchiveNumber.integer(scratch)
            } else {
                try scanner.skipValue(depth: 1)
            }
        } while try scanner.continues(closer: JSONByte.closeBrace)
        return version
    }

    /// The dialect, looking ahead from a member's value (the scanner stands after its colon)
    /// over the rest of the top level; it stops at the first key that decides. Nil when none
    /// does (the app's dialect, then).
    /// - Throws: what is wrong with the text ahead, placed by the top-level key it is in or after.
    mutating func skimRemainder(after first: String) throws -> ArchiveDialect? {
        var previous = first
        try ArchiveError.placing(at: "in \(ShownText.quoted(first))", table: first) { try scanner.skipValue(depth: 1) }
        while try ArchiveError.placing(at: "after \(ShownText.quoted(previous))", table: nil, { try scanner.continues(closer: JSONByte.closeBrace) }) {
            let key = try ArchiveError.placing(at: "after \(ShownText.quoted(previous))", table: nil) { try scanner.readString(scratch: &scratch) }
            let isNumber = try ArchiveError.placing(at: "in \(ShownText.quoted(key))", table: key) {
                try scanner.expect(JSONByte.colon, "':'")
                return try scanner.peek().map { JSONByte.startsNumber($0) } ?? false
            }
            if let dialect = Self.dialect(tellingBy: key, valueIsNumber: isNumber) { return dialect }
            try ArchiveError.placing(at: "in \(ShownText.quoted(key))", table: key) { try scanner.skipValue(depth: 1) }
            previous = key
        }
        return nil
    }

    /// What a top-level key (and whether its value is a number) says of the dialect, if anything.
    private static func dialect(tellingBy key: String, valueIsNumber: Bool) -> ArchiveDialect? {
        if key == "exportedAt" { return valueIsNumber ? .android : .ios }
        if AndroidDialect.androidOnlyKeys.contains(key) { return .android }
        if AndroidDialect.iosOnlyKeys.contains(key) { return .ios }
        return nil
    }
}
