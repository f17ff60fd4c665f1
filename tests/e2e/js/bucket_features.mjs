// The AWS SDK for JavaScript v3 with the bucket and object features of issue 27: object and bucket
// tagging, lifecycle configuration, CORS configuration, conditional deletes, ACLs, bucket policies and Object
// Lock. Driven by
// test_js_sdk.py, which checks each result against what boto3 reads back.
//
// Environment: DEPOT_ENDPOINT, DEPOT_REGION, DEPOT_BUCKET, DEPOT_LOCK_BUCKET (created here, with Object
// Lock), AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY.
// Prints one JSON document on stdout: {step name: {ok: output fields} | {error: {name, status}}}.

import {
  CreateBucketCommand,
  DeleteBucketCorsCommand,
  DeleteBucketLifecycleCommand,
  DeleteBucketPolicyCommand,
  DeleteBucketTaggingCommand,
  DeleteObjectCommand,
  DeleteObjectTaggingCommand,
  GetBucketAclCommand,
  GetBucketCorsCommand,
  GetBucketLifecycleConfigurationCommand,
  GetBucketPolicyCommand,
  GetBucketPolicyStatusCommand,
  GetBucketTaggingCommand,
  GetObjectAclCommand,
  GetObjectCommand,
  GetObjectLegalHoldCommand,
  GetObjectLockConfigurationCommand,
  GetObjectRetentionCommand,
  GetObjectTaggingCommand,
  PutBucketAclCommand,
  PutBucketCorsCommand,
  PutBucketLifecycleConfigurationCommand,
  PutBucketOwnershipControlsCommand,
  PutBucketPolicyCommand,
  PutBucketTaggingCommand,
  PutObjectAclCommand,
  PutObjectCommand,
  PutObjectLegalHoldCommand,
  PutObjectLockConfigurationCommand,
  PutObjectTaggingCommand,
  S3Client,
} from "@aws-sdk/client-s3";

const env = (name) => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
};

const Bucket = env("DEPOT_BUCKET");
const client = new S3Client({
  endpoint: env("DEPOT_ENDPOINT"),
  region: env("DEPOT_REGION"),
  forcePathStyle: true,
  credentials: { accessKeyId: env("AWS_ACCESS_KEY_ID"), secretAccessKey: env("AWS_SECRET_ACCESS_KEY") },
  maxAttempts: 1,
});

const results = {};
async function step(name, command, pick = (out) => out) {
  const started = Date.now();
  try {
    const out = await client.send(command);
    const { $metadata, ...fields } = out;
    results[name] = { ok: pick(fields), status: $metadata.httpStatusCode, ms: Date.now() - started };
  } catch (e) {
    results[name] = { error: { name: e.name, status: e.$metadata?.httpStatusCode ?? null }, ms: Date.now() - started };
  }
}

const TAGS = [{ Key: "team", Value: "vision" }, { Key: "stage", Value: "raw data" }];

// Object tagging: on upload, read back, replaced, deleted; the tag count on GetObject.
await step("put-with-tagging", new PutObjectCommand({ Bucket, Key: "t/a", Body: "tagged", Tagging: "team=vision&stage=raw%20data" }));
await step("get-object-tagging", new GetObjectTaggingCommand({ Bucket, Key: "t/a" }), (o) => o.TagSet);
await step("get-object-tag-count", new GetObjectCommand({ Bucket, Key: "t/a" }), (o) => {
  o.Body.destroy(); // an unread body would hold the connection (and node) until the server's idle timeout
  return o.TagCount;
});
await step("put-object-tagging", new PutObjectTaggingCommand({ Bucket, Key: "t/a", Tagging: { TagSet: [{ Key: "k", Value: "v" }] } }));
await step("get-object-tagging-after", new GetObjectTaggingCommand({ Bucket, Key: "t/a" }), (o) => o.TagSet);
await step("delete-object-tagging", new DeleteObjectTaggingCommand({ Bucket, Key: "t/a" }));
await step("get-object-tagging-deleted", new GetObjectTaggingCommand({ Bucket, Key: "t/a" }), (o) => o.TagSet);
const tooMany = Array.from({ length: 11 }, (_, i) => ({ Key: `k${i}`, Value: "v" }));
await step("put-object-tagging-too-many", new PutObjectTaggingCommand({ Bucket, Key: "t/a", Tagging: { TagSet: tooMany } }));

// Bucket tagging.
await step("put-bucket-tagging", new PutBucketTaggingCommand({ Bucket, Tagging: { TagSet: TAGS } }));
await step("get-bucket-tagging", new GetBucketTaggingCommand({ Bucket }), (o) => o.TagSet);
await step("delete-bucket-tagging", new DeleteBucketTaggingCommand({ Bucket }));
await step("get-bucket-tagging-deleted", new GetBucketTaggingCommand({ Bucket }), (o) => o.TagSet);

// Lifecycle configuration.
const Rules = [
  { ID: "expire-tmp", Status: "Enabled", Filter: { Prefix: "tmp/" }, Expiration: { Days: 7 } },
  { ID: "abort-uploads", Status: "Enabled", Filter: { Prefix: "" }, AbortIncompleteMultipartUpload: { DaysAfterInitiation: 2 } },
  {
    ID: "old-versions", Status: "Disabled",
    Filter: { And: { Prefix: "ckpt/", Tags: [{ Key: "keep", Value: "no" }] } },
    NoncurrentVersionExpiration: { NoncurrentDays: 30, NewerNoncurrentVersions: 3 },
  },
];
await step("put-lifecycle", new PutBucketLifecycleConfigurationCommand({ Bucket, LifecycleConfiguration: { Rules } }));
await step("get-lifecycle", new GetBucketLifecycleConfigurationCommand({ Bucket }), (o) => o.Rules);
await step("put-lifecycle-transition", new PutBucketLifecycleConfigurationCommand({
  Bucket,
  LifecycleConfiguration: { Rules: [{ ID: "cold", Status: "Enabled", Filter: { Prefix: "" }, Transitions: [{ Days: 30, StorageClass: "GLACIER" }] }] },
}));
await step("delete-lifecycle", new DeleteBucketLifecycleCommand({ Bucket }));
await step("get-lifecycle-deleted", new GetBucketLifecycleConfigurationCommand({ Bucket }), (o) => o.Rules);

// CORS configuration.
const CORSRules = [{ AllowedOrigins: ["https://app.example.com"], AllowedMethods: ["GET", "PUT"], AllowedHeaders: ["*"], ExposeHeaders: ["ETag"], MaxAgeSeconds: 600 }];
await step("put-cors", new PutBucketCorsCommand({ Bucket, CORSConfiguration: { CORSRules } }));
await step("get-cors", new GetBucketCorsCommand({ Bucket }), (o) => o.CORSRules);
await step("delete-cors", new DeleteBucketCorsCommand({ Bucket }));
await step("get-cors-deleted", new GetBucketCorsCommand({ Bucket }), (o) => o.CORSRules);

// Conditional delete: a stale ETag is refused, the current one deletes.
await step("put-for-delete", new PutObjectCommand({ Bucket, Key: "d/x", Body: "delete me" }), (o) => o.ETag);
await step("delete-if-match-stale", new DeleteObjectCommand({ Bucket, Key: "d/x", IfMatch: '"00000000000000000000000000000000"' }));
await step("delete-if-match", new DeleteObjectCommand({ Bucket, Key: "d/x", IfMatch: results["put-for-delete"].ok }));

// ACLs: enabled by the bucket's ownership controls (ObjectWriter); a public-read object, its ACL replaced.
await step("put-ownership-controls", new PutBucketOwnershipControlsCommand({
  Bucket, OwnershipControls: { Rules: [{ ObjectOwnership: "ObjectWriter" }] },
}));
await step("put-with-acl", new PutObjectCommand({ Bucket, Key: "a/pub", Body: "public", ACL: "public-read" }));
await step("get-object-acl", new GetObjectAclCommand({ Bucket, Key: "a/pub" }), (o) => o.Grants);
await step("put-object-acl", new PutObjectAclCommand({ Bucket, Key: "a/pub", ACL: "authenticated-read" }));
await step("get-object-acl-after", new GetObjectAclCommand({ Bucket, Key: "a/pub" }), (o) => o.Grants);
await step("put-object-acl-unknown-user", new PutObjectAclCommand({ Bucket, Key: "a/pub", GrantRead: 'id="nobody-here"' }));
await step("put-bucket-acl", new PutBucketAclCommand({ Bucket, GrantFullControl: 'id="alice"', GrantRead: 'id="bob"' }));
await step("get-bucket-acl", new GetBucketAclCommand({ Bucket }), (o) => o.Grants);

// Object Lock: a bucket created with it, a default retention, a version under legal hold that cannot be
// deleted until the hold is lifted (and then still not: the default GOVERNANCE retention holds it).
const LockBucket = env("DEPOT_LOCK_BUCKET");
await step("create-lock-bucket", new CreateBucketCommand({ Bucket: LockBucket, ObjectLockEnabledForBucket: true }));
await step("put-lock-configuration", new PutObjectLockConfigurationCommand({
  Bucket: LockBucket,
  ObjectLockConfiguration: { ObjectLockEnabled: "Enabled", Rule: { DefaultRetention: { Mode: "GOVERNANCE", Days: 1 } } },
}));
await step("get-lock-configuration", new GetObjectLockConfigurationCommand({ Bucket: LockBucket }),
  (o) => o.ObjectLockConfiguration);
await step("put-held", new PutObjectCommand({ Bucket: LockBucket, Key: "held", Body: "worm", ObjectLockLegalHoldStatus: "ON" }),
  (o) => o.VersionId);
await step("get-legal-hold", new GetObjectLegalHoldCommand({ Bucket: LockBucket, Key: "held" }), (o) => o.LegalHold);
await step("get-retention", new GetObjectRetentionCommand({ Bucket: LockBucket, Key: "held" }), (o) => o.Retention);
const held = results["put-held"].ok;
await step("delete-held-version", new DeleteObjectCommand({ Bucket: LockBucket, Key: "held", VersionId: held }));
await step("put-legal-hold-off", new PutObjectLegalHoldCommand({ Bucket: LockBucket, Key: "held", LegalHold: { Status: "OFF" } }));
await step("delete-retained-version", new DeleteObjectCommand({ Bucket: LockBucket, Key: "held", VersionId: held }));

// Bucket policies: one Allow to bob under a prefix, one malformed document.
const Policy = JSON.stringify({
  Version: "2012-10-17",
  Statement: [{ Effect: "Allow", Principal: { AWS: "bob" }, Action: "s3:GetObject",
                Resource: `arn:aws:s3:::${Bucket}/shared/*` }],
});
await step("put-shared", new PutObjectCommand({ Bucket, Key: "shared/k", Body: "for bob" }));
await step("put-bucket-policy", new PutBucketPolicyCommand({ Bucket, Policy }));
await step("get-bucket-policy", new GetBucketPolicyCommand({ Bucket }), (o) => o.Policy);
await step("get-bucket-policy-status", new GetBucketPolicyStatusCommand({ Bucket }), (o) => o.PolicyStatus);
await step("put-bucket-policy-malformed", new PutBucketPolicyCommand({ Bucket, Policy: '{"Statement": []}' }));
await step("delete-bucket-policy", new DeleteBucketPolicyCommand({ Bucket }));
await step("get-bucket-policy-deleted", new GetBucketPolicyCommand({ Bucket }), (o) => o.Policy);

console.log(JSON.stringify(results));
client.destroy();
