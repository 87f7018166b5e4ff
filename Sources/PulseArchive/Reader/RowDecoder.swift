#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Decodes the row objects of one table straight from the scanner into `ArchiveRow`s, each
/// value checked against its field's type; no intermediate JSON tree is built.
struct RowDecoder {
    let table: ArchiveTable
    /// Field names as bytes, in sorted order, and the field index each maps to.
    private let sortedNames: [[UInt8]]
    private let sortedToField: [Int]
    private var seen: [Bool]
    /// Field names the table does not have, compared as bytes (`ByteKey`).
    private(set) var unknownFields = NameTally()
    /// Keep each row's JSON text (`ArchiveReader.keepsRowText`) in `rowText`.
    var keepsText = false
    /// The last row's text, when `keepsText`.
    private(set) var rowText: [UInt8] = []

    init(table: ArchiveTable) {
        self.table = table
        self.sortedNames = table.sortedFieldIndices.map { Array(table.fields[$0].name.utf8) }
        self.sortedToField = table.sortedFieldIndices
        self.seen = Array(repeating: false, count: table.fields.count)
    }

    /// Reads one row. A value that does not fit its field is consumed whole and reported to
    /// `problems`; in strict mode that throws, in collecting mode the row is dropped (nil) and
    /// the read goes on.
    mutating func readRow(_ scanner: JSONScanner, index: Int, scratch: inout [UInt8], problems: ProblemSink) throws -> ArchiveRow? {
        guard let c = try scanner.peek() else { throw scanner.unexpectedEnd() }
        guard c == JSONByte.openBrace else {
            try scanner.skipValue(depth: 2)
            try problems.report(ArchiveError(.invalidValue, "\(table.key)[\(index)]: expected a row object, found \(ValueParsing.jsonKind(c))", table: table.key))
            return nil
        }
        if keepsText { scanner.beginCapture() }
        scanner.advance()
        try scanner.checkDepth(3)
        var row = ArchiveRow(table: table)
        var valid = true
        var failedFields = Set<Int>()
        func fail(_ message: String) throws {
            valid = false
            try problems.report(ArchiveError(.invalidValue, message, table: table.key))
        }
        for i in seen.indices { seen[i] = false }
        // An unknown field given twice is refused as a known one is (nothing is "last wins"),
        // and counted once in its warning's rows.
        var unknownInRow = SeenNames()
        if try !scanner.consumeIfClosing(JSONByte.closeBrace) {
            // Files written with sorted keys hit the hint every time.
            var hint = 0
            repeat {
                let found = try scanner.withString(scratch: &scratch) { name -> Result<Int, UnknownName> in
                    if let sortedIndex = lookup(name, hint: hint) { return .success(sortedIndex) }
                    return .failure(UnknownName(text: JSONScanner.text(name)))
                }
                try scanner.expect(JSONByte.colon, "':'")
                let sortedIndex: Int
                switch found {
                case .success(let index): sortedIndex = index
                case .failure(let unknown):
                    if let name = unknown.text {
                        if unknownInRow.insert(name) {
                            unknownFields.add(ByteKey(name))
                        } else {
                            try fail("\(table.key)[\(index)]: the unknown field \(ValueParsing.quoted(Array(name.utf8))) appears twice in the row")
                        }
                    } else {
                        try fail("\(table.key)[\(index)]: a field name is not valid UTF-8")
                    }
                    try scanner.skipValue(depth: 3)
                    continue
                }
                hint = sortedIndex + 1
                let fieldIndex = sortedToField[sortedIndex]
                let field = table.fields[fieldIndex]
                guard !seen[fieldIndex] else {
                    try scanner.skipValue(depth: 3)
                    try fail("\(table.key)[\(index)].\(field.name): the field appears twice in the row")
                    continue
                }
                seen[fieldIndex] = true
                switch try readValue(scanner, field: field, scratch: &scratch) {
                case .success(let value): row[fieldIndex] = value
                case .failure(let problem):
                    failedFields.insert(fieldIndex)
                    try fail("\(table.key)[\(index)].\(field.name): \(problem.detail)")
                }
            } while try scanner.continues(closer: JSONByte.closeBrace)
        }
        if keepsText {
            rowText.removeAll(keepingCapacity: true)
            scanner.endCapture(into: &rowText)
        }
        for (i, field) in table.fields.enumerated() where !field.isOptional && row[i].isNull && !failedFields.contains(i) {
            try fail("\(table.key)[\(index)]: \(seen[i] ? "null in" : "missing") the required field \"\(field.name)\"")
        }
        return valid ? row : nil
    }

    private func lookup(_ name: UnsafeBufferPointer<UInt8>, hint: Int) -> Int? {
        func matches(_ candidate: [UInt8]) -> Bool {
            candidate.count == name.count && candidate.withUnsafeBufferPointer { memcmp($0.baseAddress!, name.baseAddress!, name.count) == 0 }
        }
        if hint < sortedNames.count, matches(sortedNames[hint]) { return hint }
        return sortedNames.firstIndex(where: matches)
    }

    /// A field name the table does not have; nil text when it is not valid UTF-8.
    private struct UnknownName: Error {
        let text: String?
    }

    /// Why a value does not fit its field, after the whole value was consumed.
    struct ValueProblem: Error {
        let detail: String
    }

    /// Reads one value as `field` says; a mismatch consumes the value and comes back as a
    /// failure. Only broken JSON throws.
    private func readValue(_ scanner: JSONScanner, field: ArchiveField, scratch: inout [UInt8]) throws -> Result<FieldValue, ValueProblem> {
        guard let c = try scanner.peek() else { throw scanner.unexpectedEnd() }
        if c == UInt8(ascii: "n") {  // null
            _ = try scanner.readLiteral()
            return .success(.null)
        }
        func mismatch(_ expected: String) throws -> Result<FieldValue, ValueProblem> {
            try scanner.skipValue(depth: 3)
            return .failure(ValueProblem(detail: "expected \(expected), found \(ValueParsing.jsonKind(c))"))
        }
        let isNumber = JSONByte.startsNumber(c)
        switch field.type {
        case .string:
            guard c == JSONByte.quote else { return try mismatch("a string") }
            guard let text = try scanner.withString(scratch: &scratch, JSONScanner.text) else {
                return .failure(ValueProblem(detail: "the string is not valid UTF-8"))
            }
            return .success(.string(text))
        case .uuid:
            guard c == JSONByte.quote else { return try mismatch("a UUID string") }
            return try scanner.withString(scratch: &scratch) { bytes in
                guard let uuid = CanonicalUUID.canonical(bytes) else {
                    return .failure(ValueProblem(detail: "not a UUID: \(ValueParsing.quoted(Array(bytes)))"))
                }
                return .success(.string(uuid))
            }
        case .date:
            if isNumber {
                try scanner.readNumberLiteral(into: &scratch)
                return .failure(ValueProblem(detail: "unrecognized date \(String(decoding: scratch, as: UTF8.self)) (dates are ISO-8601 strings)"))
            }
            guard c == JSONByte.quote else { return try mismatch("a date string") }
            return try scanner.withString(scratch: &scratch) { bytes in
                guard let millis = ArchiveDate.parse(bytes) else {
                    return .failure(ValueProblem(detail: "unrecognized date \(ValueParsing.quoted(Array(bytes)))"))
                }
                if let problem = ArchiveDate.problem(with: millis) {
                    return .failure(ValueProblem(detail: "date \(ValueParsing.quoted(Array(bytes))): \(problem)"))
                }
                return .success(.date(millis))
            }
        case .int:
            guard isNumber else { return try mismatch("an integer") }
            try scanner.readNumberLiteral(into: &scratch)
            guard let value = ArchiveNumber.integer(scratch) else {
                return .failure(ValueProblem(detail: "\(String(decoding: scratch, as: UTF8.self)) is not an integer within 64 bits"))
            }
            return .success(.int(value))
        case .double:
            guard isNumber else { return try mismatch("a number") }
            try scanner.readNumberLiteral(into: &scratch)
            guard let value = ArchiveNumber.double(&scratch) else {
                return .failure(ValueProblem(detail: "\(String(decoding: scratch, as: UTF8.self)) is out of the range of a double"))
            }
            return .success(.double(value))
        case .bool:
            guard c == UInt8(ascii: "t") || c == UInt8(ascii: "f") else { return try mismatch("true or false") }
            return .success(try scanner.readLiteral())
        }
    }
}

/// Number and text helpers shared by the envelope and row decoders.
enum ValueParsing {
    /// A string value for a message: quoted, and cut short when long.
    static func quoted(_ bytes: [UInt8]) -> String {
        let text = String(decoding: bytes.prefix(80), as: UTF8.self)
        return ShownText.quoted(bytes.count > 80 ? text + "…" : text)
    }

    static func jsonKind(_ firstByte: UInt8) -> String {
        switch firstByte {
        case JSONByte.quote: return "a string"
        case JSONByte.openBrace: return "an object"
        case JSONByte.openBracket: return "an array"
        case UInt8(ascii: "t"), UInt8(ascii: "f"): return "a boolean"
        case UInt8(ascii: "n"): return "null"
        case JSONByte.minus, JSONByte.digits: return "a number"
        default: return "invalid JSON"
        }
    }
}

