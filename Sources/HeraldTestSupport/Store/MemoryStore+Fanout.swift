import Foundation
import HeraldCore
import Synchronization

// Resolving a target to its installations, and the ranges a large one is cut into.
extension MemoryStore {
    public func resolve(
        _ target: NotificationTarget, appID: String, after: String?, through: String?, limit: Int
    ) async throws -> [InstallationAddress] {
        read { state in
            Array(state.recipients(of: target, appID: appID, after: after, through: through).prefix(limit))
                .map(InstallationAddress.init)
        }
    }

    public func rangeBoundary(
        _ target: NotificationTarget, appID: String, after: String?, skip: Int
    ) async throws -> String? {
        guard skip > 0 else { return nil }
        return read { state in
            // Everyone: the app's installations, valid or not, whatever the filters (the app's id index).
            let candidates =
                if case .all = target.audience {
                    state.installations.values.filter { installation in
                        installation.appID == appID && after.map { installation.id > $0 } ?? true
                    }
                    .sorted { $0.id < $1.id }
                } else {
                    state.recipients(of: target, appID: appID, after: after, through: nil)
                }
            return candidates.count >= skip ? candidates[skip - 1].id : nil
        }
    }

    public func resolveFirstPages(_ requests: [FirstPageRequest]) async throws -> FirstPages {
        state.withLock { $0.firstPagesRead += requests.count }
        return read { state in
            var pages: [[InstallationAddress]] = []
            var preferring: [String] = []
            for request in requests {
                let page = state.recipients(of: request.target, appID: request.appID, after: nil, through: nil)
                    .prefix(request.limit).map(InstallationAddress.init)
                if request.withPreferences { preferring += page.map(\.installationID) }
                pages.append(page)
            }
            return FirstPages(pages: pages, preferences: state.preferences.filter { preferring.contains($0.key) })
        }
    }

    public func count(_ target: NotificationTarget, appID: String) async throws -> [PushService: Int] {
        read { state in
            state.recipients(of: target, appID: appID, after: nil, through: nil).reduce(into: [:]) {
                $0[$1.service, default: 0] += 1
            }
        }
    }

    public func preferences(installationIDs: [String]) async throws -> [String: Preferences] {
        let ids = Set(installationIDs)
        return read { state in state.preferences.filter { ids.contains($0.key) } }
    }

    public func incrementBadges(installationIDs: [String], now: Date) async throws -> [String: Int] {
        change { state in
            var badges: [String: Int] = [:]
            for id in Set(installationIDs) where state.installations[id] != nil {
                state.installations[id]?.badge += 1
                badges[id] = state.installations[id]?.badge
            }
            return badges
        }
    }

    // MARK: Ranges

    public func addRange(
        _ range: FanoutRange, jobID: Int64, owner: String, now: Date, lockedUntil: Date, waitUntil: Date
    ) async throws -> Bool {
        change { state in
            guard state.holds(jobID, owner: owner) else { return false }
            state.jobs[jobID]?.lockedUntil = lockedUntil
            if state.ranges[range.notificationID, default: [:]][range.index] == nil {
                state.ranges[range.notificationID, default: [:]][range.index] = FanoutRange(
                    notificationID: range.notificationID, index: range.index, after: range.after,
                    through: range.through)
            }
            state.scheduleJob(kind: .range, reference: range.jobReference, runAt: now)
            let last = range.through == nil
            if var stored = state.notifications[range.notificationID] {
                stored.cursor = last ? FanoutRange.ranged : FanoutRange.ranging
                stored.notification.status = .sending
                stored.notification.startedAt = stored.notification.startedAt ?? now
                state.notifications[range.notificationID] = stored
            }
            if last {
                state.jobs[jobID]?.lockedBy = nil
                state.jobs[jobID]?.lockedUntil = nil
                state.jobs[jobID]?.runAt = waitUntil
            }
            return true
        }
    }

    public func fanoutRanges(notificationID: String) async throws -> [FanoutRange] {
        read { state in (state.ranges[notificationID] ?? [:]).values.sorted { $0.index < $1.index } }
    }

    public func fanoutRange(notificationID: String, index: Int) async throws -> FanoutRange? {
        read { state in state.ranges[notificationID]?[index] }
    }

    public func releaseWhileRanging(
        jobID: Int64, owner: String, notificationID: String, runAt: Date
    ) async throws -> Bool {
        change { state in
            guard state.rangesLeft(notificationID) else { return false }
            if state.holds(jobID, owner: owner) {
                state.jobs[jobID]?.lockedBy = nil
                state.jobs[jobID]?.lockedUntil = nil
                state.jobs[jobID]?.runAt = runAt
            }
            return true
        }
    }
}

extension MemoryStore.State {
    /// The valid installations of the app a target selects, in id order, after `after` and up to
    /// `through` when given: its audience (none for raw tokens), platforms and services.
    func recipients(
        of target: NotificationTarget, appID: String, after: String?, through: String?
    ) -> [Installation] {
        let selected: (Installation) -> Bool
        switch target.audience {
        case .tokens: return []
        case .all: selected = { _ in true }
        case .installationIDs(let ids): selected = { ids.contains($0.id) }
        case .userIDs(let ids): selected = { installation in installation.userID.map { ids.contains($0) } ?? false }
        case .channels(let channels): selected = { !Set($0.channels).isDisjoint(with: channels) }
        case .query(let query): selected = { query.query.matches($0) }
        // Live Activities are the SQL stores' (`LiveActivityStore`): the memory store has no members.
        case .liveActivity, .liveActivityChannel: return []
        }
        func inBounds(_ id: String) -> Bool {
            if let after, id <= after { return false }
            if let through, id > through { return false }
            return true
        }
        func filtered(_ installation: Installation) -> Bool {
            if let platforms = target.platforms, !platforms.contains(installation.platform) { return false }
            if let services = target.services, !services.contains(installation.service) { return false }
            return true
        }
        return installations.values.filter {
            $0.appID == appID && $0.valid && inBounds($0.id) && selected($0) && filtered($0)
        }
        .sorted { $0.id < $1.id }
    }

    /// Whether a range of the notification is not done.
    func rangesLeft(_ notificationID: String) -> Bool {
        (ranges[notificationID] ?? [:]).values.contains { $0.cursor != "done" }
    }

    /// Moves a range's cursor in a page commit; a range made `done` when none is left and every
    /// range is stored makes the notification's job due at `at`.
    mutating func moveRange(notificationID: String, index: Int, to cursor: String, at: Date) {
        ranges[notificationID]?[index]?.cursor = cursor
        guard cursor == "done", !rangesLeft(notificationID),
            notifications[notificationID]?.cursor == FanoutRange.ranged
        else { return }
        scheduleJob(kind: .notification, reference: notificationID, runAt: at)
    }
}
