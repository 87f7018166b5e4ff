#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A file written under a temporary name beside its target and renamed into place only when
/// complete and flushed, so the target never holds a partial file, even after kill -9.
public final class AtomicFile {
    public let targetPath: String
    public let temporaryPath: String
    public let file: SystemFile
    private let replacesExisting: Bool
    private var committed = false

    /// - Parameter replacesExisting: allow replacing an existing target (a document of the
    ///   store's own tree); archives and charts never do, since the path is the user's.
    /// - Throws: `SystemError.alreadyExists` when the target exists and may not be replaced;
    ///   `.io` when the directory is not writable.
    public init(targetPath: String, replacesExisting: Bool = false) throws {
        self.targetPath = targetPath
        self.replacesExisting = replacesExisting
        if !replacesExisting, access(targetPath, F_OK) == 0 {
            throw SystemError(.alreadyExists, "\(targetPath) already exists")
        }
        let directory = Self.directory(of: targetPath)
        let name = targetPath.split(separator: "/").last.map(String.init) ?? targetPath
        Self.removeAbandonedPartials(of: name, in: directory)
        let temporaryPath = "\(directory)/.\(name).partial-\(getpid())"
        self.temporaryPath = temporaryPath
        _ = unlink(temporaryPath)
        self.file = try InterruptCleanup.registering {
            (try SystemFile.createExclusive(temporaryPath, reportedAs: targetPath), path: temporaryPath)
        }
    }

    deinit {
        if !committed { _ = unlink(temporaryPath) }
        InterruptCleanup.unregister(temporaryPath)
    }

    /// Flushes, closes and renames the file into place, then flushes the directory entry.
    /// - Parameter alternatives: names to take, in order, when a file of the target's name
    ///   appeared meanwhile (a second export in the same minute); none by default.
    /// - Returns: the path the file now has.
    @discardableResult
    public func commit(alternatives: some Sequence<String> = [String]()) throws -> String {
        try file.sync()
        try file.close()
        var committedPath = targetPath
        if replacesExisting {
            guard rename(temporaryPath, targetPath) == 0 else {
                throw SystemError(.io, "cannot create \(targetPath): \(errnoText())")
            }
        } else {
            // link(2) fails if the target appeared meanwhile: never replace someone else's file.
            var names = alternatives.makeIterator()
            while link(temporaryPath, committedPath) != 0 {
                guard errno == EEXIST, let next = names.next() else {
                    throw SystemError(.io, "cannot create \(committedPath): \(errnoText())")
                }
                committedPath = next
            }
            _ = unlink(temporaryPath)
        }
        committed = true
        InterruptCleanup.unregister(temporaryPath)
        let directory = open(Self.directory(of: targetPath), O_RDONLY | O_CLOEXEC)
        if directory >= 0 {
            _ = fsync(directory)
            _ = close(directory)
        }
        return committedPath
    }

    /// Removes partial files of `name` whose writer process no longer exists (killed exports).
    static func removeAbandonedPartials(of name: String, in directory: String) {
        guard let dir = opendir(directory) else { return }
        defer { closedir(dir) }
        let prefix = ".\(name).partial-"
        var abandoned: [String] = []
        while let entry = readdir(dir) {
            let entryName = withUnsafePointer(to: entry.pointee.d_name) {
                $0.withMemoryRebound(to: CChar.self, capacity: 256) { String(cString: $0) }
            }
            guard entryName.hasPrefix(prefix), let pid = Int32(entryName.dropFirst(prefix.count)) else { continue }
            if kill(pid, 0) != 0 && errno == ESRCH { abandoned.append(entryName) }
        }
        for entryName in abandoned { _ = unlink("\(directory)/\(entryName)") }
    }

    static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }
}
