/// Which clean-up policy each app's installations and notifications follow: an app's own policy
/// where it has one (`app.<id>.lifecycle.*`, LeanCloud's rules for a LeanCloud app), the default
/// (`engine.cleanup.*`) for every other app, so apps with different documents' rules share one run.
public struct CleanupPlan: Sendable, Equatable {
    /// The apps a policy applies to.
    public enum Scope: Sendable, Equatable {
        /// These apps only.
        case only([String])
        /// Every app but these (all of them when the list is empty).
        case allBut([String])
    }

    /// The policy of every app without one of its own.
    public var defaultPolicy: CleanupPolicy
    /// Apps' own policies, by app id.
    public var apps: [String: CleanupPolicy]

    /// Creates a plan: `apps` keep their own policies, every other app follows `defaultPolicy`.
    public init(default defaultPolicy: CleanupPolicy = CleanupPolicy(), apps: [String: CleanupPolicy] = [:]) {
        self.defaultPolicy = defaultPolicy
        self.apps = apps
    }

    /// The policy an app follows.
    public func policy(appID: String) -> CleanupPolicy { apps[appID] ?? defaultPolicy }

    /// Each distinct policy with the apps it applies to, the default first: a store runs the rules
    /// once per entry. Apps whose own policy equals the default run with it.
    public var groups: [(policy: CleanupPolicy, scope: Scope)] {
        var own: [(policy: CleanupPolicy, apps: [String])] = []
        for (appID, policy) in apps.sorted(by: { $0.key < $1.key }) where policy != defaultPolicy {
            if let index = own.firstIndex(where: { $0.policy == policy }) {
                own[index].apps.append(appID)
            } else {
                own.append((policy, [appID]))
            }
        }
        return [(defaultPolicy, .allBut(own.flatMap(\.apps)))] + own.map { ($0.policy, .only($0.apps)) }
    }
}
