#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A file written under a temporary name beside its target and renamed into place only when
/// complete and flushed, so the target never holds a partial file, even after kill -9. A target
/// the user names is never replaced, on any file system (`NoReplaceMove`).
public final class AtomicFile {
    public let targetPath: String
    public let temporaryPath: String
    public let file: SystemFile
    /// The folder, opened once: the partial file is made in it and every later step (the
    /// commit, the removal) names entries relative to it, so a folder swapped for a link while
    /// the file is written is not followed. (Through its path, an export once committed a file
    /// planted in the link's folder, exit 0, and left the archive behind as a partial file.)
    private let directory: Int32
    private let targetName: String
    private let temporaryName: String
    private let replacesExisting: Bool
    private let announced: Bool
    private var committed = false

    /// Says to the sweeps of other processes that the partial file is being written
    /// (`LiveEntry`), until the commit or the end.
    private var liveLock: Int32?

    /// - Parameter replacesExisting: allow replacing an existing target (a document of the
    ///   store's own tree); archives and charts never do, since the path is the user's.
    /// - Parameter announced: an interruption after the commit says the file was written in
    ///   full; false for a scratch file that is not the command's result (`export -o -`'s copy).
    /// - Throws: `SystemError.alreadyExists` when the target exists and may not be replaced;
    ///   `.io` when the directory is not writable.
    public init(targetPath: String, replacesExisting: Bool = false, announced: Bool = true) throws {
        self.targetPath = targetPath
        self.replacesExisting = replacesExisting
        self.announced = announced
        // `DIR/` names no file: its last component would be taken for the name, inside itself.
        guard !targetPath.hasSuffix("/") else { throw SystemError(.io, "cannot create \(targetPath): it names a folder, not a file") }
        let folder = Self.directory(of: targetPath)
        let name = targetPath.split(separator: "/").last.map(String.init) ?? targetPath
        targetName = name
        // First: a killed commit's placeholder at this very name is not the user's file.
        Self.removeAbandonedPartials(in: folder)
        let directory = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard directory >= 0 else { throw SystemError(.io, "cannot create \(targetPath): \(errnoText())") }
        self.directory = directory
        // lstat, not access: a link there (dangling too) is a file of that name, refused now
        // rather than after the work, when the commit would find the name taken.
        var info = stat()
        let found = fstatat(directory, name, &info, AT_SYMLINK_NOFOLLOW) == 0
        let failure = errno
        do {
            // A name the file system cannot hold is refused now, not by the commit after the work.
            if !found && failure == ENAMETOOLONG {
                errno = failure
                throw SystemError(.io, "cannot create \(targetPath): \(errnoText())")
            }
            if !replacesExisting && found {
                throw SystemError(.alreadyExists, "\(targetPath) already exists")
            }
        } catch {
            _ = close(directory)
            throw error
        }
        let temporaryName = PrivateFiles.temporaryName(beside: name, suffix: "\(Self.partialMarker)\(getpid())")
        self.temporaryName = temporaryName
        let temporaryPath = folder + "/" + temporaryName
        self.temporaryPath = temporaryPath
        _ = unlinkat(directory, temporaryName, 0)
        do {
            self.file = try InterruptCleanup.registering {
                (try SystemFile.createExclusive(temporaryName, in: directory, path: temporaryPath, reportedAs: targetPath), path: temporaryPath)
            }
        } catch {
            _ = close(directory)
            throw error
        }
        liveLock = LiveEntry.hold(temporaryPath)
    }

    deinit {
        if !committed { _ = unlinkat(directory, temporaryName, 0) }
        _ = close(directory)
        LiveEntry.release(liveLock)
        InterruptCleanup.unregister(temporaryPath)
    }

    /// Flushes, closes and renames the file into place, then flushes the directory entry.
    /// - Parameter alternatives: names to take, in order, when a file of the target's name
    ///   appeared meanwhile (a second export in the same minute); none by default.
    /// - Returns: the path the file now has.
    /// - Throws: `SystemError.alreadyExists` when a file appeared at the target (and at every
    ///   alternative) meanwhile: it is never replaced.
    @discardableResult
    public func commit(alternatives: some Sequence<String> = [String]()) throws -> String {
        try file.sync()
        try file.close()
        TestPausePoint.reached("commit")
        var committedPath = targetPath
        // With interruption held off, and not at all once a stop signal is pending: an
        // interrupted command leaves the whole file with its announcement, or nothing.
        try InterruptCleanup.keeping([temporaryPath]) {
            if replacesExisting {
                guard renameat(directory, temporaryName, directory, targetName) == 0 else {
                    throw SystemError(.io, "cannot create \(targetPath): \(errnoText())")
                }
            } else {
                // Never replace someone else's file: each primitive fails if the name is taken.
                // The alternatives are names in the same folder.
                var names = alternatives.makeIterator()
                var committedName = targetName
                while try NoReplaceMove.move(temporaryName, to: committedName, in: directory, shown: committedPath) == .targetExists {
                    guard let next = names.next() else {
                        throw SystemError(.alreadyExists, "\(committedPath) already exists (it appeared while this file was written, and is left as it is)")
                    }
                    committedPath = next
                    committedName = next.split(separator: "/").last.map(String.init) ?? next
                }
            }
            committed = true
            return announced ? "\(committedPath) was written in full" : nil
        }
        LiveEntry.release(liveLock)
        liveLock = nil
        _ = fsync(directory)
        return committedPath
    }

    /// Removes the partial files in `directory` whose writer process no longer exists (killed
    /// commits), and the placeholder a commit killed while it used one left at its target's
    /// name (`NoReplaceMove`, recognised by the line naming its partial file), placeholder first.
    /// Only names this tool makes are touched: a user's `.report.pdf.partial-1234` is theirs.
    /// - Parameters:
    ///   - targets: which partial files to consider, by the name of the file each was to
    ///     become (`prune` takes only those of backups); all by default.
    ///   - dryRun: find them, remove nothing.
    /// - Returns: the names removed (or, in a dry run, to be removed): the placeholders, then
    ///   the partial files.
    @discardableResult
    package static func removeAbandonedPartials(in directory: String, targets: (String) -> Bool = { _ in true }, dryRun: Bool = false) -> [String] {
        let entries = Self.entries(of: directory)
        // Only a regular file is an export's partial file: a folder or a link of that name is
        // someone else's, left alone and not reported as removed (prune said it removed a
        // folder it could not, every run).
        let abandoned = entries.filter { entryName in
            guard let (target, pid) = partialFile(entryName), targets(target) else { return false }
            var info = stat()
            guard lstat("\(directory)/\(entryName)", &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return false }
            return LiveEntry.isAbandoned("\(directory)/\(entryName)", writer: pid)
        }
        guard !abandoned.isEmpty else { return [] }
        let placeholders = entries.filter { entryName in abandoned.contains { NoReplaceMove.isPlaceholder("\(directory)/\(entryName)", for: $0) } }
        guard !dryRun else { return placeholders + abandoned }
        // What went, as the system says: one that could not be removed is not reported so.
        return (placeholders + abandoned).filter { unlink("\(directory)/\($0)") == 0 || errno == ENOENT }
    }

    /// Whether `entryName` is one of this tool's partial files (`.<name>.partial-pulse-archive-<pid>`).
    package static func isPartialFile(_ entryName: String) -> Bool {
        partialFile(entryName) != nil
    }

    /// The name a partial file was to take, and its writer's pid; nil for any other name.
    private static func partialFile(_ entryName: String) -> (target: String, pid: Int32)? {
        // The pid as a writer writes it (digits, no sign, no leading zero): `-+999996` or
        // `-00999995` is someone else's name, never swept.
        guard entryName.hasPrefix("."), let marker = entryName.range(of: partialMarker, options: .backwards),
              let pid = Int32(entryName[marker.upperBound...]), pid > 0, String(pid) == entryName[marker.upperBound...] else { return nil }
        return (String(entryName[entryName.index(after: entryName.startIndex)..<marker.lowerBound]), pid)
    }

    /// Between the target's name and the writer's pid in a partial file's name: says whose
    /// file it is to a person and to the sweep.
    static let partialMarker = ".partial-pulse-archive-"

    private static func entries(of directory: String) -> [String] {
        guard let dir = opendir(directory) else { return [] }
        defer { closedir(dir) }
        return PrivateFiles.entryNames(readFrom: dir)
    }

    static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }
}
