import Foundation

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// A small XML tree of an SNS response, read with Foundation's `XMLParser`: element names without
/// their namespace prefix (SNS answers in `http://sns.amazonaws.com/doc/2010-03-31/`, as its
/// default namespace), each element's text, and its children in order.
struct SNSXMLElement: Sendable, Equatable {
    /// The local name (`EndpointArn`).
    var name: String
    /// The text directly inside the element, whitespace around it trimmed.
    var text: String
    /// The child elements, in document order.
    var children: [SNSXMLElement]

    /// The first child with this name.
    func child(_ name: String) -> SNSXMLElement? {
        children.first { $0.name == name }
    }

    /// The first element with this name below this one, depth first.
    func descendant(_ name: String) -> SNSXMLElement? {
        for element in children {
            if element.name == name { return element }
            if let found = element.descendant(name) { return found }
        }
        return nil
    }

    /// The text of the first child with this name.
    func text(of name: String) -> String? {
        child(name)?.text
    }

    /// Parses a document; nil when the bytes are not well-formed XML.
    static func parse(_ bytes: [UInt8]) -> SNSXMLElement? {
        let parser = XMLParser(data: Data(bytes))
        let builder = Builder()
        parser.delegate = builder
        parser.shouldProcessNamespaces = true
        parser.shouldResolveExternalEntities = false
        guard parser.parse() else { return nil }
        return builder.root
    }

    private final class Builder: NSObject, XMLParserDelegate {
        var stack: [SNSXMLElement] = []
        var root: SNSXMLElement?

        func parser(
            _ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?, qualifiedName: String?,
            attributes: [String: String] = [:]
        ) {
            stack.append(SNSXMLElement(name: elementName, text: "", children: []))
        }

        func parser(_ parser: XMLParser, foundCharacters string: String) {
            guard !stack.isEmpty else { return }
            stack[stack.count - 1].text += string
        }

        func parser(_ parser: XMLParser, foundCDATA CDATABlock: Data) {
            guard !stack.isEmpty else { return }
            stack[stack.count - 1].text += String(decoding: CDATABlock, as: UTF8.self)
        }

        func parser(
            _ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName: String?
        ) {
            guard var element = stack.popLast() else { return }
            element.text = element.text.trimmingCharacters(in: .whitespacesAndNewlines)
            if stack.isEmpty {
                root = element
            } else {
                stack[stack.count - 1].children.append(element)
            }
        }
    }
}
