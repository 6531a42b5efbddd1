import AsyncHTTPClient
import Foundation
import HeraldCore
import HeraldProviderMocks
import HeraldSNS
import HeraldTestSupport
import NIOHTTP1
import Testing

extension MotoServer {
    /// The server the running suite started.
    @TaskLocal static var current: MotoServer?
}

/// Starts one moto server around a suite, makes it ``MotoServer/current`` for the suite's tests,
/// and stops it after, whether the tests passed or not.
struct MotoServerScope: SuiteTrait, TestScoping {
    var isRecursive: Bool { false }

    func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        let server = try await MotoServer.start()
        do {
            try await MotoServer.$current.withValue(server) { try await function() }
        } catch {
            server.stop()
            throw error
        }
        server.stop()
    }
}

extension Trait where Self == MotoServerScope {
    /// One moto server for the whole suite.
    static var motoServer: Self { MotoServerScope() }
}
