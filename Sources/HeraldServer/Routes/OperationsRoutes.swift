import HTTPTypes
import HeraldCore
import Hummingbird
import Logging
import NIOCore

/// Liveness, readiness and the API description; no authentication.
struct OperationsRoutes: Sendable {
    let store: any Store

    /// Registers the routes; call it last: the document describes every route registered before
    /// and these.
    func register(on group: RouterGroup<HeraldRequestContext>, table: inout RouteTable) {
        let document = ByteBuffer(
            string: OpenAPIDocument.yaml(
                table.operations + [Self.healthOperation, Self.readyOperation, Self.documentOperation]))
        table.on(group, prefix: "", Self.healthOperation) { _, _ in
            .json(.object(["status": .string("ok")]))
        }
        table.on(group, prefix: "", Self.readyOperation) { _, context in
            do {
                try await store.ping()
            } catch {
                context.logger.warning("readiness check failed: database does not answer")
                throw HeraldError.unavailable("The database does not answer.")
            }
            do {
                try await store.probeWrite()
            } catch {
                let failure = HeraldError.classify(error) ?? .storageUnavailable("the write failed")
                context.logger.warning(
                    "readiness check failed: database cannot be written",
                    metadata: ["herald.error": "\(failure.message)"])
                throw failure
            }
            return .json(.object(["status": .string("ready")]))
        }
        table.on(group, prefix: "", Self.documentOperation) { _, _ in
            Response(
                status: .ok, headers: [.contentType: "application/yaml; charset=utf-8"],
                body: .init(byteBuffer: document))
        }
    }
}
