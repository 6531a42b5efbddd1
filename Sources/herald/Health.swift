import ArgumentParser
import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1

/// `herald health`: asks a running server whether it is ready, for container health checks
/// (the runtime image carries no curl).
struct Health: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Exit 0 when a running Herald answers its readiness check, 1 otherwise.",
        discussion: """
            GETs the URL (default http://127.0.0.1:8080/readyz: the server is up and its database \
            answers) and exits 0 on a 2xx answer, 1 on any other answer, a refused connection or a timeout.

            Examples:
              herald health
              herald health --url http://127.0.0.1:9000/readyz --timeout 2
              HEALTHCHECK CMD ["herald", "health"]        (Dockerfile)
            """)

    @Option(help: "The URL to GET.") var url = "http://127.0.0.1:8080/readyz"
    @Option(help: "Seconds to wait for the answer.") var timeout = 5

    func run() async throws {
        var request = HTTPClientRequest(url: url)
        request.method = .GET
        do {
            let response = try await HTTPClient.shared.execute(request, timeout: .seconds(Int64(max(1, timeout))))
            _ = try? await response.body.collect(upTo: 1 << 16)
            guard (200..<300).contains(response.status.code) else {
                say("\(url): HTTP \(response.status.code)")
                throw ExitCode(1)
            }
            say("\(url): HTTP \(response.status.code)")
        } catch let exit as ExitCode {
            throw exit
        } catch {
            say("\(url): \(error)")
            throw ExitCode(1)
        }
    }
}
