// Browser form uploads (POST Object), as test_post_object.py describes: Debian's Chromium (playwright-core)
// opens an app's page of another origin, (1) submits an HTML form built from a presigned POST with a file
// picked in its file input (the browser follows success_action_redirect back to the app), and (2) sends a
// presigned POST as fetch FormData and reads the answer (CORS). Input: POST_INPUT (JSON: app, form, fetch
// — each {url, fields} — file_name, file_body, fetch_body). Output: one JSON object on stdout.
import { chromium } from "playwright-core";

const input = JSON.parse(process.env.POST_INPUT);
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

  // (2) fetch FormData first, from the app's page.
  out.fetch = await page.evaluate(async ({ url, fields, body }) => {
    const data = new FormData();
    for (const [name, value] of Object.entries(fields)) data.append(name, value);
    data.append("file", new Blob([body], { type: "text/plain" }), "fetched.txt");
    try {
      const r = await fetch(url, { method: "POST", body: data });
      return { status: r.status, etag: r.headers.get("ETag"), text: await r.text() };
    } catch (e) {
      return { error: String(e) };
    }
  }, { url: input.fetch.url, fields: input.fetch.fields, body: input.fetch_body });

  // (1) an HTML form, its file chosen in the file input, submitted: a navigation to depotd and back.
  await page.evaluate(({ url, fields }) => {
    const form = document.createElement("form");
    form.action = url;
    form.method = "post";
    form.enctype = "multipart/form-data";
    for (const [name, value] of Object.entries(fields)) {
      const field = document.createElement("input");
      field.type = "hidden";
      field.name = name;
      field.value = value;
      form.appendChild(field);
    }
    const file = document.createElement("input");
    file.type = "file";
    file.name = "file";
    form.appendChild(file);
    const submit = document.createElement("button");
    submit.type = "submit";
    submit.textContent = "Upload";
    form.appendChild(submit);
    document.body.appendChild(form);
  }, input.form);
  await page.setInputFiles("input[type=file]", {
    name: input.file_name, mimeType: "text/plain", buffer: Buffer.from(input.file_body),
  });
  await Promise.all([page.waitForURL(/done\.html/, { timeout: 30000 }), page.click("button")]);
  out.form = { url: page.url() };
} catch (e) {
  out.error = String(e);
} finally {
  await browser.close();
}
process.stdout.write(JSON.stringify(out));
