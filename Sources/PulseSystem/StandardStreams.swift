#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The standard streams as the process was started with them.
public enum StandardStreams {
    /// The standard descriptors (0, 1, 2) the process was started without (`<&-`, `>&-`),
    /// each now held by /dev/null. Read it first thing, before any file is opened: open(2)
    /// hands out the lowest free number, so the first file opened would otherwise become
    /// "standard input" (a scratch file read as the archive) or "standard output" (a report
    /// written into an archive or a store's file).
    public static let closedAtStart: Set<Int32> = {
        var closed: Set<Int32> = []
        for descriptor: Int32 in 0...2 where fcntl(descriptor, F_GETFD) == -1 && errno == EBADF {
            // The lowest free number is this one: the lower ones are open by now.
            let filler = open("/dev/null", descriptor == 0 ? O_RDONLY : O_WRONLY)
            if filler != descriptor, filler >= 0 { _ = close(filler) }
            closed.insert(descriptor)
        }
        return closed
    }()
}
