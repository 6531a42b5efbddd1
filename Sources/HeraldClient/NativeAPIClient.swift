import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Herald's native API over URLSession: JSON in and out, the caller's credential, retries, and
/// Herald's error body turned into ``HeraldClientError``.
struct NativeAPIClient: Sendable {
    let configuration: HeraldClient.Configuration
    let session: URLSession

    /// An answer: status and body.
    struct Answer: Sendable {
        var status: Int
        var body: Data

        /// The body decoded as `Value`.
        /// - Throws: ``HeraldClientError/invalidResponse(status:_:)`` when it is not one.
        func decode<Value: Decodable>(_ type: Value.Type) throws -> Value {
            do {
                return try JSONDecoder().decode(Value.self, from: body)
            } catch {
                throw HeraldClientError.invalidResponse(status: status, "Unreadable \(Value.self): \(error)")
            }
        }
    }

    /// Calls `method path` with a JSON body, retrying per the policy.
    /// - Parameter accepting: Statuses returned as answers besides 2xx (a 404 the caller expects).
    /// - Throws: ``HeraldClientError``: the server's error for any other status, `network_error`
    ///   when no answer came after the last attempt; `CancellationError` when the task is canceled.
    func call(
        _ method: String, _ path: String, body: Data? = nil, accepting: Set<Int> = []
    ) async throws -> Answer {
        var request = URLRequest(url: configuration.baseURL.appendingPathComponent(path))
        request.httpMethod = method
        request.timeoutInterval = configuration.requestTimeout
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        if let body {
            request.httpBody = body
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        if let token = try await configuration.userToken() {
            request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
            if let appID = configuration.appID { request.setValue(appID, forHTTPHeaderField: "X-Herald-App") }
        } else {
            request.setValue("Bearer \(configuration.clientKey)", forHTTPHeaderField: "Authorization")
        }

        let policy = configuration.retry
        var attempt = 1
        while true {
            let answer: Answer
            let retryAfter: Duration?
            do {
                let (data, response) = try await session.data(for: request)
                guard let http = response as? HTTPURLResponse else {
                    throw HeraldClientError.invalidResponse(status: nil, "Not an HTTP response.")
                }
                answer = Answer(status: http.statusCode, body: data)
                retryAfter = Self.retryAfter(http)
            } catch let error as HeraldClientError {
                throw error
            } catch {
                try Task.checkCancellation()
                guard attempt < policy.maxAttempts, Self.isTransient(error),
                    let delay = policy.delay(retry: attempt, retryAfter: nil)
                else { throw HeraldClientError.network(error) }
                try await Task.sleep(for: delay)
                attempt += 1
                continue
            }
            if (200..<300).contains(answer.status) || accepting.contains(answer.status) { return answer }
            if answer.status == 429 || answer.status >= 500, attempt < policy.maxAttempts,
                let delay = policy.delay(retry: attempt, retryAfter: retryAfter)
            {
                try await Task.sleep(for: delay)
                attempt += 1
                continue
            }
            throw Self.error(answer)
        }
    }

    /// Herald's error body as ``HeraldClientError``; a body that is not one keeps the status.
    static func error(_ answer: Answer) -> HeraldClientError {
        struct Body: Decodable {
            struct Detail: Decodable {
                var code: String
                var message: String
                var field: String?
            }
            var error: Detail
        }
        guard let body = try? JSONDecoder().decode(Body.self, from: answer.body) else {
            return .invalidResponse(status: answer.status, "HTTP \(answer.status) without Herald's error body.")
        }
        return HeraldClientError(
            status: answer.status, code: body.error.code, message: body.error.message, field: body.error.field)
    }

    /// A `Retry-After` in seconds (the HTTP-date form is not used by Herald).
    static func retryAfter(_ response: HTTPURLResponse) -> Duration? {
        let value = response.allHeaderFields.first { ($0.key as? String)?.lowercased() == "retry-after" }?.value
        guard let text = value as? String, let seconds = Int(text.trimmingCharacters(in: .whitespaces)),
            seconds >= 0
        else { return nil }
        return .seconds(seconds)
    }

    /// Failures where the request may not have arrived or been answered: worth another attempt.
    static func isTransient(_ error: any Error) -> Bool {
        guard let error = error as? URLError else { return false }
        switch error.code {
        case .cancelled, .badURL, .unsupportedURL, .serverCertificateUntrusted, .serverCertificateHasBadDate,
            .serverCertificateNotYetValid, .serverCertificateHasUnknownRoot:
            return false
        default:
            return true
        }
    }
}
