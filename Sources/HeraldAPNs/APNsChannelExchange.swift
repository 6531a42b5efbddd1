import HeraldCore
import HeraldHTTP2
import NIOCore
import NIOHPACK

/// One request of the broadcast or channel management API on a connection pool: signed with the provider token when
/// the client uses one, retried once with a renewed token after `ExpiredProviderToken`, and its answer checked
/// against the one success status the request expects.
struct APNsChannelExchange: Sendable {
    let pool: HTTP2ConnectionPool
    let providerToken: APNsProviderToken?

    /// Sends the request `make` builds for an `authorization` header value (nil with certificate authentication).
    /// - Returns: The answer, whose status is `success`.
    /// - Throws: `APNsChannelError`: `rejected` for an error status, `unexpectedAnswer` for another success status,
    ///   `noAnswer`, `signingFailed`.
    func perform(
        success: Int, _ make: (_ authorization: String?) -> HTTP2Request
    ) async throws(APNsChannelError) -> HTTP2Response {
        var (answer, authorization) = try await attempt(make)
        if answer.status == 403, Self.reason(of: answer) == .expiredProviderToken, let providerToken,
            let authorization, (try? await providerToken.expired(authorization)) == true
        {
            (answer, _) = try await attempt(make)
        }
        let requestID = answer.headers.first(name: "apns-request-id")
        if answer.status == success { return answer }
        if (200..<300).contains(answer.status) {
            throw .unexpectedAnswer(
                status: answer.status, requestID: requestID,
                "APNs answered \(answer.status) where \(success) was expected.")
        }
        throw .rejected(status: answer.status, reason: Self.reason(of: answer), requestID: requestID)
    }

    private func attempt(
        _ make: (_ authorization: String?) -> HTTP2Request
    ) async throws(APNsChannelError) -> (HTTP2Response, String?) {
        var authorization: String?
        if let providerToken {
            do {
                authorization = try await providerToken.authorization()
            } catch {
                throw .signingFailed(error)
            }
        }
        do {
            return (try await pool.execute(make(authorization)), authorization)
        } catch {
            throw .noAnswer(error)
        }
    }

    /// The `reason` of an error answer's JSON body.
    static func reason(of answer: HTTP2Response) -> APNsChannelReason? {
        guard case .string(let wire)? = try? JSONValue.parse(answer.body.readableBytesView).objectValue?["reason"]
        else { return nil }
        return APNsChannelReason(wire: wire)
    }
}
