import Foundation
import PulseArchive
import PulseSystem
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Checks of argument values shared by the commands.
enum ArgumentValues {
    /// A name to create ending in a dot or a space says nothing true on a USB stick: FAT and
    /// exFAT drop trailing dots, Windows dots and spaces, so `x.json.gz.` would arrive as
    /// `x.json.gz` whatever it holds, and `tables -o out.` as `out`. One rule for every file
    /// or folder a command creates by a name given to it (`out./` too: the slash only says it
    /// is a folder). A line break or tab at the end is refused as well: `$(…)` drops a trailing
    /// line break from the path a command prints, and no listing shows either.
    static func requireLastingName(_ path: String, option: String) throws {
        var named = Substring(path)
        while named.count > 1, named.hasSuffix("/") { named = named.dropLast() }
        let last = (named.split(separator: "/", omittingEmptySubsequences: false).last ?? "").unicodeScalars
        // By scalar: a zero-width joiner at the end belongs to the character before it. Every
        // white space (U+2028, NEL, a no-break space) shows no more than a space, and the
        // invisible characters (U+200B, U+FEFF, U+2060, U+180E) nothing at all.
        let vanishing = { (s: Unicode.Scalar) in
            s == "." || s.properties.isWhitespace || ShownText.actsOnATerminal(s) || s.value == 0x180E
        }
        guard let end = last.last, vanishing(end), last.contains(where: { !vanishing($0) }) else { return }
        var kept = named.unicodeScalars
        while let final = kept.last, vanishing(final) { kept = kept.dropLast() }
        let why = switch end {
        case ".": "a dot, which FAT and exFAT (USB sticks) and Windows drop from a name"
        case " ": "a space, which Windows drops from a name and no listing shows"
        case _ where end.properties.isWhitespace: "white space (a line break, a tab), which a shell's $(…) drops from a printed path and no listing shows"
        default: "an invisible character (U+\(String(end.value, radix: 16, uppercase: true))), which no listing shows"
        }
        throw UsageError(message: "'\(option) \(path)' ends in \(why): name it \(String(kept))")
    }

    /// An option that names a new file (`keygen -o`, `readiness --svg`) given a folder: said
    /// before any work. (`keygen -o keys/` wrote the identity as `keys/keys`.)
    static func requireFileName(_ path: String, option: String) throws {
        var info = stat()
        let isFolder = stat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFDIR
        guard path.hasSuffix("/") || isFolder else { return }
        throw UsageError(message: "'\(option) \(path)' names a folder: give the name of the new file (\(path.hasSuffix("/") ? path : path + "/")NAME)")
    }

    static func integer(_ text: String?, option: String, range: ClosedRange<Int>) throws -> Int? {
        guard let text else { return nil }
        guard let value = Int(text), range.contains(value) else {
            throw UsageError(message: "The value '\(text)' is invalid for '\(option)': expected an integer from \(range.lowerBound) to \(range.upperBound)")
        }
        return value
    }

    /// `--timezone`, else `$TZ`, else the system's zone. An invalid `$TZ` is refused like an
    /// invalid `--timezone`, rather than read as UTC as Foundation would: days would silently
    /// fall on other boundaries, and an import stores the scores computed from them.
    /// - Parameter commandHasOption: the command takes `--timezone`, so a bad `TZ` may be
    ///   stepped around with it (export, prune and diff take only `TZ`).
    static func timeZone(_ text: String?, environment: [String: String], commandHasOption: Bool = true) throws -> TimeZone {
        try namedTimeZone(text, environment: environment, commandHasOption: commandHasOption).zone
    }

    /// `timeZone`, and its name as reports show it: the name given (`--timezone`, or `TZ` as
    /// written), since Foundation calls "UTC" "GMT"; the system zone's own otherwise.
    static func namedTimeZone(_ text: String?, environment: [String: String], commandHasOption: Bool = true) throws -> (zone: TimeZone, name: String) {
        let remedy = commandHasOption ? "correct or unset TZ, or pass --timezone" : "correct or unset TZ"
        if let text {
            // Foundation reads "GMT+14" as 14 hours east, POSIX TZ as 14 hours west: neither is
            // an IANA name, so such offsets are refused rather than read one way or the other.
            let offset = ["GMT", "UTC"].contains { text.hasPrefix($0 + "+") || text.hasPrefix($0 + "-") }
            guard !offset, let zone = TimeZone(identifier: text) else {
                throw UsageError(message: "The value '\(text)' is invalid for '--timezone': expected a zone identifier such as Europe/Berlin or UTC")
            }
            return (zone, text)
        }
        guard let variable = environment["TZ"] else { return (.current, TimeZone.current.identifier) }
        // As the C library reads TZ: empty is UTC, a leading ':' is dropped, a path into the
        // zone database names its zone.
        var name = Substring(variable)
        if name.first == ":" { name = name.dropFirst() }
        if name.isEmpty { name = "UTC" }
        if name.hasPrefix("/") {
            // A link (`TZ=:/etc/localtime`, as systemd and containers set it) names the zone
            // file it points to; the file /etc/localtime itself is the system's zone.
            let resolved = realpath(String(name), nil).map { path in defer { free(path) }; return String(cString: path) } ?? String(name)
            if let range = resolved.range(of: "/zoneinfo/") {
                name = resolved[range.upperBound...]
            } else if resolved == "/etc/localtime" {
                return (.current, TimeZone.current.identifier)
            }
        }
        // The POSIX form of a fixed offset (`UTC0`, common in containers; `GMT+5`, `EST5`):
        // hours west of Greenwich, as the C library reads it. Foundation would take "GMT+5" for
        // five hours east, and name a backup or end a day ten hours off.
        switch posixFixedOffset(name) {
        case .west(let west)?:
            // Only the offsets some zone of the world has: past them Foundation's date
            // formatting traps, and prune's dating rules assume no clock is further out.
            guard (-14 * 3600...12 * 3600).contains(west), let zone = west == 0 ? TimeZone(identifier: "UTC") : TimeZone(secondsFromGMT: -west) else {
                throw UsageError(message: "The value '\(variable)' of the TZ environment variable is an offset no zone has (they run from UTC−12 to UTC+14): \(remedy)")
            }
            return (zone, String(name))
        case .malformed?:
            // Not one POSIX has (`GMT+05:60`: minutes past 59): Foundation read that one as six
            // hours *east*, the C library as about five hours west.
            throw UsageError(message: "The value '\(variable)' of the TZ environment variable is not a zone identifier such as Europe/Berlin or UTC, nor an offset such as GMT+5 (hours up to 24, minutes and seconds up to 59): \(remedy)")
        case nil:
            guard let zone = TimeZone(identifier: String(name)) else {
                throw UsageError(message: "The value '\(variable)' of the TZ environment variable is not a zone identifier such as Europe/Berlin or UTC: \(remedy)")
            }
            return (zone, String(name))
        }
    }

    /// A TZ value of the shape of a POSIX fixed offset: a name of three or more letters, then
    /// `[+-]` and digits and colons.
    enum PosixOffset {
        /// `[+-]hh[:mm[:ss]]` in range: the seconds west of Greenwich (`GMT+5` is five hours *west*).
        case west(Int)
        /// The shape, but not an offset POSIX has: more than two digits in a part, more than
        /// three parts, hours past 24, minutes or seconds past 59.
        case malformed
    }

    /// The POSIX fixed offset `value` is, without daylight saving; nil for anything not of its
    /// shape (a zone identifier, a rule with daylight saving such as `EST5EDT`).
    static func posixFixedOffset(_ value: Substring) -> PosixOffset? {
        let name = value.prefix { $0.isASCII && $0.isLetter }
        var rest = value.dropFirst(name.count)
        var sign = 1
        if rest.first == "+" || rest.first == "-" {
            sign = rest.first == "-" ? -1 : 1
            rest = rest.dropFirst()
        }
        guard name.count >= 3, !rest.isEmpty, rest.allSatisfy({ $0 == ":" || ($0.isASCII && $0.isNumber) }) else { return nil }
        let parts = rest.split(separator: ":", omittingEmptySubsequences: false)
        guard (1...3).contains(parts.count), parts.allSatisfy({ !$0.isEmpty && $0.count <= 2 }),
              let hours = Int(parts[0]), hours <= 24
        else { return .malformed }
        let minutes = parts.count > 1 ? Int(parts[1]) ?? 60 : 0, seconds = parts.count > 2 ? Int(parts[2]) ?? 60 : 0
        guard minutes < 60, seconds < 60 else { return .malformed }
        return .west(sign * (hours * 3600 + minutes * 60 + seconds))
    }

    /// A `YYYY-MM-DD` calendar day.
    static func day(_ text: String?, option: String) throws -> DateComponents? {
        guard let text else { return nil }
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
              let year = Int(parts[0]), let month = Int(parts[1]), let day = Int(parts[2]),
              (1...12).contains(month), day >= 1,
              Int64(day) <= ArchiveDate.daysInMonth(year: Int64(year), month: Int64(month))
        else {
            throw UsageError(message: "The value '\(text)' is invalid for '\(option)': expected a date as YYYY-MM-DD")
        }
        return DateComponents(year: year, month: month, day: day)
    }

    /// An archive argument: `-` is standard input (a file named `-` is `./-`), refused when it
    /// is a terminal, where the read would wait for typing.
    static func archiveInput(_ argument: String) throws -> ArchiveInput {
        guard argument == "-" else {
            // A named pipe or `<(…)` is opened once, here, and read once: a look at its first
            // bytes by path, or a second open, would lose them or wait for a writer gone.
            var info = stat()
            guard stat(argument, &info) == 0, [S_IFIFO, S_IFCHR, S_IFSOCK].contains(info.st_mode & S_IFMT) else { return .file(argument) }
            return .stream(try SystemFile.openForReading(argument), named: argument)
        }
        if StandardStreams.closedAtStart.contains(STDIN_FILENO) {
            throw UsageError(message: "Standard input is closed (<&-): pipe an archive in (… | pulse-archive import -) or name a file")
        }
        if isatty(STDIN_FILENO) == 1 {
            throw UsageError(message: "Standard input is a terminal: pipe an archive in (… | pulse-archive import -) or name a file")
        }
        return .standardInput
    }

    /// The reader's (and for export the writer's) limits, with the options applied.
    static func limits(_ arguments: ParsedArguments) throws -> ArchiveLimits {
        var limits = ArchiveLimits.standard
        if let size = try integer(arguments.value("--max-size"), option: "--max-size", range: 1...Int.max) {
            limits.maxUncompressedBytes = Int64(size)
        }
        if let ratio = try integer(arguments.value("--max-inflate-ratio"), option: "--max-inflate-ratio", range: 1...1_000_000) {
            limits.maxInflateRatio = Double(ratio)
        }
        // At most 1 GiB: a string and its decoded bytes are held in memory (and 1 GiB of base64
        // keeps every size within Int32 for SQLite's blobs).
        if let size = try integer(arguments.value("--max-string-size"), option: "--max-string-size", range: 1_024...(1 << 30)) {
            limits.maxStringBytes = size
        }
        if let size = try integer(arguments.value("--max-object-size"), option: "--max-object-size", range: 1_024...(1 << 30)) {
            limits.maxWholeValueBytes = size
        }
        return limits
    }

    /// Now, in milliseconds since 1970.
    static func nowMillis() -> Int64 {
        Int64((Date().timeIntervalSince1970 * 1000).rounded(.down))
    }

    /// The `exportedAt` of an export: now, or `SOURCE_DATE_EPOCH` (seconds since 1970, the
    /// reproducible-builds convention) when set, so that two exports of one store can be
    /// compared byte for byte (a plain and an encrypted one, say).
    static func exportTime(environment: [String: String]) throws -> Int64 {
        guard let text = environment["SOURCE_DATE_EPOCH"] else { return nowMillis() }
        guard let seconds = Int64(text), seconds >= 0, seconds <= 253_402_300_799 else {
            throw UsageError(message: "SOURCE_DATE_EPOCH is '\(text)': expected whole seconds since 1970 up to the year 9999")
        }
        return seconds * 1000
    }
}
