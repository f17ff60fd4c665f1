// The AWS SDK for JavaScript v3 with SSE-C (customer-provided keys): PutObject, GetObject, HeadObject and
// CopyObject with the SDK's SSECustomerKey (it sends the key base64-encoded and its MD5); and SSE-S3
// (ServerSideEncryption AES256) on PutObject and HeadObject. Driven by
// test_sse.py against a depotd serving HTTPS (NODE_EXTRA_CA_CERTS trusts its CA).
//
// Environment: DEPOT_ENDPOINT, DEPOT_REGION, DEPOT_BUCKET, DEPOT_SSE_KEY and DEPOT_OTHER_SSE_KEY (32 ASCII
// characters each), AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY.
// Prints one JSON document on stdout: {step name: {ok: output fields} | {error: {name, status}}}.

import {
  CopyObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  PutObjectCommand,
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
  try {
    const out = await client.send(command);
    const { $metadata, Body, ...fields } = out;
    const picked = await pick(fields, Body);
    results[name] = { ok: picked, status: $metadata.httpStatusCode };
  } catch (e) {
    results[name] = { error: { name: e.name, status: e.$metadata?.httpStatusCode ?? null } };
  }
}

const key = { SSECustomerAlgorithm: "AES256", SSECustomerKey: env("DEPOT_SSE_KEY") };
const other = { SSECustomerAlgorithm: "AES256", SSECustomerKey: env("DEPOT_OTHER_SSE_KEY") };
const sse = (o) => ({ algorithm: o.SSECustomerAlgorithm, keyMD5: o.SSECustomerKeyMD5 });

await step("put", new PutObjectCommand({ Bucket, Key: "js/c", Body: "js secret", ...key }), sse);
await step("get", new GetObjectCommand({ Bucket, Key: "js/c", ...key }),
  async (o, body) => ({ ...sse(o), body: await body.transformToString() }));
await step("get-without-key", new GetObjectCommand({ Bucket, Key: "js/c" }));
await step("head-other-key", new HeadObjectCommand({ Bucket, Key: "js/c", ...other }));
await step("copy-to-other-key", new CopyObjectCommand({
  Bucket, Key: "js/c2", CopySource: `${Bucket}/js/c`,
  CopySourceSSECustomerAlgorithm: "AES256", CopySourceSSECustomerKey: env("DEPOT_SSE_KEY"), ...other,
}), sse);
await step("get-copy", new GetObjectCommand({ Bucket, Key: "js/c2", ...other }),
  async (o, body) => ({ ...sse(o), body: await body.transformToString() }));

await step("put-sse-s3", new PutObjectCommand({ Bucket, Key: "js/s3", Body: "sse-s3", ServerSideEncryption: "AES256" }),
  (o) => o.ServerSideEncryption);
await step("head-sse-s3", new HeadObjectCommand({ Bucket, Key: "js/s3" }), (o) => o.ServerSideEncryption);

console.log(JSON.stringify(results));
client.destroy();
