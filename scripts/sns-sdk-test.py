#!/usr/bin/env python3
"""Drives Herald's SNS-compatible API with boto3, as code written for AWS SNS would.

Environment: HERALD_SNS_ENDPOINT (http://127.0.0.1:<port>/sns), HERALD_SNS_ACCESS_KEY_ID,
HERALD_SNS_SECRET_ACCESS_KEY, HERALD_SNS_REGION (us-east-1). Exits non-zero on the first
failed check; on success prints one JSON object with the ARNs and message ids, for the caller
to check the deliveries.
"""

import json
import os
import random
import string
import sys

import boto3
from botocore.config import Config
from botocore.exceptions import ClientError

ENDPOINT = os.environ["HERALD_SNS_ENDPOINT"]
KEY = os.environ["HERALD_SNS_ACCESS_KEY_ID"]
SECRET = os.environ["HERALD_SNS_SECRET_ACCESS_KEY"]
REGION = os.environ.get("HERALD_SNS_REGION", "us-east-1")


def client(key=KEY, secret=SECRET):
    return boto3.client(
        "sns", endpoint_url=ENDPOINT, region_name=REGION, aws_access_key_id=key, aws_secret_access_key=secret,
        config=Config(retries={"max_attempts": 1}))


def check(condition, what):
    if not condition:
        print(f"FAILED: {what}", file=sys.stderr)
        sys.exit(1)


def expect_error(code, call, *args, **kwargs):
    try:
        call(*args, **kwargs)
    except ClientError as error:
        got = error.response["Error"]["Code"]
        check(got == code, f"{call.__name__}: expected {code}, got {got}: {error.response['Error']['Message']}")
        return error
    check(False, f"{call.__name__}: expected {code}, got success")


def apns_token():
    return "".join(random.choice("0123456789abcdef") for _ in range(64))


def fcm_token():
    alphabet = string.ascii_letters + string.digits + "-_"
    part = lambda n: "".join(random.choice(alphabet) for _ in range(n))
    return f"{part(22)}:APA91b{part(134)}"


def main():
    sns = client()
    credentials = {"PlatformCredential": "-----BEGIN PRIVATE KEY-----x", "PlatformPrincipal": "key-id"}
    apps = {}
    for name, platform in [("ios-sandbox", "APNS_SANDBOX"), ("ios-production", "APNS"), ("android", "GCM")]:
        attributes = dict(credentials) if platform != "GCM" else {"PlatformCredential": "server-key"}
        arn = sns.create_platform_application(Name=name, Platform=platform, Attributes=attributes)[
            "PlatformApplicationArn"]
        check(arn.endswith(f":app/{platform}/{name}"), f"platform application ARN {arn}")
        apps[platform] = arn
    attributes = sns.get_platform_application_attributes(PlatformApplicationArn=apps["APNS"])["Attributes"]
    check("PlatformCredential" not in attributes, "credentials are not echoed back")
    listed = sns.list_platform_applications()["PlatformApplications"]
    check(sorted(a["PlatformApplicationArn"] for a in listed) == sorted(apps.values()), "ListPlatformApplications")

    endpoints = {}
    tokens = {"APNS_SANDBOX": apns_token(), "APNS": apns_token(), "GCM": fcm_token()}
    for platform, app in apps.items():
        arn = sns.create_platform_endpoint(
            PlatformApplicationArn=app, Token=tokens[platform], CustomUserData=f"user-{platform}")["EndpointArn"]
        check(f":endpoint/{platform}/" in arn, f"endpoint ARN {arn}")
        again = sns.create_platform_endpoint(
            PlatformApplicationArn=app, Token=tokens[platform], CustomUserData=f"user-{platform}")["EndpointArn"]
        check(again == arn, "CreatePlatformEndpoint is idempotent for the same token and attributes")
        endpoints[platform] = arn
    error = expect_error(
        "InvalidParameter", sns.create_platform_endpoint, PlatformApplicationArn=apps["GCM"], Token=tokens["GCM"],
        CustomUserData="someone else")
    check("already exists with the same Token, but different attributes" in error.response["Error"]["Message"],
          "duplicate token message")
    attributes = sns.get_endpoint_attributes(EndpointArn=endpoints["GCM"])["Attributes"]
    check(attributes == {"Token": tokens["GCM"], "Enabled": "true", "CustomUserData": "user-GCM"},
          f"GetEndpointAttributes {attributes}")
    listed = sns.list_endpoints_by_platform_application(PlatformApplicationArn=apps["GCM"])["Endpoints"]
    check([e["EndpointArn"] for e in listed] == [endpoints["GCM"]], "ListEndpointsByPlatformApplication")

    messages = {}
    apns = {"aps": {"alert": {"title": "Hello", "body": "from boto3"}, "badge": 3}, "order": "42"}
    for platform in ["APNS_SANDBOX", "APNS"]:
        messages[platform] = sns.publish(
            TargetArn=endpoints[platform], MessageStructure="json",
            Message=json.dumps({"default": "fallback", platform: json.dumps(apns)}),
            MessageAttributes={
                "AWS.SNS.MOBILE.APNS.PUSH_TYPE": {"DataType": "String", "StringValue": "alert"},
                "AWS.SNS.MOBILE.APNS.PRIORITY": {"DataType": "String", "StringValue": "10"},
            })["MessageId"]
    gcm = {"fcmV1Message": {"message": {"notification": {"title": "Hello", "body": "from boto3"},
                                        "data": {"order": "42"}}}}
    messages["GCM"] = sns.publish(
        TargetArn=endpoints["GCM"], MessageStructure="json",
        Message=json.dumps({"default": "fallback", "GCM": json.dumps(gcm)}),
        MessageAttributes={"AWS.SNS.MOBILE.FCM.TTL": {"DataType": "String", "StringValue": "600"}})["MessageId"]

    topic = sns.create_topic(Name="news")["TopicArn"]
    check(topic.endswith(":news"), f"topic ARN {topic}")
    check(sns.create_topic(Name="news")["TopicArn"] == topic, "CreateTopic is idempotent")
    check([t["TopicArn"] for t in sns.list_topics()["Topics"]] == [topic], "ListTopics")
    for arn in endpoints.values():
        sns.subscribe(TopicArn=topic, Protocol="application", Endpoint=arn)
    listed = sns.list_subscriptions_by_topic(TopicArn=topic)["Subscriptions"]
    check(sorted(s["Endpoint"] for s in listed) == sorted(endpoints.values()), "ListSubscriptionsByTopic")
    check(all(s["Protocol"] == "application" for s in listed), "subscription protocol")
    messages["topic"] = sns.publish(
        TopicArn=topic, MessageStructure="json",
        Message=json.dumps({"default": "Breaking news",
                            "GCM": json.dumps({"data": {"story": "7"}})}))["MessageId"]

    # The SNS notes (seeds/001): one topic, each endpoint its own environment's payload. APNS goes to
    # production endpoints, APNS_SANDBOX to development ones, GCM to Android; an endpoint whose key is
    # absent gets the default text, on iOS as {"aps":{"alert":"<default>"}}.
    mixed = sns.create_topic(Name="mixed")["TopicArn"]
    for arn in endpoints.values():
        sns.subscribe(TopicArn=mixed, Protocol="application", Endpoint=arn)
    both = {
        "default": "默认消息",
        "APNS": json.dumps({"aps": {"alert": {"title": "你好，iOS", "body": "production"}}, "data": {"customId": "123"}}),
        "APNS_SANDBOX": json.dumps({"aps": {"alert": {"title": "你好，iOS", "body": "sandbox"}},
                                    "data": {"customId": "123"}}),
        "GCM": json.dumps({"notification": {"title": "你好，Android", "body": "这是提醒内容"}, "data": {"customId": "123"}}),
    }
    messages["mixed"] = sns.publish(TopicArn=mixed, MessageStructure="json", Message=json.dumps(both))["MessageId"]
    production_only = {"default": "默认消息（仅APNS）", "APNS": json.dumps(
        {"aps": {"alert": {"title": "你好，iOS", "body": "production only"}}, "data": {"customId": "456"}})}
    messages["production-only"] = sns.publish(
        TopicArn=mixed, MessageStructure="json", Message=json.dumps(production_only))["MessageId"]
    messages["default-only"] = sns.publish(
        TargetArn=endpoints["APNS_SANDBOX"], MessageStructure="json",
        Message=json.dumps({"default": "默认消息（终端）"}))["MessageId"]

    # A publish to an endpoint needs `default` or that endpoint's own key (a topic's needs `default`):
    # AWS's FCM example sends GCM alone to an Android endpoint.
    aws_fcm = {"fcmV1Message": {"message": {"notification": {"title": "Hello", "body": "This is a test."},
                                            "data": {"dataKey": "example"}}}}
    messages["gcm-only"] = sns.publish(
        TargetArn=endpoints["GCM"], MessageStructure="json", Message=json.dumps({"GCM": json.dumps(aws_fcm)}))[
        "MessageId"]
    # A legacy GCM payload: its notification keys reach FCM v1 under FCM v1's names (android_channel_id is
    # channel_id, Android's visibility 1 is PUBLIC); the iOS-only badge is not sent to Android.
    legacy = {"notification": {"title": "Legacy", "body": "from the GCM key", "android_channel_id": "alerts",
                               "visibility": 1, "icon": "ic_stat_alert", "color": "#336699", "sound": "default",
                               "tag": "legacy", "click_action": "OPEN_ALERT", "badge": "2"},
              "data": {"legacy": "1"}}
    messages["legacy"] = sns.publish(
        TargetArn=endpoints["GCM"], MessageStructure="json", Message=json.dumps({"GCM": json.dumps(legacy)}))[
        "MessageId"]

    # Errors, as SNS answers them.
    expect_error("SignatureDoesNotMatch", client(secret=SECRET + "x").list_topics)
    expect_error("InvalidClientTokenId", client(key="AKIDUNKNOWN000000000").list_topics)
    unknown = endpoints["GCM"].rsplit("/", 1)[0] + "/00000000-0000-0000-0000-000000000000"
    expect_error("NotFound", sns.get_endpoint_attributes, EndpointArn=unknown)
    expect_error("NotFound", sns.publish, TargetArn=unknown, Message="hi")
    expect_error("InvalidParameter", sns.publish, TargetArn=endpoints["GCM"], MessageStructure="json",
                 Message="{not json")
    # Without `default`: a topic's message is refused with SNS's topic text, an endpoint's without its own key
    # with the text that names that key.
    error = expect_error("InvalidParameter", sns.publish, TopicArn=topic, MessageStructure="json",
                         Message=json.dumps({"GCM": json.dumps(aws_fcm)}))
    check(error.response["Error"]["Message"]
          == "Invalid parameter: Message Structure - No default entry in JSON message body",
          f"topic without default: {error.response['Error']['Message']}")
    for platform, other in [("GCM", "APNS"), ("APNS_SANDBOX", "APNS"), ("APNS", "GCM")]:
        error = expect_error("InvalidParameter", sns.publish, TargetArn=endpoints[platform], MessageStructure="json",
                             Message=json.dumps({other: json.dumps(aws_fcm if other == "GCM" else apns)}))
        check(error.response["Error"]["Message"]
              == f"Invalid parameter: JSON must contain an entry for 'default' or '{platform}'.",
              f"{platform} endpoint without default or its key: {error.response['Error']['Message']}")

    # Disabling, unsubscribing and deleting.
    sns.set_endpoint_attributes(EndpointArn=endpoints["APNS"], Attributes={"Enabled": "false"})
    check(sns.get_endpoint_attributes(EndpointArn=endpoints["APNS"])["Attributes"]["Enabled"] == "false",
          "SetEndpointAttributes Enabled=false")
    expect_error("EndpointDisabled", sns.publish, TargetArn=endpoints["APNS"], Message="hi")
    sns.set_endpoint_attributes(EndpointArn=endpoints["APNS"], Attributes={"Enabled": "true"})
    sports = sns.create_topic(Name="sports")["TopicArn"]
    subscription = sns.subscribe(TopicArn=sports, Protocol="application", Endpoint=endpoints["GCM"])[
        "SubscriptionArn"]
    check(subscription.startswith(sports + ":"), f"subscription ARN {subscription}")
    sns.unsubscribe(SubscriptionArn=subscription)
    check(sns.list_subscriptions_by_topic(TopicArn=sports)["Subscriptions"] == [], "Unsubscribe")
    sns.delete_topic(TopicArn=sports)
    check(sorted(t["TopicArn"] for t in sns.list_topics()["Topics"]) == sorted([topic, mixed]), "DeleteTopic")

    # Lists come in pages of 100 with NextToken; the SDK's paginators walk them.
    bulk = sns.create_platform_application(Name="bulk", Platform="GCM", Attributes=credentials)[
        "PlatformApplicationArn"]
    crowd = sns.create_topic(Name="crowd")["TopicArn"]
    created = set()
    for _ in range(205):
        arn = sns.create_platform_endpoint(PlatformApplicationArn=bulk, Token=fcm_token())["EndpointArn"]
        created.add(arn)
        sns.subscribe(TopicArn=crowd, Protocol="application", Endpoint=arn)
    for index in range(101):
        sns.create_topic(Name=f"t{index:03d}")
    first = sns.list_endpoints_by_platform_application(PlatformApplicationArn=bulk)
    check(len(first["Endpoints"]) == 100 and "NextToken" in first, "the first page holds 100 and a NextToken")

    def walk(operation, key, **kwargs):
        pages = list(sns.get_paginator(operation).paginate(**kwargs))
        return len(pages), [item for page in pages for item in page[key]]

    pages, listed = walk("list_endpoints_by_platform_application", "Endpoints", PlatformApplicationArn=bulk)
    check(pages == 3 and {e["EndpointArn"] for e in listed} == created and len(listed) == 205,
          f"ListEndpointsByPlatformApplication pages: {pages} pages, {len(listed)} endpoints")
    pages, listed = walk("list_subscriptions_by_topic", "Subscriptions", TopicArn=crowd)
    check(pages == 3 and {s["Endpoint"] for s in listed} == created and len(listed) == 205,
          f"ListSubscriptionsByTopic pages: {pages} pages, {len(listed)} subscriptions")
    pages, listed = walk("list_topics", "Topics")
    check(pages == 2 and len({t["TopicArn"] for t in listed}) == 104, f"ListTopics pages: {pages}, {len(listed)}")
    expect_error("InvalidParameter", sns.list_topics, NextToken="not-a-token!")

    print(json.dumps({"endpoints": endpoints, "tokens": tokens, "messages": messages, "topic": topic, "mixed": mixed}))


if __name__ == "__main__":
    main()
