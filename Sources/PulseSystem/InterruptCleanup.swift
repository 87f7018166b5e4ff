import CSystemCalls
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Temporary files and directories that must not outlive an interrupted run: a partial
/// archive, a staging directory, `verify`'s scratch directory. Health data left in a hidden
/// file that nobody will delete is a leak, so whoever creates such a path registers it here,
/// and unregisters it once it is removed or has become something to keep.
///
/// A command-line program calls `removeOnInterrupt` before it starts any thread. SIGINT,
/// SIGTERM, SIGHUP and SIGQUIT are then taken by a thread of their own (`sigwait`, not a signal
/// handler, so removing a directory is safe there), which removes what is registered and ends
/// the process as the signal would have. Nothing runs on SIGKILL: the next run removes what it
/// finds (`AtomicFile`, staging), and every such path is private (0600/0700) meanwhile.
public enum InterruptCleanup {
    /// The signals that mean "stop": Ctrl-C, `kill`, a closed terminal, Ctrl-\. SIGQUIT is one
    /// of them: left to the Swift runtime, it printed a backtrace and the command carried on
    /// (an `import --replace` the user meant to stop committed).
    private static let signals: [Int32] = [SIGINT, SIGTERM, SIGHUP, SIGQUIT]

    private final class Registry: @unchecked Sendable {
        /// Recursive, so that the step `keeping` runs may register and unregister paths too.
        let lock = NSRecursiveLock()
        /// Guarded by `lock`.
        var paths: Set<String> = []
        /// Folders removed only if they are empty once `paths` are gone (`registerIfEmpty`), in
        /// the order they were made. Guarded by `lock`.
        var foldersIfEmpty: [String] = []
        /// What a commit made permanent, once one has (`keeping`): an interruption after it
        /// must say so, or the user believes nothing happened. Guarded by `lock`.
        var committed: String?
        /// What has gone out where no removal reaches (`sending`), for the announcement.
        /// Guarded by `lock`.
        var sent: String?
        /// The signals the watcher takes (`removeOnInterrupt`); none in a library's process.
        /// Guarded by `lock`.
        var taken: [Int32] = []
        /// How many holds (`holdOffBothSignals`) the thread that has `lock` is inside. Guarded
        /// by `lock`.
        var holds = 0
        /// How the fatal-signal handler's line tells a commit's outcome (`removeOnFatalSignal`).
        /// Guarded by `lock`.
        var describeCommit: @Sendable (String) -> String = { $0 }
    }

    private static let registry = Registry()

    /// Removes `path` (a file, or a directory and everything in it) if the process is
    /// interrupted before `unregister(path)`.
    public static func register(_ path: String) {
        registry.lock.lock()
        track(key(path))
        registry.lock.unlock()
    }

    /// Removes the folder `path` if the process is interrupted before `unregister(path)` and
    /// the folder is empty once the registered paths are gone: a folder made on the way to a
    /// temporary one (a new store's missing parents), which another command may have put its
    /// own folder in meanwhile, or one that a commit has filled since.
    public static func registerIfEmpty(_ path: String) {
        registry.lock.lock()
        let path = key(path)
        registry.foldersIfEmpty.append(path)
        _ = pulse_fatal_track(fatalState, path, 1)
        registry.lock.unlock()
    }

    /// Creates a temporary path with `create` and registers what it returns, as one step for
    /// an interruption: the removal either comes after both (and removes the path) or before
    /// either (and the process ends before `create` runs). Registering after creating would
    /// leave a path made in between; registering before would not know a `mkdtemp` name.
    public static func registering<Created>(_ create: () throws -> (Created, path: String)) rethrows -> Created {
        holdOffBothSignals()
        defer { endHoldOffBothSignals() }
        let (created, path) = try create()
        track(key(path))
        return created
    }

    /// Runs `step` wholly before an interruption's or a fatal signal's removal, or never: once
    /// the removal has begun, `step` waits until the process ends. For a step that creates a
    /// directory (which may be a registered path, or its parent, that the removal would
    /// otherwise race: a `mkdir -p` made a new store's folders again after a fatal signal's
    /// removal, and they stayed), and for a step that makes a path temporary again together
    /// with the record that needed it.
    public static func uninterrupted<T>(_ step: () throws -> T) rethrows -> T {
        holdOff()
        defer { endHoldOff() }
        return try step()
    }

    /// `uninterrupted` in two calls, for a step made in C that cannot pass a closure (SQLite
    /// creating a file it unlinks at once, `pulse_sqlite3_register_vfs`). Pairs nest.
    package static func holdOff() {
        holdOffBothSignals()
    }

    package static func endHoldOff() {
        endHoldOffBothSignals()
    }

    /// From now on an interruption must say that `what` went out where no removal reaches
    /// (the archive's first bytes down a pipe): the reader holds part of it.
    public static func sending(_ what: String) {
        registry.lock.lock()
        registry.sent = what
        registry.lock.unlock()
    }

    /// From now on an interruption leaves `path` alone.
    ///
    /// Held off like a commit: once a fatal signal's handler has begun (on another thread),
    /// the caller waits for it to end the process instead. A failing import on the main thread
    /// let go of the folders it had made for a new store (`removeWhileEmpty`, whose `rmdir`
    /// failed while the handler was still emptying the store in them), and the handler, which
    /// removes such folders last, then left them behind.
    public static func unregister(_ path: String) {
        holdOffBothSignals()
        defer { endHoldOffBothSignals() }
        untrack(key(path))
    }

    /// Runs `commit`, the step after which `paths` are no longer temporary (a transaction that
    /// records a directory as needed), with interruption held off, and unregisters them if it
    /// succeeds. A signal that arrives meanwhile is acted on after it; one whose removal began
    /// first ends the process before `commit` runs. So a commit can never succeed and then lose
    /// what it recorded, and an interruption before it still removes everything.
    /// - Parameter outcome: what the commit made permanent, for the announcement of an
    ///   interruption after it ("the store holds the archive", "x.json.gz was written in full").
    ///
    /// A signal already sent but not yet taken by the watcher (it is pending while the watcher
    /// waits for a core, as under load after a stopped process is continued) also comes first:
    /// `commit` does not run, and the thread waits for the watcher to end the process. Without
    /// that, an export or import could finish its commit and exit 0 after the user's Ctrl-C.
    public static func keeping(_ paths: [String], committing outcome: String, during commit: () throws -> Void) throws {
        try keeping(paths) {
            try commit()
            return outcome
        }
    }

    /// `keeping`, where the commit itself says what it made permanent (the name it took).
    /// - Parameter commit: returns nil for a commit that is not the command's result.
    ///
    /// A fatal signal (`removeOnFatalSignal`) is kept apart the same way: one that came first
    /// keeps the commit from starting, and one that comes during it, on another thread, waits
    /// for its end and then says what it made permanent.
    public static func keeping(_ paths: [String], during commit: () throws -> String?) throws {
        holdOffBothSignals()
        defer { endHoldOffBothSignals() }
        let outcome = try commit()
        for path in paths { untrack(key(path)) }
        if let outcome {
            registry.committed = outcome
            pulse_fatal_committed(fatalState, registry.describeCommit(outcome))
        }
    }

    /// Runs `report`, the line that says why the command failed, unless an interruption or a
    /// fatal signal has begun ending the process: then it waits for that end instead. The other
    /// threads run on while a signal's removal empties the registered paths, so a failure then
    /// is most likely its doing (a worker's folder gone from under it), and a second "Error:"
    /// line naming that folder would hide what happened; the signal's own line says it.
    public static func reporting(_ report: () -> Void) {
        holdOffBothSignals()
        defer { endHoldOffBothSignals() }
        report()
    }

    /// Runs `write`, a command's report going out, with an interruption and a fatal signal held
    /// off, so that a signal ends the process after the report (which is then whole) or before
    /// it (its own report in its place), never halfway: a 400 KB `readiness --json` that a
    /// SIGTERM cut at the pipe's 64 KiB was no object at all. `write` gets `stopPending`, true
    /// once a signal waits for it, so that a reader that stopped taking the report cannot keep
    /// the process from ending.
    public static func writingReport(_ write: (_ stopPending: () -> Bool) throws -> Void) rethrows {
        holdOffBothSignals()
        defer { endHoldOffBothSignals() }
        try write { stopSignalPending() }
    }

    /// Holds off both an interruption (its lock) and a fatal signal (the handler's commit
    /// counter) for a step that must run wholly or not at all, or, when either has come first,
    /// waits for it to end the process.
    ///
    /// A hold inside another (a directory made within a commit) goes on whatever has come
    /// meanwhile: the outer one has passed the gate, and waiting there, with the lock held,
    /// would keep the watcher from ever ending the process (the handler's counter lets a
    /// nested entry in by itself).
    private static func holdOffBothSignals() {
        registry.lock.lock()
        if (registry.holds == 0 && stopSignalPending()) || pulse_fatal_enter_commit(fatalState) != 0 {
            registry.lock.unlock()
            awaitTheEnd()
        }
        registry.holds += 1
    }

    private static func endHoldOffBothSignals() {
        registry.holds -= 1
        pulse_fatal_leave_commit(fatalState)
        registry.lock.unlock()
    }

    /// Whether one of the signals the watcher takes has been sent and not yet taken. Called
    /// with `registry.lock` held.
    private static func stopSignalPending() -> Bool {
        guard !registry.taken.isEmpty else { return false }
        var pending = sigset_t()
        sigemptyset(&pending)
        guard sigpending(&pending) == 0 else { return false }
        return registry.taken.contains { sigismember(&pending, $0) == 1 }
    }

    /// Waits for the watcher, which has a signal to take, or the fatal-signal handler, to end
    /// the process.
    private static func awaitTheEnd() -> Never {
        pulse_fatal_awaiting(fatalState)
        while true { usleep(10_000) }
    }

    /// Blocks `signals` in the calling thread, and so in every thread it starts later, and
    /// starts the thread that waits for them. On the first, it removes every registered path,
    /// calls `announce` with the signal, what a commit made permanent before it (if one did:
    /// the work was not undone, and the announcement must not say it was) and what could not
    /// be removed (named, never said to be gone), and ends the process by that signal (a shell shows
    /// 128 + its number, 130 for Ctrl-C). A signal the caller ignores (`nohup`'s SIGHUP) is
    /// left alone, and so stays ignored. Call it once, first thing.
    /// - Parameter announce: also gets what went out where no removal reaches (`sending`).
    public static func removeOnInterrupt(announce: @escaping @Sendable (_ signal: Int32, _ committed: String?, _ left: [String], _ sent: String?) -> Void) {
        // A blocked signal is queued even when ignored, so an ignored one must stay unblocked.
        let taken = signals.filter { !isIgnored($0) }
        guard !taken.isEmpty else { return }
        var set = signalSet(taken)
        pthread_sigmask(SIG_BLOCK, &set, nil)
        registry.lock.lock()
        registry.taken = taken
        registry.lock.unlock()
        let watcher = Thread {
            // A fatal signal sent from outside goes to another thread: on this one, in the
            // middle of a removal, it made the handler take this removal for a fault in it.
            _ = pulse_fatal_block_in_this_thread()
            // Returns with `registry.lock` held, until the process ends: no path is
            // unregistered halfway through.
            guard let received = takeSignal(taken) else { return }
            // A fatal signal that came first removes what is registered and ends the process;
            // from here on one that comes later leaves it to this thread.
            if pulse_fatal_take_for_interrupt(fatalState) != 0 { awaitTheEnd() }
            let left = registry.paths.sorted().compactMap { removeTree($0) }
            for folder in registry.foldersIfEmpty.reversed() { _ = rmdir(folder) }
            // A prompt's hidden echo comes back before the shell does.
            Terminal.restoreAfterInterrupt()
            announce(received, registry.committed, left, registry.sent)
            // SIGQUIT's default action dumps core: a core file is something left behind,
            // holding whatever the process had read, so the process ends by the signal without one.
            if received == SIGQUIT { _ = SystemCalls.disableCoreDumps() }
            signal(received, SIG_DFL)
            var only = signalSet([received])
            pthread_sigmask(SIG_UNBLOCK, &only, nil)
            raise(received)
            _exit(128 + received)
        }
        watcher.name = "interrupt cleanup"
        watcher.start()
    }

    /// Waits for one of `taken` and takes it with `registry.lock` held, or nil on an error.
    ///
    /// On Linux the signal is taken only once the lock is held (a signal descriptor says one is
    /// pending without taking it): so a commit (`keeping`), which runs under the lock and first
    /// looks for a pending signal, either sees it and does not run, or ran wholly before the
    /// signal was taken, and is announced. With `sigwait` (elsewhere) the signal is taken
    /// first: a commit that starts in the instant between is announced as committed.
    private static func takeSignal(_ taken: [Int32]) -> Int32? {
        var waitingFor = signalSet(taken)
        let descriptor = pulse_signal_descriptor(&waitingFor)
        if descriptor >= 0 {
            while pulse_wait_readable(descriptor) > 0 {
                registry.lock.lock()
                let received = pulse_take_signal(descriptor)
                if received > 0 { return Int32(received) }
                registry.lock.unlock()
            }
            return nil
        }
        var received: Int32 = 0
        guard sigwait(&waitingFor, &received) == 0 else { return nil }
        registry.lock.lock()
        return received
    }

    /// Ends the process with `code`, unless a stop signal has been sent and not yet acted on:
    /// then the watcher ends it by that signal, as for a signal at any earlier moment. A
    /// command that finished its work in the instant a signal came still says so by the
    /// signal's exit, never 0.
    public static func exit(_ code: Int32) -> Never {
        // Never ended: a fatal signal on another thread from now on waits for the process to
        // end with `code`, the work being done, and the watcher cannot act halfway through the
        // process's end.
        holdOffBothSignals()
        Foundation.exit(code)
    }

    /// What the fatal-signal handler reads (the paths it removes, a commit under way or done,
    /// a hidden echo), in storage of fixed size that lives as long as the process (see
    /// `pulse_fatal_state`).
    nonisolated(unsafe) private static let fatalState: UnsafeMutableRawPointer = calloc(1, pulse_fatal_state_size())!

    /// Who writes standard output's one report (`--json` promises one object, never two and
    /// never none): the command, or the interruption or fatal signal that ends it first.
    public enum ReportClaimant: Int32 { case command = 1, ending = 2 }

    /// Takes standard output's report for `claimant`: true when it is the claimant's, now or
    /// already; false when the other has it. The fatal-signal handler claims it too, so the
    /// claim is an atomic in its fixed storage, not a lock.
    public static func claimReport(for claimant: ReportClaimant) -> Bool {
        pulse_report_claim(fatalState, claimant.rawValue) == 1
    }

    /// Whether a report went (or began to go) to standard output, the command's or its end's.
    public static var reportClaimed: Bool { pulse_report_claimed(fatalState) != 0 }

    /// Where the message goes in `setFatalReport`'s text.
    public static let fatalReportMessage = "\u{1}"

    /// The failure object a fatal signal prints on standard output, `fatalReportMessage` at
    /// each place its message goes (written by the handler, which can only copy bytes).
    public static func setFatalReport(_ text: String) {
        _ = pulse_fatal_set_report(fatalState, text)
    }

    /// Tells the fatal-signal handler about a terminal whose echo a prompt turned off (its
    /// settings from before), or, with nil, that it is back on.
    static func recordHiddenEcho(_ terminal: (fd: Int32, saved: termios)?) {
        if var terminal {
            pulse_fatal_hidden_echo(fatalState, terminal.fd, &terminal.saved)
        } else {
            pulse_fatal_hidden_echo(fatalState, -1, nil)
        }
    }

    /// Registers `path` (its key) with the watcher and with the fatal-signal handler. Called
    /// with `registry.lock` held.
    private static func track(_ path: String) {
        registry.paths.insert(path)
        _ = pulse_fatal_track(fatalState, path, 0)
    }

    private static func untrack(_ path: String) {
        registry.paths.remove(path)
        registry.foldersIfEmpty.removeAll { $0 == path }
        pulse_fatal_untrack(fatalState, path)
    }

    /// Installs the handler of the fatal signals (SIGABRT when the runtime cannot allocate or a
    /// check fails; SIGSEGV, SIGBUS, SIGILL, SIGTRAP, SIGFPE), on whichever thread it lands:
    /// after a commit under way on another thread has finished, it puts a prompt's hidden echo
    /// back, removes the registered files and folders (a partial archive, a staging folder:
    /// emptied with the system calls a signal handler may make, Linux's getdents64 to list
    /// them) unless a commit made them permanent, and ends the process with one line on
    /// standard error (what the commit made permanent, if one did) and exit 1, instead of the
    /// runtime's backtrace, exit 134, maybe a core file, and a hidden partial file. Left out
    /// when `SWIFT_BACKTRACE` is set: whoever sets it wants the runtime's backtrace. Call it
    /// once, first thing, on the main thread (its alternate stack is that thread's).
    /// - Parameter describingCommit: what the line says after "after its commit:" for a
    ///   commit's outcome (the interruption's announcement says the same).
    public static func removeOnFatalSignal(describingCommit: @escaping @Sendable (String) -> String = { $0 }) {
        guard getenv("SWIFT_BACKTRACE") == nil else { return }
        // A test's hook (docs/testing.md, "Kill points"): the handler holds once it has set a
        // registered path aside, before it removes it, until another thread waits for the
        // end, so that what that thread does meanwhile lands in the middle of the removal,
        // as it may under load.
        if getenv("PULSE_ARCHIVE_TEST_FATAL_HOLD") != nil { pulse_fatal_test_hold(fatalState) }
        registry.lock.lock()
        registry.describeCommit = describingCommit
        registry.lock.unlock()
        _ = pulse_fatal_install(fatalState)
    }

    /// A path as the registry holds it: `store/` and `store` are one directory, whichever
    /// spelling registered it and whichever unregisters it.
    private static func key(_ path: String) -> String {
        var path = path
        while path.count > 1 && path.hasSuffix("/") { path.removeLast() }
        return path
    }

    private static func isIgnored(_ signal: Int32) -> Bool {
        var current = sigaction()
        guard sigaction(signal, nil, &current) == 0 else { return false }
        #if canImport(Glibc)
        let handler = current.__sigaction_handler.sa_handler
        #else
        let handler = current.__sigaction_u.__sa_handler
        #endif
        return unsafeBitCast(handler, to: Int.self) == unsafeBitCast(SIG_IGN, to: Int.self)
    }

    private static func signalSet(_ signals: [Int32]) -> sigset_t {
        var set = sigset_t()
        sigemptyset(&set)
        for signal in signals { sigaddset(&set, signal) }
        return set
    }

    /// Removes a file or a directory tree. Other threads may still be writing into it: it is
    /// first renamed aside, so that what they create later under its name fails (no one can
    /// create the directory again, see `uninterrupted`) instead of landing in a tree being emptied;
    /// a directory that still gained an entry while it was emptied is emptied again.
    /// Returns the path (as renamed aside) when something of it stayed: a read-only folder, a
    /// tree deeper than the removal reaches.
    private static func removeTree(_ original: String) -> String? {
        let aside = original + ".removing-\(getpid())"
        let path: String
        if rename(original, aside) == 0 {
            path = aside
            // Under its new name for the fatal-signal handler too, should this thread fault.
            pulse_fatal_untrack(fatalState, original)
            _ = pulse_fatal_track(fatalState, aside, 0)
        } else {
            path = original
        }
        for _ in 0..<100 {
            do {
                try FileManager.default.removeItem(atPath: path)
                return nil
            } catch {
                var info = stat()
                if lstat(path, &info) != 0 && errno == ENOENT { return nil }
            }
        }
        return path
    }
}
