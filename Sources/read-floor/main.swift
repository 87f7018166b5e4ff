// The benchmark's floor (scripts/bench.sh, docs/performance.md): reads an archive through the
// codec exactly as import and verify do (inflate ahead on a second thread, parse, check every
// value), keeps nothing, and prints the rows it read. No command that reads a whole archive
// can be faster than this; what `import` and `verify` take beyond it is their own work.
//
//   swift run -c release read-floor ARCHIVE
import Foundation
import PulseArchive

func fail(_ message: String, status: Int32) -> Never {
    FileHandle.standardError.write(Data("read-floor: \(message)\n".utf8))
    exit(status)
}

guard CommandLine.arguments.count == 2 else { fail("usage: read-floor ARCHIVE", status: 64) }
do {
    let summary = try ArchiveReader(path: CommandLine.arguments[1]).inspect()
    print(summary.rowsFound.values.reduce(0, +))
} catch {
    fail("\(error)", status: 1)
}
