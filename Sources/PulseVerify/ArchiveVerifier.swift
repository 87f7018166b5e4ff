import Foundation
import PulseArchive
import PulseDocuments
import Readiness
import PulseSystem
import PulseStore

/// `verify`: checks an archive as a CI job needs it checked (the container, the structure, the
/// references, a round trip through a temporary store, and optionally a store), reporting every
/// problem rather than the first. It never says "ok" about a file that would not restore.
///
/// One streaming pass does it all: this thread decompresses and parses; a second one runs the
/// round trip a batch at a time and sorts keys and references in bounded runs on disk, so
/// memory stays flat and nothing is inserted into a database that grows with the archive.
public enum ArchiveVerifier {
    public static func verify(_ archivePath: String, store storeDirectory: String?, timeZone: TimeZone = .current,
                              limits: ArchiveLimits = .standard, progress: ((ReadProgress) -> Void)? = nil) throws -> VerifyReport {
        try verify(.file(archivePath), store: storeDirectory, timeZone: timeZone, limits: limits, progress: progress)
    }

    /// Verifies an archive from any input (a pipe too: one pass, front to back).
    public static func verify(_ input: ArchiveInput, store storeDirectory: String?, timeZone: TimeZone = .current,
                              limits: ArchiveLimits = .standard, progress: ((ReadProgress) -> Void)? = nil) throws -> VerifyReport {
        var reader = ArchiveReader(input, limits: limits, progress: progress)
        reader.keepsRowText = true
        do {
            guard let storeDirectory else { return try verify(reader, against: nil, timeZone: timeZone) }
            return try PulseStore.withReadAccess(storeDirectory) { store in
                try verify(reader, against: store, timeZone: timeZone)
            }
        } catch where MachineFailure.caused(error) {
            throw VerifyError.couldNotFinish(error)
        }
    }

    private static func verify(_ reader: ArchiveReader, against store: PulseStore?, timeZone: TimeZone) throws -> VerifyReport {
        var report = VerifyReport()
        // Nothing of the scratch work has a name on disk (`RollingRoundTrip`, `SortedKeyRuns`):
        // the archive may have been encrypted, and no kill may leave it behind in clear.
        let roundTrip = try RollingRoundTrip(comparingWith: store.map { ($0.databasePath, immutable: $0.isImmutable) }, limits: reader.limits)
        let worker = try BackgroundVisitor(VerifyingVisitor(roundTrip: roundTrip, timeZone: timeZone))
        var visitor = RowTextCheck(next: worker, limits: reader.limits)

        // 1–2. Container and structure, every problem collected.
        let summary: ArchiveSummary
        do {
            summary = try reader.collectProblems(into: &visitor)
        } catch let interrupted as ArchiveReader.Interrupted where MachineFailure.caused(interrupted.error) {
            // The scratch work failed (a run file, the temporary database), not the archive.
            _ = worker.stop()
            throw VerifyError.couldNotFinish(interrupted.error)
        } catch let interrupted as ArchiveReader.Interrupted {
            _ = worker.stop()
            let fatal = interrupted.error as? ArchiveError
            // Damage to the compressed file comes first: what was found before it (an id that
            // is no UUID) is most likely what the damaged bytes inflated to (reliability.md).
            let damageFirst = fatal?.kind == .damagedCompression
            if !damageFirst { report.add(errors: interrupted.problems) }
            report.error(fatal?.table, fatal?.message ?? "\(interrupted.error)", limit: fatal?.limit, advice: VerifyProblem.advice(for: fatal))
            if damageFirst { report.add(errors: interrupted.problems) }
            report.tables = interrupted.summary.tableCounts
            report.tablesComplete = false
            if interrupted.summary.formatVersion != 0 {
                report.formatBeforeError = (interrupted.summary.formatVersion, interrupted.summary.isCompressed)
            }
            return report
        } catch let error as ArchiveError where error.isMachineFailure {
            // Decryption without memory (scrypt) before a byte was read: nothing known of the archive.
            _ = worker.stop()
            throw VerifyError.couldNotFinish(error)
        } catch let error as ArchiveError {
            _ = worker.stop()
            let cannotRead = error.kind == .encrypted || error.kind == .decryption || error.kind == .keysDoNotOpen
            report.error(nil, error.message + (cannotRead ? "; verify cannot vouch for an archive it cannot read" : ""), limit: error.limit,
                         advice: VerifyProblem.advice(for: error))
            report.tablesComplete = false
            return report
        }
        var checked = try worker.finish()
        let archiveTree = try roundTrip.finish()
        report.summary = summary
        report.tables = summary.tableCounts
        if !summary.isCompressed {
            report.warning(nil, "plain JSON: the file carries no checksum, so damage inside a value cannot be detected", advice: .exportCompressed)
        }
        report.add(errors: summary.problems)
        report.add(errors: try checked.repeatedKeys())
        for mismatch in summary.countMismatches {
            let declared = mismatch.declared.map { "declares \($0) rows" } ?? "declares no count"
            report.error(mismatch.table, "\(mismatch.table): the file \(declared) but holds \(mismatch.found): rows were lost or added after the count")
        }
        for warning in summary.warnings { report.warning(warning.table, warning.message) }
        report.add(errors: checked.problems)
        try classifyDocuments(archiveTree, &report)

        // 3. References: warnings, since the app keeps orphans.
        for problem in try checked.danglingReferences() + checked.crowdedReadinessDays(in: timeZone) { report.add(problem) }

        // 5. Against a store.
        if let store, let comparison = roundTrip.comparison {
            let differences = try comparison.finish(archiveTree: summary.hasDocuments ? archiveTree : nil, storeDirectory: store.directory)
            report.storeDiff = differences
            for (table, difference) in differences.sorted(by: { $0.key < $1.key }) where !difference.isEmpty {
                if table == ArchiveTable.readinessDailies.key, !Self.carriesReadiness(summary) {
                    report.warning(table, """
                        readinessDailies: the store's \(difference.extra) rows are not in the archive, as format 1 cannot carry \
                        the readiness history; an import of it recomputes the last 90 days
                        """)
                    continue
                }
                report.error(table, "\(table) differs from the store: \(difference.missing) missing from the store, \(difference.extra) only in the store, \(difference.changed) changed")
            }
        }

        // 4. Round trip, which ran beside the read: it counts when everything else is sound.
        if report.ok {
            if let failure = visitor.failure ?? roundTrip.failure {
                report.error(nil, failure)
                report.roundTrip = false
            } else {
                let differences = roundTrip.differences.merging(visitor.differences, uniquingKeysWith: +)
                for (table, count) in differences.sorted(by: { $0.key < $1.key }) {
                    report.error(table, "round trip: \(count) \(table == "documents" ? "documents" : "rows") of \(table) do not come back as they were read")
                }
                report.roundTrip = differences.isEmpty
            }
        }
        return report
    }

    /// Whether the archive can hold readiness rows: format 2, or a format-1 file that has the
    /// key anyway. A format-1 archive (`--format-version 1`, the app's first lines) has none
    /// by design, so a store's readiness history is no difference to fail on (as a tree is
    /// not compared with an archive that does not carry one).
    private static func carriesReadiness(_ summary: ArchiveSummary) -> Bool {
        summary.formatVersion >= 2 || summary.rowsFound[ArchiveTable.readinessDailies.key] != nil
    }

    private static func classifyDocuments(_ tree: DocumentTree, _ report: inout VerifyReport) throws {
        for path in tree.documents {
            let document: ClassifiedDocument
            do {
                document = try tree.classify(path)
            } catch where MachineFailure.caused(error) {
                throw error
            } catch {
                report.error("documents", "\(path): cannot be read back: \(error)")
                continue
            }
            report.documentClasses[document.state.label, default: 0] += 1
            switch document.state {
            case .newer(let version):
                report.warning("documents", "\(path): schema version \(version) is newer than this tool reads; it is carried byte for byte (quarantined)")
            case .unreadable(let reason):
                report.warning("documents", "\(path): unreadable (\(reason)); it is carried byte for byte")
            default:
                break
            }
        }
    }
}
