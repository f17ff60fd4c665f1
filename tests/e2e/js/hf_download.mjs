// Drives @huggingface/hub against Depot's Hugging Face-compatible endpoint (hubUrl = Depot), for
// tests/e2e/test_hf.py. Reads a JSON job from argv[2]:
//   {"hubUrl", "token", "repo", "revision", "cacheDir", "files": [paths to download with downloadFile]}
// and prints one JSON object: the model info, the recursive listing, the non-recursive listing, each
// requested file's SHA-256 (downloadFile), the snapshot folder (snapshotDownload) with every file's SHA-256
// in it, and the errors of the calls that failed ({status, message}).
import { createHash } from "node:crypto";
import { readFile, readdir, stat } from "node:fs/promises";
import { join, relative } from "node:path";
import { downloadFile, listFiles, modelInfo, snapshotDownload } from "@huggingface/hub";

const job = JSON.parse(process.argv[2]);
const common = { repo: { type: "model", name: job.repo }, hubUrl: job.hubUrl, accessToken: job.token };
const out = { errors: {} };

async function attempt(name, fn) {
    try {
        out[name] = await fn();
    } catch (e) {
        out.errors[name] = { status: e.statusCode ?? null, message: String(e.message ?? e) };
    }
}

const sha256 = (bytes) => createHash("sha256").update(bytes).digest("hex");

async function walk(dir) {
    const found = {};
    for (const entry of await readdir(dir, { withFileTypes: true })) {
        const path = join(dir, entry.name);
        if (entry.isDirectory()) Object.assign(found, await walk(path));
        else found[path] = sha256(await readFile(path)); // follows the snapshot's symlinks into blobs/
    }
    return found;
}

await attempt("info", async () => {
    const info = await modelInfo({
        name: job.repo, hubUrl: job.hubUrl, accessToken: job.token, revision: job.revision,
        additionalFields: ["sha", "siblings"],
    });
    return { name: info.name, private: info.private, sha: info.sha, files: info.siblings.map((s) => s.rfilename) };
});
await attempt("tree", async () => {
    const entries = [];
    for await (const e of listFiles({ ...common, revision: job.revision, recursive: true }))
        entries.push({ type: e.type, path: e.path, size: e.size, lfs: e.lfs ?? null });
    return entries;
});
await attempt("top", async () => {
    const entries = [];
    for await (const e of listFiles({ ...common, revision: job.revision })) entries.push({ type: e.type, path: e.path });
    return entries;
});
await attempt("downloads", async () => {
    const got = {};
    for (const path of job.files ?? []) {
        const blob = await downloadFile({ ...common, revision: job.revision, path });
        got[path] = blob === null ? null : sha256(Buffer.from(await blob.arrayBuffer()));
    }
    return got;
});
if (job.cacheDir) {
    await attempt("snapshot", async () => {
        const folder = await snapshotDownload({ ...common, revision: job.revision, cacheDir: job.cacheDir });
        const files = {};
        for (const [path, digest] of Object.entries(await walk(folder))) files[relative(folder, path)] = digest;
        await stat(folder);
        return { folder, files };
    });
}
console.log(JSON.stringify(out));
