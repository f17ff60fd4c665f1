// A browser app at another origin using presigned URLs directly, as test_cors.py describes: Debian's
// Chromium (playwright-core) opens the app's page and, from it, fetches a presigned GET and sends a presigned
// PUT (which the browser preflights). Input: CORS_INPUT (JSON: app, get_url, put_url, put_body,
// content_type). Output: one JSON object of what the page could read, on stdout.
import { chromium } from "playwright-core";

const input = JSON.parse(process.env.CORS_INPUT);
const browser = await chromium.launch({
  executablePath: "/usr/bin/chromium",
  headless: true,
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync"],
});
const out = {};
try {
  const page = await (await browser.newContext()).newPage();
  await page.goto(input.app);
  Object.assign(out, await page.evaluate(async ({ get_url, put_url, put_body, content_type }) => {
    const r = {};
    try {
      const got = await fetch(get_url);
      r.get = { status: got.status, text: await got.text() };
    } catch (e) {
      r.get = { error: String(e) };
    }
    try {
      const put = await fetch(put_url, { method: "PUT", body: put_body, headers: { "Content-Type": content_type } });
      r.put = { status: put.status, etag: put.headers.get("ETag") };
    } catch (e) {
      r.put = { error: String(e) };
    }
    return r;
  }, input));
} catch (e) {
  out.error = String(e);
} finally {
  await browser.close();
}
process.stdout.write(JSON.stringify(out));
