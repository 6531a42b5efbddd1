import HTTPTypes
import HeraldCore
import Hummingbird
import Logging
import NIOCore

/// Liveness, readiness and the API description; no authentication.
struct OperationsRoutes: Sendable {
    let store: any Store

    func register(on group: RouterGroup<HeraldRequestContext>, table: inout RouteTable) {
        table.on(group, prefix: "", "/healthz", method: .get) { _, _ in
            .json(.object(["status": .string("ok")]))
        }
        table.on(group, prefix: "", "/readyz", method: .get) { _, context in
            do {
                try await store.ping()
                return .json(.object(["status": .string("ready")]))
            } catch {
                context.logger.warning("readiness check failed: database does not answer")
                throw HeraldError.unavailable("The database does not answer.")
            }
        }
        table.on(group, prefix: "", "/openapi.yaml", method: .get) { _, _ in
            Response(
                status: .ok, headers: [.contentType: "application/yaml; charset=utf-8"],
                body: .init(byteBuffer: ByteBuffer(string: OpenAPIDocument.yaml)))
        }
    }
}
