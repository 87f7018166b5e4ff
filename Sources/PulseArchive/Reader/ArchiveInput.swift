import PulseAge
import PulseSystem

/// Where an archive's bytes come from: a file, standard input (a pipe: read once, never
/// reopened or rewound), or memory (tests and fuzzing); and the keys that open it when it is
/// encrypted (age).
public struct ArchiveInput {
    enum Origin: Sendable {
        case file(String)
        /// Standard input; `head`: its first bytes, already read by the caller (`import` looks
        /// for a Gadgetbridge file first), read again before the rest.
        case standardInput(head: [UInt8])
        /// A named pipe, a device or a process substitution's `/dev/fd/N`: opened once by the
        /// caller and read once, like standard input (reopening one would find its data gone,
        /// or wait for a writer that has left); `head` as for standard input.
        case stream(OpenFile, head: [UInt8])
        case memory([UInt8])
        case openFile(OpenFile)
    }

    /// A file the caller has open, read from its start each time the reader opens it.
    struct OpenFile: @unchecked Sendable {
        let file: SystemFile
    }

    let origin: Origin
    /// What messages call the input: the path, or "standard input".
    public let name: String
    /// Identities and a passphrase for an encrypted archive; nil when none were given (an
    /// encrypted archive is then refused with what its header says).
    public var keys: AgeKeys?

    public static func file(_ path: String) -> ArchiveInput { ArchiveInput(origin: .file(path), name: path) }

    /// The same input, opened with `keys` when it is encrypted.
    public func decrypting(with keys: AgeKeys?) -> ArchiveInput {
        var input = self
        input.keys = keys
        return input
    }
    /// A file already open (one with no name on disk: a scratch copy), read from its first
    /// byte with positioned reads, so it can be read again; its name is the file's.
    public static func openFile(_ file: SystemFile) -> ArchiveInput {
        ArchiveInput(origin: .openFile(OpenFile(file: file)), name: file.path)
    }

    public static var standardInput: ArchiveInput { standardInput(after: []) }

    /// Standard input whose first bytes the caller has read already: they come first.
    public static func standardInput(after head: [UInt8]) -> ArchiveInput {
        ArchiveInput(origin: .standardInput(head: head), name: "standard input")
    }

    /// The same input with its keys, `head` (its first bytes, read by the caller) put back
    /// before the rest when it is read once (standard input, a stream); other inputs are read
    /// from their start anyway.
    public func reading(after head: [UInt8]) -> ArchiveInput {
        var input = self
        switch origin {
        case .standardInput: input = .standardInput(after: head)
        case .stream(let open, _): input = .stream(open.file, named: name, after: head)
        case .file, .memory, .openFile: return self
        }
        return input.decrypting(with: keys)
    }

    /// A path that is not a regular file (a named pipe, a device, `/dev/fd/N`), already open:
    /// read once, front to back, never reopened.
    public static func stream(_ file: SystemFile, named path: String, after head: [UInt8] = []) -> ArchiveInput {
        ArchiveInput(origin: .stream(OpenFile(file: file), head: head), name: path)
    }

    /// The open stream of an input made by `stream(_:named:after:)`, for a caller that looks
    /// at its first bytes before the reader does; nil for every other input.
    public var openStream: SystemFile? {
        if case .stream(let open, _) = origin { return open.file }
        return nil
    }
    public static func bytes(_ bytes: [UInt8], name: String = "<memory>") -> ArchiveInput {
        ArchiveInput(origin: .memory(bytes), name: name)
    }

    /// True when the bytes can be read a second time (a file, memory): the reader then looks
    /// again for the format version after a failure, to name the real cause.
    var canReadAgain: Bool {
        switch origin {
        case .standardInput, .stream: return false
        case .file, .memory, .openFile: return true
        }
    }
}
