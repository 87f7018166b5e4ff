import Foundation

// The settings, the attachments, and the entry objects they and the documents share.
extension EnvelopeParser {
    mutating func readSettings<Visitor: ArchiveVisitor>(into visitor: inout Visitor) throws {
        try requireKind(.object, "an object", at: "settings", depth: 1)
        try scanner.expect(JSONByte.openBrace, "'{'")
        try scanner.checkDepth(2)
        if try scanner.consumeIfClosing(JSONByte.closeBrace) { return }
        var keys = SeenNames()
        // What the JSON scanner finds in a key or a value names the setting.
        var previous = ""
        repeat {
            let key = try ArchiveError.placing(at: "settings", table: "settings") { try scanner.readString(scratch: &scratch) }
            try ArchiveError.placing(at: "settings.\(key)", table: "settings") {
                try scanner.expect(JSONByte.colon, "':'")
                try problems.recovering {
                    let value = try readStringValue(at: "settings.\(key)", depth: 2)
                    guard keys.insert(key) || passesRepeatedNames else {
                        throw ArchiveError(.duplicateKey, "the settings key \"\(key)\" appears twice", table: "settings")
                    }
                    try SettingsBlob.check(key: key, value: value, limits: scanner.limits)
                    try visitor.visitSetting(key: key, value: value)
                    summary.settingsCount += 1
                }
            }
            previous = key
        } while try ArchiveError.placing(at: "settings, after \(previous)", table: "settings") { try scanner.continues(closer: JSONByte.closeBrace) }
    }

    /// Reads the members of one entry object of `attachments` or a document array; a member
    /// whose value does not fit is consumed and its problem returned with the others.
    private mutating func readEntry(at location: String, _ member: (inout EnvelopeParser, String) throws -> Void) throws -> [ArchiveError] {
        var entryProblems: [ArchiveError] = []
        try requireKind(.object, "an object", at: location, depth: 2)
        try scanner.expect(JSONByte.openBrace, "'{'")
        try scanner.checkDepth(3)
        var members = SeenNames()
        if try !scanner.consumeIfClosing(JSONByte.closeBrace) {
            repeat {
                let key = try scanner.readString(scratch: &scratch)
                try scanner.expect(JSONByte.colon, "':'")
                // As in a row, a member given twice is refused, not "the last one wins".
                guard members.insert(key) else {
                    try scanner.skipValue(depth: 3)
                    entryProblems.append(invalid("\(location).\(key)", "the field appears twice in the entry"))
                    continue
                }
                do {
                    try member(&self, key)
                } catch let error as ArchiveError where error.isRecoverable {
                    entryProblems.append(error)
                }
            } while try scanner.continues(closer: JSONByte.closeBrace)
        }
        return entryProblems
    }

    /// The bytes of a base64 string of any size (an attachment, a document file), decoded as
    /// they are read and spilled to an unnamed file past `ArchiveBytes.inlineLimit`: never held
    /// whole, as text or as bytes. Invalid base64 is refused naming the character, once the
    /// whole string was consumed (so a collecting read goes on with the next value).
    mutating func readLargeBase64(at location: String) throws -> ArchiveBytes {
        try requireKind(.string, "a string", at: location, depth: 3)
        let start = scanner.offset
        var decoder = Base64.Decoder()
        var builder = ArchiveBytes.Builder(spillingIn: spillDirectory)
        var decoded: [UInt8] = []
        try scanner.readStringPieces { piece in
            guard decoder.failure == nil else { return }
            decoded.removeAll(keepingCapacity: true)
            decoder.decode(piece, appendingTo: &decoded)
            try decoded.withUnsafeBytes { try builder.append($0) }
        }
        if let failure = decoder.finish() {
            throw invalid(location, "invalid base64 at character \(failure.offset) of the value (the string starts at byte \(start)): \(failure.reason)")
        }
        return builder.finish()
    }

    mutating func readBase64(at location: String) throws -> [UInt8] {
        try requireKind(.string, "a string", at: location, depth: 3)
        try scanner.readStringBytes(into: &scratch)
        // Decoded straight from the scanner's bytes: through `Data` it took three more copies of
        // the largest value an archive holds.
        guard let bytes = Base64.decode(scratch) else { throw invalid(location, "invalid base64") }
        return bytes
    }

    mutating func readAttachments<Visitor: ArchiveVisitor>(into visitor: inout Visitor) throws {
        var names = SeenNames()
        try readArray(at: "attachments") { parser, index in
            let location = "attachments[\(index)]"
            var name: String?
            var contents: ArchiveBytes?
            try parser.problems.recovering {
                try parser.readEntryChecked(at: location) { parser, key in
                    switch key {
                    case "file": name = try parser.readStringValue(at: "\(location).file", depth: 3)
                    case "base64": contents = try parser.readLargeBase64(at: "\(location).base64")
                    default: try parser.skipUnknown(key, in: "attachments")
                    }
                }
                guard let name else { throw parser.invalid(location, "missing required field \"file\"", table: "attachments") }
                guard let contents else { throw parser.invalid(location, "missing required field \"base64\"", table: "attachments") }
                try AttachmentName.validate(name)
                guard names.insert(name) || parser.passesRepeatedNames else {
                    throw ArchiveError(.duplicateKey, "the attachment name \"\(name)\" appears twice", table: "attachments")
                }
                try visitor.visitAttachment(name: name, contents: contents)
                parser.summary.attachmentsCount += 1
            }
        }
    }

    /// `readEntry`, reporting all but the last of the entry's problems and throwing the last.
    mutating func readEntryChecked(at location: String, _ member: (inout EnvelopeParser, String) throws -> Void) throws {
        let entryProblems = try readEntry(at: location, member)
        for problem in entryProblems.dropLast() { try problems.report(problem) }
        if let last = entryProblems.last { throw last }
    }
}
