import Foundation
import Testing
@testable import GadgetbridgeTestSupport
import PulseSQLite
@testable import PulseTestSupport

/// How `import` and `inspect` reach the database file: through a link, with a `-wal` beside it
/// (docs/gadgetbridge.md, "How the file is read").
@Suite struct GadgetbridgeInputTests {
    @Test("a database reached through a symbolic link (absolute and relative) is read as the file itself")
    func symlinkedDatabase() throws {
        let dir = TemporaryDirectory()
        let file = try GadgetbridgeTests.history(dir)
        try FileManager.default.createSymbolicLink(atPath: dir.file("abslink"), withDestinationPath: file)
        try FileManager.default.createSymbolicLink(atPath: dir.file("rellink"), withDestinationPath: "Gadgetbridge")
        for link in ["abslink", "rellink"] {
            let inspected = try CLI.run(["inspect", dir.file(link), "--json"])
            #expect(inspected.exitCode == 0, "\(link): \(inspected.stderr)")
            #expect(inspected.json["dialect"] as? String == "gadgetbridge")
        }
        let json = try GadgetbridgeTests.importJSON([dir.file("abslink"), "--store", dir.file("store"), "--no-backfill"])
        #expect(GadgetbridgeTests.tables(json)["COLMI_HEART_RATE_SAMPLE"]?["imported"] == 864)
    }
}
