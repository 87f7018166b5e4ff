#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The controlling terminal, for a secret typed by a person: read from `/dev/tty` with echo off,
/// so it works while standard input and output carry archives, and never shows on screen.
public enum Terminal {
    /// True when the process has a terminal to ask on.
    public static var isAvailable: Bool {
        let fd = open("/dev/tty", O_RDWR | O_CLOEXEC | O_NOCTTY)
        guard fd >= 0 else { return false }
        close(fd)
        return true
    }

    /// The terminal whose echo a prompt has turned off, with its settings from before.
    private static let hidden = Locked<(fd: Int32, saved: termios)?>(nil)

    /// Puts back the settings of a terminal a prompt has hidden the echo of, if one has; for
    /// `InterruptCleanup`, on a signal that ends the process. The prompt's own restoring waits
    /// from then on, so nothing changes the terminal again before the process ends.
    static func restoreAfterInterrupt() {
        hidden.holdForever { open in
            guard let current = open else { return }
            var saved = current.saved
            _ = tcsetattr(current.fd, TCSANOW, &saved)
        }
    }

    /// Asks for a secret on the terminal; nil when the process has none (a cron job).
    /// The line ending is not part of the secret. The caller wipes the bytes when done.
    public static func readSecret(prompt: String) throws -> [UInt8]? {
        let fd = open("/dev/tty", O_RDWR | O_CLOEXEC | O_NOCTTY)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var saved = termios()
        let canHideEcho = tcgetattr(fd, &saved) == 0
        if canHideEcho {
            var silent = saved
            silent.c_lflag &= ~tcflag_t(ECHO)
            silent.c_lflag |= tcflag_t(ECHONL)
            // Recorded before echo goes off: a signal that ends the process at the prompt
            // puts the settings back (`restoreAfterInterrupt`), or the shell stays blind.
            hidden.withLock { $0 = (fd, saved) }
            InterruptCleanup.recordHiddenEcho((fd, saved))
            _ = tcsetattr(fd, TCSANOW, &silent)
        }
        defer {
            if canHideEcho {
                hidden.withLock { open in
                    _ = tcsetattr(fd, TCSANOW, &saved)
                    InterruptCleanup.recordHiddenEcho(nil)
                    open = nil
                }
            }
        }
        let promptBytes = Array(prompt.utf8)
        _ = promptBytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        var line: [UInt8] = []
        var byte: UInt8 = 0
        while true {
            let n = read(fd, &byte, 1)
            if n < 0 && errno == EINTR { continue }
            if n < 0 { throw SystemError(.io, "cannot read the terminal: \(errnoText())") }
            if n == 0 || byte == 0x0A { break }
            line.append(byte)
        }
        byte = 0
        if line.last == 0x0D { line.removeLast() }
        return line
    }
}
