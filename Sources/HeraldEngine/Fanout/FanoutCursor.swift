import HeraldCore

/// A fan-out cursor (a notification's, or one of its ranges') as the states its stored text
/// names: the store keeps it as text (`nil`, a recipient key, `done`, ``FanoutRange/ranging``,
/// ``FanoutRange/ranged``).
enum FanoutCursor: Equatable, Sendable {
    /// Nothing of the target committed yet (stored as nil).
    case start
    /// The target committed through this recipient key.
    case after(String)
    /// The whole target committed.
    case done
    /// The notification is being cut into ranges.
    case ranging
    /// Every range of the notification is stored: its ranges' jobs send the target.
    case ranged

    /// The cursor a stored text names.
    init(stored: String?) {
        switch stored {
        case nil: self = .start
        case Self.doneText?: self = .done
        case FanoutRange.ranging?: self = .ranging
        case FanoutRange.ranged?: self = .ranged
        case let key?: self = .after(key)
        }
    }

    /// The cursor a page of the target commits: the page's last key, or `done` when the target
    /// ends with it (or it has no key: an empty page).
    init(pageLast last: String?, exhausted: Bool) {
        self = exhausted ? .done : last.map { .after($0) } ?? .done
    }

    /// The text the store keeps.
    var stored: String? {
        switch self {
        case .start: nil
        case .after(let key): key
        case .done: Self.doneText
        case .ranging: FanoutRange.ranging
        case .ranged: FanoutRange.ranged
        }
    }

    private static let doneText = "done"
}
