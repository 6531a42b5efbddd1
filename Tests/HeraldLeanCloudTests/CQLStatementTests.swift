import HeraldCore
import HeraldLeanCloud
import Testing

@Suite("CQL: statements translated to the where query language")
struct CQLStatementTests {
    private func whereObject(_ cql: String) throws -> JSONValue {
        let statement = try CQLStatement(parsing: cql)
        // Whatever CQL gives, the query parser accepts.
        _ = try InstallationQuery(parsing: statement.whereObject, field: "cql")
        return statement.whereObject
    }

    private func json(_ text: String) throws -> JSONValue { try JSONValue.parse(Array(text.utf8)) }

    @Test(
        "Conditions of LeanCloud's CQL guide become the where object",
        arguments: [
            ("select * from _Installation where deviceType='ios'", #"{"deviceType": "ios"}"#),
            ("select * from _Installation where name!='dennis'", #"{"name": {"$ne": "dennis"}}"#),
            ("select * from _Installation where badge <> 3", #"{"badge": {"$ne": 3}}"#),
            (
                "select * from _Installation where level is exists and badge > 80 and badge <= 100",
                #"{"$and": [{"level": {"$exists": true}}, {"badge": {"$gt": 80}}, {"badge": {"$lte": 100}}]}"#
            ),
            (
                "select * from _Installation where badge>80 and badge<=100 or badge=0",
                #"{"$or": [{"$and": [{"badge": {"$gt": 80}}, {"badge": {"$lte": 100}}]}, {"badge": 0}]}"#
            ),
            (
                "select * from _Installation where (badge>80 and badge<=100) or badge=0",
                #"{"$or": [{"$and": [{"badge": {"$gt": 80}}, {"badge": {"$lte": 100}}]}, {"badge": 0}]}"#
            ),
            (
                "select * from _Installation where updated_at < date('2011-08-20T02:06:57.931Z')",
                #"{"updated_at": {"$lt": {"__type": "Date", "iso": "2011-08-20T02:06:57.931Z"}}}"#
            ),
            (
                "select * from _Installation where name like 'den_is%'",
                #"{"name": {"$regex": "^\\Qden\\E.\\Qis\\E.*$"}}"#
            ),
            ("select * from _Installation where name regexp 'dennis.*'", #"{"name": {"$regex": "dennis.*"}}"#),
            (
                "select * from _Installation where channels in ('a', \"b\") and badge not in (1, -2)",
                #"{"$and": [{"channels": {"$in": ["a", "b"]}}, {"badge": {"$nin": [1, -2]}}]}"#
            ),
            ("select * from _Installation where scores all (100,100)", #"{"scores": {"$all": [100, 100]}}"#),
            ("select * from _Installation where vip is not exists", #"{"vip": {"$exists": false}}"#),
            ("select * from _Installation where vip = true and x = null", #"{"$and": [{"vip": true}, {"x": null}]}"#),
            (
                "select * from _Installation where location near geopoint(30.0, -20.0) max 1 km",
                #"{"location": {"$nearSphere": {"__type": "GeoPoint", "latitude": 30.0, "longitude": -20.0}, "$maxDistanceInKilometers": 1}}"#
            ),
            (
                "select * from _Installation where location near [30.0, -20.0]",
                #"{"location": {"$nearSphere": {"__type": "GeoPoint", "latitude": 30.0, "longitude": -20.0}}}"#
            ),
            (
                "select * from _Installation where location within [30.82,-122.53] and [37.71,-122.37]",
                #"{"location": {"$within": {"$box": [{"__type": "GeoPoint", "latitude": 30.82, "longitude": -122.53}, {"__type": "GeoPoint", "latitude": 37.71, "longitude": -122.37}]}}}"#
            ),
            (
                "select * from _Installation where owner = pointer('_User', '51e3a359')",
                #"{"owner.objectId": "51e3a359", "owner.className": "_User"}"#
            ),
            ("select * from _Installation where name = 'it''s'", #"{"name": "it's"}"#),
        ])
    func translated(cql: String, expected: String) throws {
        #expect(try whereObject(cql) == json(expected))
    }

    @Test("Select lists, limit and order are read as the REST API names them")
    func clauses() throws {
        let statement = try CQLStatement(
            parsing:
                "SELECT count(*), deviceType FROM _Installation WHERE badge > 1 LIMIT 100,10 ORDER BY score,+name DESC")
        #expect(statement.className == "_Installation")
        #expect(statement.count)
        #expect(statement.keys == ["deviceType"])
        #expect(statement.skip == 100)
        #expect(statement.limit == 10)
        #expect(statement.order == "-score,name")
        let all = try CQLStatement(parsing: "select * from _Installation order by -score, name")
        #expect(all.keys == nil)
        #expect(all.whereObject == .object([:]))
        #expect(all.order == "-score,name")
    }

    @Test(
        "What CQL cannot say here is refused with invalid_query",
        arguments: [
            "update _Installation set badge = 1",
            "select * from _Installation where name in (select name from GameScore where score > 80)",
            "select * from _Installation where name = (select name from GameScore)",
            "select * from _Installation where name not like 'x%'",
            "select * from _Installation where name",
            "select * from _Installation where name = 'unterminated",
            "select * from _Installation where badge > 1 trailing",
            "select include post, * from Comment",
            "select * from _Installation where location near geopoint(91, 0)",
        ])
    func refused(cql: String) throws {
        let error = #expect(throws: HeraldError.self) {
            let statement = try CQLStatement(parsing: cql, field: "cql")
            _ = try InstallationQuery(parsing: statement.whereObject, field: "cql")
        }
        #expect(error?.code == "invalid_query")
        #expect(error?.field?.hasPrefix("cql") == true)
    }
}
