import Foundation
import HeraldCore
import Testing

@testable import HeraldClient

/// `HeraldClient` depends on nothing (an iOS app links Foundation only), so it copies the server's
/// preferences and JSON shapes instead of importing `HeraldCore`. These keep the copies equal: what
/// the server writes, the client reads and writes back unchanged.
@Suite("HeraldClient's copies of the server's shapes")
struct ClientShapeTests {
    @Test("Preferences with every member: the server's JSON, read and written by the client, is the same preferences")
    func preferences() throws {
        let body = """
            {"enabled_sources":["cam-front","cam-back"],"enabled_categories":["vehicle"],\
            "quiet_hours":{"start":"22:00","end":"07:00","timezone":"Europe/Paris"},"quiet_hours_mode":"defer",\
            "sound_enabled":false,"muted_until":"2026-11-28T06:00:00Z"}
            """
        let served = try HeraldCore.Preferences(parsing: JSONValue.parse(Array(body.utf8)))
        // Every member the server knows is set, so a member the client lacks would be lost below.
        let members: [String: JSONValue] = served.json.objectValue ?? [:]
        #expect(Set(members.keys) == HeraldCore.Preferences.fields)
        let servedBytes: [UInt8] = served.json.serialized()
        let client: ClientPreferences = try JSONDecoder().decode(
            ClientPreferences.self, from: Data(servedBytes))
        let written: Data = try JSONEncoder().encode(client)
        let readBack = try HeraldCore.Preferences(parsing: JSONValue.parse(Array(written)))
        #expect(readBack == served)
        // The defaults agree too: an empty object is the same preferences on both sides.
        let empty: ClientPreferences = try JSONDecoder().decode(
            ClientPreferences.self, from: Data("{}".utf8))
        let emptyWritten: Data = try JSONEncoder().encode(empty)
        #expect(try HeraldCore.Preferences(parsing: JSONValue.parse(Array(emptyWritten))) == HeraldCore.Preferences())
    }

    @Test("A JSON value of every kind (an installation's attributes) survives HeraldJSON unchanged")
    func attributes() throws {
        let body = #"{"a":null,"b":true,"c":3,"d":-2.5,"e":"text","f":[1,"two",{"g":false}],"h":{"i":[]}}"#
        let served = try JSONValue.parse(Array(body.utf8))
        let servedBytes: [UInt8] = served.serialized()
        let client: HeraldJSON = try JSONDecoder().decode(HeraldJSON.self, from: Data(servedBytes))
        let written: Data = try JSONEncoder().encode(client)
        #expect(try JSONValue.parse(Array(written)) == served)
    }
}
