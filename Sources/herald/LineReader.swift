import Foundation

/// Reads a file (or standard input) a line at a time, a chunk at a time underneath, so a
/// million-line file never sits in memory whole.
struct LineReader {
    private let handle: FileHandle
    private var buffer: [UInt8] = []
    private var start = 0
    private var finished = false
    /// The number of the line last returned, from 1.
    private(set) var lineNumber = 0
    /// Bytes of the input returned so far.
    private(set) var consumed: Int64 = 0

    init(_ handle: FileHandle) {
        self.handle = handle
    }

    /// The next line without its `\n`; `skippingBlank` passes over lines of spaces and `\r` only.
    /// Nil at the end of the input.
    mutating func next(skippingBlank: Bool = true) -> ArraySlice<UInt8>? {
        while true {
            if let end = buffer[start...].firstIndex(of: UInt8(ascii: "\n"))
                ?? (finished && start < buffer.count ? buffer.count : nil)
            {
                lineNumber += 1
                let line = buffer[start..<end]
                consumed += Int64(min(end + 1, buffer.count) - start)
                start = min(end + 1, buffer.count)
                if skippingBlank, line.allSatisfy({ $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\r") }) { continue }
                return line
            }
            guard !finished else { return nil }
            buffer.removeFirst(start)
            start = 0
            let chunk = handle.readData(ofLength: 1 << 20)
            finished = chunk.isEmpty
            buffer.append(contentsOf: chunk)
        }
    }

    /// Everything not read yet.
    mutating func rest() -> [UInt8] {
        var bytes = Array(buffer[start...])
        if !finished { bytes += handle.readDataToEndOfFile() }
        consumed += Int64(bytes.count)
        buffer = []
        start = 0
        finished = true
        return bytes
    }

    /// The bytes left to read when the input is seekable (a file, or a file redirected to stdin);
    /// nil for a pipe.
    static func size(of handle: FileHandle) -> Int64? {
        guard let start = try? handle.offset(), let end = try? handle.seekToEnd(),
            (try? handle.seek(toOffset: start)) != nil
        else { return nil }
        return Int64(end - start)
    }
}
