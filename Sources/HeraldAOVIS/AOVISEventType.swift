/// The classes AOVIS's classifier gives an event (`classifyEventType`), with the push title of each
/// (the document's `formatPushTitle` table, §6).
package enum AOVISEventType: String, CaseIterable, Sendable {
    case person, vehicle, pet, package, other

    /// The title without the device name.
    package var title: String {
        switch self {
        case .vehicle: "Vehicle detected"
        case .person: "Person detected"
        case .pet: "Pet detected"
        case .package: "Package delivered"
        case .other: "Activity detected"
        }
    }
}
