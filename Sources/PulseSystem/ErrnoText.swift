#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The text of the current `errno`, for messages of failed system calls. "File too large"
/// names the file-size limit when one is set: it is the process's limit (`ulimit -f`), not the
/// file's or the disk's, and nothing else in the message says so.
public func errnoText() -> String {
    let code = errno
    let text = String(cString: strerror(code))
    if code == EFBIG, let limit = SystemCalls.fileSizeLimit {
        return "\(text) (this process may write files of at most \(limit) bytes: the file-size limit, ulimit -f)"
    }
    return text
}
