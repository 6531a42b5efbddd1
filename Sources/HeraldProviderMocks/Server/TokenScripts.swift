import Synchronization

/// Scripted answers per device token, as both mocks keep them: scripts for one token queue up in
/// call order, and each answers `times` requests (nil: every later request).
final class TokenScripts<Response: Sendable>: Sendable {
    private struct Entry: Sendable {
        var response: Response
        var remaining: Int?
    }

    private let queues = Mutex<[String: [Entry]]>([:])

    /// Queues an answer for `token`.
    func add(token: String, _ response: Response, times: Int?) {
        queues.withLock { $0[token, default: []].append(Entry(response: response, remaining: times)) }
    }

    /// Removes every script.
    func clear() {
        queues.withLock { $0.removeAll() }
    }

    /// The answer for the next request to `token`, if one is scripted; uses up one of its times.
    func next(for token: String) -> Response? {
        queues.withLock { queues in
            guard var queue = queues[token], !queue.isEmpty else { return nil }
            let response = queue[0].response
            if let remaining = queue[0].remaining {
                if remaining <= 1 { queue.removeFirst() } else { queue[0].remaining = remaining - 1 }
            }
            queues[token] = queue.isEmpty ? nil : queue
            return response
        }
    }
}
