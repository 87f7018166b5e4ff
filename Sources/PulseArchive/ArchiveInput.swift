/// Where an archive's bytes come from: a file, standard input (a pipe: read once, never
/// reopened or rewound), or memory (tests and fuzzing).
public struct ArchiveInput: Sendable {
    enum Origin: Sendable {
        case file(String)
        case standardInput
        case memory([UInt8])
    }

    let origin: Origin
    /// What messages call the input: the path, or "standard input".
    public let name: String

    public static func file(_ path: String) -> ArchiveInput { ArchiveInput(origin: .file(path), name: path) }
    public static let standardInput = ArchiveInput(origin: .standardInput, name: "standard input")
    public static func bytes(_ bytes: [UInt8], name: String = "<memory>") -> ArchiveInput {
        ArchiveInput(origin: .memory(bytes), name: name)
    }

    /// True when the bytes can be read a second time (a file, memory): the reader then looks
    /// again for the format version after a failure, to name the real cause.
    var canReadAgain: Bool {
        if case .standardInput = origin { return false }
        return true
    }
}
