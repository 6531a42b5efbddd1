import Foundation
import HTTPTypes
import HeraldCore
import HeraldServer
import HummingbirdTesting
import NIOCore
import Testing
import Yams

@Suite("Operations routes")
struct OperationsTests {
    @Test("healthz and readyz answer without a key")
    func probes() async throws {
        let harness = try await ServerHarness()
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
            let response = try await api.call(.get, "/v2/nothing", bearer: nil)
            #expect(response.status == .notFound)
            #expect(response.errorCode == "not_found")
            #expect(response["error.field"] == .null)
        }
    }

    @Test("openapi.yaml is OpenAPI 3.1 and describes every route the router serves")
    func openAPICoversRoutes() async throws {
        let harness = try await ServerHarness()
        let routes = harness.router().routes
        #expect(routes.count >= 8)
        try await harness.run { api async throws in
            let response = try await api.client.executeRequest(
                uri: "/openapi.yaml", method: .get, headers: [:], body: nil)
            #expect(response.status == .ok)
            #expect(response.headers[.contentType]?.hasPrefix("application/yaml") == true)
            let text = String(buffer: response.body)
            let document = try #require(try Yams.load(yaml: text) as? [String: Any])
            #expect(document["openapi"] as? String == "3.1.0")
            let paths = try #require(document["paths"] as? [String: Any])
            for route in routes {
                let operations = paths[route.path] as? [String: Any]
                #expect(operations?[route.method.rawValue.lowercased()] != nil, "\(route) is missing from openapi.yaml")
            }
            let schemas = try #require((document["components"] as? [String: Any])?["schemas"] as? [String: Any])
            for name in ["Installation", "InstallationRegistration", "InstallationPatch", "InstallationList", "Error"] {
                #expect(schemas[name] != nil, "schema \(name)")
            }
        }
    }
}
