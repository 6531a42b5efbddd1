import Foundation
import HeraldCore
import HeraldTestSupport
import Testing

/// Each app's templates (`TemplateStore`): saved as revisions the store numbers, listed by name,
/// read, deleted; and a notification keeps the revision it was accepted with.
extension StoreConformance {
    /// The store as the template cases use it.
    typealias TemplateRecords = any HeraldStore & TemplateStore

    static let templates: [StoreConformanceCase] = [
        .init(
            "templates: each save is the next revision, the creation time kept; listed by name, per app; deleted",
            keeping: TemplateRecords.self
        ) { store in
            let content = TemplateContent(
                strict: true, title: "Order {{order.id}}", body: "Hi {{recipient.attributes.first_name}}",
                data: ["order": "{{order.id}}"],
                localizations: ["de": LocalizedText(title: "Bestellung {{order.id}}")])
            let first = try await store.saveTemplate(
                NotificationTemplate(appID: "a", name: "shipped", content: content, createdAt: at(0), updatedAt: at(0)))
            #expect(first.revision == 1)
            #expect(first.content == content)
            var changed = content
            changed.body = "On its way"
            let second = try await store.saveTemplate(
                NotificationTemplate(
                    appID: "a", name: "shipped", content: changed, configured: true, createdAt: at(60),
                    updatedAt: at(60)))
            #expect(second.revision == 2)
            #expect(second.createdAt == at(0), "a replaced template keeps its creation time")
            #expect(second.updatedAt == at(60))
            #expect(second.configured)
            let other = try await store.saveTemplate(
                NotificationTemplate(
                    appID: "a", name: "alert", content: TemplateContent(body: "{{text}}"), createdAt: at(5),
                    updatedAt: at(5)))
            _ = try await store.saveTemplate(
                NotificationTemplate(
                    appID: "b", name: "shipped", content: content, createdAt: at(5), updatedAt: at(5)))
            #expect(try await store.template(appID: "a", name: "shipped") == second)
            #expect(try await store.templates(appID: "a") == [other, second])
            #expect(try await store.template(appID: "b", name: "shipped")?.revision == 1, "revisions are per app")
            #expect(try await store.template(appID: "a", name: "missing") == nil)
            #expect(try await store.deleteTemplate(appID: "a", name: "shipped"))
            #expect(try await store.deleteTemplate(appID: "a", name: "shipped") == false)
            #expect(try await store.template(appID: "a", name: "shipped") == nil)
            #expect(try await store.templates(appID: "b").count == 1)
        },
        .init("templates: a notification keeps its template's revision and variables", keeping: TemplateRecords.self) {
            store in
            var notification = notification()
            notification.payload = NotificationPayload()
            notification.template = TemplateUse(
                name: "shipped", variables: ["order": .object(["id": .string("A-1")])], revision: 3,
                content: TemplateContent(strict: true, title: "Order {{order.id}}"))
            _ = try await store.insertNotification(
                notification, runAt: at(0), idempotencyWindow: .seconds(60), lease: nil)
            #expect(try await store.notification(id: notification.id)?.template == notification.template)
        },
    ]
}
