import CSystemCalls
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The system calls Swift's platform modules do not declare, wrapped once (CSystemCalls).
package enum SystemCalls {
    /// The outcome of a no-replace rename.
    package enum NoReplaceRename: Equatable {
        case renamed
        /// `to` exists: nothing was renamed.
        case targetExists
        /// The file system or system has no no-replace rename; `errno` says which.
        case unsupported(errno: Int32)
        case failed(errno: Int32)
    }

    /// Renames `from` to `to` in one step unless `to` exists (Linux `renameat2(RENAME_NOREPLACE)`,
    /// Apple `renameatx_np(RENAME_EXCL)`), both relative to `directory` (a folder's descriptor).
    package static func renameNoReplace(_ from: String, _ to: String, in directory: Int32 = AT_FDCWD) -> NoReplaceRename {
        if pulse_rename_noreplace(directory, from, to) == 0 { return .renamed }
        let failure = errno
        switch failure {
        case EEXIST: return .targetExists
        case EINVAL, ENOSYS, ENOTSUP, EOPNOTSUPP: return .unsupported(errno: failure)
        default: return .failed(errno: failure)
        }
    }

    /// Lets the calling thread yield its core to the process's other threads when they compete
    /// (Linux: nice 5 for this thread alone, as Linux keeps a nice value per thread; Apple: the
    /// utility QoS class). For helper threads that must not slow the thread that paces them:
    /// the deflate threads, which otherwise take two thirds of the JSON thread's core.
    /// Best effort: a refusal changes nothing.
    package static func lowerCurrentThreadPriority() {
        #if os(Linux)
        _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, 5)
        #elseif canImport(Darwin)
        _ = pthread_set_qos_class_self_np(QOS_CLASS_UTILITY, 0)
        #endif
    }

    /// The largest file this process may write (`ulimit -f`), in bytes; nil when unlimited.
    package static var fileSizeLimit: Int64? {
        let limit = pulse_file_size_limit()
        return limit < 0 ? nil : Int64(limit)
    }

    /// Turns core dumps off for the rest of the process (RLIMIT_CORE 0, and not dumpable on Linux).
    package static func disableCoreDumps() -> Bool { pulse_disable_core_dumps() == 0 }

    /// Whether the process may dump core, where the system says (Linux); nil elsewhere.
    package static var isDumpable: Bool? {
        let state = pulse_is_dumpable()
        return state < 0 ? nil : state != 0
    }

    /// An unnamed read-write file in `directory` (Linux `O_TMPFILE`), or nil with `errno` set
    /// where the file system cannot make one.
    package static func openUnnamed(in directory: String) -> Int32? {
        let fd = pulse_open_unnamed(directory)
        return fd >= 0 ? fd : nil
    }

    /// Whether `directory` can hold an unnamed file (`openUnnamed`): one is made and closed.
    package static func makesUnnamedFiles(in directory: String) -> Bool {
        guard let fd = openUnnamed(in: directory) else { return false }
        _ = close(fd)
        return true
    }

    /// Whether `path` is on a FUSE file system (Linux; false elsewhere or when unknown).
    package static func isFUSE(_ path: String) -> Bool {
        pulse_is_fuse(path) == 1
    }

    /// Zeroes `buffer` in a way the optimiser keeps.
    package static func wipe(_ buffer: UnsafeMutableRawBufferPointer) {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return }
        pulse_wipe(base, buffer.count)
    }
}
