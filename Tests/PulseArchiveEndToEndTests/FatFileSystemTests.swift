import Foundation
import Testing
@testable import PulseTestSupport
@testable import GadgetbridgeTestSupport

/// Issue 24, point 2, on real FAT file systems (what USB sticks hold): every command that
/// writes a file, on a vfat image (`mkfs.vfat`, mounted with FUSE `fusefat`: no hard links, no
/// no-replace rename, no modes) and a store on an exFAT image (`mkfs.exfat` on a loop device,
/// mounted with FUSE `exfat-fuse`). Skipped where FUSE or the tools are missing, failing under
/// `CI=true` (`.ci/run` installs them). Docs: docs/reliability.md, "Commits on every file system".
@Suite("Backups on FAT file systems (USB sticks)", .serialized)
struct FatFileSystemTests {
    @Test("on vfat: export to a file and to a folder, keygen -o, readiness --svg, a safety backup; never over an existing file, a kill leaves no partial file",
          .enabled(if: Capability.enabled(FatMount.canMountVfat)))
    func filesOnVfat() throws {
        try Capability.require(FatMount.canMountVfat, "a vfat file system (root, /dev/fuse, mkfs.vfat and fusefat: apt-get install dosfstools fusefat)")
        let dir = TemporaryDirectory()
        let store = dir.file("store"), other = dir.file("other")
        try CommitFallbackTests.demo(store, seed: 5)
        try CommitFallbackTests.demo(other, seed: 6)
        let usb = try FatMount(.vfat, image: dir.file("usb.img"), at: dir.file("usb"))
        defer { usb.unmount() }
        let stick = usb.path

        let exported = try CLI.run(["export", "--store", store, "-o", stick + "/a.json.gz"])
        #expect(exported.exitCode == 0, "\(exported.stderr)")
        let first = try CLI.run(["export", "--store", other, "-o", stick])
        let second = try CLI.run(["export", "--store", other, "-o", stick])
        #expect(first.exitCode == 0 && second.exitCode == 0, "\(first.stderr)\(second.stderr)")
        let keygen = try CLI.run(["keygen", "-o", stick + "/key.txt"])
        #expect(keygen.exitCode == 0 && FileBytes.read(stick + "/key.txt").starts(with: Array("# created:".utf8)), "\(keygen.stderr)")
        let chart = try CLI.run(["readiness", "--store", store, "--svg", stick + "/chart.svg"])
        #expect(chart.exitCode == 0 && FileBytes.read(stick + "/chart.svg").starts(with: Array("<svg".utf8)), "\(chart.stderr)")
        for (archive, source) in [(stick + "/a.json.gz", store), (Self.path(first), other), (Self.path(second), other)] {
            let check = try CLI.run(["verify", archive, "--store", source])
            #expect(check.exitCode == 0, "\(archive): \(check.stderr)")
        }

        // Never over an existing file: one there before, one that appears before the commit.
        let kept = FileBytes.read(stick + "/a.json.gz")
        let again = try CLI.run(["export", "--store", other, "-o", stick + "/a.json.gz"])
        #expect(again.exitCode == 1 && again.stderr.contains("already exists") && FileBytes.read(stick + "/a.json.gz") == kept, "\(again.stderr)")
        let theirs = Data("a file the user copied onto the stick meanwhile".utf8)
        let raced = try CommitFallbackTests.paused(["export", "--store", store, "-o", stick + "/b.json.gz"], at: "commit:1", environment: [:]) {
            #expect(FileManager.default.createFile(atPath: stick + "/b.json.gz", contents: theirs))
        }
        #expect(raced.reached && raced.exitCode == 1 && raced.stderr.contains("already exists"), "\(raced.stderr)")
        #expect(FileBytes.read(stick + "/b.json.gz") == Array(theirs))

        // Killed inside the commit: never part of an archive at the name, and the next commit
        // into the stick clears what the kill left.
        try KillPoints.expectStopped(["export", "--store", store, "-o", stick + "/c.json.gz"], at: "commit.placeholder:1", with: SIGKILL)
        #expect(String(decoding: FileBytes.read(stick + "/c.json.gz"), as: UTF8.self).hasPrefix("placeholder of an unfinished commit"))
        let after = try CLI.run(["keygen", "-o", stick + "/key2.txt"])
        #expect(after.exitCode == 0 && !FileManager.default.fileExists(atPath: stick + "/c.json.gz"), "\(after.stderr)")
        #expect(CommitFallbackTests.leftovers(stick).isEmpty, "\(CommitFallbackTests.leftovers(stick))")

        // The safety backup of import --replace, into a store whose backups/ folder is a stick.
        try FileManager.default.createDirectory(atPath: store + "/backups", withIntermediateDirectories: false)
        let backups = try FatMount(.vfat, image: dir.file("backups.img"), at: store + "/backups")
        defer { backups.unmount() }
        let replaced = try CLI.run(["import", Self.path(first), "--store", store, "--replace", "--no-backfill"])
        #expect(replaced.exitCode == 0, "\(replaced.stderr)")
        let saved = (try? FileManager.default.contentsOfDirectory(atPath: backups.path)) ?? []
        #expect(saved.count == 1 && saved[0].hasPrefix("before-replace-"), "\(saved)")
        let inspect = try CLI.run(["inspect", backups.path + "/" + (saved.first ?? "")])
        #expect(inspect.exitCode == 0, "\(inspect.stderr)")
    }

    @Test("$TMPDIR on a vfat stick (FUSE: no O_TMPFILE, a file removed while open kept under a hidden name that fusefat leaves): every command that needs a file without a name refuses, naming the folder, and leaves nothing there; verify of a sound archive is not reported failed",
          .enabled(if: Capability.enabled(FatMount.canMountVfat)))
    func temporaryDirectoryOnVfat() throws {
        try Capability.require(FatMount.canMountVfat, "a vfat file system (root, /dev/fuse, mkfs.vfat and fusefat: apt-get install dosfstools fusefat)")
        let dir = TemporaryDirectory()
        let store = dir.file("store")
        try CommitFallbackTests.demo(store, seed: 9)
        let archive = dir.file("a.json.gz")
        #expect(try CLI.run(["export", "--store", store, "-o", archive]).exitCode == 0)
        dir.write("passphrase", "a passphrase for the stick\n")
        #expect(chmod(dir.file("passphrase"), 0o600) == 0)
        let usb = try FatMount(.vfat, image: dir.file("usb.img"), at: dir.file("usb"))
        defer { usb.unmount() }
        let scratch = usb.path + "/tmp"
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: false)
        for variables in [["TMPDIR": scratch], ["TMPDIR": dir.path, "SQLITE_TMPDIR": scratch]] {
            // (`diff` of archives this small keeps its key runs in memory.)
            for command in [["verify", archive], ["inspect", archive], ["verify", archive, "--store", store],
                            ["export", "--store", store, "-o", "-", "--passphrase-file", dir.file("passphrase")]] {
                // SQLite's directory alone on the stick: only what SQLite keeps there is refused.
                if variables["TMPDIR"] == dir.path && command[0] != "verify" && command[0] != "inspect" { continue }
                let result = try CLI.run(command, environment: variables)
                let said = "\(command.joined(separator: " ")) with \(variables): exit \(result.exitCode): \(result.stderr)"
                // verify says first that it could not finish (the machine's failure, not the archive's).
                let prefix = command[0] == "verify" ? "Error: verify could not finish, for no fault of the archive (which it neither passes nor fails): cannot create " : "Error: cannot create "
                #expect(result.exitCode == 1 && result.stderr.hasPrefix(prefix) && result.stderr.contains("in \(scratch): its file system cannot hold a file without a name"), "\(said)")
                #expect(!result.stdout.contains("FAILED") && result.stdout.isEmpty, "\(said); stdout: \(result.stdout)")
                let left = (try? FileManager.default.contentsOfDirectory(atPath: scratch)) ?? []
                #expect(left.isEmpty, "\(said); left \(left) on the stick")
            }
        }
        // A Gadgetbridge backup is unpacked into a named folder there (SQLite needs a path):
        // removed after inspect and import, though fusefat refuses rmdir of a full folder with
        // EPERM (Foundation's removal gave up, and the ring database stayed on the stick).
        let history = try GadgetbridgeTests.history(dir)
        try GadgetbridgeFixtures.zip(database: history, to: dir.file("gb.zip"))
        for command in [["inspect", dir.file("gb.zip")], ["import", dir.file("gb.zip"), "--store", dir.file("gb-store"), "--timezone", "UTC", "--no-backfill"]] {
            let result = try CLI.run(command, environment: ["TMPDIR": scratch])
            #expect(result.exitCode == 0, "\(command[0]): \(result.stderr)")
            let left = (try? FileManager.default.contentsOfDirectory(atPath: scratch)) ?? []
            #expect(left.isEmpty, "\(command[0]) left \(left) on the stick")
        }
        // Where the folder is fine, the same archive verifies.
        let sound = try CLI.run(["verify", archive, "--store", store])
        #expect(sound.exitCode == 0, "\(sound.stderr)")
    }

    @Test("a store on exFAT: import into a new store, --merge with documents, --replace with its safety backup, then export, keygen and a chart beside it",
          .enabled(if: Capability.enabled(FatMount.canMountExfat)))
    func storeOnExfat() throws {
        try Capability.require(FatMount.canMountExfat, "an exFAT file system (root, /dev/fuse, a loop device, mkfs.exfat and mount.exfat-fuse: apt-get install exfatprogs exfat-fuse)")
        let dir = TemporaryDirectory()
        let other = dir.file("other")
        try CommitFallbackTests.demo(other, seed: 7)
        let usb = try FatMount(.exfat, image: dir.file("usb.img"), at: dir.file("usb"))
        defer { usb.unmount() }
        let stick = usb.path, store = stick + "/store"
        try CommitFallbackTests.demo(store, seed: 8)
        let ours = CommitFallbackTests.documents(store), theirs = CommitFallbackTests.documents(other)
        #expect(!ours.isEmpty && !theirs.isEmpty)

        let archive = try CLI.run(["export", "--store", other, "-o", stick + "/other.json.gz"])
        #expect(archive.exitCode == 0, "\(archive.stderr)")
        let fresh = try CLI.run(["import", stick + "/other.json.gz", "--store", stick + "/fresh", "--no-backfill"])
        #expect(fresh.exitCode == 0 && CommitFallbackTests.documents(stick + "/fresh") == theirs, "\(fresh.stderr)")
        let merged = try CLI.run(["import", stick + "/other.json.gz", "--store", store, "--merge", "--no-backfill"])
        #expect(merged.exitCode == 0 && CommitFallbackTests.documents(store) == ours.union(theirs), "\(merged.stderr)")
        let replaced = try CLI.run(["import", stick + "/other.json.gz", "--store", store, "--replace", "--no-backfill"])
        #expect(replaced.exitCode == 0 && CommitFallbackTests.documents(store) == theirs, "\(replaced.stderr)")
        let saved = (try? FileManager.default.contentsOfDirectory(atPath: store + "/backups")) ?? []
        #expect(saved.count == 1 && saved[0].hasPrefix("before-replace-"), "\(saved)")
        let restored = try CLI.run(["import", store + "/backups/" + (saved.first ?? ""), "--store", dir.file("restored"), "--no-backfill"])
        #expect(restored.exitCode == 0 && CommitFallbackTests.documents(dir.file("restored")) == ours.union(theirs), "\(restored.stderr)")

        let export = try CLI.run(["export", "--store", store, "-o", stick])
        #expect(export.exitCode == 0, "\(export.stderr)")
        let check = try CLI.run(["verify", Self.path(export), "--store", store])
        #expect(check.exitCode == 0, "\(check.stderr)")
        let keygen = try CLI.run(["keygen", "-o", stick + "/key.txt"])
        let chart = try CLI.run(["readiness", "--store", store, "--svg", stick + "/chart.svg"])
        #expect(keygen.exitCode == 0 && chart.exitCode == 0, "\(keygen.stderr)\(chart.stderr)")
        let kept = FileBytes.read(stick + "/chart.svg")
        let again = try CLI.run(["readiness", "--store", store, "--svg", stick + "/chart.svg"])
        #expect(again.exitCode == 1 && again.stderr.contains("already exists") && FileBytes.read(stick + "/chart.svg") == kept, "\(again.stderr)")
        // tables refusing two attachments exFAT holds as one (Photo.JPG, photo.jpg) leaves no
        // staging folder: its open files are closed before the folder goes (exfat-fuse kept a
        // removed open file under a hidden name, and the folder stayed).
        let plain = dir.file("twins.json")
        #expect(try CLI.shell("gzip -dc '\(stick)/other.json.gz' > '\(plain)'").exitCode == 0)
        var content = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: plain))) as? [String: Any])
        let attachment = ["file": "Photo.JPG", "base64": "aGVsbG8="]
        content["attachments"] = [attachment, attachment.merging(["file": "photo.jpg"]) { $1 }]
        content["counts"] = nil
        try JSONSerialization.data(withJSONObject: content).write(to: URL(fileURLWithPath: plain))
        let twins = try CLI.run(["tables", plain, "-o", stick + "/twins"])
        #expect(twins.exitCode == 1 && twins.stderr.contains("photo.jpg"), "\(twins.stderr)")
        for directory in [stick, store, store + "/backups"] {
            #expect(CommitFallbackTests.leftovers(directory).isEmpty, "\(directory): \(CommitFallbackTests.leftovers(directory))")
        }
        let staging = try FileManager.default.contentsOfDirectory(atPath: stick).filter { $0.contains("staging") }
        #expect(staging.isEmpty, "left \(staging) on the stick")
    }

    /// The path an export to a folder printed.
    static func path(_ result: CLI.Result) -> String {
        result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}

/// A FAT file system in an image file, mounted with FUSE on a new directory for one test.
final class FatMount {
    enum Kind {
        /// `mkfs.vfat`, `fusefat`: needs only /dev/fuse.
        case vfat
        /// `mkfs.exfat`, `exfat-fuse` (a `fuseblk` file system): needs a loop device too.
        case exfat
    }

    let path: String
    private let loopDevice: String?
    private var mounted = true

    /// Makes a 64 MB image at `image` and mounts it at `path`, which it creates.
    init(_ kind: Kind, image: String, at path: String) throws {
        self.path = path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        var device: String?
        switch kind {
        case .vfat:
            try Self.shell("truncate -s 64M '\(image)' && mkfs.vfat '\(image)' && fusefat -o rw+ '\(image)' '\(path)' >/dev/null 2>&1 </dev/null")
        case .exfat:
            try Self.shell("truncate -s 64M '\(image)' && mkfs.exfat '\(image)'")
            let loop = try Self.shell("losetup -f --show '\(image)'").trimmingCharacters(in: .whitespacesAndNewlines)
            device = loop
            do {
                try Self.shell("mount.exfat-fuse '\(loop)' '\(path)' >/dev/null 2>&1 </dev/null")
            } catch {
                _ = try? Self.shell("losetup -d '\(loop)'")
                throw error
            }
        }
        loopDevice = device
        // The mount is the test's own: /proc/mounts lists it now, or the mount failed.
        let mounts = (try? String(contentsOfFile: "/proc/mounts", encoding: .utf8)) ?? ""
        guard mounts.split(separator: "\n").contains(where: { $0.split(separator: " ").dropFirst().first.map(String.init) == path }) else {
            throw MountError(description: "\(path) is not a mount point after mounting \(image)")
        }
    }

    deinit { unmount() }

    /// Unmounts without waiting on anything: `fusermount -u`, and if the mount is still busy a
    /// lazy unmount (detached at once, gone when its last user is), then the loop device freed.
    func unmount() {
        guard mounted else { return }
        mounted = false
        if (try? Self.shell("fusermount -u '\(path)' || umount '\(path)'")) == nil {
            _ = try? Self.shell("umount -l '\(path)'")
        }
        if let loopDevice { _ = try? Self.shell("losetup -d '\(loopDevice)'") }
    }

    struct MountError: Error, CustomStringConvertible {
        let description: String
    }

    /// Runs `command` with `/bin/sh` and returns its output. Spawned and waited for here, not
    /// through `Process`: a FUSE daemon that the command leaves running kept Foundation's
    /// `waitUntilExit` from ever seeing the shell end. The output goes through a file, which
    /// the daemon (its own output sent to /dev/null by the commands above) does not hold.
    @discardableResult
    private static func shell(_ command: String) throws -> String {
        let log = TemporaryDirectory()
        let output = log.file("output")
        let arguments = ["/bin/sh", "-c", "(\(command)) >'\(output)' 2>&1 </dev/null"]
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, "/bin/sh", nil, nil, &argv, environ)
        guard spawned == 0 else { throw MountError(description: "cannot start /bin/sh: \(String(cString: strerror(spawned)))") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let text = String(decoding: FileBytes.read(output), as: UTF8.self)
        guard status == 0 else { throw MountError(description: "`\(command)` failed (status \(status)): \(text)") }
        return text
    }

    /// Whether this machine can mount each kind: tried once, on a small image, unmounted at once.
    static let canMountVfat = canMount(.vfat)
    static let canMountExfat = canMount(.exfat)

    private static func canMount(_ kind: Kind) -> Bool {
        guard getuid() == 0, FileManager.default.fileExists(atPath: "/dev/fuse") else { return false }
        let dir = TemporaryDirectory()
        guard let mount = try? FatMount(kind, image: dir.file("probe.img"), at: dir.file("probe")) else { return false }
        mount.unmount()
        return true
    }
}
