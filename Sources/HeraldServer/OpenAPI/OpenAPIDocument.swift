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
