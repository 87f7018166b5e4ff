import Testing
import PulseSQLite

/// How every connection is configured when it opens.
@Suite("Connection configuration")
struct ConnectionConfigurationTests {
    @Test("double-quoted text names a column or nothing: a column that is gone is an error, never its own name as a string")
    func doubleQuotedTextIsAnIdentifierOnly() throws {
        let database = try SQLiteDatabase.unnamed()
        try database.execute(#"CREATE TABLE profiles ("id" TEXT, "name" TEXT); INSERT INTO profiles VALUES ('a', 'Zoë')"#)
        let named = try database.prepare(#"SELECT "name" FROM profiles"#)
        #expect(try named.step() && named.text(at: 0) == "Zoë")
        #expect(throws: SQLiteError.self) { try database.prepare(#"SELECT "nickname" FROM profiles"#) }
        #expect(throws: SQLiteError.self) { try database.execute(#"INSERT INTO profiles VALUES ("b", "c")"#) }
        #expect(throws: SQLiteError.self) { try database.execute(#"CREATE INDEX byNickname ON profiles ("nickname")"#) }
        #expect(try database.integer("SELECT count(*) FROM profiles") == 1)
    }
}
