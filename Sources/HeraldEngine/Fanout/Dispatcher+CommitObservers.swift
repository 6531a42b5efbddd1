import Foundation
import HeraldCore
import Synchronization

extension Dispatcher {
    /// What a dialect is told after each page of one of its notifications commits: the notification
    /// and the counts that page added. For a notification to one device, `sent` is 1 when the
    /// provider (or the device's direct channel) took it, and `failed`, `invalid` or `skippedExpired`
    /// is 1 when it will not be delivered; a page that leaves it waiting (a retry, a confirmation)
    /// adds none of them.
    public typealias CommitObserver = @Sendable (PushNotification, NotificationCounts) async -> Void

    /// Calls `observer` after each committed page of the notifications whose `source` is `source`,
    /// replacing the source's earlier observer. The call follows the commit, on the node that made
    /// it: a node that stops in between never makes it.
    public func observeCommits(source: String, _ observer: @escaping CommitObserver) {
        let box = CommitObservers.Box(observer)
        commitObservers.withLock { $0.bySource[source] = box }
    }

    /// Tells the observer of the notification's source about a committed page.
    func committed(_ page: PageCommit, of notification: PushNotification) async {
        guard let source = notification.source,
            let observer = commitObservers.withLock({ $0.bySource[source] })
        else { return }
        await observer.call(notification, page.counts)
    }
}

/// The commit observers by source. Each closure is held by a class: a closure read out of a
/// `Mutex`'s value through its `inout` access is re-abstracted and written back deeper each time
/// (see ``DirectChannels``).
struct CommitObservers: Sendable {
    final class Box: Sendable {
        let call: Dispatcher.CommitObserver
        init(_ call: @escaping Dispatcher.CommitObserver) { self.call = call }
    }

    var bySource: [String: Box] = [:]
}
