import Foundation
import PulseArchive
import PulseDocuments
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import PulseSystem
import PulseSQLite

/// The store's document tree in archives and imports (documents.md).
///
/// An import never writes into the live tree. It builds the complete new tree beside the store
/// (files it keeps are hard links, so this is cheap; copies where the file system has no hard
/// links), records the pending swap in the same SQL
/// transaction as the tables, and only then renames the three folders into place. A crash
/// after the commit is finished by the next command that takes the store's lock; a failure
/// before it leaves the tree as it was.
package enum StoreDocuments {
    // MARK: - Export

    /// Streams the tree's files into the archive's three document keys.
    struct Content {
        let tree: DocumentTree
        /// The export's limits: a document goes out as JSON only within them.
        var limits = ArchiveLimits.standard

        /// Documents or stubs that are JSON objects, with their original bytes when those are
        /// not canonical (so quarantined files come back byte for byte).
        func forEachDocument(stubs: Bool, _ body: (DocumentPath, JSONNode, [UInt8]?) throws -> Void) throws {
            for path in tree.documents where path.isStub == stubs {
                let document = try tree.classify(path)
                if let node = document.node, travelsAsJSON(node) { try body(path, node, document.nonCanonicalBytes) }
            }
        }

        /// Files that are not JSON objects, byte for byte, read in pieces as they are written.
        func forEachFile(_ body: (DocumentPath, any PieceReadable) throws -> Void) throws {
            for path in tree.documents {
                let document = try tree.classify(path)
                if !(document.node.map(travelsAsJSON) ?? false) { try body(path, try tree.pieces(path)) }
            }
        }

        /// Whether the writer can write the document as JSON within the whole-value limit. Its
        /// text can outgrow its file (the writer escapes `/` as `\/`): one that would pass the
        /// limit so travels as a file, byte for byte, as a larger file does, rather than fail
        /// the whole export.
        private func travelsAsJSON(_ node: JSONNode) -> Bool {
            (try? limits.checkWrittenBack(node, "")) != nil
        }

        var warnings: [ArchiveWarning] {
            tree.skipped.map { ArchiveWarning(table: "documents", message: "documents: \($0) is not a document (skipped, left in place)") }
                + tree.unsafe.map { ArchiveWarning(table: "documents", message: "documents: \($0) is a link or special file (not followed, not archived)") }
                + tree.unnamed.map { ArchiveWarning(table: "documents", message: "documents: \($0) has a name that is not UTF-8 (not archived, left in place)") }
        }
    }

    // MARK: - Staging

    /// Where staged documents go: files under a directory (an import's staging, beside the
    /// store, which the import's document swap links from), or a spool that has no name on
    /// disk (a scratch copy of an archive that may have been encrypted: `inspect`, `verify`).
    package enum Staged {
        case directory(String)
        case spool(DocumentSpool)

        /// Writes a staged document or document file, in pieces: a document file has no size
        /// limit (an export streams it back), a document is bounded by the whole-value limit
        /// where it is read.
        package func write(_ contents: some PieceReadable, at path: DocumentPath) throws {
            switch self {
            case .directory(let root): try StoreDocuments.writeFile(contents, at: path.path, under: root)
            case .spool(let spool): try spool.write(contents, at: path)
            }
        }
    }

    /// Writes a staged document file, creating private folders on the way, in pieces.
    package static func writeFile(_ contents: some PieceReadable, at relative: String, under root: String) throws {
        let absolute = root + "/" + relative
        try PrivateFiles.createDirectory(String(absolute[..<absolute.lastIndex(of: "/")!]))
        let file = try SystemFile.createExclusive(absolute)
        try contents.forEachPiece { try file.write($0) }
        try file.close()
    }

    // MARK: - Building the new tree

    /// Refuses a store whose tree holds links or special files (restoring never follows them),
    /// or names that are not UTF-8 (the new tree could not carry them).
    static func requireSafe(_ tree: DocumentTree) throws {
        if let first = tree.unsafe.first {
            throw StoreError(.refused, "the store's document tree holds a symbolic link or special file at \(tree.root)/\(first); links in a store are never followed: remove it and try again")
        }
        if let first = tree.unnamed.first {
            throw StoreError(.refused, "the store's document tree holds \(tree.root)/\(first), whose name is not UTF-8: no archive can carry it, and the new tree "
                + "would leave it behind; rename or move it and try again")
        }
    }

    /// Refuses a store tree with two documents whose paths differ only in letter case: a merge
    /// would keep both and an export would write an archive that no import accepts.
    static func requireNoCaseCollision(_ tree: DocumentTree) throws {
        if let (earlier, later) = tree.caseCollision() {
            throw StoreError(.refused, "the store's document tree holds \(tree.root)/\(earlier) and \(tree.root)/\(later), whose paths differ only in letter case: "
                + "the app's file system holds them as one file; keep one of them and try again")
        }
    }

    /// Refuses, before anything is written, a document file an archive cannot carry.
    static func requireExportable(_ tree: DocumentTree, limits: ArchiveLimits) throws {
        // No size to check: a file of any size travels in pieces, a document over the
        // whole-value limit as a file (`DocumentTree.classify`).
        try requireNoCaseCollision(tree)
    }

    /// The new tree for a replace: the archive's documents, plus the store's files that are
    /// not documents (they are never deleted).
    static func buildReplacement(archive: String, existing: DocumentTree, into target: String) throws {
        try FileManager.default.moveItem(atPath: archive, toPath: target)
        for relative in existing.skipped {
            try hardLink(existing.absolutePath(relative), to: target + "/" + relative, replacing: false)
        }
        try createFolders(in: target)
    }

    /// The new tree for a merge: the store's files, with the archive's documents merged in.
    static func buildMerge(archive: DocumentTree, existing: DocumentTree, into target: String, now: Int64) throws {
        for relative in existing.documents.map(\.path) + existing.skipped {
            try hardLink(existing.absolutePath(relative), to: target + "/" + relative, replacing: false)
        }
        try createFolders(in: target)
        let storeByID = try index(existing)
        let merger = DocumentMerger(now: now)
        for (id, incoming) in try index(archive) {
            let current = storeByID[id] ?? Sides()
            if incoming.stub != nil || current.stub != nil {
                // A stub beats any live copy: the document stays deleted, the stub is kept.
                if current.stub == nil, let stub = incoming.stub {
                    try hardLink(archive.absolutePath(stub.path.path), to: target + "/" + stub.path.path, replacing: false)
                }
                if let live = current.live, !live.state.isQuarantined, !isUnreadable(live) {
                    try remove(target + "/" + live.path.path)
                }
                continue
            }
            guard let theirs = incoming.live else { continue }
            guard let ours = current.live else {
                try hardLink(archive.absolutePath(theirs.path.path), to: target + "/" + theirs.path.path, replacing: false)
                continue
            }
            switch merger.decide(store: ours, archive: theirs) {
            case .keepStore:
                break
            case .takeArchive:
                try hardLink(archive.absolutePath(theirs.path.path), to: target + "/" + ours.path.path, replacing: true)
            case .merged(let node):
                try remove(target + "/" + ours.path.path)
                try writeFile(DocumentCoder.encode(node), at: ours.path.path, under: target)
            }
        }
    }

    private static func isUnreadable(_ document: ClassifiedDocument) -> Bool {
        if case .unreadable = document.state { return true }
        return false
    }

    /// The live document and the stub of one id.
    struct Sides {
        var live: ClassifiedDocument?
        var stub: ClassifiedDocument?
    }

    static func index(_ tree: DocumentTree) throws -> [String: Sides] {
        var byID: [String: Sides] = [:]
        for path in tree.documents {
            let document = try tree.classify(path)
            if path.isStub { byID[path.id, default: Sides()].stub = document } else { byID[path.id, default: Sides()].live = document }
        }
        return byID
    }

    /// All three folders exist in a new tree, so a half-done swap can tell what is left to do.
    private static func createFolders(in target: String) throws {
        for folder in DocumentTree.folders { try PrivateFiles.createDirectory(target + "/" + folder) }
    }

    /// A second name for a file (the next tree shares the files of the current one and of the
    /// archive's staging, so building it copies nothing), or a copy where the file system has
    /// no hard links (a store on a USB stick).
    private static func hardLink(_ source: String, to destination: String, replacing: Bool) throws {
        try PrivateFiles.createDirectory(String(destination[..<destination.lastIndex(of: "/")!]))
        if replacing { try remove(destination) }
        do {
            try PrivateFiles.linkOrCopy(source, to: destination)
        } catch let error as SystemError {
            throw StoreError(.io, "cannot stage \(destination): \(error.message)")
        }
    }

    private static func remove(_ path: String) throws {
        guard unlink(path) == 0 || errno == ENOENT else { throw StoreError(.io, "cannot remove \(path): \(errnoText())") }
    }

    // MARK: - The swap

    /// Renames the staged tree's folders into the store, retiring the old ones; safe to run
    /// again after a crash at any point.
    /// Nothing but directories of its own is followed, and all is checked before anything
    /// moves: the staging directory, its `tree` and `old` and the folders in `tree` must be
    /// directories, not links (a link would move the store's folders out of it, or another
    /// place's folders in); what `tree` holds must be files and folders only (a link moved in
    /// would be one in the store's tree); and a folder still to be retired must find its place
    /// in `old` free (an interrupted swap leaves it so). One that is not is refused.
    static func completeSwap(store directory: String, staging: String) throws {
        let tree = staging + "/tree", retired = staging + "/old"
        func refuse(_ path: String, _ why: String) -> StoreError {
            StoreError(.refused, "the unfinished document swap of the store \(directory) holds \(path), \(why); it is left as it is (was the store edited by another program?)")
        }
        for path in [staging, tree, retired] + DocumentTree.folders.map({ tree + "/" + $0 }) {
            var info = stat()
            guard lstat(path, &info) == 0 else { continue }
            guard info.st_mode & S_IFMT == S_IFDIR else { throw refuse(path, "which is not a directory") }
        }
        guard exists(staging) else { return }  // nothing was left to move
        if exists(tree) {
            let staged = try DocumentTree(scanning: tree)
            if let link = staged.unsafe.first { throw refuse(tree + "/" + link, "a link or special file") }
        }
        for folder in DocumentTree.folders where exists(tree + "/" + folder) && exists(directory + "/" + folder) && exists(retired + "/" + folder) {
            throw refuse(retired + "/" + folder, "where the store's \(folder) was to be retired")
        }
        try PrivateFiles.createDirectory(retired)
        for folder in DocumentTree.folders {
            let incoming = tree + "/" + folder, current = directory + "/" + folder
            guard exists(incoming) else { continue }  // already moved in
            if exists(current) {
                guard rename(current, retired + "/" + folder) == 0 else {
                    throw StoreError(.io, "cannot retire \(current): \(errnoText())")
                }
            }
            guard rename(incoming, current) == 0 else { throw StoreError(.io, "cannot move \(incoming) into place: \(errnoText())") }
        }
        let fd = open(directory, O_RDONLY | O_CLOEXEC)
        if fd >= 0 { _ = fsync(fd); _ = close(fd) }
    }

    private static func exists(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0
    }
}

extension PulseStore {
    /// Finishes document swaps that an import committed but did not complete (a crash).
    func completePendingDocumentSwaps() throws {
        let pending = try database.prepare(#"SELECT "staging" FROM "documentSwaps""#)
        var stagings: [String] = []
        while try pending.step() { stagings.append(pending.text(at: 0)) }
        for staging in stagings {
            // Only a name an import gives its staging directory, inside the store: the swap
            // moves and removes folders by it (`StoreSchema.readabilityProblem` refuses a store
            // that records any other before this runs).
            guard StoreSchema.isStagingName(staging) else {
                throw StoreError(.incompatibleStore, "the store \(directory) records an unfinished document swap from \(ShownText.quoted(staging)), a name this tool never gives one (was the store edited by another program?)")
            }
            // The swap and its record's removal are one step for an interruption: one that
            // came while the trees were being moved (the directory's fsync can take a while)
            // ended the process with the swap half done and the whole staging folder (the
            // archive's tables, 100 MB and more) left in the store, said to be committed.
            // Done, the staging directory is garbage again: an interruption from here on
            // removes it.
            try InterruptCleanup.uninterrupted {
                TestPausePoint.reached("documents.swap")
                try StoreDocuments.completeSwap(store: directory, staging: directory + "/" + staging)
                try database.prepare(#"DELETE FROM "documentSwaps" WHERE "staging" = ?"#).run([.string(staging)])
                InterruptCleanup.register(directory + "/" + staging)
            }
            PrivateFiles.remove(directory + "/" + staging)
        }
    }
}

extension PulseStore {
    /// Writes one document into the store's tree in the canonical encoding, atomically (a
    /// temporary file beside it, renamed into place). An existing file is replaced.
    public static func writeDocument(_ node: JSONNode, at path: DocumentPath, storeDirectory: String) throws {
        let target = storeDirectory + "/" + path.path
        let bytes = DocumentCoder.encode(node)
        try ArchiveLimits.standard.checkBase64Payload(bytes.count, "documents: \(path.path)")
        try PrivateFiles.createDirectory(String(target[..<target.lastIndex(of: "/")!]))
        // Part of the store, not a command's result: a signal after it still says what the
        // command's own commit made permanent (the store's rows), not "…json was written in full".
        let file = try AtomicFile(targetPath: target, replacesExisting: true, announced: false)
        try bytes.withUnsafeBytes { try file.file.write($0) }
        try file.commit()
    }
}
