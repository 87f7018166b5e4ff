import Foundation
import PulseArchive

/// What a file of the document tree is (documents.md: versions and quarantine).
public enum DocumentState: Sendable, Equatable {
    /// At the current schema version and readable as its type.
    case current
    /// An older schema version, readable as its type.
    case older(version: Int)
    /// A newer schema version: quarantined, never rewritten or merged.
    case newer(version: Int)
    /// Not JSON, no `schemaVersion`, or not decodable as its type.
    case unreadable(reason: String)
    /// A tombstone under `Stubs/`.
    case stub

    public var isQuarantined: Bool {
        if case .newer = self { return true }
        return false
    }

    public var label: String {
        switch self {
        case .current: return "current"
        case .older: return "older"
        case .newer: return "newer"
        case .unreadable: return "unreadable"
        case .stub: return "stub"
        }
    }
}

/// One file of a tree, read and classified.
public struct ClassifiedDocument: Sendable {
    public let path: DocumentPath
    public let bytes: [UInt8]
    /// The parsed JSON object, when the file holds one.
    public let node: JSONNode?
    public let state: DocumentState

    /// The original bytes when they are not the canonical encoding of `node`.
    public var nonCanonicalBytes: [UInt8]? {
        guard let node else { return nil }
        return DocumentCoder.encode(node) == bytes ? nil : bytes
    }

    /// `updatedAt` in milliseconds, or nil when absent or unreadable.
    public var updatedAt: Int64? { node?["updatedAt"]?.stringValue.flatMap(ArchiveDate.parse) }
}

public enum DocumentClassifier {
    public static func classify(_ path: DocumentPath, bytes: [UInt8]) -> ClassifiedDocument {
        guard bytes.count <= ArchiveLimits.standard.maxWholeValueBytes else {
            // Carried byte for byte (`documentFiles`), as the reader would not hold it as a tree.
            return ClassifiedDocument(path: path, bytes: bytes, node: nil, state: .unreadable(
                reason: "larger than \(ArchiveLimits.standard.maxWholeValueBytes) bytes, the most a document read as JSON may hold"))
        }
        guard let node = try? JSONNode.parse(bytes), node.objectValue != nil else {
            return ClassifiedDocument(path: path, bytes: bytes, node: nil, state: .unreadable(reason: "not a JSON object"))
        }
        return ClassifiedDocument(path: path, bytes: bytes, node: node, state: state(of: node, at: path))
    }

    /// A file over the whole-value limit, by its size alone: unreadable as a document, so not read.
    public static func classifyUnread(_ path: DocumentPath) -> ClassifiedDocument {
        ClassifiedDocument(path: path, bytes: [], node: nil, state: .unreadable(
            reason: "larger than \(ArchiveLimits.standard.maxWholeValueBytes) bytes, the most a document read as JSON may hold"))
    }

    public static func classify(_ path: DocumentPath, node: JSONNode) -> ClassifiedDocument {
        ClassifiedDocument(path: path, bytes: DocumentCoder.encode(node), node: node, state: state(of: node, at: path))
    }

    static func state(of node: JSONNode, at path: DocumentPath) -> DocumentState {
        if path.isStub { return .stub }
        guard let version = node["schemaVersion"]?.integerValue else { return .unreadable(reason: "no schemaVersion") }
        let current = path.kind == .split ? DocumentSchema.currentSplitVersion : DocumentSchema.currentWorkoutVersion
        if version > current { return .newer(version: Int(version)) }
        do {
            switch path.kind {
            case .split: _ = try DocumentCoder.decode(SplitDocument.self, from: node)
            case .workout: _ = try DocumentCoder.decode(WorkoutDocument.self, from: node)
            }
        } catch {
            return .unreadable(reason: "not a valid \(path.kind) document: \(Self.describe(error))")
        }
        return version == current ? .current : .older(version: Int(version))
    }

    private static func describe(_ error: Error) -> String {
        switch error {
        case DecodingError.keyNotFound(let key, _): return "missing \"\(key.stringValue)\""
        case DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context), DecodingError.dataCorrupted(let context):
            let path = context.codingPath.map(\.stringValue).joined(separator: ".")
            return path.isEmpty ? context.debugDescription : "\(path): \(context.debugDescription)"
        default: return "\(error)"
        }
    }
}
