import Foundation
import HTTPTypes
import HeraldCore
import HeraldServerTestSupport
import HummingbirdTesting
import NIOCore
import OpenAPIKit
import Testing
import Yams

@testable import HeraldAPI
@testable import HeraldServer

@Suite("Operations routes")
struct OperationsTests {
    @Test("a readiness check that never returns, even when cancelled, is answered NoAnswer after its limit")
    func readinessLimit() async throws {
        let started = ContinuousClock.now
        await #expect(throws: OperationsRoutes.NoAnswer.self) {
            try await OperationsRoutes.answer(within: .milliseconds(200)) {
                // A database call that hangs and ignores cancellation.
                let forever = ContinuousClock.now + .seconds(3600)
                while ContinuousClock.now < forever { try? await Task.sleep(for: .milliseconds(50)) }
            }
        }
        #expect(ContinuousClock.now - started < .seconds(60), "the check was not waited for")
        try await OperationsRoutes.answer(within: .seconds(5)) {}
        await #expect(throws: HeraldError.self) {
            try await OperationsRoutes.answer(within: .seconds(5)) { throw HeraldError.unavailable("no") }
        }
    }

    @Test("healthz and readyz answer without a key")
    func probes() async throws {
        // The readiness limit on the test's clock: a loaded machine's slow write is not a database that
        // does not answer.
        let harness = try await ServerHarness(timersOnClock: true)
        try await harness.run { api async throws in
            let health = try await api.call(.get, "/healthz", bearer: nil)
            #expect(health.status == .ok)
            #expect(health.string("status") == "ok")
            let ready = try await api.call(.get, "/readyz", bearer: nil)
            #expect(ready.status == .ok)
            #expect(ready.string("status") == "ready")
        }
    }

    @Test("Unknown routes answer the native error shape")
    func unknownRoute() async throws {
        let harness = try await ServerHarness()
        try await harness.run { api async throws in
            // (Two segments, `/<topic>/<sequence id>`, and one are ntfy's paths: another method there is a 405.)
            let response = try await api.call(.get, "/v2/nothing/here", bearer: nil)
            #expect(response.status == .notFound)
            #expect(response.errorCode == "not_found")
            #expect(response["error.field"] == .null)
        }
    }

    @Test("openapi.yaml is a valid OpenAPI 3.1 document of exactly the routes the router serves")
    func openAPICoversRoutes() async throws {
        let harness = try await ServerHarness()
        let routes = Set(try harness.router().routes)
        try await harness.run { api async throws in
            let response = try await api.client.executeRequest(
                uri: "/openapi.yaml", method: .get, headers: [:], body: nil)
            #expect(response.status == .ok)
            #expect(response.headers[.contentType]?.hasPrefix("application/yaml") == true)
            let document = try YAMLDecoder().decode(OpenAPI.Document.self, from: String(buffer: response.body))
            #expect(document.openAPIVersion == .v3_1_1)
            // References resolve, operations are unique, path parameters are declared.
            try document.validate()
            var described: Set<RouteDescriptor> = []
            for route in document.routes {
                for endpoint in route.pathItem.endpoints {
                    described.insert(
                        RouteDescriptor(
                            method: HTTPRequest.Method(endpoint.method.rawValue)!, path: route.path.rawValue))
                }
            }
            #expect(described == routes)
            #expect(routes.contains(RouteDescriptor(method: .get, path: "/openapi.yaml")))
            #expect(routes.contains(RouteDescriptor(method: .post, path: "/api/internal/push/register")))
        }
    }

    /// The committed copy of the document the test harness's server serves (`docs/openapi.yaml`):
    /// a change to a route's declaration shows in review as a change to this file. After a deliberate
    /// change, `HERALD_UPDATE_OPENAPI=1` writes the served document there instead of comparing.
    static let goldenOpenAPI = URL(filePath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appending(path: "docs/openapi.yaml")

    @Test("The served openapi.yaml is byte for byte the committed docs/openapi.yaml")
    func openAPIMatchesGolden() async throws {
        let harness = try await ServerHarness()
        try await harness.run { api async throws in
            let response = try await api.client.executeRequest(
                uri: "/openapi.yaml", method: .get, headers: [:], body: nil)
            #expect(response.status == .ok)
            let served = String(buffer: response.body)
            if ProcessInfo.processInfo.environment["HERALD_UPDATE_OPENAPI"] == "1" {
                try served.write(to: Self.goldenOpenAPI, atomically: true, encoding: .utf8)
            }
            let golden = try String(contentsOf: Self.goldenOpenAPI, encoding: .utf8)
            #expect(served == golden, "the served /openapi.yaml differs from docs/openapi.yaml")
        }
    }

    @Test("A known path asked with another method is 405 with Allow (RFC 9110 §15.5.6); an unknown one 404")
    func methodNotAllowed() async throws {
        let harness = try await ServerHarness()
        try await harness.run { api async throws in
            let put = try await api.call(.put, "/v1/installations", bearer: nil)
            #expect(put.status == .methodNotAllowed)
            #expect(put.errorCode == "method_not_allowed")
            #expect(put.headers[.allow] == "POST, GET")
            let post = try await api.call(.post, "/v1/installations/abc", bearer: ServerHarness.serverKey)
            #expect(post.status == .methodNotAllowed)
            #expect(post.headers[.allow] == "GET, PATCH, DELETE")
            let dialect = try await api.call(.get, "/api/internal/push/register", bearer: nil)
            #expect(dialect.status == .methodNotAllowed)
            #expect(dialect.headers[.allow] == "POST")
            let deeper = try await api.call(.get, "/v1/installations/abc/nothing", bearer: nil)
            #expect(deeper.status == .notFound)
        }
    }

    @Test("List query parameters are checked against their documented rules")
    func declaredQueryParameters() async throws {
        let harness = try await ServerHarness()
        try await harness.run { api async throws in
            let empty = try await api.call(.get, "/v1/installations?user_id=", bearer: ServerHarness.serverKey)
            #expect(empty.status == .badRequest)
            #expect(empty.errorCode == "invalid_length")
            #expect(empty["error.field"] == .string("user_id"))
            let channel = try await api.call(.get, "/v1/installations?channel=a%20b", bearer: ServerHarness.serverKey)
            #expect(channel.errorCode == "invalid_channel")
            let unknown = try await api.call(.get, "/v1/notifications?user_id=x", bearer: ServerHarness.serverKey)
            #expect(unknown.errorCode == "unknown_field")
            let status = try await api.call(.get, "/v1/notifications?status=sent", bearer: ServerHarness.serverKey)
            #expect(status.errorCode == "invalid_value")
            let fine = try await api.call(
                .get, "/v1/installations?channel=news&valid=true&limit=5", bearer: ServerHarness.serverKey)
            #expect(fine.status == .ok)
        }
    }
}
