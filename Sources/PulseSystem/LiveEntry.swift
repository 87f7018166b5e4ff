#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Marks a temporary entry (a partial file, a staging or scratch directory) as the work of a
/// live process, wherever that process runs. The sweeps that remove what killed runs left
/// tell a dead writer by the pid in the entry's name, and a pid says nothing about a process
/// in another PID namespace (a container sharing the folder) or on another host (an NFS
/// share): one such sweep removed a running export's files. So the writer also holds an
/// exclusive `flock` on the entry, which the kernel drops when the process ends, however it
/// ends; a sweep removes an entry only when its pid is not a local process and the lock can be
/// taken. An entry made by a version that held no lock is judged by its pid alone, as before.
package enum LiveEntry {
    /// Takes the lock on `path` for this process; returns the descriptor that holds it (close
    /// it with `release` once the entry is gone or committed), or nil when it cannot be taken
    /// (a file system without locks: the pid rule alone then protects the entry).
    package static func hold(_ path: String) -> Int32? {
        let descriptor = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            _ = close(descriptor)
            return nil
        }
        return descriptor
    }

    package static func release(_ descriptor: Int32?) {
        if let descriptor { _ = close(descriptor) }
    }

    /// Whether the writer of the entry at `path`, named with `pid`, is gone: no process of that
    /// pid here, and no process anywhere holding the entry's lock. The one rule of every sweep.
    package static func isAbandoned(_ path: String, writer pid: pid_t) -> Bool {
        pid != getpid() && kill(pid, 0) != 0 && errno == ESRCH && !isHeld(path)
    }

    /// Whether a live process holds `path`'s lock now. An entry that cannot be opened, or a
    /// file system that refuses locks, reads as not held.
    package static func isHeld(_ path: String) -> Bool {
        let descriptor = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else { return false }
        defer { _ = close(descriptor) }
        return flock(descriptor, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK
    }
}
