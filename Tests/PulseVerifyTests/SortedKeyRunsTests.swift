import Foundation
import Testing
@testable import PulseArchive
@testable import PulseStore
@testable import PulseVerify
@testable import PulseSystem
@testable import PulseTestSupport

@Suite("Keys sorted in bounded runs (verify's unique keys and references)")
struct SortedKeyRunsTests {
    /// Keys of every kind a table can have, with repeats, in an order no sort would produce.
    private func keys(_ count: Int) -> [FieldValue] {
        (0..<count).map { i in
            let n = (i * 7_919) % (count / 2 + 1)  // every key about twice
            // The kind follows the key, not the row: by the row, no key ever repeated (and the
            // test compared two empty lists).
            switch n % 4 {
            case 0: return .string(RowFactory.uuid(n))
            case 1: return .int(Int64(n) - 1_000)
            case 2: return .string("2026-03-\(n)-a-longer-key-than-sixteen-bytes")
            default: return .string(RowFactory.uuid(n).lowercased())  // not canonical: compared as text
            }
        }
    }

    @Test("repeats are found across spilled runs, in file order, with the first row that had the key; the run file has no name on disk")
    func repeats() throws {
        let values = keys(5_000)
        let runs = SortedKeyRuns(name: "t", memoryBudget: 16 * 1024)
        for (row, value) in values.enumerated() { try runs.add(value, row: row) }
        try runs.seal()
        #expect(runs.spilledRuns > 10, "the budget forces spills")
        let file = try #require(runs.runFile)
        var info = stat()
        #expect(fstat(file.fd, &info) == 0 && info.st_nlink == 0, "the run file has a name: \(info.st_nlink) links")
        #expect(info.st_mode & 0o777 == 0o600)

        var firstRow: [FieldValue: Int] = [:]
        var expected: [(Int, Int, FieldValue)] = []
        for (row, value) in values.enumerated() {
            if let first = firstRow[value] { expected.append((row, first, value)) } else { firstRow[value] = row }
        }
        let found = try runs.repeats().first
        #expect(expected.count > 2_000 && found.count == expected.count)
        #expect(zip(found, expected).allSatisfy { $0.row == $1.0 && $0.firstRow == $1.1 && $0.key == $1.2 })
        let bounded = try runs.repeats(keeping: 7)
        #expect(bounded.count == expected.count && bounded.first.count == 7, "the first seven by row are kept, all are counted")
        #expect(zip(bounded.first, expected).allSatisfy { $0.row == $1.0 && $0.firstRow == $1.1 })
    }

    @Test("references naming no key are counted, with repeats, whatever the runs")
    func missing() throws {
        let parents = SortedKeyRuns(name: "parents", memoryBudget: 8 * 1024)
        let children = SortedKeyRuns(name: "children", memoryBudget: 8 * 1024)
        let parentKeys = (0..<2_000).map { FieldValue.string(RowFactory.uuid($0 * 2)) }
        for (row, key) in parentKeys.enumerated() { try parents.add(key, row: row) }
        var orphans = 0
        for row in 0..<3_000 {
            let n = (row * 31) % 4_100
            try children.add(.string(RowFactory.uuid(n)), row: row)
            if n % 2 == 1 || n >= 4_000 { orphans += 1 }
        }
        #expect(try parents.countMissing(children) == orphans)
        #expect(try SortedKeyRuns(name: "none").countMissing(children) == 3_000)
    }

    @Test("a run file cut short is verify's own error, not the archive's")
    func damagedRunFile() throws {
        let runs = SortedKeyRuns(name: "t", memoryBudget: 16 * 1024)
        for (row, value) in keys(2_000).enumerated() { try runs.add(value, row: row) }
        try runs.seal()
        let file = try #require(runs.runFile)
        #expect(ftruncate(file.fd, 30) == 0)
        #expect {
            _ = try runs.repeats()
        } throws: { error in
            (error as? VerifyError)?.kind == .damagedScratchFile && "\(error)".contains("the run file of t in ") && "\(error)".hasSuffix(" ends inside a record")
        }
    }
}
