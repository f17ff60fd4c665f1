// Drives the web console (/ui/) in Debian's Chromium through playwright-core, as test_console.py describes.
// Input: CONSOLE_INPUT (JSON: endpoint (the console's listener), team, other team, model, users with their
// credentials, screenshot directory, the presigned URL of the stored-XSS attacker's HTML page). Output: one JSON object of what the pages showed and what the server answered, on stdout;
// test_console.py asserts on it. Waits on selectors, never on time.
import { chromium } from "playwright-core";
import fs from "node:fs";
import path from "node:path";

const input = JSON.parse(process.env.CONSOLE_INPUT);
const { endpoint, team, model, users, shots, report_url: reportUrl } = input;
const out = {};
const base = `${endpoint}/ui/`;
const T = 20000;

const browser = await chromium.launch({
  executablePath: "/usr/bin/chromium",
  headless: true,
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  // playwright gives Chromium a fresh --user-data-dir of its own (it refuses one in args), under TMPDIR:
  // test_console.py points that at a directory of this run.
});

async function newPage(width = 1280) {
  const context = await browser.newContext({ viewport: { width, height: 900 }, acceptDownloads: true });
  const page = await context.newPage();
  page.setDefaultTimeout(T);
  page.on("pageerror", (err) => { (out.page_errors ??= []).push(String(err)); });
  page.on("console", (msg) => { if (msg.type() === "error") (out.console_errors ??= []).push(msg.text()); });
  return { context, page };
}

async function shot(page, name) {
  await page.screenshot({ path: path.join(shots, `${name}.png`), fullPage: true });
}

async function ready(page, hash) {
  await page.waitForSelector(`main[data-ready="${hash}"]:not([aria-busy])`);
}

async function signIn(page, user, how) {
  await page.goto(base);
  await page.waitForSelector("#signin");
  if (how === "token") {
    await page.selectOption("#signin-kind", "token");
    await page.fill("#api-token", user.token);
  } else {
    await page.fill("#access-key-id", user.access_key);
    await page.fill("#secret-access-key", user.secret);
  }
  await page.click("#signin button[type=submit]");
  await ready(page, "#/");
}

async function go(page, hash) {
  await page.evaluate((h) => { location.hash = h; }, hash);
  await ready(page, hash);
}

async function status(page) {
  const box = page.locator("#status");
  return (await box.isVisible()) ? (await box.textContent()).trim() : "";
}

const enc = encodeURIComponent;
const modelHash = `#/t/${enc(team)}/m/${enc(model)}`;

try {
  // --- the submitter (a maintainer) signs in with access key and secret, browses to the model
  const s = await newPage();
  await s.page.goto(base);
  await s.page.waitForSelector("#signin");
  await shot(s.page, "sign-in");
  // a wrong secret is refused as the API phrases it
  await s.page.fill("#access-key-id", users.submitter.access_key);
  await s.page.fill("#secret-access-key", "wrong-secret");
  await s.page.click("#signin button[type=submit]");
  await s.page.waitForSelector("#status:not([hidden])");
  out.wrong_secret = await status(s.page);
  await signIn(s.page, users.submitter, "key");
  out.submitter_cookie = (await s.context.cookies()).find((c) => c.name === "depot_session");
  await s.page.click(`a[href="#/t/${enc(team)}"]`);
  await ready(s.page, `#/t/${enc(team)}`);
  // the filter asks the server: a part of the name, or a label of some version as key=value
  const names = () => s.page.$$eval("table[data-list=models] tbody tr a", (as) => as.map((x) => x.textContent));
  const filter = async (q) => {
    await s.page.fill("input[type=search]", q);
    await s.page.waitForSelector(`section[data-query="${q}"]`);
    return names();
  };
  out.filter_label = await filter("dataset=imagenet");
  out.filter_no_label = await filter("dataset=none");
  out.filter_name = await filter(model.slice(0, 4));
  await s.page.click(`a[href="${modelHash}"]`);
  await ready(s.page, modelHash);
  out.model_versions = await s.page.locator("table[data-list=versions] tbody tr").count();
  await shot(s.page, "model");
  // submit version 2, then try to approve it
  await s.page.click(`table[data-list=versions] a[href="${modelHash}/v/2"]`);
  await ready(s.page, `${modelHash}/v/2`);
  await s.page.click("#submit-version");
  await s.page.waitForSelector("#version-state .state-pending");
  await s.page.click("#approve-version");
  await s.page.waitForSelector("#status:not([hidden])");
  out.self_approve = await status(s.page);
  out.state_after_self_approve = (await s.page.textContent("#version-state")).trim();

  // --- a second maintainer signs in with an API token and approves, then moves `production`
  const a = await newPage();
  await signIn(a.page, users.approver, "token");
  await go(a.page, `${modelHash}/v/2`);
  await a.page.fill("#comment", "looks good");
  await a.page.click("#approve-version");
  await a.page.waitForSelector("#version-state .state-approved");
  out.approvals = (await a.page.textContent("#approvals")).trim();
  // a click asks for a link of its own and the browser downloads the file through it
  out.download_buttons = await a.page.$$eval("table[data-list=files] button.download", (b) => b.map((x) => x.textContent));
  const [dl] = await Promise.all([a.page.waitForEvent("download"),
    a.page.click('table[data-list=files] button.download[data-path="config.json"]')]);
  out.download = { url: dl.url(), name: dl.suggestedFilename(), body: fs.readFileSync(await dl.path(), "utf8") };
  await shot(a.page, "version");
  await go(a.page, modelHash);
  await a.page.fill("#alias-name", "production");
  await a.page.selectOption("#alias-version", "2");
  await a.page.click("#move-alias button[type=submit]");
  // `latest` already points at version 2: wait for the production row
  await a.page.waitForSelector(`#aliases tbody tr:has-text("production") a[href="${modelHash}/v/2"]`);
  // start a warm-up of version 2 and see it listed with its progress
  await a.page.selectOption("#warmup-version", "2");
  await a.page.click("#start-warmup button[type=submit]");
  await a.page.waitForSelector("#warmups tbody tr td:nth-child(6)");
  out.warmups = await a.page.$$eval("#warmups tbody tr", (rows) => rows.map((r) => [...r.cells].map((c) => c.textContent)));
  out.aliases = await a.page.$$eval("#aliases tbody tr", (rows) => rows.map((r) => [...r.cells].slice(0, 2).map((c) => c.textContent)));
  // the diff of version 2 against 1
  await go(a.page, `${modelHash}/v/2`);
  await a.page.selectOption("#diff-against", "1");
  await a.page.click("#diff-form button[type=submit]");
  await ready(a.page, `${modelHash}/v/2/diff/1`);
  const cells = (id) => a.page.$$eval(`#${id} tbody tr`, (rows) => rows.map((r) => [...r.cells].map((c) => c.textContent)));
  out.diff = { added: await cells("diff-added"), removed: await cells("diff-removed"), changed: await cells("diff-changed"), metrics: await cells("diff-metrics") };
  await shot(a.page, "diff");
  // a request that changes something without the CSRF header (what a cross-site form or script could send)
  out.no_csrf = await a.page.evaluate(async (url) => {
    const r = await fetch(url, { method: "POST", headers: { "Content-Type": "application/json" }, body: "{}" });
    return { status: r.status, body: await r.json() };
  }, `${endpoint}/api/v1/teams/${enc(team)}/models/${enc(model)}/versions/1/reject`);
  out.approver_cookie = (await a.context.cookies()).find((c) => c.name === "depot_session");

  // --- a reader sees no approve button; a forged approve from the page (with the reader's own session and
  // CSRF token) is refused by the API
  const r = await newPage(420);
  await signIn(r.page, users.reader, "key");
  await go(r.page, `${modelHash}/v/1`);
  out.reader_state = (await r.page.textContent("#version-state")).trim();
  out.reader_buttons = await r.page.locator("section.actions button").count();
  out.reader_approve_button = await r.page.locator("#approve-version").count();
  await shot(r.page, "version-narrow");
  out.forged_approve = await r.page.evaluate(async (url) => {
    const s = await (await fetch("/api/v1/sessions/current")).json();
    const res = await fetch(url, { method: "POST", headers: { "Content-Type": "application/json", "X-Depot-CSRF": s.csrf_token }, body: "{}" });
    return { status: res.status, body: await res.json() };
  }, `/api/v1/teams/${enc(team)}/models/${enc(model)}/versions/1/approve`);
  out.reader_cookie = (await r.context.cookies()).find((c) => c.name === "depot_session");
  // stored XSS: the signed-in reader opens the attacker's presigned link (an HTML page whose script would
  // read the session's CSRF token and create an access key); its script sets the title when it is done
  {
    const victim = await r.context.newPage();
    const res = await victim.goto(reportUrl);
    const headers = res.headers();
    out.xss = { status: res.status(), csp: headers["content-security-policy"] ?? "",
      nosniff: headers["x-content-type-options"] ?? "" };
    try {
      await victim.waitForFunction(() => document.title.startsWith("done"), null, { timeout: 5000 });
    } catch { /* the script never ran (or could not finish): what the test wants */ }
    try {
      out.xss.title = await victim.title();
    } catch (err) {
      out.xss.title = `unreadable: ${err}`;
    }
    await victim.close();
  }
  // a reloaded page is still signed in (it asks for the current session); from the top of the page, Tab
  // reaches the skip link first
  await r.page.reload();
  await ready(r.page, `${modelHash}/v/1`);
  out.reader_after_reload = (await r.page.textContent("#who-name")).trim();
  await r.page.keyboard.press("Tab");
  out.first_tab = await r.page.evaluate(() => document.activeElement?.textContent);

  // --- a user of another team sees nothing of this team
  const o = await newPage();
  await signIn(o.page, users.outsider, "token");
  out.outsider_teams = await o.page.$$eval("table[data-list=teams] tbody tr", (rows) => rows.map((r) => r.cells[0].textContent));
  await go(o.page, modelHash);
  out.outsider_model = await status(o.page);
  await go(o.page, `#/t/${enc(team)}`);
  out.outsider_team = await status(o.page);

  // --- sign-out ends the session
  await a.page.click("#sign-out");
  await a.page.waitForSelector("#signin");
  out.after_sign_out = await a.page.evaluate(async () => (await fetch("/api/v1/whoami")).status);
  await a.page.reload();
  await a.page.waitForSelector("#signin");
  out.signed_out_page_shows_sign_in = true;
} catch (err) {
  out.error = String(err && err.stack || err);
} finally {
  await browser.close();
}
process.stdout.write(JSON.stringify(out) + "\n");
