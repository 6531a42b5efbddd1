import Foundation
import HeraldCore
import Logging
import Synchronization

/// The jobs this node's workers are working now, so that their leases are renewed while they work
/// (``Dispatcher/renewLeases()``): a job whose page outlasts its lease — a provider that answers
/// slowly, a starved machine — is not taken over by another worker while its own worker lives, and
/// its devices are not sent to twice. A job costs its worker an entry here, not a task; one loop a
/// node renews them.
final class HeldJobs: Sendable {
    private let owners = Mutex<[Int64: String]>([:])

    /// A worker (`owner`) took `job`.
    func hold(_ job: Job, owner: String) {
        owners.withLock { $0[job.id] = owner }
    }

    /// The worker is done with `job`.
    func release(_ job: Job) {
        owners.withLock { _ = $0.removeValue(forKey: job.id) }
    }

    /// Every job held now, with its worker.
    var all: [(id: Int64, owner: String)] {
        owners.withLock { $0.map { ($0.key, $0.value) } }
    }
}

extension Dispatcher {
    /// Renews the lease of every job this node's workers are working, every third of the lease,
    /// until cancelled, to a whole lease from then. A job is renewed within a third of a lease of
    /// its worker taking it (a handed job waited at most half a lease before: it is renewed before
    /// its lease ends); its page commits renew it too.
    func renewLeases() async {
        while !Task.isCancelled {
            do { try await clock.sleep(for: configuration.lease / 3) } catch { return }
            let lockedUntil = now().addingTimeInterval(configuration.lease.timeInterval)
            for (id, owner) in heldJobs.all {
                do {
                    // False: another worker has the job now; its own worker's next commit finds that out.
                    _ = try await store.renewJob(id: id, owner: owner, lockedUntil: lockedUntil)
                } catch {
                    logger.warning("a job's lease not renewed", metadata: ["herald.job": "\(id)", "error": "\(error)"])
                }
            }
        }
    }
}
