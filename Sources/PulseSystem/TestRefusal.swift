#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// File-system primitives a test can make the process treat as refused by the file system, so
/// that the fallbacks a FAT file system (a USB stick) needs run in every CI, also where no such
/// file system can be mounted (docs/reliability.md, "Commits on every file system").
///
/// Inert unless the environment variable `PULSE_ARCHIVE_TEST_REFUSE` is set when the process
/// starts (read once, by the CLI's first step): a comma-separated list of `link` (hard links: `link(2)` fails with EPERM,
/// as on vfat and exFAT) and `rename-noreplace` (the no-replace rename fails with EINVAL, as
/// on a FUSE file system without it), `thread` (the second deflate thread cannot be
/// started, as under an address-space limit), and `placeholder-write` (writing a commit's
/// placeholder line fails with ENOSPC, as on a full stick). An unknown name ends the process with status 70 and a
/// line on standard error, so that a misspelt test never tests the path it did not mean to.
package enum TestRefusal {
    /// The variable's name.
    package static let variable = "PULSE_ARCHIVE_TEST_REFUSE"

    package enum Primitive: String, CaseIterable, Sendable {
        case link
        case renameNoReplace = "rename-noreplace"
        /// The second thread of a group (a name ending " 2": `pulse-archive deflate 2`) cannot
        /// be started, as under `ulimit -v` with many threads.
        case thread
        /// Writing a commit's placeholder line fails with ENOSPC, as on a full stick.
        case placeholderWrite = "placeholder-write"
    }

    private static let refused: Set<Primitive> = {
        guard let raw = getenv(variable) else { return [] }
        var primitives: Set<Primitive> = []
        for name in String(cString: raw).split(separator: ",") {
            guard let primitive = Primitive(rawValue: String(name)) else {
                let line = "test refusal: unknown primitive '\(name)' in \(variable) (known: "
                    + Primitive.allCases.map(\.rawValue).joined(separator: ", ") + ")\n"
                _ = Array(line.utf8).withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
                exit(70)
            }
            primitives.insert(primitive)
        }
        return primitives
    }()

    /// Reads the variable now (the CLI's first step), so that an unknown name ends the process
    /// before it has written anything.
    package static func readAtStart() { _ = refused }

    /// Whether a test asked the process to treat `primitive` as refused.
    package static func refuses(_ primitive: Primitive) -> Bool {
        refused.contains(primitive)
    }
}
