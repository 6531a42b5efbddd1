/// The OpenAPI 3.1 description of Herald's native API, served at `/openapi.yaml`. A test checks
/// that every route the router serves appears here.
enum OpenAPIDocument {
    static let yaml = """
        openapi: 3.1.0
        info:
          title: Herald
          version: 0.1.0
          description: |
            Self-hosted unified push notification gateway. Native API: JSON, snake_case.
            Errors have one shape: {"error": {"code", "message", "field"}}.
        servers:
          - url: http://127.0.0.1:8080
        security:
          - bearer: []
        paths:
          /healthz:
            get:
              summary: The process is alive.
              security: []
              responses:
                "200":
                  description: Alive.
                  content:
                    application/json:
                      schema: {$ref: "#/components/schemas/Status"}
          /readyz:
            get:
              summary: The database answers.
              security: []
              responses:
                "200":
                  description: Ready.
                  content:
                    application/json:
                      schema: {$ref: "#/components/schemas/Status"}
                "503": {$ref: "#/components/responses/Error"}
          /openapi.yaml:
            get:
              summary: This document.
              security: []
              responses:
                "200":
                  description: The OpenAPI document.
                  content:
                    application/yaml:
                      schema: {type: string}
          /api/v1/push/mobile/register:
            post:
              tags: [ArgusAI]
              summary: "ArgusAI: register the caller's device (user JWT); upsert on (device_id, push_service)."
              description: |
                Maps to a native installation of the calling user. Always 201; preferences_created says whether
                this registration gave the device its (default) preferences. A device registered by another user
                moves to the caller with default preferences. Rate-limited per user (app.<id>.argus.register_rate_limit).
              requestBody:
                required: true
                content:
                  application/json:
                    schema: {$ref: "#/components/schemas/ArgusAIRegistration"}
              responses:
                "201":
                  description: Registered.
                  content:
                    application/json:
                      schema:
                        type: object
                        properties:
                          id: {type: string}
                          device_id: {type: string, format: uuid}
                          platform: {type: string}
                          push_service: {type: string, enum: [apns, fcm]}
                          created_at: {type: string, format: date-time}
                          preferences_created: {type: boolean}
                "400": {$ref: "#/components/responses/Error"}
                "401": {$ref: "#/components/responses/Error"}
                "403": {$ref: "#/components/responses/Error"}
                "429":
                  description: Too many registrations; Retry-After says when to try again (seconds).
                  headers:
                    Retry-After: {schema: {type: integer}}
                  content:
                    application/json:
                      schema: {$ref: "#/components/schemas/Error"}
          /api/v1/push/mobile/tokens/{device_id}:
            parameters:
              - {name: device_id, in: path, required: true, schema: {type: string, format: uuid}}
            put:
              tags: [ArgusAI]
              summary: "ArgusAI: a new token for the caller's device; valid again, failure count reset."
              requestBody:
                required: true
                content:
                  application/json:
                    schema:
                      type: object
                      required: [device_token]
                      properties:
                        device_token: {type: string}
              responses:
                "200":
                  description: Updated.
                  content:
                    application/json:
                      schema:
                        type: object
                        properties:
                          id: {type: string}
                          device_token_updated: {type: boolean, description: false when the token was the same}
                          updated_at: {type: string, format: date-time}
                "400": {$ref: "#/components/responses/Error"}
                "401": {$ref: "#/components/responses/Error"}
                "403": {$ref: "#/components/responses/Error"}
                "404": {$ref: "#/components/responses/Error"}
            delete:
              tags: [ArgusAI]
              summary: "ArgusAI: unregister the caller's device."
              responses:
                "204": {description: Unregistered.}
                "400": {$ref: "#/components/responses/Error"}
                "401": {$ref: "#/components/responses/Error"}
                "403": {$ref: "#/components/responses/Error"}
                "404": {$ref: "#/components/responses/Error"}
          /api/v1/push/mobile/preferences:
            post:
              tags: [ArgusAI]
              summary: "ArgusAI: the device's preferences, created with the defaults when it has none."
              description: |
                With device_id alone, reads. With preference members too (the document's Cross-Platform
                Preference API request), creates or updates them as PUT does.
              requestBody:
                required: true
                content:
                  application/json:
                    schema: {$ref: "#/components/schemas/ArgusAIPreferencesUpdate"}
              responses:
                "200":
                  description: The preferences.
                  content:
                    application/json:
                      schema: {$ref: "#/components/schemas/ArgusAIPreferences"}
                "400": {$ref: "#/components/responses/Error"}
                "401": {$ref: "#/components/responses/Error"}
                "403": {$ref: "#/components/responses/Error"}
                "404": {$ref: "#/components/responses/Error"}
            put:
              tags: [ArgusAI]
              summary: "ArgusAI: change the members given (for each of the device's installations)."
              requestBody:
                required: true
                content:
                  application/json:
                    schema: {$ref: "#/components/schemas/ArgusAIPreferencesUpdate"}
              responses:
                "200":
                  description: The preferences now.
                  content:
                    application/json:
                      schema: {$ref: "#/components/schemas/ArgusAIPreferences"}
                "400": {$ref: "#/components/responses/Error"}
                "401": {$ref: "#/components/responses/Error"}
                "403": {$ref: "#/components/responses/Error"}
                "404": {$ref: "#/components/responses/Error"}
          /api/v1/push/mobile/events:
            post:
              tags: [ArgusAI]
              summary: "ArgusAI: notify a camera event (server key), once per event_id."
              description: |
                Sends the document's security alert to the users' devices (all devices registered through the
                dialect without user_ids): source = camera_id, category = smart_detection_type for preferences,
                APNs category SECURITY_ALERT, FCM data message. Needs app.<id>.argus.public_base_url (503 otherwise).
              requestBody:
                required: true
                content:
                  application/json:
                    schema:
                      type: object
                      additionalProperties: false
                      required: [event_id, camera_id, camera_name, smart_detection_type, description]
                      properties:
                        event_id: {type: string, pattern: "^[A-Za-z0-9._~-]{1,128}$"}
                        camera_id: {type: string, maxLength: 100}
                        camera_name: {type: string, maxLength: 256}
                        smart_detection_type: {type: string, maxLength: 100, example: person}
                        description: {type: string, maxLength: 4000}
                        timestamp: {type: string, format: date-time}
                        user_ids: {type: array, items: {type: string}}
              responses:
                "202":
                  description: Accepted.
                  content:
                    application/json:
                      schema: {$ref: "#/components/schemas/ArgusAIEventAccepted"}
                "200":
                  description: The event_id was notified already (the first notification).
                  content:
                    application/json:
                      schema: {$ref: "#/components/schemas/ArgusAIEventAccepted"}
                "400": {$ref: "#/components/responses/Error"}
                "401": {$ref: "#/components/responses/Error"}
                "403": {$ref: "#/components/responses/Error"}
                "503": {$ref: "#/components/responses/Error"}
          /api/v1/devices:
            get:
              tags: [ArgusAI]
              summary: "ArgusAI: the caller's registered devices."
              responses:
                "200":
                  description: The devices, oldest first.
                  content:
                    application/json:
                      schema:
                        type: object
                        properties:
                          devices: {type: array, items: {$ref: "#/components/schemas/ArgusAIDevice"}}
                "401": {$ref: "#/components/responses/Error"}
                "403": {$ref: "#/components/responses/Error"}
          /api/v1/devices/{id}:
            parameters:
              - {name: id, in: path, required: true, schema: {type: string}}
            patch:
              tags: [ArgusAI]
              summary: "ArgusAI: rename the caller's device (null clears the name)."
              requestBody:
                required: true
                content:
                  application/json:
                    schema:
                      type: object
                      additionalProperties: false
                      required: [name]
                      properties:
                        name: {type: [string, "null"], minLength: 1, maxLength: 100}
              responses:
                "200":
                  description: The device.
                  content:
                    application/json:
                      schema: {$ref: "#/components/schemas/ArgusAIDevice"}
                "400": {$ref: "#/components/responses/Error"}
                "401": {$ref: "#/components/responses/Error"}
                "403": {$ref: "#/components/responses/Error"}
                "404": {$ref: "#/components/responses/Error"}
            delete:
              tags: [ArgusAI]
              summary: "ArgusAI: revoke the caller's device."
              responses:
                "204": {description: Revoked.}
                "401": {$ref: "#/components/responses/Error"}
                "403": {$ref: "#/components/responses/Error"}
                "404": {$ref: "#/components/responses/Error"}
          /api/internal/push/register:
            post:
              tags: [AOVIS]
              summary: "AOVIS: register an APNs or FCM token for the signed-in user (the AOVIS guide, section 4)."
              description: |
                Authorization is the app's user token (a JWT). ios maps to APNs (environment from
                app.<id>.aovis.apns_environment), android to FCM. Upsert on (user, platform, token): a repeat
                returns the same push_token_id; a token registered by another user moves to this one.
                deviceId (a camera's id or alias) must be a device the user owns with ACTIVE status.
                Errors use the guide's bodies, not the native shape.
              security: [{bearer: []}]
              requestBody:
                required: true
                content:
                  application/json:
                    schema: {$ref: "#/components/schemas/AOVISRegistration"}
              responses:
                "200":
                  description: Registered (created or updated).
                  content:
                    application/json:
                      schema:
                        type: object
                        required: [success, push_token_id]
                        properties:
                          success: {type: boolean, enum: [true]}
                          push_token_id: {type: string, description: the installation id}
                "400":
                  description: 'A malformed body, or a deviceId not owned ACTIVE by the user: {"error":"invalid_body"}.'
                  content:
                    application/json:
                      schema: {$ref: "#/components/schemas/AOVISError"}
                "401":
                  description: 'The app token is missing or invalid: {"error":"invalid_session"}.'
                  content:
                    application/json:
                      schema: {$ref: "#/components/schemas/AOVISError"}
                "500":
                  description: 'An unexpected failure: {"error":"internal_error"}.'
                  content:
                    application/json:
                      schema: {$ref: "#/components/schemas/AOVISError"}
          /api/internal/devices:
            post:
              tags: [AOVIS]
              summary: "AOVIS: create a camera device (server key)."
              requestBody:
                required: true
                content:
                  application/json:
                    schema:
                      type: object
                      additionalProperties: false
                      properties:
                        id: {type: string, maxLength: 100, description: generated when absent}
                        alias: {type: string, maxLength: 100, description: "aoviseDeviceId, like aovis-n4k-3f9a2c"}
                        name: {type: string, maxLength: 256, description: "used in titles: Vehicle detected at <name>"}
              responses:
                "201":
                  description: The new device.
                  content:
                    application/json:
                      schema: {$ref: "#/components/schemas/AOVISDevice"}
                "400": {$ref: "#/components/responses/Error"}
                "401": {$ref: "#/components/responses/Error"}
                "403": {$ref: "#/components/responses/Error"}
                "409": {$ref: "#/components/responses/Error"}
          /api/internal/devices/{id}:
            parameters:
              - {name: id, in: path, required: true, schema: {type: string}, description: the device's id or alias}
            get:
              tags: [AOVIS]
              summary: "AOVIS: a camera device and its owners (server key)."
              responses:
                "200":
                  description: The device.
                  content:
                    application/json:
                      schema: {$ref: "#/components/schemas/AOVISDevice"}
                "401": {$ref: "#/components/responses/Error"}
                "403": {$ref: "#/components/responses/Error"}
                "404": {$ref: "#/components/responses/Error"}
          /api/internal/devices/{id}/owners/{user_id}:
            parameters:
              - {name: id, in: path, required: true, schema: {type: string}, description: the device's id or alias}
              - {name: user_id, in: path, required: true, schema: {type: string}}
            put:
              tags: [AOVIS]
              summary: "AOVIS: grant (ACTIVE) or revoke (REVOKED) a user's ownership of a camera (server key)."
              requestBody:
                required: true
                content:
                  application/json:
                    schema:
                      type: object
                      additionalProperties: false
                      required: [status]
                      properties:
                        status: {type: string, enum: [ACTIVE, REVOKED]}
              responses:
                "200":
                  description: The ownership as stored.
                  content:
                    application/json:
                      schema: {$ref: "#/components/schemas/AOVISOwnership"}
                "400": {$ref: "#/components/responses/Error"}
                "401": {$ref: "#/components/responses/Error"}
                "403": {$ref: "#/components/responses/Error"}
                "404": {$ref: "#/components/responses/Error"}
          /api/internal/events:
            post:
              tags: [AOVIS]
              summary: "AOVIS: take a classified camera event and notify the camera's ACTIVE owners (server key)."
              description: |
                Stored with status classified; every ACTIVE owner's installations get one notification
                (title from formatPushTitle, the summary cut to 80 characters, deep link
                aovis://event/<id>, data cloudEventId, deviceId, eventType). A repeated eventId returns
                the first event (200) and notifies no one again.
              requestBody:
                required: true
                content:
                  application/json:
                    schema:
                      type: object
                      additionalProperties: false
                      required: [eventId, deviceId, classifyEventType, classifySummaryShort]
                      properties:
                        id:
                          type: string
                          pattern: "^[A-Za-z0-9._~-]{1,128}$"
                          description: the id of AOVIS's CloudEvent record (cloudEvent.id), used in the deep link; Herald's id when absent
                        eventId: {type: string, maxLength: 255, description: the producer's id of the event}
                        deviceId: {type: string, description: the camera's id or alias}
                        classifyEventType: {type: string, enum: [person, vehicle, pet, package, other]}
                        classifySummaryShort: {type: string, maxLength: 1000}
                        thumbnailS3Key: {type: string}
                        occurredAt: {type: string, format: date-time}
              responses:
                "201":
                  description: The new event (pushSent becomes true once a device accepts the push).
                  content:
                    application/json:
                      schema: {$ref: "#/components/schemas/AOVISEvent"}
                "200":
                  description: The event stored earlier with this eventId.
                  content:
                    application/json:
                      schema: {$ref: "#/components/schemas/AOVISEvent"}
                "400": {$ref: "#/components/responses/Error"}
                "401": {$ref: "#/components/responses/Error"}
                "403": {$ref: "#/components/responses/Error"}
                "409": {$ref: "#/components/responses/Error"}
          /api/internal/events/{id}:
            parameters:
              - {name: id, in: path, required: true, schema: {type: string}, description: the CloudEvent id or Herald's id of the event}
            get:
              tags: [AOVIS]
              summary: "AOVIS: one camera event with pushSent and pushSentAt (server key)."
              responses:
                "200":
                  description: The event.
                  content:
                    application/json:
                      schema: {$ref: "#/components/schemas/AOVISEvent"}
                "401": {$ref: "#/components/responses/Error"}
                "403": {$ref: "#/components/responses/Error"}
                "404": {$ref: "#/components/responses/Error"}
          /v1/installations:
            post:
              summary: Register (create or update) an installation.
              description: |
                Identity is (app, device_id, service) when device_id is given, else (app, service, token).
                A known token updates its installation, re-validates it and resets its failure count.
                Server key, client key or user token; a user registers as themselves.
              requestBody:
                required: true
                content:
                  application/json:
                    schema: {$ref: "#/components/schemas/InstallationRegistration"}
              responses:
                "200":
                  description: An existing installation was updated.
                  content:
                    application/json:
                      schema: {$ref: "#/components/schemas/Installation"}
                "201":
                  description: A new installation was created.
                  content:
                    application/json:
                      schema: {$ref: "#/components/schemas/Installation"}
                "400": {$ref: "#/components/responses/Error"}
                "401": {$ref: "#/components/responses/Error"}
                "413": {$ref: "#/components/responses/Error"}
            get:
              summary: List installations (server key, or a user's own).
              parameters:
                - {name: user_id, in: query, schema: {type: string}}
                - {name: channel, in: query, schema: {type: string}}
                - {name: platform, in: query, schema: {$ref: "#/components/schemas/Platform"}}
                - {name: service, in: query, schema: {$ref: "#/components/schemas/Service"}}
                - {name: valid, in: query, schema: {type: boolean}}
                - {name: limit, in: query, schema: {type: integer, minimum: 1, maximum: 1000, default: 100}}
                - {name: cursor, in: query, schema: {type: string}, description: next_cursor of the previous page}
              responses:
                "200":
                  description: A page of installations; tokens show their last 8 characters only.
                  content:
                    application/json:
                      schema: {$ref: "#/components/schemas/InstallationList"}
                "400": {$ref: "#/components/responses/Error"}
                "401": {$ref: "#/components/responses/Error"}
                "403": {$ref: "#/components/responses/Error"}
          /v1/installations/{id}:
            parameters:
              - {name: id, in: path, required: true, schema: {type: string}}
            get:
              summary: One installation, with its whole token (server key or its user).
              responses:
                "200":
                  description: The installation.
                  content:
                    application/json:
                      schema: {$ref: "#/components/schemas/Installation"}
                "401": {$ref: "#/components/responses/Error"}
                "403": {$ref: "#/components/responses/Error"}
                "404": {$ref: "#/components/responses/Error"}
            patch:
              summary: Change an installation's fields; null clears an optional field.
              requestBody:
                required: true
                content:
                  application/json:
                    schema: {$ref: "#/components/schemas/InstallationPatch"}
              responses:
                "200":
                  description: The updated installation.
                  content:
                    application/json:
                      schema: {$ref: "#/components/schemas/Installation"}
                "400": {$ref: "#/components/responses/Error"}
                "401": {$ref: "#/components/responses/Error"}
                "404": {$ref: "#/components/responses/Error"}
                "409": {$ref: "#/components/responses/Error"}
                "413": {$ref: "#/components/responses/Error"}
            delete:
              summary: Delete an installation.
              responses:
                "204": {description: Deleted.}
                "401": {$ref: "#/components/responses/Error"}
                "404": {$ref: "#/components/responses/Error"}
          /v1/installations/{id}/preferences:
            parameters:
              - {name: id, in: path, required: true, schema: {type: string}}
            get:
              summary: The installation's preferences (defaults when none are stored); server key or its user.
              responses:
                "200":
                  description: The preferences.
                  content:
                    application/json:
                      schema: {$ref: "#/components/schemas/Preferences"}
                "401": {$ref: "#/components/responses/Error"}
                "403": {$ref: "#/components/responses/Error"}
                "404": {$ref: "#/components/responses/Error"}
            put:
              summary: Replace the installation's preferences.
              requestBody:
                required: true
                content:
                  application/json:
                    schema: {$ref: "#/components/schemas/Preferences"}
              responses:
                "200":
                  description: The stored preferences.
                  content:
                    application/json:
                      schema: {$ref: "#/components/schemas/Preferences"}
                "400": {$ref: "#/components/responses/Error"}
                "401": {$ref: "#/components/responses/Error"}
                "403": {$ref: "#/components/responses/Error"}
                "404": {$ref: "#/components/responses/Error"}
          /v1/notifications:
            post:
              summary: Send a notification (server key). 202 once it and its job are committed.
              parameters:
                - {name: Idempotency-Key, in: header, required: false, schema: {type: string, maxLength: 255}}
              requestBody:
                required: true
                content:
                  application/json:
                    schema: {$ref: "#/components/schemas/SendRequest"}
              responses:
                "202":
                  description: Accepted.
                  content:
                    application/json:
                      schema:
                        type: object
                        properties:
                          id: {type: string}
                          status: {type: string, enum: [scheduled, queued]}
                "200":
                  description: A repeated idempotency key (the first notification), or a dry run's audience.
                  content:
                    application/json:
                      schema:
                        oneOf:
                          - {$ref: "#/components/schemas/Notification"}
                          - type: object
                            properties:
                              dry_run: {type: boolean}
                              targeted: {type: integer}
                              by_service: {type: object, additionalProperties: {type: integer}}
                "400": {$ref: "#/components/responses/Error"}
                "401": {$ref: "#/components/responses/Error"}
                "403": {$ref: "#/components/responses/Error"}
                "413": {$ref: "#/components/responses/Error"}
            get:
              summary: The app's notifications, newest first.
              parameters:
                - {name: status, in: query, schema: {type: string, enum: [scheduled, queued, sending, done, canceled, expired, failed]}}
                - {name: limit, in: query, schema: {type: integer, minimum: 1, maximum: 1000}}
                - {name: cursor, in: query, schema: {type: string}}
              responses:
                "200":
                  description: A page.
                  content:
                    application/json:
                      schema:
                        type: object
                        properties:
                          data: {type: array, items: {$ref: "#/components/schemas/Notification"}}
                          next_cursor: {type: [string, "null"]}
                "400": {$ref: "#/components/responses/Error"}
                "401": {$ref: "#/components/responses/Error"}
                "403": {$ref: "#/components/responses/Error"}
          /v1/notifications/{id}:
            parameters:
              - {name: id, in: path, required: true, schema: {type: string}}
            get:
              summary: One notification with its status and counts.
              responses:
                "200":
                  description: The notification.
                  content:
                    application/json:
                      schema: {$ref: "#/components/schemas/Notification"}
                "401": {$ref: "#/components/responses/Error"}
                "403": {$ref: "#/components/responses/Error"}
                "404": {$ref: "#/components/responses/Error"}
            delete:
              summary: Cancel a scheduled, queued or sending notification (what was sent stays sent).
              responses:
                "200":
                  description: The canceled notification.
                  content:
                    application/json:
                      schema: {$ref: "#/components/schemas/Notification"}
                "401": {$ref: "#/components/responses/Error"}
                "404": {$ref: "#/components/responses/Error"}
                "409": {$ref: "#/components/responses/Error"}
          /v1/users/{user_id}/installations:
            parameters:
              - {name: user_id, in: path, required: true, schema: {type: string, minLength: 1, maxLength: 256}}
            delete:
              summary: "Account deletion: deletes every installation of the user, with its preferences (server key)."
              responses:
                "200":
                  description: How many installations went (0 when there were none).
                  content:
                    application/json:
                      schema:
                        type: object
                        required: [deleted]
                        properties:
                          deleted: {type: integer, minimum: 0}
                "400": {$ref: "#/components/responses/Error"}
                "401": {$ref: "#/components/responses/Error"}
                "403": {$ref: "#/components/responses/Error"}
          /v1/notifications/{id}/deliveries:
            parameters:
              - {name: id, in: path, required: true, schema: {type: string}}
            get:
              summary: The notification's delivery ledger (failures always; successes with delivery_log all).
              parameters:
                - {name: outcome, in: query, schema: {type: string, enum: [delivered, invalid, failed, skipped, expired, retrying]}}
                - {name: limit, in: query, schema: {type: integer, minimum: 1, maximum: 1000}}
                - {name: cursor, in: query, schema: {type: string}}
              responses:
                "200":
                  description: A page of the ledger.
                  content:
                    application/json:
                      schema:
                        type: object
                        properties:
                          data: {type: array, items: {$ref: "#/components/schemas/Delivery"}}
                          next_cursor: {type: [string, "null"]}
                "400": {$ref: "#/components/responses/Error"}
                "401": {$ref: "#/components/responses/Error"}
                "404": {$ref: "#/components/responses/Error"}
        components:
          securitySchemes:
            bearer:
              type: http
              scheme: bearer
              description: |
                The app's server key (full access), client key (register, update, delete
                installations) or a user JWT from the app's own auth system (own installations only).
                With several apps, X-Herald-App names the app a user token belongs to.
          responses:
            Error:
              description: An error.
              content:
                application/json:
                  schema: {$ref: "#/components/schemas/Error"}
          schemas:
            ArgusAIRegistration:
              type: object
              required: [device_token, platform, device_id]
              description: Members not listed are ignored.
              properties:
                device_token: {type: string, description: "hex or base64 (an FCM token may join two parts with ':')"}
                platform: {type: string, enum: [ios, ipados, watchos, tvos, android, macos]}
                push_service: {type: string, enum: [apns, fcm], description: default apns for Apple platforms, fcm for Android}
                token_type: {type: string, enum: [sandbox, production], default: production}
                device_id: {type: string, format: uuid}
                device_model: {type: string}
                os_version: {type: string}
                app_version: {type: string}
                app_bundle_id: {type: string, description: the APNs topic}
                device_name: {type: string, maxLength: 100}
            ArgusAIPreferences:
              type: object
              properties:
                id: {type: string, description: the device's id (one preferences record per device)}
                token_id: {type: string}
                enabled_cameras: {type: [array, "null"], items: {type: string}, description: null means every camera}
                enabled_object_types: {type: [array, "null"], items: {type: string}, description: null means every type}
                quiet_hours_enabled: {type: boolean}
                quiet_hours_start: {type: [string, "null"], example: "22:00"}
                quiet_hours_end: {type: [string, "null"], example: "07:00"}
                timezone: {type: string, description: the device's IANA time zone, which quiet hours use}
                sound_enabled: {type: boolean}
            ArgusAIPreferencesUpdate:
              type: object
              required: [device_id]
              description: Members left out keep their value.
              properties:
                device_id: {type: string, format: uuid}
                enabled_cameras: {type: [array, "null"], items: {type: string}}
                enabled_object_types: {type: [array, "null"], items: {type: string}}
                quiet_hours_enabled: {type: boolean}
                quiet_hours_start: {type: string, example: "22:00"}
                quiet_hours_end: {type: string, example: "07:00"}
                timezone: {type: [string, "null"]}
                sound_enabled: {type: boolean}
            ArgusAIDevice:
              type: object
              properties:
                id: {type: string}
                device_id: {type: [string, "null"]}
                name: {type: [string, "null"]}
                platform: {type: string}
                push_service: {type: string}
                token_type: {type: string, enum: [sandbox, production]}
                device_model: {type: [string, "null"]}
                os_version: {type: [string, "null"]}
                app_version: {type: [string, "null"]}
                app_bundle_id: {type: [string, "null"]}
                is_active: {type: boolean}
                failure_count: {type: integer}
                last_failure_at: {type: [string, "null"], format: date-time}
                last_used_at: {type: [string, "null"], format: date-time}
                created_at: {type: string, format: date-time}
                updated_at: {type: string, format: date-time}
            ArgusAIEventAccepted:
              type: object
              properties:
                notification_id: {type: string}
                status: {type: string}
                event_id: {type: string}
                notification: {type: object, description: "the document's unified payload (title, body, event_id, camera_id, camera_name, smart_detection_type, thumbnail_url, url, timestamp, actions, category, sound, priority)"}
            Preferences:
              type: object
              additionalProperties: false
              properties:
                enabled_sources: {type: [array, "null"], items: {type: string}, description: null means every source}
                enabled_categories: {type: [array, "null"], items: {type: string}, description: null means every category}
                quiet_hours:
                  type: [object, "null"]
                  properties:
                    start: {type: string, example: "22:00"}
                    end: {type: string, example: "07:00"}
                    timezone: {type: string, description: IANA zone; default the installation's, else UTC}
                quiet_hours_mode: {type: string, enum: [skip, defer]}
                sound_enabled: {type: boolean}
                muted_until: {type: [string, "null"], format: date-time}
            SendRequest:
              type: object
              additionalProperties: false
              required: [target, payload]
              properties:
                target:
                  type: object
                  description: exactly one of installation_ids, tokens, user_ids, channels, where, all
                  properties:
                    installation_ids: {type: array, items: {type: string}}
                    tokens:
                      type: array
                      items:
                        type: object
                        required: [token, service]
                        properties:
                          token: {type: string}
                          service: {type: string, enum: [apns, fcm]}
                          environment: {type: string, enum: [sandbox, production]}
                          platform: {type: string}
                    user_ids: {type: array, items: {type: string}}
                    channels: {type: array, items: {type: string}}
                    where: {type: object, description: "LeanCloud/Parse query: $eq $ne $in $nin $exists $lt $lte $gt $gte $regex $all $and $or"}
                    all: {type: boolean, enum: [true]}
                    platforms: {type: array, items: {type: string}}
                    services: {type: array, items: {type: string}}
                payload:
                  type: object
                  additionalProperties: false
                  properties:
                    title: {type: string}
                    subtitle: {type: string}
                    body: {type: string}
                    badge: {oneOf: [{type: integer}, {type: string, enum: [increment]}]}
                    sound: {type: string}
                    category: {type: string}
                    thread_id: {type: string}
                    image: {type: string}
                    deep_link: {type: string}
                    data: {type: object}
                    content_available: {type: boolean}
                    mutable_content: {type: boolean}
                    interruption_level: {type: string, enum: [passive, active, time-sensitive, critical]}
                    priority: {type: string, enum: [high, normal]}
                    collapse_id: {type: string, maxLength: 64}
                    ttl: {type: integer}
                    overrides:
                      type: object
                      properties:
                        apns: {type: object, description: "aps, headers and other payload keys merged over the rendered ones"}
                        fcm: {type: object, description: "android, apns, webpush, fcm_options, data, notification merged over the rendered ones (null removes a block or key)"}
                overrides: {type: object, description: the same as payload.overrides}
                source: {type: string, description: matched against enabled_sources}
                category: {type: string, description: "matched against enabled_categories; default payload.category"}
                push_time: {type: string, description: "RFC 3339; without an offset, each device's local time"}
                expiration_time: {type: string, format: date-time}
                expiration_interval: {type: integer, minimum: 1}
                respect_preferences: {type: boolean, default: true}
                dry_run: {type: boolean}
                idempotency_key: {type: string, maxLength: 255}
            Notification:
              type: object
              properties:
                id: {type: string}
                app_id: {type: string}
                status: {type: string, enum: [scheduled, queued, sending, done, canceled, expired, failed]}
                target: {type: object, description: raw tokens are shown as their count}
                payload: {type: object}
                source: {type: [string, "null"]}
                category: {type: [string, "null"]}
                push_time: {type: [string, "null"]}
                not_before: {type: [string, "null"], format: date-time}
                expires_at: {type: [string, "null"], format: date-time}
                respect_preferences: {type: boolean}
                idempotency_key: {type: [string, "null"]}
                counts:
                  type: object
                  properties:
                    targeted: {type: integer}
                    sent: {type: integer}
                    failed: {type: integer}
                    invalid: {type: integer}
                    skipped_preferences: {type: integer}
                    skipped_expired: {type: integer}
                    rate_limited: {type: integer}
                created_at: {type: string, format: date-time}
                started_at: {type: [string, "null"], format: date-time}
                completed_at: {type: [string, "null"], format: date-time}
            Delivery:
              type: object
              properties:
                installation_id: {type: [string, "null"]}
                token_suffix: {type: string}
                service: {type: string}
                outcome: {type: string, enum: [delivered, invalid, failed, skipped, expired, retrying]}
                provider_id: {type: [string, "null"]}
                reason: {type: [string, "null"]}
                attempts: {type: integer}
                at: {type: string, format: date-time}
            Status:
              type: object
              properties:
                status: {type: string}
            Error:
              type: object
              required: [error]
              properties:
                error:
                  type: object
                  required: [code, message, field]
                  properties:
                    code: {type: string, description: stable snake_case code}
                    message: {type: string}
                    field: {type: [string, "null"], description: the request field at fault}
            Platform:
              type: string
              enum: [ios, ipados, watchos, tvos, macos, android, web]
            Service:
              type: string
              enum: [apns, fcm, webpush, sns]
            Environment:
              type: string
              enum: [sandbox, production]
            WebPushSubscription:
              type: object
              additionalProperties: false
              required: [endpoint, keys]
              properties:
                endpoint: {type: string, format: uri, description: https push service URL}
                expirationTime: {type: ["null", number]}
                keys:
                  type: object
                  additionalProperties: false
                  required: [p256dh, auth]
                  properties:
                    p256dh: {type: string, description: base64url uncompressed P-256 point (65 bytes)}
                    auth: {type: string, description: base64url 16-byte secret}
            InstallationFields:
              type: object
              properties:
                user_id: {type: [string, "null"], maxLength: 256}
                device_id: {type: [string, "null"], maxLength: 256}
                platform: {$ref: "#/components/schemas/Platform"}
                environment: {$ref: "#/components/schemas/Environment"}
                token:
                  type: string
                  description: APNs (hex, 64-200) or FCM (1-4096 printable ASCII) token; SNS by platform
                subscription: {$ref: "#/components/schemas/WebPushSubscription"}
                channels:
                  type: array
                  maxItems: 100
                  items: {type: string, pattern: "^[A-Za-z0-9_-]{1,128}$"}
                locale: {type: [string, "null"], examples: [en, zh-Hans-CN]}
                timezone: {type: [string, "null"], description: IANA time zone}
                badge: {type: integer, minimum: 0}
                app_version: {type: [string, "null"]}
                os_version: {type: [string, "null"]}
                device_model: {type: [string, "null"]}
                bundle_id: {type: [string, "null"]}
                attributes: {type: object, description: free JSON object, at most 8 KB}
            InstallationRegistration:
              allOf:
                - {$ref: "#/components/schemas/InstallationFields"}
                - type: object
                  required: [platform]
                  properties:
                    service:
                      $ref: "#/components/schemas/Service"
                      description: defaults to apns (Apple), fcm (android) or webpush (web)
            InstallationPatch:
              $ref: "#/components/schemas/InstallationFields"
            Installation:
              type: object
              properties:
                id: {type: string}
                app_id: {type: string}
                user_id: {type: [string, "null"]}
                device_id: {type: [string, "null"]}
                platform: {$ref: "#/components/schemas/Platform"}
                service: {$ref: "#/components/schemas/Service"}
                environment: {$ref: "#/components/schemas/Environment"}
                token: {type: string, description: whole token; single reads and writes only}
                subscription: {$ref: "#/components/schemas/WebPushSubscription"}
                token_suffix: {type: string, description: the token's last 8 characters}
                channels: {type: array, items: {type: string}}
                locale: {type: [string, "null"]}
                timezone: {type: [string, "null"]}
                badge: {type: integer}
                app_version: {type: [string, "null"]}
                os_version: {type: [string, "null"]}
                device_model: {type: [string, "null"]}
                bundle_id: {type: [string, "null"]}
                attributes: {type: object}
                sns_endpoint_arn: {type: [string, "null"]}
                valid: {type: boolean}
                failure_count: {type: integer}
                last_failure_at: {type: [string, "null"], format: date-time}
                last_failure_reason: {type: [string, "null"]}
                last_delivered_at: {type: [string, "null"], format: date-time}
                last_seen_at: {type: [string, "null"], format: date-time}
                created_at: {type: string, format: date-time}
                updated_at: {type: string, format: date-time}
                invalidated_at: {type: [string, "null"], format: date-time}
            AOVISError:
              type: object
              required: [error]
              properties:
                error: {type: string, enum: [invalid_session, invalid_body, internal_error]}
            AOVISRegistration:
              type: object
              required: [platform, token]
              properties:
                platform: {type: string, enum: [ios, android]}
                token: {type: string, minLength: 1, maxLength: 2048, description: APNs (hex) or FCM token}
                deviceId: {type: string, description: a camera the user owns (ACTIVE), by id or alias}
                locale: {type: string, default: en}
                timezone: {type: string, default: America/New_York}
            AOVISDevice:
              type: object
              properties:
                id: {type: string}
                alias: {type: [string, "null"]}
                name: {type: [string, "null"]}
                owners: {type: array, items: {$ref: "#/components/schemas/AOVISOwnership"}}
                createdAt: {type: string, format: date-time}
                updatedAt: {type: string, format: date-time}
            AOVISOwnership:
              type: object
              properties:
                deviceId: {type: string}
                userId: {type: string}
                status: {type: string, enum: [ACTIVE, REVOKED]}
                createdAt: {type: string, format: date-time}
                updatedAt: {type: string, format: date-time}
            AOVISEvent:
              type: object
              properties:
                id: {type: string, description: "cloudEventId, the id in aovis://event/<id>: the CloudEvent id sent, else Herald's"}
                heraldId: {type: string, description: Herald's id of the event}
                eventId: {type: string}
                deviceId: {type: string}
                deviceAlias: {type: [string, "null"]}
                status: {type: string, enum: [classified]}
                classifyEventType: {type: string, enum: [person, vehicle, pet, package, other]}
                classifySummaryShort: {type: string}
                thumbnailS3Key: {type: [string, "null"]}
                occurredAt: {type: [string, "null"], format: date-time}
                owners: {type: array, items: {type: string}, description: the ACTIVE owners when the event came in}
                notificationId: {type: [string, "null"]}
                pushSent: {type: boolean}
                pushSentAt: {type: [string, "null"], format: date-time}
                createdAt: {type: string, format: date-time}
            InstallationList:
              type: object
              required: [data, next_cursor]
              properties:
                data:
                  type: array
                  items: {$ref: "#/components/schemas/Installation"}
                next_cursor: {type: [string, "null"], description: pass as cursor for the next page}

        """
}
