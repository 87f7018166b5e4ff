import Foundation
import Testing
@testable import PulseTestSupport
@testable import PulseStoreTestSupport

/// The sweeps that remove what killed runs left (partial exports, scratch directories in
/// `$TMPDIR`, `tables`' staging folders) tell a dead writer by the pid in an entry's name. A
/// writer in another PID namespace (a container sharing the folder) or on another host has a
/// pid that is no process here, and a review saw a sweep remove a running export's files. The
/// writer holds an exclusive `flock` on each such entry; a sweep leaves an entry whose lock is
/// held. Here the test process holds the lock of an entry named with a dead pid, as that writer
/// would (deterministic; no namespace needed), and checks the writers really hold theirs.
@Suite("Temporary entries of a live writer elsewhere (another PID namespace, another host) are never swept")
struct LiveEntryTests {
    /// An exclusive lock on `path`, held until `release`, as a live writer holds its entry's.
    final class HeldLock {
        private var descriptor: Int32

        init(_ path: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
            descriptor = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
            try #require(descriptor >= 0 && flock(descriptor, LOCK_EX | LOCK_NB) == 0, "cannot lock \(path): \(errno)", sourceLocation: sourceLocation)
        }

        func release() {
            if descriptor >= 0 { close(descriptor) }
            descriptor = -1
        }

        deinit { release() }
    }

    /// Whether another process holds `path`'s lock (it cannot be taken now).
    static func isHeld(_ path: String) -> Bool {
        let descriptor = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        return flock(descriptor, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK
    }

    @Test("a backup's partial file named with a dead pid but locked is left by prune and by an export's sweep, listed as ignored; unlocked, prune removes it and says so")
    func lockedPartialFile() throws {
        let dir = try PruneTests.directory(["2026-03-01-1200", "2026-03-02-1200"])
        let partial = "." + PruneTests.name("2026-03-03-1200") + ".partial-pulse-archive-\(try SecretsAndSignalsTests.deadProcessID())"
        dir.write(partial, "half an archive")
        let lock = try HeldLock(dir.file(partial))
        let held = try CLI.run(["prune", dir.path, "--keep-last", "5", "--json"])
        #expect(held.exitCode == 0 && (held.json["ignored"] as? [String]) == [partial] && (held.json["abandoned"] as? [String]) == [], "\(held.stdout)")
        let store = TemporaryDirectory()
        try StoreFixtures.demoStore(store.file("s"), days: 2)
        let export = try CLI.run(["export", "--store", store.file("s"), "-o", dir.path, "-q"])
        #expect(export.exitCode == 0, "\(export.stderr)")
        #expect(FileManager.default.fileExists(atPath: dir.file(partial)), "a locked partial file was swept")
        lock.release()
        let freed = try CLI.run(["prune", dir.path, "--keep-last", "5", "--json"])
        #expect(freed.exitCode == 0 && (freed.json["abandoned"] as? [String]) == [partial] && (freed.json["ignored"] as? [String]) == [], "\(freed.stdout)")
        #expect(!FileManager.default.fileExists(atPath: dir.file(partial)))
    }

    @Test("a scratch directory in $TMPDIR named with a dead pid but locked is left by every command's sweep; unlocked, the next command removes it")
    func lockedScratchDirectory() throws {
        let dir = TemporaryDirectory()
        let scratch = dir.file("tmp")
        let entry = scratch + "/pulse-archive-export-\(try SecretsAndSignalsTests.deadProcessID())-Ab12Cd"
        try FileManager.default.createDirectory(atPath: entry + "/inside", withIntermediateDirectories: true)
        let lock = try HeldLock(entry)
        try CLI.shell("\"$PA\" keygen -o key.txt >/dev/null && \"$PA\" keygen -y key.txt >/dev/null", environment: ["TMPDIR": scratch], in: dir.path)
        #expect(FileManager.default.fileExists(atPath: entry + "/inside"), "a locked scratch directory was swept")
        lock.release()
        try CLI.shell("\"$PA\" keygen -y key.txt >/dev/null", environment: ["TMPDIR": scratch], in: dir.path)
        #expect(!FileManager.default.fileExists(atPath: entry))
    }

    @Test("a tables staging folder a killed run left (0755, as on a FAT stick) is removed by the next tables beside it whatever folder it writes; one that is locked is left")
    func stagingFolders() throws {
        let dir = TemporaryDirectory()
        let dead = try SecretsAndSignalsTests.deadProcessID()
        let abandoned = dir.file(".first.staging-\(dead)-Ab12Cd"), locked = dir.file(".second.staging-\(dead)-Ef34Gh")
        // 0755, as a FAT or exFAT stick shows every folder (they keep no modes).
        for path in [abandoned, locked] {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o755])
            dir.write(String(path.dropFirst(dir.path.count + 1)) + "/rows.csv", "decrypted rows")
        }
        let lock = try HeldLock(locked)
        let result = try CLI.run(["tables", Repository.sampleFormat2, "-o", dir.file("third"), "-q"])
        #expect(result.exitCode == 0, "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: abandoned), "a dead run's staging folder for another name was left")
        #expect(FileManager.default.fileExists(atPath: locked), "a locked staging folder was swept")
        lock.release()
    }

    @Test("the writers hold their entries' locks while they work: an export's partial file, tables' staging folder; export -o -'s scratch file has no name")
    func writersHoldTheirLocks() throws {
        let dir = TemporaryDirectory()
        try StoreFixtures.demoStore(dir.file("s"), days: 3)
        let scratch = dir.file("tmp")
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: false)
        try FileManager.default.createDirectory(atPath: dir.file("out"), withIntermediateDirectories: false)
        try SecretsAndSignalsTests.whilePaused(["export", "--store", dir.file("s"), "-o", dir.file("out") + "/x.json.gz"], at: "write:1") { _ in
            let partials = try FileManager.default.contentsOfDirectory(atPath: dir.file("out")).filter { $0.contains(".partial-pulse-archive-") }
            #expect(partials.count == 1 && partials.allSatisfy { Self.isHeld(dir.file("out") + "/" + $0) }, "\(partials)")
        }
        try SecretsAndSignalsTests.whilePaused(["export", "--store", dir.file("s"), "-o", "-"], at: "write:1", environment: ["TMPDIR": scratch]) { _ in
            // Nothing to lock, nothing to sweep: the archive is staged in a file without a name.
            let entries = try FileManager.default.contentsOfDirectory(atPath: scratch)
            #expect(entries.isEmpty, "\(entries)")
        }
        try SecretsAndSignalsTests.whilePaused(["tables", Repository.sampleFormat2, "-o", dir.file("t")], at: "commit:1") { _ in
            let staging = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasPrefix(".t.staging-") }
            #expect(staging.count == 1 && staging.allSatisfy { Self.isHeld(dir.file($0)) }, "\(staging)")
        }
    }
}
