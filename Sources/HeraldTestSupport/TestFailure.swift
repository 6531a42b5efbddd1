/// A failure in a test's own set-up, or a test's condition that did not hold, with what went wrong.
public struct TestFailure: Error, CustomStringConvertible {
    public var description: String

    /// A failure saying `description`.
    public init(_ description: String) { self.description = description }
}
