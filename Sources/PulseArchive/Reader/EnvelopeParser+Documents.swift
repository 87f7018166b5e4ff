import Foundation

// The workout documents: `documents`, `documentStubs` and `documentFiles`.
extension EnvelopeParser {
    // MARK: - Documents

    /// One of the document arrays: `{"path", "document"[, "base64"]}` entries, or
    /// `{"path", "base64"}` for `documentFiles`.
    mutating func readDocuments<Visitor: ArchiveVisitor>(_ key: String, into visitor: inout Visitor) throws {
        summary.hasDocuments = true
        try readArray(at: key) { parser, index in
            let location = "\(key)[\(index)]"
            var pathText: String?
            var document: JSONNode?
            var bytes: [UInt8]?
            var fileBytes: ArchiveBytes?
            try parser.problems.recovering(placedAt: location, table: "documents") {
                try parser.readEntryChecked(at: location) { parser, member in
                    switch member {
                    case "path":
                        pathText = try parser.readStringValue(at: "\(location).path", depth: 3)
                    case "document" where key != "documentFiles":
                        try parser.requireKind(.object, "an object", at: "\(location).document", depth: 3)
                        document = try JSONNode.readWhole(parser.scanner, depth: 3, location: "\(location).document")
                    case "base64" where key == "documentFiles":
                        // A file of the tree, not a document: of any size, never parsed.
                        fileBytes = try parser.readLargeBase64(at: "\(location).base64")
                    case "base64":
                        bytes = try parser.readBase64(at: "\(location).base64")
                    default:
                        try parser.skipUnknown(member, in: key)
                    }
                }
                guard let pathText else { throw parser.invalid(location, "missing required field \"path\"", table: "documents") }
                let path = try DocumentPath(pathText)
                if !parser.passesRepeatedNames, let earlier = parser.documentPaths[path.caseFolded] {
                    guard ByteKey(earlier) != ByteKey(path.path) else {
                        throw ArchiveError(.duplicateKey, "the document path \"\(path.path)\" appears twice", table: "documents")
                    }
                    throw ArchiveError(.duplicateKey, path.caseCollision(with: earlier), table: "documents")
                }
                parser.documentPaths[path.caseFolded] = path.path
                if key == "documentFiles" {
                    guard let fileBytes else { throw parser.invalid(location, "missing required field \"base64\"", table: "documents") }
                    try visitor.visitDocumentFile(path, contents: fileBytes)
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
}
