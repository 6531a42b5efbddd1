import Foundation
import HTTPTypes
import HeraldCore
import HeraldTestSupport
import HummingbirdWSClient
import Logging
import NIOWebSocket
import Synchronization

/// A real WebSocket client of the direct channel, for tests: what the server sends is read in
/// order with ``next(within:)``; ``send(_:)`` writes a JSON message; ``close()`` ends the socket.
package final class ChannelTestClient: Sendable {
    private struct Received {
        var messages: [JSONValue] = []
        var closed = false
    }

    private final class Inbox: Sendable {
        let state = Mutex(Received())
        func withLock<T>(_ body: (inout Received) -> T) -> T { state.withLock { body(&$0) } }
    }

    private let inbox = Inbox()
    private let outgoing: AsyncStream<String>.Continuation
    private let connection: Task<Void, any Error>

    /// Connects to `path` on 127.0.0.1:`port`, with an `Authorization: Bearer` header when given.
    package init(port: Int, path: String = "/v1/channel", bearer: String? = nil) {
        let (outgoing, output) = AsyncStream<String>.makeStream()
        self.outgoing = output
        let inbox = self.inbox
        var headers = HTTPFields()
        if let bearer { headers[.authorization] = "Bearer \(bearer)" }
        connection = Task {
            defer { inbox.withLock { $0.closed = true } }
            try await WebSocketClient.connect(
                url: "ws://127.0.0.1:\(port)\(path)", configuration: .init(additionalHeaders: headers),
                logger: Logger(label: "channel-test-client")
            ) { inbound, outbound, _ in
                let reader = Task {
                    for try await message in inbound.messages(maxSize: 1 << 20) {
                        if case .text(let text) = message, let value = try? JSONValue.parse(Array(text.utf8)) {
                            inbox.withLock { $0.messages.append(value) }
                        }
                    }
                    inbox.withLock { $0.closed = true }
                }
                for await text in outgoing { try await outbound.write(.text(text)) }
                try? await outbound.close(.normalClosure, reason: nil)
                _ = try? await reader.value
            }
        }
    }

    /// The next message from the server; nil when the socket closed first or nothing came in time.
    package func next(within timeout: Duration = .seconds(10)) async -> JSONValue? {
        var message: JSONValue?
        try? await waitUntil("a message", timeout: timeout, every: .milliseconds(5)) {
            let closed: Bool
            (message, closed) = inbox.withLock { inbox -> (JSONValue?, Bool) in
                inbox.messages.isEmpty ? (nil, inbox.closed) : (inbox.messages.removeFirst(), false)
            }
            return message != nil || closed
        }
        return message
    }

    /// Sends a JSON message.
    package func send(_ value: JSONValue) {
        outgoing.yield(String(decoding: value.serialized(), as: UTF8.self))
    }

    /// Closes the socket and waits until it is closed; the error the connection ended with, if any.
    @discardableResult
    package func close() async -> (any Error)? {
        outgoing.finish()
        do {
            try await connection.value
            return nil
        } catch {
            return error
        }
    }

    /// Waits for the connection to end by itself (the server closed it).
    package func ended() async -> (any Error)? {
        do {
            try await connection.value
            return nil
        } catch {
            return error
        }
    }
}

extension JSONValue {
    /// A member of an object (nil for anything else).
    package subscript(key: String) -> JSONValue? { objectValue?[key] }

}
