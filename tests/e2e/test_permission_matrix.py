"""The permission matrix: every S3 operation and every REST route, for every team role (none, reader, writer,
maintainer, admin, installation admin) and every credential scope (read-only, bucket, prefix, model, alias),
on own-team and other-team resources, asserting allowed / denied / hidden.

Generated from two tables (S3_OPERATIONS, REST_ROUTES) and the rules in s3_expected / rest_expected; the
coverage tests fail when depotd serves a REST route or routes an S3 operation that has no row, so a new
operation cannot be forgotten.

Outcomes: "denied" = 403; "hidden" = 404 saying the bucket or team does not exist (other owners' buckets and
other teams are indistinguishable from absent ones, as the code does today); "allowed" = anything else (the
call got past authorization: 2xx, or a 4xx about the request itself such as 400, 404 for a missing child, 409).
Buckets belong to users, so for S3 "own" is a bucket the caller owns and "other" another team member's bucket;
an installation admin reaches every bucket (S3 and REST), as SECURITY.md says.

Every cell that answers "denied" must also have changed nothing (data_state: rows of the data tables, no new
blob). Beyond one call per operation, the scope kinds are driven against what reaches past the path: copy
sources (CopyObject, UploadPartCopy) outside the scope, versionId reads, digest sources and restore targets
outside the scope, ListBuckets, and the models view.
"""

from __future__ import annotations

import json
import re
import secrets
from dataclasses import dataclass

import botocore.exceptions
import pytest
import requests

from depot_harness import REPO_ROOT, run, unique_bucket_name
from rest import call, sha, token_for

ALLOWED, DENIED, HIDDEN = "allowed", "denied", "hidden"
ROLES = ["none", "reader", "writer", "maintainer", "admin", "installation-admin"]
SCOPES = ["read-only", "bucket", "prefix", "model", "alias"]
RANK = {"none": 0, "reader": 1, "writer": 2, "maintainer": 3, "admin": 4, "installation-admin": 5}


@dataclass
class Principal:
    name: str            # a role or a scope
    user: str
    key: dict            # access_key_id, secret_access_key
    token: str
    scope: str | None = None

    @property
    def rank(self) -> int:
        # Scoped credentials belong to the own team's admin; the scope narrows that.
        return RANK["admin"] if self.scope else RANK[self.name]


# ---- the fixture: two teams, a bucket per user, a model, an alias, a webhook each

@pytest.fixture(scope="module")
def world(depot):
    tag = secrets.token_hex(3)
    users = {role: f"pm-{role[:5]}-{tag}" for role in ROLES if role != "installation-admin"}
    users["other"] = f"pm-other-{tag}"
    for user in users.values():
        depot.add_user(user, user)
    users["installation-admin"] = "alice"
    admin_tok = token_for(depot, "alice")["token"]
    teams = {"own": f"pm-own-{tag}", "other": f"pm-oth-{tag}"}
    for team in teams.values():
        assert call(depot, "POST", "/api/v1/teams", token=admin_tok, body={"name": team}).status_code == 201
    for role in ("reader", "writer", "maintainer", "admin"):
        assert call(depot, "PUT", f"/api/v1/teams/{teams['own']}/members/{users[role]}", token=admin_tok,
                    body={"role": role}).status_code == 200
    assert call(depot, "PUT", f"/api/v1/teams/{teams['other']}/members/{users['other']}", token=admin_tok,
                body={"role": "admin"}).status_code == 200
    # Every user's own bucket, with p/obj in it.
    # The scoped credentials' owner (the own team's admin) also has a second bucket, outside every scope but
    # read_only, holding content of its own (p/elsewhere), and q/obj beside the prefix p/ in the first.
    buckets, clients, versions = {}, {}, {}
    for role, user in users.items():
        u = depot.user(user)
        clients[user] = depot.client(access_key=u.access_key, secret=u.secret)
        buckets[user] = unique_bucket_name(f"pm-{role[:6]}")
        clients[user].create_bucket(Bucket=buckets[user])
        versions[user] = clients[user].put_object(Bucket=buckets[user], Key="p/obj", Body=b"matrix").get(
            "VersionId", "null")
    outside = unique_bucket_name("pm-outside")
    clients[users["admin"]].create_bucket(Bucket=outside)
    clients[users["admin"]].put_object(Bucket=outside, Key="p/elsewhere", Body=b"only outside the scope")
    clients[users["admin"]].put_object(Bucket=outside, Key="p/digest-only", Body=b"a digest only outside")
    clients[users["admin"]].put_object(Bucket=buckets[users["admin"]], Key="q/obj", Body=b"beside the prefix")
    tokens = {user: token_for(depot, user)["token"] for user in users.values()}
    # A model per team, in its admin's bucket under p/, with version 1 and alias "serving".
    webhooks = {}
    for side, owner in (("own", users["admin"]), ("other", users["other"])):
        team, tok = teams[side], tokens[owner]
        assert call(depot, "POST", f"/api/v1/teams/{team}/models", token=tok,
                    body={"name": "m1", "bucket": buckets[owner], "prefix": "p/"}).status_code == 201
        assert call(depot, "POST", f"/api/v1/teams/{team}/models/m1/versions", token=tok, body={}).status_code == 201
        assert call(depot, "PUT", f"/api/v1/teams/{team}/models/m1/aliases/serving", token=tok,
                    body={"version": 1}).status_code == 200
        r = call(depot, "POST", f"/api/v1/teams/{team}/webhooks", token=tok, body={"url": "http://93.184.215.14/matrix"})
        webhooks[side] = r.json()["id"]
    principals = {}
    for role in ROLES:
        user = users[role]
        u = depot.user(user)
        principals[role] = Principal(role, user, {"access_key_id": u.access_key, "secret_access_key": u.secret},
                                     tokens[user])
    admin = users["admin"]
    scope_bodies = {"read-only": {"read_only": True}, "bucket": {"bucket": buckets[admin]},
                    "prefix": {"bucket": buckets[admin], "prefix": "p/"},
                    "model": {"model": f"{teams['own']}/m1"},
                    "alias": {"model": f"{teams['own']}/m1", "alias": "serving"}}
    for scope, body in scope_bodies.items():
        key = call(depot, "POST", "/api/v1/keys", token=tokens[admin], body={"scope": body}).json()
        tok = call(depot, "POST", "/api/v1/tokens", token=tokens[admin], body={"scope": body}).json()["token"]
        principals[scope] = Principal(scope, admin, key, tok, scope=scope)
    assert call(depot, "POST", f"/api/v1/buckets/{buckets[admin]}/snapshots", token=tokens[admin],
                body={"name": "mx"}).status_code == 201
    yield {"users": users, "teams": teams, "buckets": buckets, "clients": clients, "tokens": tokens,
           "principals": principals, "webhooks": webhooks, "outside": outside, "versions": versions}
    # The subscriptions point at an address nothing answers: deleted, their deliveries stop retrying in
    # the background of later tests on this depotd.
    for side, owner in (("own", users["admin"]), ("other", users["other"])):
        call(depot, "DELETE", f"/api/v1/teams/{teams[side]}/webhooks/{webhooks[side]}", token=tokens[owner])


def target_bucket(world, p: Principal, side: str) -> tuple[str, str]:
    """(bucket, owner) the call addresses: the caller's own bucket, or the other team admin's."""
    owner = p.user if side == "own" else world["users"]["other"]
    return world["buckets"][owner], owner


# ---- S3

OBJECT_READS = {"GetObject", "HeadObject", "GetObjectAcl", "GetObjectAttributes", "ListParts", "GetObjectTagging",
                "GetObjectRetention", "GetObjectLegalHold"}
LISTINGS = {"ListObjectsV2", "ListObjects", "ListObjectVersions", "ListMultipartUploads"}
BUCKET_READS = {"HeadBucket", "GetBucketLocation", "GetBucketVersioning", "GetBucketAcl"}
OBJECT_WRITES = {"PutObject", "PostObject", "CopyObject", "DeleteObject", "CreateMultipartUpload", "UploadPart",
                 "UploadPartCopy", "CompleteMultipartUpload", "AbortMultipartUpload", "PutObjectTagging",
                 "DeleteObjectTagging", "PutObjectRetention", "PutObjectLegalHold", "PutObjectAcl"}
NOT_IMPLEMENTED: set[str] = set()
# Bucket configuration reads: reads for a read-only key, but not the bucket-level reads a key limited to a
# prefix (or a model) may make.
CONFIG_READS = {"GetBucketCors", "GetBucketTagging", "GetBucketLifecycleConfiguration",
                "GetObjectLockConfiguration", "GetPublicAccessBlock", "GetBucketOwnershipControls",
                "GetBucketEncryption", "GetBucketPolicy", "GetBucketPolicyStatus"}
# Routed without authentication (a browser's CORS preflight): test_cors_preflights_change_nothing.
UNAUTHENTICATED = {"PreflightBucket", "PreflightObject"}


def upload(world, bucket, owner):
    client = world["clients"][owner]
    up = client.create_multipart_upload(Bucket=bucket, Key="p/mp")["UploadId"]
    etag = client.upload_part(Bucket=bucket, Key="p/mp", UploadId=up, PartNumber=1, Body=b"part")["ETag"]
    return up, etag


# Operations on an upload in progress: the owner starts it (prepare) before the state a denial must leave
# unchanged is taken.
ON_UPLOAD = {"UploadPart", "UploadPartCopy", "CompleteMultipartUpload", "AbortMultipartUpload", "ListParts"}


def prepare(op, world, bucket, owner):
    return upload(world, bucket, owner) if op in ON_UPLOAD else None


def post_form(client, bucket: str, key: str):
    """POST Object: a form signed with the client's credentials (boto3's presigned POST), sent by requests;
    an error answer raised as boto3 raises it."""
    info = client.generate_presigned_post(Bucket=bucket, Key=key, ExpiresIn=300)
    r = requests.post(info["url"], data=info["fields"], files={"file": ("f.txt", b"posted")}, timeout=60)
    if r.status_code >= 300:
        code = r.text.split("<Code>", 1)[1].split("</Code>", 1)[0] if "<Code>" in r.text else str(r.status_code)
        raise botocore.exceptions.ClientError(
            {"Error": {"Code": code, "Message": r.text}, "ResponseMetadata": {"HTTPStatusCode": r.status_code}},
            "PostObject")
    return r


# name -> call(client, bucket, world, owner, upload). Every call stays under p/ and leaves the bucket usable.
S3_OPERATIONS = {
    "ListBuckets": lambda c, b, w, o, u: c.list_buckets(),
    "CreateBucket": lambda c, b, w, o, u: c.create_bucket(Bucket=b),
    "HeadBucket": lambda c, b, w, o, u: c.head_bucket(Bucket=b),
    "DeleteBucket": lambda c, b, w, o, u: c.delete_bucket(Bucket=b),  # not empty: 409 once past authorization
    "GetBucketLocation": lambda c, b, w, o, u: c.get_bucket_location(Bucket=b),
    "GetBucketVersioning": lambda c, b, w, o, u: c.get_bucket_versioning(Bucket=b),
    "PutBucketVersioning": lambda c, b, w, o, u: c.put_bucket_versioning(
        Bucket=b, VersioningConfiguration={"Status": "Suspended"}),
    "GetBucketAcl": lambda c, b, w, o, u: c.get_bucket_acl(Bucket=b),
    "PutBucketAcl": lambda c, b, w, o, u: c.put_bucket_acl(Bucket=b, ACL="private"),
    "PutPublicAccessBlock": lambda c, b, w, o, u: c.put_public_access_block(
        Bucket=b, PublicAccessBlockConfiguration={"BlockPublicAcls": True, "IgnorePublicAcls": True}),
    "GetPublicAccessBlock": lambda c, b, w, o, u: c.get_public_access_block(Bucket=b),  # 404: allowed
    "DeletePublicAccessBlock": lambda c, b, w, o, u: c.delete_public_access_block(Bucket=b),
    "PutBucketOwnershipControls": lambda c, b, w, o, u: c.put_bucket_ownership_controls(
        Bucket=b, OwnershipControls={"Rules": [{"ObjectOwnership": "BucketOwnerEnforced"}]}),
    "GetBucketOwnershipControls": lambda c, b, w, o, u: c.get_bucket_ownership_controls(Bucket=b),
    "DeleteBucketOwnershipControls": lambda c, b, w, o, u: c.delete_bucket_ownership_controls(Bucket=b),
    "PutBucketCors": lambda c, b, w, o, u: c.put_bucket_cors(Bucket=b, CORSConfiguration={
        "CORSRules": [{"AllowedOrigins": ["https://matrix.example"], "AllowedMethods": ["GET"]}]}),
    "GetBucketCors": lambda c, b, w, o, u: c.get_bucket_cors(Bucket=b),  # NoSuchCORSConfiguration: allowed
    "DeleteBucketCors": lambda c, b, w, o, u: c.delete_bucket_cors(Bucket=b),
    "PutBucketTagging": lambda c, b, w, o, u: c.put_bucket_tagging(Bucket=b, Tagging={
        "TagSet": [{"Key": "cost-center", "Value": "matrix"}]}),
    "GetBucketTagging": lambda c, b, w, o, u: c.get_bucket_tagging(Bucket=b),  # NoSuchTagSet: allowed
    "DeleteBucketTagging": lambda c, b, w, o, u: c.delete_bucket_tagging(Bucket=b),
    "PutBucketLifecycleConfiguration": lambda c, b, w, o, u: c.put_bucket_lifecycle_configuration(
        Bucket=b, LifecycleConfiguration={"Rules": [{"ID": "matrix", "Status": "Disabled",
                                                     "Filter": {"Prefix": "p/"}, "Expiration": {"Days": 365}}]}),
    # NoSuchLifecycleConfiguration: allowed
    "GetBucketLifecycleConfiguration": lambda c, b, w, o, u: c.get_bucket_lifecycle_configuration(Bucket=b),
    "DeleteBucketLifecycle": lambda c, b, w, o, u: c.delete_bucket_lifecycle(Bucket=b),
    # The suite's depotd has no SSE master key: 501 NotImplemented once authorized (test_sse.py has one).
    "PutBucketEncryption": lambda c, b, w, o, u: c.put_bucket_encryption(
        Bucket=b, ServerSideEncryptionConfiguration={
            "Rules": [{"ApplyServerSideEncryptionByDefault": {"SSEAlgorithm": "AES256"}}]}),
    # ServerSideEncryptionConfigurationNotFoundError: allowed
    "GetBucketEncryption": lambda c, b, w, o, u: c.get_bucket_encryption(Bucket=b),
    "DeleteBucketEncryption": lambda c, b, w, o, u: c.delete_bucket_encryption(Bucket=b),
    # A policy granting the owner what it has anyway: the bucket stays as usable as before.
    "PutBucketPolicy": lambda c, b, w, o, u: c.put_bucket_policy(Bucket=b, Policy=json.dumps({
        "Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": {"AWS": o},
                                                "Action": "s3:GetObject", "Resource": f"arn:aws:s3:::{b}/p/*"}]})),
    "GetBucketPolicy": lambda c, b, w, o, u: c.get_bucket_policy(Bucket=b),  # NoSuchBucketPolicy: allowed
    "DeleteBucketPolicy": lambda c, b, w, o, u: c.delete_bucket_policy(Bucket=b),
    "GetBucketPolicyStatus": lambda c, b, w, o, u: c.get_bucket_policy_status(Bucket=b),
    "ListObjectsV2": lambda c, b, w, o, u: c.list_objects_v2(Bucket=b, Prefix="p/"),
    "ListObjects": lambda c, b, w, o, u: c.list_objects(Bucket=b, Prefix="p/"),
    "ListObjectVersions": lambda c, b, w, o, u: c.list_object_versions(Bucket=b, Prefix="p/"),
    "ListMultipartUploads": lambda c, b, w, o, u: c.list_multipart_uploads(Bucket=b, Prefix="p/"),
    "DeleteObjects": lambda c, b, w, o, u: c.delete_objects(Bucket=b, Delete={"Objects": [{"Key": "p/gone"}]}),
    "PutObject": lambda c, b, w, o, u: c.put_object(Bucket=b, Key="p/new", Body=b"n"),
    "PostObject": lambda c, b, w, o, u: post_form(c, b, "p/posted"),
    "CopyObject": lambda c, b, w, o, u: c.copy_object(Bucket=b, Key="p/copy", CopySource={"Bucket": b, "Key": "p/obj"}),
    "GetObject": lambda c, b, w, o, u: c.get_object(Bucket=b, Key="p/obj")["Body"].read(),
    "HeadObject": lambda c, b, w, o, u: c.head_object(Bucket=b, Key="p/obj"),
    "DeleteObject": lambda c, b, w, o, u: c.delete_object(Bucket=b, Key="p/gone"),
    "GetObjectAcl": lambda c, b, w, o, u: c.get_object_acl(Bucket=b, Key="p/obj"),
    "PutObjectAcl": lambda c, b, w, o, u: c.put_object_acl(Bucket=b, Key="p/obj", ACL="private"),
    "GetObjectAttributes": lambda c, b, w, o, u: c.get_object_attributes(Bucket=b, Key="p/obj",
                                                                      ObjectAttributes=["ETag"]),
    "CreateMultipartUpload": lambda c, b, w, o, u: c.create_multipart_upload(Bucket=b, Key="p/mp"),
    "UploadPart": lambda c, b, w, o, u: c.upload_part(Bucket=b, Key="p/mp", UploadId=u[0], PartNumber=2, Body=b"x"),
    "UploadPartCopy": lambda c, b, w, o, u: c.upload_part_copy(Bucket=b, Key="p/mp", UploadId=u[0], PartNumber=2,
                                                               CopySource={"Bucket": b, "Key": "p/obj"}),
    "CompleteMultipartUpload": lambda c, b, w, o, u: c.complete_multipart_upload(
        Bucket=b, Key="p/mp", UploadId=u[0], MultipartUpload={"Parts": [{"PartNumber": 1, "ETag": u[1]}]}),
    "AbortMultipartUpload": lambda c, b, w, o, u: c.abort_multipart_upload(Bucket=b, Key="p/mp", UploadId=u[0]),
    "ListParts": lambda c, b, w, o, u: c.list_parts(Bucket=b, Key="p/mp", UploadId=u[0]),
    "GetObjectTagging": lambda c, b, w, o, u: c.get_object_tagging(Bucket=b, Key="p/obj"),
    "PutObjectTagging": lambda c, b, w, o, u: c.put_object_tagging(Bucket=b, Key="p/obj", Tagging={
        "TagSet": [{"Key": "by", "Value": "matrix"}]}),
    "DeleteObjectTagging": lambda c, b, w, o, u: c.delete_object_tagging(Bucket=b, Key="p/obj"),
    # The matrix buckets have no Object Lock: past authorization these answer InvalidRequest (or, for the
    # configuration, InvalidBucketState: versioning is not Enabled), so a matrix bucket never gets locked.
    # Who may bypass GOVERNANCE retention: test_object_lock.py.
    "PutObjectLockConfiguration": lambda c, b, w, o, u: c.put_object_lock_configuration(
        Bucket=b, ObjectLockConfiguration={"ObjectLockEnabled": "Enabled"}),
    "GetObjectLockConfiguration": lambda c, b, w, o, u: c.get_object_lock_configuration(Bucket=b),
    "PutObjectRetention": lambda c, b, w, o, u: c.put_object_retention(Bucket=b, Key="p/obj", Retention={
        "Mode": "GOVERNANCE", "RetainUntilDate": "2099-01-01T00:00:00Z"}),
    "GetObjectRetention": lambda c, b, w, o, u: c.get_object_retention(Bucket=b, Key="p/obj"),
    "PutObjectLegalHold": lambda c, b, w, o, u: c.put_object_legal_hold(Bucket=b, Key="p/obj",
                                                                       LegalHold={"Status": "ON"}),
    "GetObjectLegalHold": lambda c, b, w, o, u: c.get_object_legal_hold(Bucket=b, Key="p/obj"),
}


def s3_expected(op: str, p: Principal, side: str) -> str:
    if op == "ListBuckets":
        return ALLOWED
    write = op not in OBJECT_READS | LISTINGS | BUCKET_READS | CONFIG_READS
    if p.scope == "read-only" and write:
        return DENIED
    if side == "other" and p.name != "installation-admin":
        if op == "CreateBucket" and p.scope is None:
            return ALLOWED  # BucketAlreadyExists: a taken name is public in S3, as in AWS
        return DENIED  # another owner's bucket: AccessDenied
    if p.scope in (None, "read-only", "bucket"):
        return ALLOWED
    if p.scope in ("prefix", "model"):
        return ALLOWED if op in OBJECT_READS | OBJECT_WRITES | LISTINGS | BUCKET_READS - {"GetBucketAcl"} \
            else DENIED
    # alias: only GET and HEAD of the files of the version the alias points to (p/obj is one), which serve the
    # frozen file; nothing that describes the live object (ACL, attributes, versions, listings)
    return ALLOWED if op in {"GetObject", "HeadObject"} else DENIED


def outcome_of_s3(fn) -> str:
    try:
        fn()
        return ALLOWED
    except botocore.exceptions.ClientError as e:
        status = e.response["ResponseMetadata"]["HTTPStatusCode"]
        code = e.response["Error"]["Code"]
        if status == 403:
            return DENIED
        if status == 404 and code in ("NoSuchBucket", "404") and "Key" not in str(e.operation_name):
            return HIDDEN
        return ALLOWED


def test_every_routed_s3_operation_has_a_row():
    source = (REPO_ROOT / "src" / "server" / "dispatch.cpp").read_text()
    # A route's name and handler may be on two lines (clang-format wraps the long ones).
    routed = set(re.findall(r'"([A-Za-z0-9]+)",\s+s3op::', source)) | set(
        re.findall(r'"([A-Za-z0-9]+)",\s+nullptr', source))
    assert routed, "no S3 routes found in dispatch.cpp"
    assert routed - NOT_IMPLEMENTED - UNAUTHENTICATED == set(S3_OPERATIONS), (
        f"without a row: {sorted(routed - NOT_IMPLEMENTED - UNAUTHENTICATED - set(S3_OPERATIONS))}; "
        f"rows for unknown operations: {sorted(set(S3_OPERATIONS) - routed)}")


# ---- what a denial must leave unchanged

# One row per data table: its row count and a digest of what a refused call could have changed in place
# (versioning, settings and tags of buckets, objects' tags, where aliases point).
DATA_STATE_SQL = " UNION ALL ".join([
    *(f"SELECT '{t}', count(*)::text FROM {t}" for t in (
        "buckets", "object_versions", "object_segments", "multipart_uploads", "multipart_parts", "snapshots",
        "models", "model_versions", "model_aliases", "team_members", "access_keys", "api_tokens",
        "object_acls")),
    "SELECT 'buckets.settings', md5(coalesce(string_agg(name || versioning || dedup::text || "
    "object_events::text || coalesce(cors, '') || coalesce(tags::text, '') || coalesce(lifecycle, '') || "
    "object_lock::text || coalesce(lock_default_mode, '') || coalesce(acl, '') || "
    "coalesce(public_access_block, '') || coalesce(object_ownership, '') || coalesce(encryption, '') || "
    "coalesce(policy, ''), ',' ORDER BY name), '')) FROM buckets",
    "SELECT 'object_versions.locks', md5(coalesce(string_agg(id::text || coalesce(lock_mode, '') || "
    "coalesce(lock_until::text, '') || coalesce(legal_hold::text, ''), ',' ORDER BY id), '')) "
    "FROM object_versions WHERE lock_mode IS NOT NULL OR legal_hold IS NOT NULL",
    "SELECT 'object_versions.tags', md5(coalesce(string_agg(id::text || tags::text, ',' ORDER BY id), '')) "
    "FROM object_versions WHERE tags <> '[]'",
    "SELECT 'model_aliases.targets', md5(coalesce(string_agg(model_id::text || name || version_id::text, ',' "
    "ORDER BY model_id, name), '')) FROM model_aliases",
])


def data_state(depot):
    return dict(depot.db.query(DATA_STATE_SQL)), depot.blob_files()


def changes(depot, before) -> tuple[str, tuple]:
    """What changed since `before` (data_state): changed rows, new blobs ("" when nothing did), and the state
    now, which is the next call's `before` when nothing else happens in between."""
    now = data_state(depot)
    rows, blobs = now
    changed = {k: (before[0].get(k), v) for k, v in rows.items() if before[0].get(k) != v}
    added = blobs - before[1]
    return (f"rows {changed} " if changed else "") + (f"new blobs {sorted(added)}" if added else ""), now


@pytest.mark.parametrize("op", sorted(S3_OPERATIONS))
def test_s3_operation(depot, world, op):
    mismatches = []
    for p in world["principals"].values():
        client = depot.client(access_key=p.key["access_key_id"], secret=p.key["secret_access_key"])
        for side in ("own", "other"):
            bucket, owner = target_bucket(world, p, side)
            up = prepare(op, world, bucket, owner)
            before = data_state(depot)
            got = outcome_of_s3(lambda: S3_OPERATIONS[op](client, bucket, world, owner, up))
            want = s3_expected(op, p, side)
            if got != want:
                mismatches.append(f"{p.name:18} {side:5} expected {want}, got {got}")
            elif got == DENIED and (changed := changes(depot, before)[0]):
                mismatches.append(f"{p.name:18} {side:5} denied, but changed: {changed}")
    assert not mismatches, f"{op}:\n" + "\n".join(mismatches)


def test_cors_preflights_change_nothing_and_tell_no_bucket_apart(depot, world):
    """A preflight is unauthenticated: whoever sends it, for a bucket with no configuration, another team's
    bucket or one that does not exist, the answer is the same 403 and nothing changes."""
    answers = set()
    owned = list(world["buckets"].items())[:2]
    for owner, bucket in owned:  # the S3 rows above may have left a configuration
        world["clients"][owner].delete_bucket_cors(Bucket=bucket)
    for owner, bucket in owned + [("nobody", "no-such-bucket-for-preflight")]:
        before = data_state(depot)
        for path in (f"/{bucket}", f"/{bucket}/p/obj"):
            r = requests.options(depot.endpoint + path, headers={"Origin": "https://matrix.example",
                                                                 "Access-Control-Request-Method": "GET"})
            answers.add((r.status_code, re.search(r"<Code>.*</Message>", r.text).group(0)))
            assert "Access-Control-Allow-Origin" not in r.headers
        assert not changes(depot, before)[0], owner
    assert len(answers) == 1 and next(iter(answers))[0] == 403, answers


def test_the_model_view_shows_own_team_models_only(depot, world):
    """The read-only view s3://models/<team>/<model>/<ref>/: reader and up of the own team, nothing of others;
    every team for an installation admin."""
    mismatches = []
    for p in world["principals"].values():
        client = depot.client(access_key=p.key["access_key_id"], secret=p.key["secret_access_key"])
        for side in ("own", "other"):
            key = f"{world['teams'][side]}/m1/serving/obj"
            try:
                client.get_object(Bucket="models", Key=key)["Body"].read()
                got = ALLOWED
            except botocore.exceptions.ClientError as e:
                got = {"AccessDenied": DENIED, "NoSuchKey": "absent"}.get(e.response["Error"]["Code"], str(e))
            member = p.scope is not None or RANK[p.name] in range(1, 5)
            if p.scope in ("bucket", "prefix"):
                want = DENIED  # the view is another bucket than theirs
            elif p.name == "installation-admin":
                want = ALLOWED  # every team, member or not
            elif side == "own":
                want = ALLOWED if member else "absent"
            else:
                want = DENIED if p.scope in ("model", "alias") else "absent"
            if got != want:
                mismatches.append(f"{p.name} {side}: expected {want}, got {got}")
    assert not mismatches, "\n".join(mismatches)


# ---- scope kinds against what reaches past the path: copy sources, versionId, ListBuckets

def scope_principals(world) -> list[Principal]:
    """The scoped credentials, and their owner's unscoped one (the own team's admin) as the control."""
    return [world["principals"]["admin"], *(world["principals"][s] for s in SCOPES)]


def s3_client(depot, p: Principal):
    return depot.client(access_key=p.key["access_key_id"], secret=p.key["secret_access_key"])


# Where the source of a copy into p/ of the owner's bucket lies.
COPY_SOURCES = {
    "same prefix": lambda w, b: (b, "p/obj"),
    "beside the prefix": lambda w, b: (b, "q/obj"),
    "another bucket": lambda w, b: (w["outside"], "p/elsewhere"),
}


def copy_expected(scope: str | None, source: str) -> str:
    if scope is None:
        return ALLOWED
    if scope in ("read-only", "alias"):
        return DENIED  # a copy writes
    if scope == "bucket":
        return DENIED if source == "another bucket" else ALLOWED
    return ALLOWED if source == "same prefix" else DENIED  # prefix and model: keys under p/ of that bucket


@pytest.mark.parametrize("op", ["CopyObject", "UploadPartCopy"])
def test_copy_sources_outside_the_scope(depot, world, op):
    owner = world["users"]["admin"]
    bucket = world["buckets"][owner]
    mismatches = []
    for p in scope_principals(world):
        client = s3_client(depot, p)
        for source, where in COPY_SOURCES.items():
            src_bucket, src_key = where(world, bucket)
            up = upload(world, bucket, owner) if op == "UploadPartCopy" else None
            before = data_state(depot)
            if op == "CopyObject":
                got = outcome_of_s3(lambda: client.copy_object(Bucket=bucket, Key="p/copy",
                                                               CopySource={"Bucket": src_bucket, "Key": src_key}))
            else:
                got = outcome_of_s3(lambda: client.upload_part_copy(
                    Bucket=bucket, Key="p/mp", UploadId=up[0], PartNumber=2,
                    CopySource={"Bucket": src_bucket, "Key": src_key}))
            want = copy_expected(p.scope, source)
            if got != want:
                mismatches.append(f"{p.name:10} from {source}: expected {want}, got {got}")
            elif got == DENIED and (changed := changes(depot, before)[0]):
                mismatches.append(f"{p.name:10} from {source}: denied, but changed: {changed}")
            if op == "CopyObject" and got == ALLOWED:
                world["clients"][owner].delete_object(Bucket=bucket, Key="p/copy")
    assert not mismatches, f"{op}:\n" + "\n".join(mismatches)


@pytest.mark.parametrize("op", ["GetObject", "HeadObject"])
def test_version_id_reads(depot, world, op):
    """A read of a particular object version: every scope that reaches the key may, but an alias scope, which
    reads only the frozen files of the aliased version."""
    owner = world["users"]["admin"]
    bucket, version = world["buckets"][owner], world["versions"][owner]
    mismatches = []
    for p in scope_principals(world):
        client = s3_client(depot, p)
        if op == "GetObject":
            got = outcome_of_s3(lambda: client.get_object(Bucket=bucket, Key="p/obj", VersionId=version)["Body"].read())
        else:
            got = outcome_of_s3(lambda: client.head_object(Bucket=bucket, Key="p/obj", VersionId=version))
        want = DENIED if p.scope == "alias" else ALLOWED
        if got != want:
            mismatches.append(f"{p.name:10} expected {want}, got {got}")
    assert not mismatches, f"{op} with versionId:\n" + "\n".join(mismatches)


def test_list_buckets_lists_what_the_scope_reaches(depot, world):
    """ListBuckets: every bucket of the owner unscoped or read_only; the scope's bucket for bucket and prefix
    scopes; the model's bucket for model and alias scopes."""
    owner = world["users"]["admin"]
    own, outside = world["buckets"][owner], world["outside"]
    mismatches = []
    for p in scope_principals(world):
        listed = {b["Name"] for b in s3_client(depot, p).list_buckets()["Buckets"]}
        want = {own, outside} if p.scope in (None, "read-only") else {own}
        if listed != want:
            mismatches.append(f"{p.name:10} expected {sorted(want)}, listed {sorted(listed)}")
    assert not mismatches, "\n".join(mismatches)


# ---- scope kinds against digest sources and restore targets (REST)

# Content by where it is stored: the digest a client sends.
DIGEST_SOURCES = {"same prefix": b"matrix", "beside the prefix": b"beside the prefix",
                  "another bucket": b"a digest only outside"}


def digest_expected(scope: str | None, source: str) -> str:
    if scope is None:
        return "created"
    if scope == "bucket":
        return "absent" if source == "another bucket" else "created"  # outside: as if nobody stored it
    return DENIED  # REST writes: refused for read-only, alias and prefix scopes; model scopes have no bucket routes


def test_objects_from_digests_take_sources_inside_the_scope(depot, world):
    owner = world["users"]["admin"]
    bucket = world["buckets"][owner]
    path = f"/api/v1/buckets/{bucket}/objects"
    nobody = b"stored by nobody " + secrets.token_bytes(8)
    unknown = call(depot, "POST", path, token=world["tokens"][owner],
                   body={"key": "p/dig", "sha256": sha(nobody), "size": len(nobody)})
    assert unknown.status_code == 404, unknown.text
    mismatches = []
    for p in scope_principals(world):
        for source, content in DIGEST_SOURCES.items():
            before = data_state(depot)
            r = call(depot, "POST", path, token=p.token, body={"key": "p/dig", "sha256": sha(content),
                                                               "size": len(content)})
            got = {201: "created", 403: DENIED, 404: "absent"}.get(r.status_code, f"{r.status_code} {r.text[:120]}")
            want = digest_expected(p.scope, source)
            if got != want:
                mismatches.append(f"{p.name:10} from {source}: expected {want}, got {got}")
            elif got == "absent" and r.json()["detail"] != unknown.json()["detail"]:
                mismatches.append(f"{p.name:10} from {source}: answered unlike an unknown digest: {r.text}")
            elif got in (DENIED, "absent") and (changed := changes(depot, before)[0]):
                mismatches.append(f"{p.name:10} from {source}: refused, but changed: {changed}")
            if got == "created":
                world["clients"][owner].delete_object(Bucket=bucket, Key="p/dig")
    assert not mismatches, "\n".join(mismatches)


def test_restores_stay_inside_the_scope(depot, world):
    owner = world["users"]["admin"]
    bucket, outside = world["buckets"][owner], world["outside"]
    targets = {"same bucket": ({"prefix": "p/", "target_prefix": "p/restored/"}, bucket, "p/restored/obj"),
               "another bucket": ({"prefix": "p/", "target_bucket": outside}, outside, "p/obj")}
    mismatches = []
    for p in scope_principals(world):
        for target, (body, written_bucket, written_key) in targets.items():
            before = data_state(depot)
            r = call(depot, "POST", f"/api/v1/buckets/{bucket}/snapshots/mx/restore", token=p.token, body=body)
            got = {200: ALLOWED, 403: DENIED}.get(r.status_code, f"{r.status_code} {r.text[:120]}")
            if p.scope is None or (p.scope == "bucket" and target == "same bucket"):
                want = ALLOWED
            else:
                want = DENIED
            if got != want:
                mismatches.append(f"{p.name:10} into {target}: expected {want}, got {got}")
            elif got == DENIED and (changed := changes(depot, before)[0]):
                mismatches.append(f"{p.name:10} into {target}: denied, but changed: {changed}")
            if got == ALLOWED:
                world["clients"][owner].delete_object(Bucket=written_bucket, Key=written_key)


# ---- the Hugging Face Hub-compatible API (src/server/hf/): reads only

def hf_expected(p: Principal, side: str) -> str:
    """Team members (any role) and installation admins read; others see no repo (404); bucket and prefix
    scopes reach no model (403); model and alias scopes reach their model only (403 for the other team's)."""
    if p.scope in ("bucket", "prefix"):
        return DENIED
    if p.scope in ("model", "alias"):
        return ALLOWED if side == "own" else DENIED
    if p.name == "installation-admin":
        return ALLOWED
    return ALLOWED if side == "own" and p.rank >= 1 else HIDDEN


def test_the_hugging_face_api_follows_team_roles_and_scopes(depot, world):
    mismatches = []
    for p in world["principals"].values():
        headers = {"Authorization": f"Bearer hf_{p.token}"}
        for side in ("own", "other"):
            repo = f"{world['teams'][side]}/m1"
            want = hf_expected(p, side)
            for method, path in (("GET", f"/api/models/{repo}/revision/serving"),
                                 ("GET", f"/api/models/{repo}/tree/serving"),
                                 ("HEAD", f"/{repo}/resolve/serving/obj"),
                                 ("GET", f"/{repo}/resolve/serving/obj")):
                r = requests.request(method, depot.endpoint + path, headers=headers, timeout=60)
                got = {200: ALLOWED, 403: DENIED}.get(r.status_code, HIDDEN if (
                    r.status_code == 404 and r.headers.get("X-Error-Code") == "RepoNotFound") else str(r.status_code))
                if got != want:
                    mismatches.append(f"{p.name} {side} {method} {path}: {got}, expected {want}")
    assert not mismatches, "\n".join(mismatches)


# ---- REST

# "METHOD template" -> (minimum own-team role, target kind, path suffix builder, body). Target kinds: "team"
# (authorized by the team role in the path), "bucket" (by bucket ownership), "self" (the caller's own
# resources), "admin" (installation admins; team admins for the audit log), "public" (authenticated by the body:
# signing in).
REST_ROUTES = {
    "GET /api/v1/whoami": ("none", "self", None),
    # Sign-in authenticates from its body (here: none, so 400 for everyone); the current session of a bearer
    # token is absent (404). A session can always read and end itself, whatever its credential's scope.
    "POST /api/v1/sessions": ("none", "public", {}),
    "GET /api/v1/sessions/current": ("none", "self", None),
    "DELETE /api/v1/sessions/current": ("none", "self", None),
    "POST /api/v1/content/lookup": ("none", "self", {"sha256": []}),
    "GET /api/v1/usage": ("none", "self", None),
    "GET /api/v1/audit": ("admin", "audit", None),
    "GET /api/v1/tokens": ("none", "self", None),
    "POST /api/v1/tokens": ("none", "self", {"expires_in": 60}),
    "DELETE /api/v1/tokens/{token}": ("none", "self", None),
    "GET /api/v1/keys": ("none", "self", None),
    "POST /api/v1/keys": ("none", "self", {"expires_in": 60}),
    "DELETE /api/v1/keys/{key}": ("none", "self", None),
    "GET /api/v1/buckets/{bucket}": ("none", "bucket", None),
    "PATCH /api/v1/buckets/{bucket}": ("none", "bucket", {"dedup": True}),
    "GET /api/v1/buckets/{bucket}/usage": ("none", "bucket", None),
    "POST /api/v1/buckets/{bucket}/objects": ("none", "bucket", {"key": "p/dig", "sha256": sha(b"matrix"),
                                                                 "size": 6}),
    "GET /api/v1/buckets/{bucket}/snapshots": ("none", "bucket", None),
    "POST /api/v1/buckets/{bucket}/snapshots": ("none", "bucket", {"name": "Bad Name!"}),
    "GET /api/v1/buckets/{bucket}/snapshots/{snapshot}": ("none", "bucket", None),
    "DELETE /api/v1/buckets/{bucket}/snapshots/{snapshot}": ("none", "bucket", None),
    "POST /api/v1/buckets/{bucket}/snapshots/{snapshot}/restore": ("none", "bucket", {}),
    "GET /api/v1/teams": ("none", "self", None),
    "POST /api/v1/teams": ("installation-admin", "self", {"name": "Bad Name!"}),
    "GET /api/v1/users": ("installation-admin", "self", None),
    "POST /api/v1/users": ("installation-admin", "self", {"id": "matrix-user", "admin": "yes"}),
    "GET /api/v1/teams/{team}": ("reader", "team", None),
    "GET /api/v1/teams/{team}/members": ("reader", "team", None),
    "PUT /api/v1/teams/{team}/members/{user}": ("admin", "team", {"role": "admin"}),
    "DELETE /api/v1/teams/{team}/members/{user}": ("admin", "team", None),
    "GET /api/v1/teams/{team}/models": ("reader", "team", None),
    "POST /api/v1/teams/{team}/models": ("writer", "team", {"name": "Bad Name!"}),
    "GET /api/v1/teams/{team}/models/{model}": ("reader", "team", None),
    "PATCH /api/v1/teams/{team}/models/{model}": ("writer", "team", {"description": "matrix"}),
    "GET /api/v1/teams/{team}/models/{model}/history": ("reader", "team", None),
    "GET /api/v1/teams/{team}/models/{model}/versions": ("reader", "team", None),
    "POST /api/v1/teams/{team}/models/{model}/versions": ("writer", "team", {"parent": 999}),
    "GET /api/v1/teams/{team}/models/{model}/versions/{version}": ("reader", "team", None),
    "GET /api/v1/teams/{team}/models/{model}/versions/{version}/files": ("reader", "team", None),
    "GET /api/v1/teams/{team}/models/{model}/versions/{version}/manifest": ("reader", "team", None),
    "GET /api/v1/teams/{team}/models/{model}/versions/{version}/download-link": ("reader", "team", None),
    "GET /api/v1/teams/{team}/models/{model}/versions/{version}/diff": ("reader", "team", None),
    "GET /api/v1/teams/{team}/models/{model}/versions/{version}/history": ("reader", "team", None),
    "POST /api/v1/teams/{team}/models/{model}/versions/{version}/submit": ("writer", "team", {}),
    "POST /api/v1/teams/{team}/models/{model}/versions/{version}/approve": ("maintainer", "team", {}),
    "POST /api/v1/teams/{team}/models/{model}/versions/{version}/reject": ("maintainer", "team", {}),
    "POST /api/v1/teams/{team}/models/{model}/versions/{version}/deprecate": ("maintainer", "team", {}),
    "POST /api/v1/teams/{team}/models/{model}/versions/{version}/archive": ("maintainer", "team", {}),
    "GET /api/v1/teams/{team}/models/{model}/aliases": ("reader", "team", None),
    "GET /api/v1/teams/{team}/models/{model}/aliases/{alias}": ("reader", "team", None),
    "PUT /api/v1/teams/{team}/models/{model}/aliases/{alias}": ("maintainer", "team", {"version": 1}),
    "DELETE /api/v1/teams/{team}/models/{model}/aliases/{alias}": ("maintainer", "team", None),
    "GET /api/v1/teams/{team}/models/{model}/warmups": ("reader", "team", None),
    "POST /api/v1/teams/{team}/models/{model}/warmups": ("writer", "team", {"version": 999999}),
    "GET /api/v1/teams/{team}/models/{model}/warmups/{warmup}": ("reader", "team", None),
    "GET /api/v1/teams/{team}/models/{model}/warmup-policy": ("reader", "team", None),
    "PUT /api/v1/teams/{team}/models/{model}/warmup-policy": ("admin", "team", {"warmup_on": "not a list"}),
    "GET /api/v1/teams/{team}/warmup-policy": ("reader", "team", None),
    "PUT /api/v1/teams/{team}/warmup-policy": ("admin", "team", {"warmup_on": "not a list"}),
    "GET /api/v1/teams/{team}/webhooks": ("admin", "team", None),
    "POST /api/v1/teams/{team}/webhooks": ("admin", "team", {"url": "not a url"}),
    "GET /api/v1/teams/{team}/webhooks/{webhook}": ("admin", "team", None),
    "PATCH /api/v1/teams/{team}/webhooks/{webhook}": ("admin", "team", {"description": "matrix"}),
    "DELETE /api/v1/teams/{team}/webhooks/{webhook}": ("admin", "team", None),
    "POST /api/v1/teams/{team}/webhooks/{webhook}/rotate": ("admin", "team", {"overlap_seconds": 0}),
    "POST /api/v1/teams/{team}/webhooks/{webhook}/ping": ("admin", "team", {}),
    "GET /api/v1/teams/{team}/webhooks/{webhook}/deliveries": ("admin", "team", None),
    "GET /api/v1/teams/{team}/webhooks/{webhook}/deliveries/{delivery}": ("admin", "team", None),
    "POST /api/v1/teams/{team}/webhooks/{webhook}/deliveries/{delivery}/redeliver": ("admin", "team", {}),
}

# Path parameters: existing resources for reads and idempotent writes, absent ones where a call would destroy
# the fixture (an allowed caller then gets a 404 about that child, not about the team or bucket).
DESTRUCTIVE_CHILDREN = {"DELETE /api/v1/teams/{team}/webhooks/{webhook}", "DELETE /api/v1/teams/{team}/members/{user}",
                        "DELETE /api/v1/teams/{team}/models/{model}/aliases/{alias}",
                        "DELETE /api/v1/tokens/{token}", "DELETE /api/v1/keys/{key}"}


def rest_path(world, route: str, p: Principal, side: str) -> str:
    method, template = route.split(" ", 1)
    bucket, _ = target_bucket(world, p, side)
    destructive = route in DESTRUCTIVE_CHILDREN
    version = "serving" if method == "GET" else ("1" if route.endswith(("/approve", "/reject")) else "999")
    values = {"team": world["teams"][side], "model": "m1", "version": version,
              "alias": "nope" if destructive else "serving", "bucket": bucket, "snapshot": "nope",
              # setting a team admin's role to admin again changes nothing
              "user": "nobody" if destructive else world["users"]["admin" if side == "own" else "other"],
              "webhook": "999999" if destructive else str(world["webhooks"][side]), "delivery": "999999", "warmup": "999999",
              "token": "aaaaaaaaaaaa", "key": "DKNOSUCHKEY"}
    path = re.sub(r"\{(\w+)\}", lambda m: values[m.group(1)], template)
    if route.endswith("/diff"):
        path += "?against=1"
    if route.endswith("/download-link"):
        path += "?path=obj"
    return path


def rest_expected(route: str, p: Principal, side: str) -> str:
    method = route.split(" ", 1)[0]
    minimum, kind, _ = REST_ROUTES[route]
    has = lambda param: "{" + param + "}" in route  # noqa: E731
    if kind == "public":
        return ALLOWED
    # The scope comes first (before the handler looks anything up).
    if p.scope and route not in ("GET /api/v1/whoami", "GET /api/v1/sessions/current",
                                 "DELETE /api/v1/sessions/current"):
        if method != "GET" and p.scope in ("read-only", "alias"):
            return DENIED
        if p.scope in ("bucket", "prefix"):
            # A bucket's settings, usage and snapshots are the whole bucket's, outside a prefix scope.
            if not has("bucket") or side == "other" or p.scope == "prefix":
                return DENIED
        if p.scope in ("model", "alias"):
            if not has("team") or side == "other":
                return DENIED
            if not has("model") and not route.endswith("/teams/{team}"):
                return DENIED
            if p.scope == "alias" and not re.search(r"models/\{model\}(/versions/\{version\}(/files|/manifest|/download-link)?"
                                                    r"|/aliases/\{alias\})?$", route):
                return DENIED
    rank = p.rank
    if kind == "bucket":
        return ALLOWED if side == "own" or p.name == "installation-admin" else HIDDEN
    if kind == "audit":
        return ALLOWED if rank >= RANK["admin"] else DENIED
    if kind == "self":
        return ALLOWED if rank >= RANK[minimum] else DENIED
    # team routes
    if p.name == "installation-admin":
        return ALLOWED
    if side == "other" or rank == RANK["none"]:
        return HIDDEN
    return ALLOWED if rank >= RANK[minimum] else DENIED


def outcome_of_rest(r) -> str:
    if r.status_code == 403:
        return DENIED
    if r.status_code == 404 and r.headers.get("Content-Type") == "application/problem+json":
        detail = r.json().get("detail", "")
        if detail in ("No such team", "The specified bucket does not exist"):
            return HIDDEN
    assert r.status_code not in (401, 405, 500), r.text
    return ALLOWED


def test_every_served_rest_route_has_a_row(depot):
    served = set(run([str(depot.bin_dir / "depotd"), "--print-api-routes"]).stdout.split("\n")) - {""}
    assert served, "depotd printed no routes"
    assert served == set(REST_ROUTES), (f"served without a row: {sorted(served - set(REST_ROUTES))}; "
                                        f"rows for routes not served: {sorted(set(REST_ROUTES) - served)}")


@pytest.mark.parametrize("route", sorted(REST_ROUTES))
def test_rest_route(depot, world, route):
    method = route.split(" ", 1)[0]
    body = REST_ROUTES[route][2]
    mismatches = []
    # Only this test's calls change the data tables meanwhile: the state after one cell is the next's before.
    before = data_state(depot)
    for p in world["principals"].values():
        for side in ("own", "other"):
            r = call(depot, method, rest_path(world, route, p, side), token=p.token, body=body)
            got, want = outcome_of_rest(r), rest_expected(route, p, side)
            changed, before = changes(depot, before)
            if got != want:
                mismatches.append(f"{p.name:18} {side:5} expected {want}, got {got}: {r.status_code} {r.text[:160]}")
            elif got == DENIED and changed:
                mismatches.append(f"{p.name:18} {side:5} denied, but changed: {changed}")
    assert not mismatches, f"{route}:\n" + "\n".join(mismatches)
