"""The audit rows each request must leave, by operation: every S3 operation depotd routes and every REST
operation id (`depotd --print-api-routes`). audit_check.py compares them with the rows each request really
left; test_audit_expectations.py fails when depotd serves an operation that has no entry here.

A request is one of three kinds (see `kind_of`):
  success  2xx (GetObject: also 304, which depotd records as a download of the cached copy; PostObject: also
           303, the redirect of success_action_redirect after the object is stored)
  denied   an authenticated caller refused: S3 AccessDenied (logged as error access_denied), a REST
           problem 403, or a refusal answered 404 because the caller may not learn that the team or bucket
           exists (REST, Hub, and S3's models view; logged as error access_denied). Exactly one row (s3.<Operation>,
           api.<operationId> or hf.<name>, outcome "denied"); on S3 the resource is bucket[/key].
  failure  anything else, including refusals of callers that did not authenticate: no row (a failed change
           rolls back with its row).

`OPERATIONS[name]` gives the rows of a success, as a function of the request's log line and of `Facts` the
checker looks up. An entry is a list of `Row`s; each matches rows by action and outcome, and by resource
when the log line tells it (S3; REST log lines carry no path, so REST resources are not compared).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

ALLOWED, DENIED = "allowed", "denied"


@dataclass(frozen=True)
class Row:
    """Rows expected for one request: `action`/`outcome`, `resource` exact or `prefix` (None: any), between
    `min` and `max` of them (max None: no upper bound)."""
    action: str
    outcome: str = ALLOWED
    resource: str | None = None
    prefix: str | None = None
    min: int = 1
    max: int | None = 1

    def matches(self, action: str, outcome: str, resource: str) -> bool:
        return (action == self.action and outcome == self.outcome
                and (self.resource is None or resource == self.resource)
                and (self.prefix is None or resource.startswith(self.prefix)))

    def describe(self) -> str:
        where = self.resource if self.resource is not None else (f"{self.prefix}*" if self.prefix is not None
                                                                  else "*")
        count = "" if (self.min, self.max) == (1, 1) else (
            f" x{self.min}..{'' if self.max is None else self.max}")
        return f"({self.action}, {self.outcome}, {where}){count}"


@dataclass
class Facts:
    """What the expectations may look up besides the log line."""
    models_bucket: str = "models"
    # (bucket name, key prefix) of every model: an S3 read under one is a model download.
    model_prefixes: list[tuple[str, str]] = field(default_factory=list)

    def is_model_file(self, bucket: str, key: str) -> bool:
        if bucket == self.models_bucket:
            return True
        if key.startswith(".snapshots/"):
            # The snapshot view .snapshots/<name>/<key> reads <key> as it was.
            key = key.split("/", 2)[2] if key.count("/") >= 2 else ""
        return any(b == bucket and key.startswith(p) for b, p in self.model_prefixes)


def obj(line: dict) -> str:
    return f"{line.get('bucket', '')}/{line.get('key', '')}"


def one(action: str, resource: Callable[[dict], str] | None = None):
    """An entry: exactly one `action` row (on the resource the log line gives, for S3)."""
    return lambda line, facts: [Row(action, resource=resource(line) if resource else None)]


NONE = lambda line, facts: []  # noqa: E731 -- read-only: no row
BUCKET = lambda line: line.get("bucket", "")  # noqa: E731

S3_OPERATIONS: dict[str, Callable] = {
    "ListBuckets": NONE,
    # With x-amz-object-ownership or an ACL header: the settings' own rows after the creation.
    "CreateBucket": lambda line, facts: [Row("bucket.create", resource=BUCKET(line)),
                                         Row("bucket.ownership_controls", resource=BUCKET(line), min=0),
                                         Row("bucket.acl", resource=BUCKET(line), min=0)],
    "HeadBucket": NONE,
    "DeleteBucket": one("bucket.delete", BUCKET),
    "GetBucketLocation": NONE,
    "GetBucketVersioning": NONE,
    "PutBucketVersioning": one("bucket.versioning", BUCKET),
    "GetBucketAcl": NONE,
    "PutBucketAcl": one("bucket.acl", BUCKET),
    "PutPublicAccessBlock": one("bucket.public_access_block", BUCKET),
    "GetPublicAccessBlock": NONE,
    "DeletePublicAccessBlock": one("bucket.public_access_block", BUCKET),
    "PutBucketOwnershipControls": one("bucket.ownership_controls", BUCKET),
    "GetBucketOwnershipControls": NONE,
    "DeleteBucketOwnershipControls": one("bucket.ownership_controls", BUCKET),
    "ListObjectsV2": NONE,
    "ListObjects": NONE,
    "ListObjectVersions": NONE,
    "ListMultipartUploads": NONE,
    # One row per key deleted (also keys that did not exist: S3 reports them deleted), and one denied row
    # s3.DeleteObjects per key refused to the caller (a policy Deny, Object Lock); the keys are in the
    # request body, which the log does not carry, so only their bucket is checked.
    "DeleteObjects": lambda line, facts: [Row("object.delete", prefix=BUCKET(line) + "/", min=0, max=None),
                                          Row("s3.DeleteObjects", DENIED, prefix=BUCKET(line) + "/", min=0,
                                              max=None)],
    # One row per write, also with an ACL (x-amz-acl, x-amz-grant-*, a form's acl field): the ACL is stored in
    # the write's transaction and named in its row's details, never a second row (issue 34 item 13).
    "PutObject": one("object.put", obj),
    # A browser form upload (the key comes from the form).
    "PostObject": one("object.put", obj),
    "CopyObject": one("object.copy", obj),
    "GetObject": lambda line, facts: ([Row("model.download", resource=obj(line))]
                                      if facts.is_model_file(line.get("bucket", ""), line.get("key", "")) else []),
    "HeadObject": NONE,
    "DeleteObject": one("object.delete", obj),
    "GetObjectAcl": NONE,
    "PutObjectAcl": one("object.acl", obj),
    "GetObjectAttributes": NONE,
    "CreateMultipartUpload": one("multipart.create", obj),
    "UploadPart": one("multipart.part", obj),
    "UploadPartCopy": one("multipart.part", obj),
    # With the ACL CreateMultipartUpload asked for in its details, as PutObject's.
    "CompleteMultipartUpload": one("object.put", obj),
    "AbortMultipartUpload": one("multipart.abort", obj),
    "ListParts": NONE,
    "GetObjectTagging": NONE,
    "PutObjectTagging": one("object.tagging", obj),
    "DeleteObjectTagging": one("object.tagging", obj),
    # A row only when the bucket's tags change (an empty set on a bucket without tags changes nothing).
    "PutBucketTagging": lambda line, facts: [Row("bucket.update", resource=BUCKET(line), min=0, max=1)],
    "GetBucketTagging": NONE,
    "DeleteBucketTagging": lambda line, facts: [Row("bucket.update", resource=BUCKET(line), min=0, max=1)],
    "PutBucketCors": one("bucket.update", BUCKET),
    "GetBucketCors": NONE,
    # A row only when there was a configuration to remove.
    "DeleteBucketCors": lambda line, facts: [Row("bucket.update", resource=BUCKET(line), min=0, max=1)],
    "PutBucketLifecycleConfiguration": one("bucket.update", BUCKET),
    "GetBucketLifecycleConfiguration": NONE,
    # A row only when there was a configuration to remove.
    "DeleteBucketLifecycle": lambda line, facts: [Row("bucket.update", resource=BUCKET(line), min=0, max=1)],
    "PutObjectLockConfiguration": one("bucket.object_lock", BUCKET),
    "GetObjectLockConfiguration": NONE,
    "PutObjectRetention": one("object.retention", obj),
    "GetObjectRetention": NONE,
    "PutObjectLegalHold": one("object.legal_hold", obj),
    "GetObjectLegalHold": NONE,
    "PutBucketEncryption": one("bucket.update", BUCKET),
    "GetBucketEncryption": NONE,
    # A row only when there was a configuration to remove.
    "DeleteBucketEncryption": lambda line, facts: [Row("bucket.update", resource=BUCKET(line), min=0, max=1)],
    "PutBucketPolicy": one("bucket.policy", BUCKET),
    "GetBucketPolicy": NONE,
    # A row only when there was a policy to remove.
    "DeleteBucketPolicy": lambda line, facts: [Row("bucket.policy", resource=BUCKET(line), min=0, max=1)],
    "GetBucketPolicyStatus": NONE,
    "PreflightBucket": NONE,  # unauthenticated reads of the configuration
    "PreflightObject": NONE,
}

REST_OPERATIONS: dict[str, Callable] = {
    "whoami": NONE,
    "createSession": one("session.create"),
    "getCurrentSession": NONE,
    "deleteCurrentSession": one("session.revoke"),
    "lookupContent": NONE,
    "getUsage": NONE,
    "listAudit": NONE,
    "listTokens": NONE,
    "createToken": one("token.create"),
    "revokeToken": one("token.revoke"),
    "listUsers": NONE,
    "createUser": one("user.create"),
    "listKeys": NONE,
    "createKey": one("key.create"),
    "revokeKey": one("key.revoke"),
    "getBucket": NONE,
    # One row per flag the body sets (dedup, object_events); the body is not in the log.
    "updateBucket": lambda line, facts: [Row("bucket.update", min=0, max=2)],
    "getBucketUsage": NONE,
    "createObjectFromDigest": one("object.copy"),
    "listSnapshots": NONE,
    "createSnapshot": one("snapshot.create"),
    "getSnapshot": NONE,
    "deleteSnapshot": one("snapshot.delete"),
    "restoreSnapshot": one("snapshot.restore"),
    "listTeams": NONE,
    "createTeam": one("team.create"),
    "getTeam": NONE,
    "listTeamMembers": NONE,
    "setTeamMember": one("team.member.set"),
    "removeTeamMember": one("team.member.remove"),
    "listModels": NONE,
    "createModel": one("model.create"),
    "getModel": NONE,
    "updateModel": one("model.update"),
    "listModelHistory": NONE,
    "listVersions": NONE,
    # A new version also moves the "latest" alias.
    # A version completing uploads writes each as CompleteMultipartUpload does: its object.put row.
    "createVersion": lambda line, facts: [Row("version.create"), Row("alias.set"),
                                          Row("object.put", min=0, max=1000)],
    "getVersion": NONE,
    "listVersionFiles": NONE,
    # One row for its links (under the caller, as a download link's); the first manifest of a team makes its
    # event-link key (user, reader membership, key; a key that lost a race with another depotd is revoked).
    "getVersionManifest": lambda line, facts: [Row("model.download_link"), Row("user.create", min=0),
                                               Row("team.member.set", min=0, max=2),
                                               Row("key.create", min=0, max=2), Row("key.revoke", min=0)],
    # One row for the link (under the caller), plus the team's event-link key on first use as above.
    "getFileDownloadLink": lambda line, facts: [Row("model.download_link"), Row("user.create", min=0),
                                                Row("team.member.set", min=0, max=2),
                                                Row("key.create", min=0, max=2), Row("key.revoke", min=0)],
    "diffVersions": NONE,
    "listVersionHistory": NONE,
    "submitVersion": one("version.submitted"),
    "approveVersion": one("version.approve"),
    "rejectVersion": one("version.rejected"),
    "deprecateVersion": one("version.deprecated"),
    "archiveVersion": one("version.archived"),
    "listAliases": NONE,
    "getAlias": NONE,
    "setAlias": one("alias.set"),
    "deleteAlias": one("alias.delete"),
    "listWarmups": NONE,
    "createWarmup": one("warmup.create"),
    "getWarmup": NONE,
    "getModelWarmupPolicy": NONE,
    "setModelWarmupPolicy": one("warmup.policy.set"),
    "getTeamWarmupPolicy": NONE,
    "setTeamWarmupPolicy": one("warmup.policy.set"),
    "listWebhooks": NONE,
    "createWebhook": one("webhook.create"),
    "getWebhook": NONE,
    "updateWebhook": one("webhook.update"),
    "deleteWebhook": one("webhook.delete"),
    "rotateWebhookSecret": one("webhook.rotate"),
    "pingWebhook": one("webhook.ping"),
    "listWebhookDeliveries": NONE,
    "getWebhookDelivery": NONE,
    "redeliverWebhook": one("webhook.redeliver"),
}

# The Hugging Face Hub-compatible API (src/server/hf/hf.cpp). Its log lines carry bucket and key for file
# reads (<models bucket>, team/model/revision/path), as the model view's do. Who may read: team members
# (any role) and installation admins, within their credential's scope; an out-of-scope request is a 403
# with one hf.<name> denied row, and so is a non-member's 404 (RepoNotFound for a team that exists, logged
# as error access_denied); an anonymous 401 and a 404 for a team that does not exist leave no row.
HF_OPERATIONS: dict[str, Callable] = {
    "HfModelInfo": NONE,
    "HfListTree": NONE,
    "HfPathsInfo": NONE,
    "HfResolve": one("model.download", obj),  # every GET of a file, ranges included
    "HfResolveHead": NONE,
}

# Requests no route matched, and the web console's static files (public, like a sign-in page): no rows.
UNROUTED = {"Unknown", "RestApi", "Console"}

OPERATIONS = {**S3_OPERATIONS, **REST_OPERATIONS, **HF_OPERATIONS}


def kind_of(line: dict) -> str:
    """success, denied or failure (see the module comment)."""
    status = int(line.get("status", 0))
    op = line.get("operation", "")
    if 200 <= status < 300 or (op == "GetObject" and status == 304):
        return "success"
    if op == "PostObject" and status == 303:  # stored, then redirected (success_action_redirect)
        return "success"
    if status == 403 and line.get("caller") and op not in UNROUTED:
        if op in S3_OPERATIONS and line.get("error") == "access_denied":
            return "denied"
        if op in REST_OPERATIONS or op in HF_OPERATIONS:
            return "denied"
    if (line.get("caller") and line.get("error") == "access_denied"
            and (op in REST_OPERATIONS or op in HF_OPERATIONS or op in S3_OPERATIONS)):
        return "denied"  # a refusal answered as an absence (404; S3: a team's key in the models view)
    return "failure"


def expected_rows(line: dict, facts: Facts) -> list[Row]:
    """The rows the request of this log line must have left. KeyError for an operation with no entry."""
    op = line.get("operation", "")
    if op in UNROUTED:
        return []
    entry = OPERATIONS[op]
    kind = kind_of(line)
    if kind == "success":
        return entry(line, facts)
    if kind == "denied":
        if op in S3_OPERATIONS:
            resource = line.get("bucket", "") + (("/" + line["key"]) if line.get("key") else "")
            return [Row("s3." + op, DENIED, resource=resource)]
        if op in HF_OPERATIONS:
            return [Row("hf." + op, DENIED)]
        return [Row("api." + op, DENIED)]
    return []
