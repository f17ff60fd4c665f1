"""Access control (issue 27): canned ACLs and grants on buckets and objects, Get/Put*Acl, anonymous reads where
granted, PublicAccessBlock and ownership controls — with the aws cli (s3api), boto3 (anonymous: UNSIGNED) and
plain requests; and the attacks: anonymous reads of private objects, scoped and read-only keys reaching
through public-read-write, public models buckets, non-owners changing ACLs, huge ACLs.

The session's depotd runs with --allow-public-access true (depot_harness); test_public_access_is_off_by_default
starts one with the default."""

from __future__ import annotations

import json
import secrets

import boto3
import botocore.config
import requests
from botocore import UNSIGNED

from depot_harness import expect_error, unique_bucket_name
from rest import call, token_for

ALL_USERS = "http://acs.amazonaws.com/groups/global/AllUsers"
AUTHENTICATED = "http://acs.amazonaws.com/groups/global/AuthenticatedUsers"


def anonymous(depot):
    return boto3.client("s3", endpoint_url=depot.endpoint, region_name=depot.region,
                        config=botocore.config.Config(signature_version=UNSIGNED,
                                                      s3={"addressing_style": "path"},
                                                      retries={"max_attempts": 1}))


def acl_bucket(depot, owner="alice", hint="acl"):
    """A bucket whose ACLs are enabled (ObjectWriter), as AWS wants before ACLs are used."""
    name = unique_bucket_name(hint)
    depot.client(owner).create_bucket(Bucket=name, ObjectOwnership="ObjectWriter")
    return name


def grants(acl: dict) -> set[tuple[str, str]]:
    out = set()
    for g in acl["Grants"]:
        grantee = g["Grantee"]
        out.add((grantee.get("ID") or grantee.get("URI"), g["Permission"]))
    return out


def test_public_read_bucket_and_object_are_read_anonymously(depot, s3):
    bucket = acl_bucket(depot)
    depot.aws("s3api", "put-bucket-acl", "--bucket", bucket, "--acl", "public-read")
    s3.put_object(Bucket=bucket, Key="pub.txt", Body=b"hello world", ACL="public-read")
    s3.put_object(Bucket=bucket, Key="secret.txt", Body=b"private")

    acl = depot.aws_json("s3api", "get-bucket-acl", "--bucket", bucket)
    assert acl["Owner"]["ID"] == "alice"
    assert grants(acl) == {("alice", "FULL_CONTROL"), (ALL_USERS, "READ")}
    assert grants(s3.get_object_acl(Bucket=bucket, Key="pub.txt")) == {("alice", "FULL_CONTROL"), (ALL_USERS, "READ")}

    # Plain unsigned HTTP, as a browser or curl would.
    r = requests.get(f"{depot.endpoint}/{bucket}/pub.txt", timeout=30)
    assert r.status_code == 200 and r.content == b"hello world"
    assert requests.head(f"{depot.endpoint}/{bucket}/pub.txt", timeout=30).status_code == 200
    # The bucket's READ lists; it does not read a private object (403), and a missing key is 404.
    assert requests.get(f"{depot.endpoint}/{bucket}/secret.txt", timeout=30).status_code == 403
    assert requests.get(f"{depot.endpoint}/{bucket}/missing", timeout=30).status_code == 404

    anon = anonymous(depot)
    assert anon.get_object(Bucket=bucket, Key="pub.txt")["Body"].read() == b"hello world"
    keys = [o["Key"] for o in anon.list_objects_v2(Bucket=bucket)["Contents"]]
    assert keys == ["pub.txt", "secret.txt"]
    assert [o["Key"] for o in anon.list_objects(Bucket=bucket)["Contents"]] == keys
    anon.list_object_versions(Bucket=bucket)
    expect_error("AccessDenied", 403, anon.get_object, Bucket=bucket, Key="secret.txt")
    # Anonymous callers only read, whatever the grant.
    expect_error("AccessDenied", 403, anon.put_object, Bucket=bucket, Key="x", Body=b"x")
    expect_error("AccessDenied", 403, anon.delete_object, Bucket=bucket, Key="pub.txt")
    expect_error("AccessDenied", 403, anon.put_bucket_acl, Bucket=bucket, ACL="private")
    # Back to private: anonymous reads stop.
    s3.put_bucket_acl(Bucket=bucket, ACL="private")
    s3.put_object_acl(Bucket=bucket, Key="pub.txt", ACL="private")
    assert requests.get(f"{depot.endpoint}/{bucket}/pub.txt", timeout=30).status_code == 403
    expect_error("AccessDenied", 403, anon.list_objects_v2, Bucket=bucket)
    assert grants(s3.get_bucket_acl(Bucket=bucket)) == {("alice", "FULL_CONTROL")}


def test_anonymous_reads_of_private_and_missing_things(depot, s3, bucket):
    s3.put_object(Bucket=bucket, Key="k", Body=b"private")
    anon = anonymous(depot)
    expect_error("AccessDenied", 403, anon.get_object, Bucket=bucket, Key="k")
    expect_error("AccessDenied", 403, anon.list_objects_v2, Bucket=bucket)
    expect_error("AccessDenied", 403, anon.get_object, Bucket=bucket, Key="missing")  # no key existence leak
    expect_error("NoSuchBucket", 404, anon.get_object, Bucket=unique_bucket_name("none"), Key="k")
    # The models view is never public.
    assert requests.get(f"{depot.endpoint}/models/", timeout=30).status_code == 403


def test_new_buckets_enforce_bucket_ownership(depot, s3, bucket):
    assert s3.get_bucket_ownership_controls(Bucket=bucket)["OwnershipControls"]["Rules"] == [
        {"ObjectOwnership": "BucketOwnerEnforced"}]
    expect_error("AccessControlListNotSupported", 400, s3.put_bucket_acl, Bucket=bucket, ACL="public-read")
    expect_error("AccessControlListNotSupported", 400, s3.put_object, Bucket=bucket, Key="k", Body=b"x",
                 ACL="public-read")
    # What tools send by default stays accepted.
    for acl in ("private", "bucket-owner-full-control", "bucket-owner-read"):
        s3.put_object(Bucket=bucket, Key="k", Body=b"x", ACL=acl)
    s3.put_bucket_acl(Bucket=bucket, ACL="private")
    expect_error("InvalidBucketAclWithObjectOwnership", 400, s3.create_bucket,
                 Bucket=unique_bucket_name("enforced"), ACL="public-read")
    # Deleting the controls enables ACLs (ObjectWriter's behaviour), as on S3.
    assert s3.delete_bucket_ownership_controls(Bucket=bucket)["ResponseMetadata"]["HTTPStatusCode"] == 204
    expect_error("OwnershipControlsNotFoundError", 404, s3.get_bucket_ownership_controls, Bucket=bucket)
    s3.put_bucket_acl(Bucket=bucket, ACL="authenticated-read")
    # Enforcing again needs a private bucket ACL first.
    enforce = {"Rules": [{"ObjectOwnership": "BucketOwnerEnforced"}]}
    expect_error("InvalidBucketAclWithObjectOwnership", 400, s3.put_bucket_ownership_controls, Bucket=bucket,
                 OwnershipControls=enforce)
    s3.put_bucket_acl(Bucket=bucket, ACL="private")
    s3.put_bucket_ownership_controls(Bucket=bucket, OwnershipControls=enforce)
    r = depot.request("PUT", f"/{bucket}?ownershipControls",
                      body=b"<OwnershipControls><Rule><ObjectOwnership>Mine</ObjectOwnership></Rule></OwnershipControls>")
    assert r.status_code == 400 and "<Code>MalformedXML</Code>" in r.text


def test_grants_to_a_user_and_authenticated_read(depot, s3, s3_bob):
    bucket = acl_bucket(depot)
    s3.put_object(Bucket=bucket, Key="shared.txt", Body=b"for bob")
    s3.put_object(Bucket=bucket, Key="other.txt", Body=b"not for bob")
    expect_error("AccessDenied", 403, s3_bob.get_object, Bucket=bucket, Key="shared.txt")
    depot.aws("s3api", "put-object-acl", "--bucket", bucket, "--key", "shared.txt", "--grant-read", "id=bob")
    assert s3_bob.get_object(Bucket=bucket, Key="shared.txt")["Body"].read() == b"for bob"
    expect_error("AccessDenied", 403, s3_bob.get_object, Bucket=bucket, Key="other.txt")
    expect_error("AccessDenied", 403, s3_bob.list_objects_v2, Bucket=bucket)
    expect_error("AccessDenied", 403, s3_bob.put_object, Bucket=bucket, Key="shared.txt", Body=b"overwrite")
    expect_error("AccessDenied", 403, anonymous(depot).get_object, Bucket=bucket, Key="shared.txt")
    acl = depot.aws_json("s3api", "get-object-acl", "--bucket", bucket, "--key", "shared.txt")
    assert grants(acl) == {("bob", "READ")}
    # READ is not READ_ACP: bob cannot read or change the ACL.
    expect_error("AccessDenied", 403, s3_bob.get_object_acl, Bucket=bucket, Key="shared.txt")
    expect_error("AccessDenied", 403, s3_bob.put_object_acl, Bucket=bucket, Key="shared.txt", ACL="public-read")

    # authenticated-read on the bucket: any Depot user lists, anonymous callers do not.
    s3.put_bucket_acl(Bucket=bucket, ACL="authenticated-read")
    assert len(s3_bob.list_objects_v2(Bucket=bucket)["Contents"]) == 2
    expect_error("AccessDenied", 403, anonymous(depot).list_objects_v2, Bucket=bucket)

    # Grant headers with several grantees, and S3's errors.
    s3.put_bucket_acl(Bucket=bucket, GrantRead=f'id="bob", uri="{ALL_USERS}"', GrantFullControl='id="alice"')
    assert grants(s3.get_bucket_acl(Bucket=bucket)) == {("bob", "READ"), (ALL_USERS, "READ"), ("alice", "FULL_CONTROL")}
    before = s3.get_bucket_acl(Bucket=bucket)["Grants"]
    expect_error("InvalidArgument", 400, s3.put_bucket_acl, Bucket=bucket, GrantRead='id="nobody-such"')
    expect_error("UnresolvableGrantByEmailAddress", 400, s3.put_bucket_acl, Bucket=bucket,
                 GrantRead='emailAddress="nobody@example.invalid"')
    expect_error("InvalidArgument", 400, s3.put_bucket_acl, Bucket=bucket, ACL="public")
    expect_error("InvalidRequest", 400, s3.put_bucket_acl, Bucket=bucket,
                 ACL="private", GrantRead='id="bob"')
    assert s3.get_bucket_acl(Bucket=bucket)["Grants"] == before  # refusals changed nothing


def test_access_control_policy_bodies(depot, s3, s3_bob):
    bucket = acl_bucket(depot)
    s3.put_object(Bucket=bucket, Key="k", Body=b"x")
    policy = {"Owner": {"ID": "alice"},
              "Grants": [{"Grantee": {"Type": "CanonicalUser", "ID": "alice"}, "Permission": "FULL_CONTROL"},
                         {"Grantee": {"Type": "CanonicalUser", "ID": "bob"}, "Permission": "READ_ACP"},
                         {"Grantee": {"Type": "Group", "URI": ALL_USERS}, "Permission": "READ"}]}
    s3.put_object_acl(Bucket=bucket, Key="k", AccessControlPolicy=policy)
    assert grants(s3.get_object_acl(Bucket=bucket, Key="k")) == {
        ("alice", "FULL_CONTROL"), ("bob", "READ_ACP"), (ALL_USERS, "READ")}
    assert grants(s3_bob.get_object_acl(Bucket=bucket, Key="k")) == {
        ("alice", "FULL_CONTROL"), ("bob", "READ_ACP"), (ALL_USERS, "READ")}
    # Through the aws cli, from a file, on the bucket.
    depot.aws("s3api", "put-bucket-acl", "--bucket", bucket, "--access-control-policy", json.dumps(policy))
    assert grants(depot.aws_json("s3api", "get-bucket-acl", "--bucket", bucket)) == {
        ("alice", "FULL_CONTROL"), ("bob", "READ_ACP"), (ALL_USERS, "READ")}

    bad_permission = {**policy, "Grants": [{"Grantee": {"Type": "CanonicalUser", "ID": "bob"},
                                            "Permission": "READ"}]}
    raw = ('<AccessControlPolicy><Owner><ID>alice</ID></Owner><AccessControlList><Grant>'
           '<Grantee xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:type="CanonicalUser"><ID>bob</ID>'
           '</Grantee><Permission>EVERYTHING</Permission></Grant></AccessControlList></AccessControlPolicy>')
    r = depot.request("PUT", f"/{bucket}/k?acl", body=raw.encode())
    assert r.status_code == 400 and "<Code>MalformedACLError</Code>" in r.text
    r = depot.request("PUT", f"/{bucket}/k?acl", body=b"<AccessControlPolicy><Owner>")
    assert r.status_code == 400 and "<Code>MalformedACLError</Code>" in r.text
    # The owner named must be the owner.
    expect_error("AccessDenied", 403, s3.put_object_acl, Bucket=bucket, Key="k",
                 AccessControlPolicy={**bad_permission, "Owner": {"ID": "bob"}})
    # A billion grants: a body above the ACL limit is refused before it is read; 101 grants are malformed.
    r = depot.request("PUT", f"/{bucket}?acl", body=b"<AccessControlPolicy>" + b" " * (1 << 20))
    assert r.status_code == 400 and "<Code>MaxMessageLengthExceeded</Code>" in r.text
    many = {**policy, "Grants": [{"Grantee": {"Type": "CanonicalUser", "ID": f"u{i}"}, "Permission": "READ"}
                                 for i in range(101)]}
    expect_error("MalformedACLError", 400, s3.put_bucket_acl, Bucket=bucket, AccessControlPolicy=many)
    header = ", ".join(f'id="u{i}"' for i in range(101))
    expect_error("InvalidArgument", 400, s3.put_bucket_acl, Bucket=bucket, GrantRead=header)
    # Grants of the object version, named by versionId; a missing version is NoSuchVersion.
    expect_error("NoSuchVersion", 404, s3.put_object_acl, Bucket=bucket, Key="k", ACL="private",
                 VersionId="0123456789abcdef0123456789abcdef")


def test_public_read_write_lets_depot_users_write_within_their_credentials(depot, s3):
    bucket = acl_bucket(depot)
    s3.put_bucket_acl(Bucket=bucket, ACL="public-read-write")
    bob_tok = token_for(depot, "bob")["token"]
    # bob writes (a Depot user), within his own credential's rules.
    bob = depot.client("bob")
    bob.put_object(Bucket=bucket, Key="from-bob", Body=b"b")
    assert bob.get_object(Bucket=bucket, Key="from-bob")["Body"].read() == b"b"  # the writer keeps FULL_CONTROL
    assert grants(s3.get_object_acl(Bucket=bucket, Key="from-bob")) == {("bob", "FULL_CONTROL")}
    assert s3.get_object(Bucket=bucket, Key="from-bob")["Body"].read() == b"b"
    # Attack: a read-only key of bob writes to the public-read-write bucket.
    ro = call(depot, "POST", "/api/v1/keys", token=bob_tok, body={"scope": {"read_only": True}}).json()
    ro_client = depot.client(access_key=ro["access_key_id"], secret=ro["secret_access_key"])
    expect_error("AccessDenied", 403, ro_client.put_object, Bucket=bucket, Key="ro", Body=b"x")
    # Attack: a key of bob scoped to his own bucket reaches outside its scope through the public bucket.
    own = unique_bucket_name("bob-own")
    bob.create_bucket(Bucket=own)
    scoped = call(depot, "POST", "/api/v1/keys", token=bob_tok, body={"scope": {"bucket": own}}).json()
    scoped_client = depot.client(access_key=scoped["access_key_id"], secret=scoped["secret_access_key"])
    expect_error("AccessDenied", 403, scoped_client.put_object, Bucket=bucket, Key="scoped", Body=b"x")
    expect_error("AccessDenied", 403, scoped_client.list_objects_v2, Bucket=bucket)
    # Public WRITE never gives the bucket's configuration, nor its ACL.
    expect_error("AccessDenied", 403, bob.put_bucket_acl, Bucket=bucket, ACL="private")
    expect_error("AccessDenied", 403, bob.delete_bucket, Bucket=bucket)
    # Anonymous callers still only read.
    r = requests.put(f"{depot.endpoint}/{bucket}/anon", data=b"x", timeout=30)
    assert r.status_code == 403
    assert [o["Key"] for o in anonymous(depot).list_objects_v2(Bucket=bucket)["Contents"]] == ["from-bob"]


def test_non_owner_cannot_change_a_buckets_acl_or_access_settings(depot, s3, s3_bob):
    bucket = acl_bucket(depot)
    expect_error("AccessDenied", 403, s3_bob.put_bucket_acl, Bucket=bucket, ACL="public-read")
    expect_error("AccessDenied", 403, s3_bob.put_bucket_acl, Bucket=bucket, GrantFullControl='id="bob"')
    expect_error("AccessDenied", 403, s3_bob.get_bucket_acl, Bucket=bucket)
    expect_error("AccessDenied", 403, s3_bob.delete_public_access_block, Bucket=bucket)
    expect_error("AccessDenied", 403, s3_bob.put_bucket_ownership_controls, Bucket=bucket,
                 OwnershipControls={"Rules": [{"ObjectOwnership": "ObjectWriter"}]})
    assert grants(s3.get_bucket_acl(Bucket=bucket)) == {("alice", "FULL_CONTROL")}
    # WRITE_ACP is what lets another user change the ACL (S3's rule).
    s3.put_bucket_acl(Bucket=bucket, GrantFullControl='id="alice"', GrantWriteACP='id="bob"')
    s3_bob.put_bucket_acl(Bucket=bucket, GrantFullControl='id="alice"', GrantRead='id="bob"')
    assert s3_bob.list_objects_v2(Bucket=bucket)["KeyCount"] == 0


def test_a_bucket_is_decided_before_its_handler_reads_the_request(depot, s3, s3_bob):
    """The authorization step loads and decides the route's bucket before the handler runs: a caller
    without access learns nothing about how the handler would have taken the request (a malformed version
    id, a key too long, an Object Lock body), only that access is denied; and nothing changes."""
    bucket = acl_bucket(depot)
    s3.put_object(Bucket=bucket, Key="k", Body=b"owner's")
    expect_error("AccessDenied", 403, s3_bob.get_object, Bucket=bucket, Key="k", VersionId="not a version")
    expect_error("AccessDenied", 403, s3_bob.get_object_acl, Bucket=bucket, Key="k", VersionId="not a version")
    expect_error("AccessDenied", 403, s3_bob.put_object, Bucket=bucket, Key="k" * 1100, Body=b"x")
    expect_error("AccessDenied", 403, s3_bob.get_object_retention, Bucket=bucket, Key="k",
                 VersionId="not a version")
    # The owner meets the handler's own answers.
    expect_error("InvalidArgument", 400, s3.get_object, Bucket=bucket, Key="k", VersionId="not a version")
    expect_error("KeyTooLongError", 400, s3.put_object, Bucket=bucket, Key="k" * 1100, Body=b"x")
    assert [o["Key"] for o in s3.list_objects_v2(Bucket=bucket)["Contents"]] == ["k"]
    assert s3.get_object(Bucket=bucket, Key="k")["Body"].read() == b"owner's"


def test_public_access_block(depot, s3):
    bucket = acl_bucket(depot)
    s3.put_object(Bucket=bucket, Key="pub", Body=b"p", ACL="public-read")
    expect_error("NoSuchPublicAccessBlockConfiguration", 404, s3.get_public_access_block, Bucket=bucket)
    depot.aws("s3api", "put-public-access-block", "--bucket", bucket, "--public-access-block-configuration",
              "BlockPublicAcls=true,IgnorePublicAcls=false,BlockPublicPolicy=true,RestrictPublicBuckets=false")
    got = depot.aws_json("s3api", "get-public-access-block", "--bucket", bucket)["PublicAccessBlockConfiguration"]
    assert got == {"BlockPublicAcls": True, "IgnorePublicAcls": False, "BlockPublicPolicy": True,
                   "RestrictPublicBuckets": False}
    # BlockPublicAcls: new public grants are refused, on ACL writes and on object writes; the stored one holds.
    expect_error("AccessDenied", 403, s3.put_bucket_acl, Bucket=bucket, ACL="public-read")
    expect_error("AccessDenied", 403, s3.put_object, Bucket=bucket, Key="new", Body=b"n", ACL="public-read")
    expect_error("AccessDenied", 403, s3.put_object_acl, Bucket=bucket, Key="pub", GrantRead=f'uri="{AUTHENTICATED}"')
    assert requests.get(f"{depot.endpoint}/{bucket}/pub", timeout=30).status_code == 200
    # IgnorePublicAcls: stored public grants are void.
    s3.put_public_access_block(Bucket=bucket, PublicAccessBlockConfiguration={"IgnorePublicAcls": True})
    assert requests.get(f"{depot.endpoint}/{bucket}/pub", timeout=30).status_code == 403
    assert s3.delete_public_access_block(Bucket=bucket)["ResponseMetadata"]["HTTPStatusCode"] == 204
    assert requests.get(f"{depot.endpoint}/{bucket}/pub", timeout=30).status_code == 200
    r = depot.request("PUT", f"/{bucket}?publicAccessBlock",
                      body=b"<PublicAccessBlockConfiguration><BlockPublicAcls>maybe</BlockPublicAcls>"
                           b"</PublicAccessBlockConfiguration>")
    assert r.status_code == 400 and "<Code>MalformedXML</Code>" in r.text


def test_a_models_bucket_is_never_made_public(depot, s3):
    tok = token_for(depot, "alice")["token"]
    team = "acl-" + secrets.token_hex(3)
    bucket = acl_bucket(depot, hint="acl-models")
    s3.put_object(Bucket=bucket, Key="m/weights.bin", Body=b"w")
    assert call(depot, "POST", "/api/v1/teams", token=tok, body={"name": team}).status_code == 201
    r = call(depot, "POST", f"/api/v1/teams/{team}/models", token=tok,
             body={"name": "m", "bucket": bucket, "prefix": "m/"})
    assert r.status_code == 201, r.text
    for acl in ("public-read", "authenticated-read"):
        e = expect_error("AccessDenied", 403, s3.put_bucket_acl, Bucket=bucket, ACL=acl)
        assert "team roles" in e["Error"]["Message"]
    expect_error("AccessDenied", 403, s3.put_bucket_acl, Bucket=bucket, GrantRead='id="bob"')
    expect_error("AccessDenied", 403, s3.put_object_acl, Bucket=bucket, Key="m/weights.bin", ACL="public-read")
    expect_error("AccessDenied", 403, s3.put_object, Bucket=bucket, Key="m/new", Body=b"n", ACL="public-read")
    assert requests.get(f"{depot.endpoint}/{bucket}/m/weights.bin", timeout=30).status_code == 403
    expect_error("AccessDenied", 403, depot.client("bob").get_object, Bucket=bucket, Key="m/weights.bin")


def test_a_public_acl_set_before_a_model_moved_in_is_void(depot, s3):
    tok = token_for(depot, "alice")["token"]
    team = "aclv-" + secrets.token_hex(3)
    bucket = acl_bucket(depot, hint="acl-late-model")
    s3.put_bucket_acl(Bucket=bucket, ACL="public-read")
    s3.put_object(Bucket=bucket, Key="m/weights.bin", Body=b"w", ACL="public-read")
    s3.put_object(Bucket=bucket, Key="readme.txt", Body=b"r", ACL="public-read")
    assert requests.get(f"{depot.endpoint}/{bucket}/readme.txt", timeout=30).status_code == 200
    assert call(depot, "POST", "/api/v1/teams", token=tok, body={"name": team}).status_code == 201
    assert call(depot, "POST", f"/api/v1/teams/{team}/models", token=tok,
                body={"name": "m", "bucket": bucket, "prefix": "m/"}).status_code == 201
    # Every grant of the bucket is void now, outside the model's prefix too.
    assert requests.get(f"{depot.endpoint}/{bucket}/m/weights.bin", timeout=30).status_code == 403
    assert requests.get(f"{depot.endpoint}/{bucket}/readme.txt", timeout=30).status_code == 403
    expect_error("AccessDenied", 403, anonymous(depot).list_objects_v2, Bucket=bucket)


def test_copy_object_with_an_acl_and_presigned_anonymous_urls(depot, s3):
    bucket = acl_bucket(depot)
    s3.put_object(Bucket=bucket, Key="src", Body=b"data")
    s3.copy_object(Bucket=bucket, Key="dst", CopySource={"Bucket": bucket, "Key": "src"}, ACL="public-read")
    assert requests.get(f"{depot.endpoint}/{bucket}/dst", timeout=30).content == b"data"
    assert requests.get(f"{depot.endpoint}/{bucket}/src", timeout=30).status_code == 403
    # A presigned URL of bob reads only what bob may.
    url = depot.client("bob").generate_presigned_url("get_object", Params={"Bucket": bucket, "Key": "src"})
    assert requests.get(url, timeout=30).status_code == 403
    url = depot.client("bob").generate_presigned_url("get_object", Params={"Bucket": bucket, "Key": "dst"})
    assert requests.get(url, timeout=30).content == b"data"


def test_public_access_is_off_by_default(private_depot):
    server = private_depot("--allow-public-access", "false")
    s3 = server.client("alice")
    bucket = unique_bucket_name("acl-default")
    s3.create_bucket(Bucket=bucket, ObjectOwnership="ObjectWriter")
    e = expect_error("AccessDenied", 403, s3.put_bucket_acl, Bucket=bucket, ACL="public-read")
    assert "allow-public-access" in e["Error"]["Message"]
    expect_error("AccessDenied", 403, s3.put_object, Bucket=bucket, Key="k", Body=b"x", ACL="public-read")
    expect_error("AccessDenied", 403, s3.create_bucket, Bucket=unique_bucket_name("acl-default"),
                 ObjectOwnership="ObjectWriter", ACL="public-read")
    # Grants to users stay possible: they are not public.
    s3.put_bucket_acl(Bucket=bucket, GrantRead='id="bob"')
    assert server.client("bob").list_objects_v2(Bucket=bucket)["KeyCount"] == 0


def test_every_grant_header_is_stored_and_acts(depot, s3, s3_bob):
    bucket = acl_bucket(depot, hint="grants")
    s3.put_bucket_acl(Bucket=bucket, GrantFullControl='id="alice"', GrantReadACP='id="bob"', GrantWrite='id="bob"')
    assert grants(s3.get_bucket_acl(Bucket=bucket)) == {("alice", "FULL_CONTROL"), ("bob", "READ_ACP"),
                                                         ("bob", "WRITE")}
    # READ_ACP reads the ACL and nothing else; WRITE writes objects.
    assert grants(s3_bob.get_bucket_acl(Bucket=bucket)) == grants(s3.get_bucket_acl(Bucket=bucket))
    expect_error("AccessDenied", 403, s3_bob.list_objects_v2, Bucket=bucket)
    expect_error("AccessDenied", 403, s3_bob.put_bucket_acl, Bucket=bucket, ACL="private")
    s3_bob.put_object(Bucket=bucket, Key="from-bob", Body=b"bob")
    assert s3.get_object(Bucket=bucket, Key="from-bob")["Body"].read() == b"bob"
    # On an object: GrantWriteACP lets bob change that object's ACL, GrantRead read it.
    s3.put_object(Bucket=bucket, Key="o", Body=b"o", GrantRead='id="bob"', GrantWriteACP='id="bob"',
                  GrantReadACP='id="bob"', GrantFullControl='id="alice"')
    assert grants(s3_bob.get_object_acl(Bucket=bucket, Key="o")) == {
        ("bob", "READ"), ("bob", "WRITE_ACP"), ("bob", "READ_ACP"), ("alice", "FULL_CONTROL")}
    assert s3_bob.get_object(Bucket=bucket, Key="o")["Body"].read() == b"o"
    s3_bob.put_object_acl(Bucket=bucket, Key="o", GrantFullControl='id="alice"')
    expect_error("AccessDenied", 403, s3_bob.get_object, Bucket=bucket, Key="o")


def complete(client, bucket, key, upload, body=b"multipart body"):
    etag = client.upload_part(Bucket=bucket, Key=key, UploadId=upload, PartNumber=1, Body=body)["ETag"]
    return client.complete_multipart_upload(Bucket=bucket, Key=key, UploadId=upload,
                                            MultipartUpload={"Parts": [{"PartNumber": 1, "ETag": etag}]})


def test_create_multipart_upload_acl_applies_at_completion(depot, s3, s3_bob):
    bucket = acl_bucket(depot, hint="mpacl")
    # x-amz-acl (boto3): public only once completed, and exactly as PutObject would make it.
    up = s3.create_multipart_upload(Bucket=bucket, Key="pub", ACL="public-read")["UploadId"]
    assert requests.get(f"{depot.endpoint}/{bucket}/pub", timeout=30).status_code == 403  # no object yet
    complete(s3, bucket, "pub", up)
    assert requests.get(f"{depot.endpoint}/{bucket}/pub", timeout=30).content == b"multipart body"
    assert grants(s3.get_object_acl(Bucket=bucket, Key="pub")) == {("alice", "FULL_CONTROL"), (ALL_USERS, "READ")}
    # x-amz-grant-* (aws cli s3api): bob may read this one, not the private one.
    up = depot.aws_json("s3api", "create-multipart-upload", "--bucket", bucket, "--key", "for-bob",
                        "--grant-read", 'id="bob"', "--grant-full-control", 'id="alice"')["UploadId"]
    complete(s3, bucket, "for-bob", up)
    up = s3.create_multipart_upload(Bucket=bucket, Key="private")["UploadId"]
    complete(s3, bucket, "private", up)
    assert grants(depot.aws_json("s3api", "get-object-acl", "--bucket", bucket, "--key", "for-bob")) == {
        ("alice", "FULL_CONTROL"), ("bob", "READ")}
    assert s3_bob.get_object(Bucket=bucket, Key="for-bob")["Body"].read() == b"multipart body"
    expect_error("AccessDenied", 403, s3_bob.get_object, Bucket=bucket, Key="private")
    assert requests.get(f"{depot.endpoint}/{bucket}/private", timeout=30).status_code == 403
    assert grants(s3.get_object_acl(Bucket=bucket, Key="private")) == {("alice", "FULL_CONTROL")}
    # The ACL is the completed version's: a later plain write of the key is private again.
    s3.put_object(Bucket=bucket, Key="pub", Body=b"new")
    assert requests.get(f"{depot.endpoint}/{bucket}/pub", timeout=30).status_code == 403


def test_create_multipart_upload_acl_refusals_change_nothing(depot, s3):
    enforced = unique_bucket_name("mpacl-enforced")
    s3.create_bucket(Bucket=enforced)
    blocked = acl_bucket(depot, hint="mpacl-blocked")
    s3.put_public_access_block(Bucket=blocked, PublicAccessBlockConfiguration={"BlockPublicAcls": True})
    before = depot.snapshot(enforced, blocked)
    expect_error("AccessControlListNotSupported", 400, s3.create_multipart_upload, Bucket=enforced, Key="k",
                 ACL="public-read")
    expect_error("AccessDenied", 403, s3.create_multipart_upload, Bucket=blocked, Key="k", ACL="public-read")
    expect_error("AccessDenied", 403, s3.create_multipart_upload, Bucket=blocked, Key="k",
                 GrantRead=f'uri="{ALL_USERS}"')
    expect_error("InvalidArgument", 400, s3.create_multipart_upload, Bucket=blocked, Key="k",
                 GrantRead='id="nobody-by-this-id"')
    expect_error("InvalidRequest", 400, s3.create_multipart_upload, Bucket=blocked, Key="k", ACL="private",
                 GrantRead='id="alice"')
    expect_error("UnresolvableGrantByEmailAddress", 400, s3.create_multipart_upload, Bucket=blocked, Key="k",
                 GrantRead='emailAddress="a@example.com"')
    depot.assert_unchanged(before)
    assert "Uploads" not in s3.list_multipart_uploads(Bucket=blocked)


def test_a_multipart_object_of_another_writer_keeps_its_writers_full_control(depot, s3, s3_bob):
    """ObjectWriter: bob's multipart object in alice's bucket is bob's, as his PutObject would be."""
    bucket = acl_bucket(depot, hint="mpacl-writer")
    s3.put_bucket_acl(Bucket=bucket, GrantFullControl='id="alice"', GrantWrite='id="bob"')
    up = s3_bob.create_multipart_upload(Bucket=bucket, Key="bobs")["UploadId"]
    complete(s3_bob, bucket, "bobs", up)
    assert grants(s3_bob.get_object_acl(Bucket=bucket, Key="bobs")) == {("bob", "FULL_CONTROL")}


def _object_rows(depot, bucket: str, key: str) -> list[tuple[str, str]]:
    return [(r[0], r[1]) for r in depot.db.query(
        "SELECT action, details::text FROM audit_log WHERE action LIKE 'object.%' "
        f"AND resource = '{bucket}/{key}' ORDER BY id")]


def test_a_write_with_an_acl_is_one_change(depot, s3, s3_bob):
    """Issue 34 item 13: PutObject, CopyObject and CompleteMultipartUpload with an ACL stored it in a second
    transaction after the write (two audit rows; a failure or an overwrite in between left the object without
    its ACL, or answered an error for a PUT that was stored). Now the ACL rows are in the write's transaction:
    one audit row naming the ACL, the ACL present; when storing the ACL fails, nothing is stored."""
    bucket = acl_bucket(depot, hint="acl-one")
    s3.put_object(Bucket=bucket, Key="src", Body=b"source")
    s3.put_object(Bucket=bucket, Key="put", Body=b"put", GrantRead='id="bob"')
    s3.copy_object(Bucket=bucket, Key="copy", CopySource={"Bucket": bucket, "Key": "src"}, GrantRead='id="bob"')
    up = s3.create_multipart_upload(Bucket=bucket, Key="mp", GrantRead='id="bob"')
    part = s3.upload_part(Bucket=bucket, Key="mp", UploadId=up["UploadId"], PartNumber=1, Body=b"mp")
    s3.complete_multipart_upload(Bucket=bucket, Key="mp", UploadId=up["UploadId"],
                                 MultipartUpload={"Parts": [{"PartNumber": 1, "ETag": part["ETag"]}]})
    for key, action in (("put", "object.put"), ("copy", "object.copy"), ("mp", "object.put")):
        rows = _object_rows(depot, bucket, key)
        assert [a for a, _ in rows] == [action], rows
        assert '"acl"' in rows[0][1] and "bob" in rows[0][1], rows
        # Grant headers are the whole ACL, as on AWS (the owner keeps its rights as the owner).
        assert grants(s3.get_object_acl(Bucket=bucket, Key=key)) == {("bob", "READ")}
        s3_bob.get_object(Bucket=bucket, Key=key)["Body"].read()
    # Without an ACL beyond the owner's, still one row and no ACL row.
    s3.put_object(Bucket=bucket, Key="plain", Body=b"plain")
    assert [a for a, _ in _object_rows(depot, bucket, "plain")] == ["object.put"]

    # Storing the ACL fails: the write fails with it, and leaves no version, no row, no blob.
    depot.db.query("CREATE OR REPLACE FUNCTION test_refuse_acl() RETURNS trigger LANGUAGE plpgsql AS "
                   "$$ BEGIN RAISE EXCEPTION 'test: no ACL today'; END $$")
    depot.db.query("CREATE TRIGGER test_refuse_acl BEFORE INSERT ON object_acls FOR EACH ROW "
                   "EXECUTE FUNCTION test_refuse_acl()")
    try:
        before = depot.snapshot(bucket)
        grant = {"x-amz-grant-read": 'id="bob"'}
        r = depot.request("PUT", f"/{bucket}/failing", body=b"never stored", headers=grant)
        assert r.status_code >= 500, r.text
        r = depot.request("PUT", f"/{bucket}/failing-copy", headers={"x-amz-copy-source": f"/{bucket}/src", **grant})
        assert r.status_code >= 500, r.text
        depot.assert_unchanged(before)
        assert _object_rows(depot, bucket, "failing") == [] and _object_rows(depot, bucket, "failing-copy") == []
    finally:
        depot.db.query("DROP TRIGGER test_refuse_acl ON object_acls")
        depot.db.query("DROP FUNCTION test_refuse_acl()")


def test_a_write_grant_never_deletes_the_owners_versions_for_good(depot, s3, s3_bob):
    """The attacker's requests: with WRITE on alice's versioned bucket, bob's DeleteObject?versionId= of her
    version answered 204 and DeleteObjects with a VersionId listed it as Deleted: her history was gone. As
    on AWS, WRITE lets a grantee add versions and delete markers; deleting a version needs the owner or a
    policy Allow of s3:DeleteObjectVersion."""
    bucket = unique_bucket_name("acl-versions")
    s3.create_bucket(Bucket=bucket, ObjectOwnership="ObjectWriter")
    s3.put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": "Enabled"})
    s3.put_bucket_acl(Bucket=bucket, GrantFullControl='id="alice"', GrantWrite='id="bob"')
    v1 = s3.put_object(Bucket=bucket, Key="k", Body=b"alice's")["VersionId"]
    before = depot.snapshot(bucket)
    expect_error("AccessDenied", 403, s3_bob.delete_object, Bucket=bucket, Key="k", VersionId=v1)
    out = s3_bob.delete_objects(Bucket=bucket, Delete={"Objects": [{"Key": "k", "VersionId": v1}]})
    assert not out.get("Deleted") and [e["Code"] for e in out["Errors"]] == ["AccessDenied"], out
    depot.assert_unchanged(before)
    # What WRITE does allow: a delete marker over the key; alice's version stays.
    marker = s3_bob.delete_object(Bucket=bucket, Key="k")
    assert marker["DeleteMarker"] is True
    versions = s3.list_object_versions(Bucket=bucket)
    assert [v["VersionId"] for v in versions["Versions"]] == [v1]
    assert s3.get_object(Bucket=bucket, Key="k", VersionId=v1)["Body"].read() == b"alice's"
    # The owner still deletes by id.
    s3.delete_object(Bucket=bucket, Key="k", VersionId=v1)
    assert not s3.list_object_versions(Bucket=bucket).get("Versions")


def test_a_write_grant_runs_the_grantees_own_uploads_never_the_owners(depot, s3, s3_bob):
    """The attacker's request: with WRITE on alice's bucket, bob's AbortMultipartUpload of her upload
    answered 204 and her parts were gone. A WRITE grant lets bob run his own multipart uploads; adding a
    part to alice's, completing it or aborting it needs the bucket's owner or a policy Allow."""
    bucket = unique_bucket_name("acl-uploads")
    s3.create_bucket(Bucket=bucket, ObjectOwnership="ObjectWriter")
    s3.put_bucket_acl(Bucket=bucket, GrantFullControl='id="alice"', GrantWrite='id="bob"')
    key = "checkpoints/step-1"
    upload = s3.create_multipart_upload(Bucket=bucket, Key=key)["UploadId"]
    part = s3.upload_part(Bucket=bucket, Key=key, UploadId=upload, PartNumber=1, Body=b"a" * 1024)["ETag"]
    before = depot.snapshot(bucket)
    expect_error("AccessDenied", 403, s3_bob.abort_multipart_upload, Bucket=bucket, Key=key, UploadId=upload)
    expect_error("AccessDenied", 403, s3_bob.upload_part, Bucket=bucket, Key=key, UploadId=upload,
                 PartNumber=1, Body=b"b" * 1024)
    expect_error("AccessDenied", 403, s3_bob.complete_multipart_upload, Bucket=bucket, Key=key,
                 UploadId=upload, MultipartUpload={"Parts": [{"PartNumber": 1, "ETag": part}]})
    depot.assert_unchanged(before)
    parts = s3.list_parts(Bucket=bucket, Key=key, UploadId=upload)["Parts"]
    assert [(p["PartNumber"], p["ETag"]) for p in parts] == [(1, part)]
    # bob's own upload in the same bucket, start to finish.
    mine = s3_bob.create_multipart_upload(Bucket=bucket, Key="bobs")["UploadId"]
    etag = s3_bob.upload_part(Bucket=bucket, Key="bobs", UploadId=mine, PartNumber=1, Body=b"c" * 1024)["ETag"]
    s3_bob.complete_multipart_upload(Bucket=bucket, Key="bobs", UploadId=mine,
                                     MultipartUpload={"Parts": [{"PartNumber": 1, "ETag": etag}]})
    assert s3.get_object(Bucket=bucket, Key="bobs")["Body"].read() == b"c" * 1024
    # The owner finishes hers.
    s3.complete_multipart_upload(Bucket=bucket, Key=key, UploadId=upload,
                                 MultipartUpload={"Parts": [{"PartNumber": 1, "ETag": part}]})
    assert s3.get_object(Bucket=bucket, Key=key)["Body"].read() == b"a" * 1024


def test_anonymous_reads_refuse_response_header_overrides(depot, s3):
    """The attacker's request (first attack, F9): an unsigned GET of a public object with
    `response-content-type=text/html` and `response-content-disposition` was served with the headers the link's
    writer chose. AWS refuses `response-*` on anonymous requests (400 InvalidRequest); signed ones keep them."""
    bucket = acl_bucket(depot)
    s3.put_object(Bucket=bucket, Key="pub.txt", Body=b"hello world", ACL="public-read", ContentType="text/plain")
    for query in ("response-content-type=text/html", "response-content-disposition=attachment%3B%20filename%3Dx.exe",
                  "response-cache-control=max-age%3D99999", "response-expires=0",
                  "response-content-language=fr", "response-content-encoding=gzip"):
        r = requests.get(f"{depot.endpoint}/{bucket}/pub.txt?{query}", timeout=30)
        assert r.status_code == 400, (query, r.status_code, r.headers)
        assert b"<Code>InvalidRequest</Code>" in r.content, r.content
    r = requests.get(f"{depot.endpoint}/{bucket}/pub.txt", timeout=30)
    assert r.status_code == 200 and r.headers["Content-Type"] == "text/plain"
    signed = s3.get_object(Bucket=bucket, Key="pub.txt", ResponseContentType="application/json")
    assert signed["ContentType"] == "application/json"


def test_an_installation_can_default_new_buckets_to_acls(private_depot):
    """Issue 42: clients and conformance suites written for ACL-enabled buckets (radosgw's and MinIO's) failed
    at CreateBucket with a canned ACL and at every Put*Acl, because new buckets are BucketOwnerEnforced and
    nothing could change that default. With --default-object-ownership ObjectWriter, a bucket created
    without x-amz-object-ownership takes ACLs; an explicit header still wins; a bad value stops depotd."""
    server = private_depot("--default-object-ownership", "ObjectWriter")
    s3, s3_bob = server.client("alice"), server.client("bob")
    bucket = unique_bucket_name("acl-default")
    s3.create_bucket(Bucket=bucket, GrantRead="id=bob")
    assert s3.get_bucket_ownership_controls(Bucket=bucket)["OwnershipControls"]["Rules"] == [
        {"ObjectOwnership": "ObjectWriter"}]
    s3.put_object(Bucket=bucket, Key="k", Body=b"x")
    s3.put_object_acl(Bucket=bucket, Key="k", GrantRead="id=bob")
    assert s3_bob.get_object(Bucket=bucket, Key="k")["Body"].read() == b"x"
    assert [o["Key"] for o in s3_bob.list_objects_v2(Bucket=bucket)["Contents"]] == ["k"]
    enforced = unique_bucket_name("acl-enforced")
    s3.create_bucket(Bucket=enforced, ObjectOwnership="BucketOwnerEnforced")
    assert s3.get_bucket_ownership_controls(Bucket=enforced)["OwnershipControls"]["Rules"] == [
        {"ObjectOwnership": "BucketOwnerEnforced"}]
    expect_error("AccessControlListNotSupported", 400, s3.put_bucket_acl, Bucket=enforced,
                 GrantRead="id=bob")


def test_a_bad_default_object_ownership_stops_depotd(depot, tmp_path):
    from depot_harness import run
    proc = run([f"{depot.bin_dir}/depotd", "--default-object-ownership", "Public", "--database-url",
                depot.admin_db.url, "--listen", "127.0.0.1:1"], check=False, timeout=60)
    assert proc.returncode != 0
    assert "--default-object-ownership" in proc.stderr + proc.stdout


def test_grants_by_email_address_name_the_user_with_that_address(depot, s3):
    """Issue 42: x-amz-grant-*: emailAddress=... and AmazonCustomerByEmail grantees answered
    UnresolvableGrantByEmailAddress although Depot users have addresses. A grant by address is a grant to
    the user with that address (case-insensitively), stored and shown as their id; an address nobody has is
    UnresolvableGrantByEmailAddress, one two users share AmbiguousGrantByEmailAddress, and neither changes
    the ACL."""
    admin = token_for(depot, "alice")["token"]
    tag = secrets.token_hex(3)
    carol, twin1, twin2 = f"carol-{tag}", f"twin1-{tag}", f"twin2-{tag}"
    for user, email in ((carol, f"Carol-{tag}@Example.com"), (twin1, f"twins-{tag}@example.com"),
                        (twin2, f"twins-{tag}@example.com")):
        r = call(depot, "POST", "/api/v1/users", token=admin, body={"id": user, "email": email})
        assert r.status_code == 201, r.text
    bucket = acl_bucket(depot)
    s3.put_object(Bucket=bucket, Key="k", Body=b"x")
    s3.put_object_acl(Bucket=bucket, Key="k", GrantRead=f'emailAddress="carol-{tag}@example.com"')
    assert grants(s3.get_object_acl(Bucket=bucket, Key="k")) == {(carol, "READ")}
    owner = s3.get_bucket_acl(Bucket=bucket)["Owner"]
    s3.put_bucket_acl(Bucket=bucket, AccessControlPolicy={"Owner": owner, "Grants": [
        {"Grantee": {"Type": "AmazonCustomerByEmail", "EmailAddress": f"CAROL-{tag}@example.com"},
         "Permission": "WRITE"},
        {"Grantee": {"Type": "CanonicalUser", "ID": owner["ID"]}, "Permission": "FULL_CONTROL"}]})
    assert grants(s3.get_bucket_acl(Bucket=bucket)) == {(carol, "WRITE"), (owner["ID"], "FULL_CONTROL")}
    before = (s3.get_object_acl(Bucket=bucket, Key="k")["Grants"], s3.get_bucket_acl(Bucket=bucket)["Grants"])
    expect_error("UnresolvableGrantByEmailAddress", 400, s3.put_object_acl, Bucket=bucket, Key="k",
                 GrantRead=f'emailAddress="nobody-{tag}@example.com"')
    expect_error("AmbiguousGrantByEmailAddress", 400, s3.put_object_acl, Bucket=bucket, Key="k",
                 GrantRead=f'emailAddress="twins-{tag}@example.com"')
    expect_error("UnresolvableGrantByEmailAddress", 400, s3.put_object, Bucket=bucket, Key="k2", Body=b"y",
                 GrantRead=f'emailAddress="nobody-{tag}@example.com"')
    assert (s3.get_object_acl(Bucket=bucket, Key="k")["Grants"], s3.get_bucket_acl(Bucket=bucket)["Grants"]) == before
    expect_error("NoSuchKey", 404, s3.get_object, Bucket=bucket, Key="k2")
