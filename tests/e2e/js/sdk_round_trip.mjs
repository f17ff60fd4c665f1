// The AWS SDK for JavaScript v3 against depotd, with the SDK's DEFAULT checksum settings
// (requestChecksumCalculation / responseChecksumValidation = WHEN_SUPPORTED: a CRC32 with every upload,
// aws-chunked bodies with a trailer for streams). Driven by test_js_sdk.py.
//
// Environment: DEPOT_ENDPOINT, DEPOT_REGION, DEPOT_BUCKET, DEPOT_WORKDIR (input files), AWS_ACCESS_KEY_ID,
// AWS_SECRET_ACCESS_KEY. Input files in DEPOT_WORKDIR: buffer.bin, stream.bin, generic.bin, multipart.bin.
// Prints one JSON document on stdout: for every upload what the SDK sent (headers of each request as it
// went on the wire), what the server answered, and what GetObject with ChecksumMode ENABLED returned.

import { createHash } from "node:crypto";
import { createReadStream, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { Readable } from "node:stream";

import {
  GetObjectCommand,
  HeadObjectCommand,
  PutObjectCommand,
  S3Client,
} from "@aws-sdk/client-s3";
import { Upload } from "@aws-sdk/lib-storage";

const env = (name) => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
};

const bucket = env("DEPOT_BUCKET");
const workdir = env("DEPOT_WORKDIR");

const client = new S3Client({
  endpoint: env("DEPOT_ENDPOINT"),
  region: env("DEPOT_REGION"),
  forcePathStyle: true,
  credentials: { accessKeyId: env("AWS_ACCESS_KEY_ID"), secretAccessKey: env("AWS_SECRET_ACCESS_KEY") },
  maxAttempts: 1,
  // Everything else (requestChecksumCalculation, responseChecksumValidation) stays at its default.
});

// Records every request as it is handed to the HTTP handler (after checksum and signing middleware).
const sent = [];
client.middlewareStack.add(
  (next, context) => async (args) => {
    const headers = {};
    for (const [name, value] of Object.entries(args.request.headers ?? {})) headers[name.toLowerCase()] = value;
    sent.push({
      command: context.commandName,
      method: args.request.method,
      path: args.request.path,
      query: args.request.query,
      headers,
    });
    return next(args);
  },
  { step: "deserialize", name: "depotRecordRequests", priority: "low" },
);

const sha256 = (buffer) => createHash("sha256").update(buffer).digest("hex");

async function bodyBytes(stream) {
  const chunks = [];
  for await (const chunk of stream) chunks.push(chunk);
  return Buffer.concat(chunks);
}

const CHECKSUM_FIELDS = ["ChecksumCRC32", "ChecksumCRC32C", "ChecksumCRC64NVME", "ChecksumSHA1", "ChecksumSHA256", "ChecksumType"];

function checksums(output) {
  const found = {};
  for (const name of CHECKSUM_FIELDS) if (output[name] !== undefined) found[name] = output[name];
  return found;
}

async function fetchBack(key) {
  const got = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key, ChecksumMode: "ENABLED" }));
  // Reading the body to the end also runs the SDK's own response checksum validation (it throws on a mismatch).
  const body = await bodyBytes(got.Body);
  const head = await client.send(new HeadObjectCommand({ Bucket: bucket, Key: key, ChecksumMode: "ENABLED" }));
  return {
    size: body.length,
    sha256: sha256(body),
    etag: got.ETag,
    contentLength: got.ContentLength,
    contentEncoding: got.ContentEncoding ?? null,
    checksums: checksums(got),
    head: { etag: head.ETag, contentLength: head.ContentLength, checksums: checksums(head), partsCount: head.PartsCount ?? null },
  };
}

async function step(name, key, upload) {
  const first = sent.length;
  const response = await upload();
  return {
    name,
    key,
    response: { etag: response.ETag, checksums: checksums(response) },
    requests: sent.slice(first),
    get: await fetchBack(key),
  };
}

const results = [];

// 1. PutObject of a Buffer.
const bufferData = readFileSync(join(workdir, "buffer.bin"));
results.push(await step("put-buffer", "js/buffer.bin", () =>
  client.send(new PutObjectCommand({ Bucket: bucket, Key: "js/buffer.bin", Body: bufferData }))));

// 2. PutObject of a file stream (the SDK finds its length with fstat).
const streamPath = join(workdir, "stream.bin");
results.push(await step("put-file-stream", "js/stream.bin", () =>
  client.send(new PutObjectCommand({ Bucket: bucket, Key: "js/stream.bin", Body: createReadStream(streamPath) }))));

// 3. PutObject of a generic Readable with an explicit ContentLength (no length the SDK can discover itself).
const genericPath = join(workdir, "generic.bin");
results.push(await step("put-generic-stream", "js/generic.bin", () =>
  client.send(new PutObjectCommand({
    Bucket: bucket,
    Key: "js/generic.bin",
    Body: Readable.from(createReadStream(genericPath, { highWaterMark: 100_000 })),
    ContentLength: statSync(genericPath).size,
  }))));

// 4. A multipart Upload (lib-storage) of a file above the part size.
const multipartPath = join(workdir, "multipart.bin");
results.push(await step("upload-multipart", "js/multipart.bin", () =>
  new Upload({
    client,
    params: { Bucket: bucket, Key: "js/multipart.bin", Body: createReadStream(multipartPath), ContentType: "application/x-weights" },
    partSize: 5 * 1024 * 1024,
    queueSize: 3,
    leavePartsOnError: false,
  }).done()));

process.stdout.write(JSON.stringify({ results }, null, 1) + "\n");
