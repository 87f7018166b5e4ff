#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The text of the current `errno`, for messages of failed system calls.
public func errnoText() -> String {
    String(cString: strerror(errno))
}
