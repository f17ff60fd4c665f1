// The Depot console: a single page over the public REST API. Pages are addressed by the URL fragment
// (#/t/<team>/m/<model>/v/<n>), so the server serves one index.html and never sees the route.
import { api, ApiError, listAll, path, setCsrf } from "/ui/api.js";
import { bytes, externalLink, h, link, table, when } from "/ui/dom.js";

const RANK = { reader: 1, writer: 2, maintainer: 3, admin: 4 };
const PAGE = 50;
let me = null; // the current session (GET /api/v1/sessions/current)

const main = () => document.getElementById("main");
const enc = encodeURIComponent;

function showError(err) {
  const box = document.getElementById("status");
  box.textContent = err instanceof ApiError || err instanceof Error ? err.message : String(err);
  box.hidden = false;
}

function clearStatus() {
  const box = document.getElementById("status");
  box.textContent = "";
  box.hidden = true;
}

function render(title, ...children) {
  document.title = `${title} · Depot console`;
  const m = main();
  m.replaceChildren(h("h1", {}, title), ...children.filter(Boolean));
}

function crumbs(...parts) {
  return h("nav", { class: "crumbs", "aria-label": "Breadcrumb" },
    h("ol", {}, parts.map(([href, text]) => h("li", {}, href ? link(href, text) : h("span", { "aria-current": "page" }, text)))));
}

/// A list that shows PAGE rows at a time, filtered by the text typed into its search box: by the server
/// when `remote(query)` returns a promise of the matching items (listModels / listVersions filters), else
/// here with `matches`. The section's data-query names the query its rows answer.
function pagedList(label, columns, items, rowOf, matches, remote) {
  const wrap = h("div", { class: "paged" });
  let shown = PAGE;
  let query = "";
  let rows = items;
  let local = true;
  let asked = 0;
  const search = h("input", { type: "search", placeholder: `Filter ${label}`, "aria-label": `Filter ${label}`, class: "filter" });
  const section = h("section", { "data-query": "" }, search, wrap);
  const draw = () => {
    const hits = local ? rows.filter((it) => !query || matches(it, query)) : rows;
    const visible = hits.slice(0, shown).map(rowOf);
    const more = hits.length > shown
      ? h("button", { type: "button", class: "more", onclick: () => { shown += PAGE; draw(); } },
          `Show more (${hits.length - shown} left)`)
      : null;
    wrap.replaceChildren(...[table(`${hits.length} ${label}`, columns, visible, { "data-list": label }), more].filter(Boolean));
    section.setAttribute("data-query", query);
  };
  let timer = null;
  search.addEventListener("input", () => {
    clearTimeout(timer);
    timer = setTimeout(async () => {
      const q = search.value.trim();
      const ticket = ++asked;
      const pending = q && remote ? remote(q) : null;
      let next = items;
      if (pending) {
        try {
          next = await pending;
        } catch (err) {
          showError(err);
          return;
        }
      }
      if (ticket !== asked) return; // a later query answered first
      clearStatus();
      rows = next;
      local = !pending;
      query = pending ? q : q.toLowerCase();
      shown = PAGE;
      draw();
    }, remote ? 250 : 0);
  });
  draw();
  return section;
}

/// The server-side filter of a list: "key=value" asks for a label, anything else (when `byName`) for a part
/// of the name; null leaves the filtering to the page.
function serverFilter(url, byName) {
  return (q) => {
    if (q.includes("=")) return listAll(`${url}?label=${enc(q)}`);
    return byName ? listAll(`${url}?name=${enc(q)}`) : null;
  };
}

const has = (text, q) => String(text ?? "").toLowerCase().includes(q);

async function myRole(team) {
  try {
    const members = await listAll(path("teams", team, "members"));
    return members.find((m) => m.user === me.user_id)?.role || null;
  } catch {
    return null;
  }
}

// ---- sign in / out

function signInPage() {
  const kind = h("select", { id: "signin-kind", name: "kind" },
    h("option", { value: "key" }, "Access key and secret"),
    h("option", { value: "token" }, "API token"));
  const keyId = h("input", { id: "access-key-id", name: "access_key_id", autocomplete: "username", spellcheck: "false" });
  const secret = h("input", { id: "secret-access-key", name: "secret_access_key", type: "password", autocomplete: "current-password" });
  const token = h("input", { id: "api-token", name: "token", type: "password", autocomplete: "off" });
  const keyFields = h("div", {}, h("label", { for: "access-key-id" }, "Access key id"), keyId,
    h("label", { for: "secret-access-key" }, "Secret access key"), secret);
  const tokenFields = h("div", { hidden: true }, h("label", { for: "api-token" }, "API token"), token);
  kind.addEventListener("change", () => {
    keyFields.hidden = kind.value !== "key";
    tokenFields.hidden = kind.value !== "token";
  });
  const form = h("form", { id: "signin", class: "card narrow" },
    h("label", { for: "signin-kind" }, "Sign in with"), kind, keyFields, tokenFields,
    h("button", { type: "submit", class: "primary" }, "Sign in"));
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    clearStatus();
    const body = kind.value === "key"
      ? { access_key_id: keyId.value.trim(), secret_access_key: secret.value }
      : { token: token.value.trim() };
    try {
      const s = await api("POST", "/api/v1/sessions", body);
      secret.value = "";
      token.value = "";
      signedIn(s);
      if (location.hash === "#/" || !location.hash) route();
      else location.hash = "#/";
    } catch (err) {
      showError(err);
    }
  });
  render("Sign in", h("p", { class: "muted" },
    "Sign in with your S3 access key and secret, or with an API token. The console acts with your permissions only."), form);
}

function signedIn(s) {
  me = s;
  setCsrf(s.csrf_token);
  document.getElementById("who-name").textContent = s.display_name || s.user_id;
  document.getElementById("who").hidden = false;
  document.getElementById("nav").hidden = false;
}

function signedOut() {
  me = null;
  setCsrf("");
  document.getElementById("who").hidden = true;
  document.getElementById("nav").hidden = true;
}

async function signOut() {
  clearStatus();
  try {
    await api("DELETE", "/api/v1/sessions/current");
  } catch (err) {
    if (!(err instanceof ApiError && err.status === 401)) return showError(err);
  }
  signedOut();
  location.hash = "#/";
  signInPage();
}

// ---- pages

async function teamsPage() {
  const teams = await listAll(path("teams"));
  render("Teams", pagedList("teams", ["Team", "Created"], teams,
    (t) => [link(`#/t/${enc(t.name)}`, t.name), when(t.created_at)],
    (t, q) => has(t.name, q)));
}

async function teamPage(team) {
  const [models, role] = await Promise.all([listAll(path("teams", team, "models")), myRole(team)]);
  const tabs = [link(`#/t/${enc(team)}/webhooks`, "Webhooks"), link(`#/t/${enc(team)}/audit`, "Audit log")];
  render(`Team ${team}`, crumbs(["#/", "Teams"], [null, team]),
    h("p", {}, "Your role: ", h("strong", { id: "my-role" }, role || "none")),
    RANK[role] >= RANK.admin ? h("p", { class: "tabs" }, tabs) : null,
    h("p", { class: "muted" }, "Filter by a part of the name, or by a label of some version as key=value."),
    pagedList("models", ["Model", "Versions", "Description", "Updated"], models,
      (m) => [link(`#/t/${enc(team)}/m/${enc(m.name)}`, m.name, { class: "name" }), m.version_count, m.description, when(m.updated_at)],
      (m, q) => has(m.name, q) || has(m.description, q), serverFilter(path("teams", team, "models"), true)));
}

function stateBadge(state) {
  return h("span", { class: `badge state-${state}` }, state);
}

function labelsText(labels) {
  return Object.entries(labels || {}).map(([k, v]) => `${k}=${typeof v === "string" ? v : JSON.stringify(v)}`).join(", ");
}

async function modelPage(team, model) {
  const [m, versions, aliases, role, history, warmups] = await Promise.all([
    api("GET", path("teams", team, "models", model)),
    listAll(path("teams", team, "models", model, "versions")),
    listAll(path("teams", team, "models", model, "aliases")),
    myRole(team),
    listAll(path("teams", team, "models", model, "history"), 200),
    listAll(path("teams", team, "models", model, "warmups"), 20),
  ]);
  const base = `#/t/${enc(team)}/m/${enc(model)}`;
  const canMove = RANK[role] >= RANK.maintainer;
  const aliasRows = aliases.map((a) => [h("span", { class: "name" }, a.name), link(`${base}/v/${a.version}`, `version ${a.version}`),
    a.protected ? "protected" : "", a.updated_by, when(a.updated_at)]);
  let moveForm = null;
  if (canMove) {
    const name = h("input", { id: "alias-name", required: true, spellcheck: "false", list: "alias-names" });
    const version = h("select", { id: "alias-version" }, versions.map((v) => h("option", { value: v.number }, `${v.number}${v.label ? ` (${v.label})` : ""} · ${v.state}`)));
    moveForm = h("form", { id: "move-alias", class: "inline" },
      h("datalist", { id: "alias-names" }, aliases.map((a) => h("option", { value: a.name }))),
      h("label", { for: "alias-name" }, "Alias"), name, h("label", { for: "alias-version" }, "points at"), version,
      h("button", { type: "submit" }, "Move alias"));
    moveForm.addEventListener("submit", async (ev) => {
      ev.preventDefault();
      clearStatus();
      try {
        await api("PUT", path("teams", team, "models", model, "aliases", name.value.trim()), { version: Number(version.value) });
        route();
      } catch (err) {
        showError(err);
      }
    });
  }
  const policy = m.policy || {};
  render(`${team}/${model}`, crumbs(["#/", "Teams"], [`#/t/${enc(team)}`, team], [null, model]),
    h("p", { class: "desc" }, m.description || ""),
    h("dl", { class: "facts" },
      h("dt", {}, "Files in"), h("dd", {}, `s3://${m.bucket}/${m.prefix}`),
      h("dt", {}, "Approval"), h("dd", {}, `${policy.required_approvals} approval(s) by a ${policy.approver_role} or above; the submitter cannot approve`),
      h("dt", {}, "Protected aliases"), h("dd", {}, (policy.protected_aliases || []).join(", ") || "none"),
      h("dt", {}, "Your role"), h("dd", {}, role || "none")),
    h("h2", {}, "Versions"),
    pagedList("versions", ["#", "Label", "State", "Labels", "Created by", "Created"], [...versions].reverse(),
      (v) => [link(`${base}/v/${v.number}`, String(v.number)), v.label || "", stateBadge(v.state), labelsText(v.labels), v.created_by, when(v.created_at)],
      (v, q) => has(v.label, q) || has(v.state, q) || has(labelsText(v.labels), q) || String(v.number) === q,
      (q) => serverFilter(path("teams", team, "models", model, "versions"), false)(q)?.then((vs) => [...vs].reverse()) ?? null),
    h("h2", {}, "Aliases"),
    table("Aliases", ["Alias", "Version", "", "Moved by", "At"], aliasRows, { id: "aliases" }),
    moveForm,
    h("h2", {}, "Warm-ups"),
    warmupSection(team, model, versions, warmups, RANK[role] >= RANK.writer),
    h("h2", {}, "History"),
    historyTable(history));
}

/// The model's recent warm-ups with their progress per instance; refreshed while one is running, for as
/// long as the page shows them.
function warmupSection(team, model, versions, warmups, canStart) {
  const list = h("div", { id: "warmups" });
  const draw = (jobs) => list.replaceChildren(table("Recent warm-ups", ["#", "Version", "State", "Progress", "Per instance", "Requested by"],
    jobs.map((j) => [String(j.id), String(j.version), j.state, `${j.percent} %`,
      h("ul", { class: "plain" }, (j.progress || []).map((p) => h("li", {}, `${p.instance}: ${p.state}, ${p.files_done}/${p.files_total} files, ${p.percent} %${p.last_error ? ` (${p.last_error})` : ""}`))),
      j.requested_by])));
  draw(warmups);
  const poll = async () => {
    if (!list.isConnected) return;
    try {
      const jobs = await listAll(path("teams", team, "models", model, "warmups"), 20);
      if (!list.isConnected) return;
      draw(jobs);
      if (jobs.some((j) => j.state === "running")) setTimeout(poll, 2000);
    } catch (err) {
      showError(err);
    }
  };
  if (warmups.some((j) => j.state === "running")) setTimeout(poll, 2000);
  let form = null;
  if (canStart && versions.length) {
    const version = h("select", { id: "warmup-version" }, [...versions].reverse().map((v) => h("option", { value: v.number }, `${v.number}${v.label ? ` (${v.label})` : ""}`)));
    form = h("form", { id: "start-warmup", class: "inline" }, h("label", { for: "warmup-version" }, "Warm up version"), version,
      h("button", { type: "submit" }, "Start warm-up"));
    form.addEventListener("submit", async (ev) => {
      ev.preventDefault();
      clearStatus();
      try {
        await api("POST", path("teams", team, "models", model, "warmups"), { version: Number(version.value) });
        poll();
      } catch (err) {
        showError(err);
      }
    });
  }
  return h("div", {}, list, form);
}

function historyTable(items) {
  return table("History", ["When", "Who", "What", "Comment"],
    [...items].reverse().map((e) => [when(e.at), e.actor, e.action + (e.details?.version ? ` (version ${e.details.version})` : ""), e.comment || ""]),
    { class: "history" });
}

async function versionPage(team, model, number) {
  const vpath = ["teams", team, "models", model, "versions", number];
  const [v, files, history, m, role, versions] = await Promise.all([
    api("GET", path(...vpath)),
    listAll(path(...vpath, "files"), 100000),
    listAll(path(...vpath, "history"), 200),
    api("GET", path("teams", team, "models", model)),
    myRole(team),
    listAll(path("teams", team, "models", model, "versions")),
  ]);
  const base = `#/t/${enc(team)}/m/${enc(model)}`;
  const rank = RANK[role] || 0;
  const approverRank = RANK[m.policy?.approver_role] || RANK.maintainer;
  const comment = h("textarea", { id: "comment", rows: 2, "aria-label": "Comment" });
  const act = (what, withComment) => async () => {
    clearStatus();
    try {
      await api("POST", path(...vpath, what), withComment && comment.value ? { comment: comment.value } : {});
      route();
    } catch (err) {
      showError(err);
    }
  };
  const buttons = [];
  if (rank >= RANK.writer && (v.state === "draft" || v.state === "rejected"))
    buttons.push(h("button", { type: "button", id: "submit-version", onclick: act("submit", true) }, "Submit for approval"));
  if (rank >= approverRank && v.state === "pending") {
    buttons.push(h("button", { type: "button", id: "approve-version", class: "primary", onclick: act("approve", true) }, "Approve"));
    buttons.push(h("button", { type: "button", id: "reject-version", onclick: act("reject", true) }, "Reject"));
  }
  if (rank >= RANK.maintainer && v.state !== "archived") {
    if (v.state !== "deprecated")
      buttons.push(h("button", { type: "button", id: "deprecate-version", onclick: act("deprecate", true) }, "Deprecate"));
    buttons.push(h("button", { type: "button", id: "archive-version", class: "danger", onclick: act("archive", true) }, "Archive"));
  }
  const actions = buttons.length
    ? h("section", { class: "card actions", "aria-label": "Actions" }, h("label", { for: "comment" }, "Comment (optional)"), comment, h("div", { class: "buttons" }, buttons))
    : null;

  const against = h("select", { id: "diff-against", "aria-label": "Compare with version" },
    versions.filter((o) => o.number !== v.number).reverse().map((o) => h("option", { value: o.number, selected: o.number === v.parent || undefined }, `${o.number}${o.label ? ` (${o.label})` : ""}`)));
  const diffForm = versions.length > 1 ? h("form", { id: "diff-form", class: "inline" },
    h("label", { for: "diff-against" }, "Compare with version"), against, h("button", { type: "submit" }, "Show diff")) : null;
  diffForm?.addEventListener("submit", (ev) => {
    ev.preventDefault();
    location.hash = `${base}/v/${v.number}/diff/${enc(against.value)}`;
  });

  const metrics = Object.entries(v.metrics || {});
  render(`${team}/${model} version ${v.number}`,
    crumbs(["#/", "Teams"], [`#/t/${enc(team)}`, team], [base, model], [null, `version ${v.number}`]),
    h("dl", { class: "facts" },
      h("dt", {}, "State"), h("dd", { id: "version-state" }, stateBadge(v.state)),
      h("dt", {}, "Label"), h("dd", {}, v.label || "—"),
      h("dt", {}, "Approvals"), h("dd", { id: "approvals" }, `${v.approvals.length} of ${v.required_approvals}${v.approvals.length ? ` (${v.approvals.join(", ")})` : ""}`),
      h("dt", {}, "Submitted by"), h("dd", {}, v.submitted_by || "—"),
      h("dt", {}, "Aliases"), h("dd", { id: "version-aliases" }, v.aliases.join(", ") || "—"),
      h("dt", {}, "Parent"), h("dd", {}, v.parent ? link(`${base}/v/${v.parent}`, `version ${v.parent}`) : "—"),
      h("dt", {}, "Run"), h("dd", {}, externalLink(v.run_url) || "—"),
      h("dt", {}, "Framework / format"), h("dd", {}, [v.framework, v.format].filter(Boolean).join(" / ") || "—"),
      h("dt", {}, "Description"), h("dd", {}, v.description || "—"),
      h("dt", {}, "Labels"), h("dd", {}, labelsText(v.labels) || "—"),
      h("dt", {}, "Created"), h("dd", {}, `${when(v.created_at)} by ${v.created_by}`),
      h("dt", {}, "Size"), h("dd", {}, `${v.file_count} files, ${bytes(v.total_bytes)}`)),
    actions,
    metrics.length ? table("Metrics", ["Metric", "Value"], metrics.map(([k, val]) => [k, JSON.stringify(val)])) : null,
    diffForm,
    h("h2", {}, "Files"),
    pagedList("files", ["Path", "Size", "SHA-256"], files,
      (f) => [h("button", { type: "button", class: "name download", "data-path": f.path, title: `Download ${f.path}`, onclick: () => download(vpath, f.path) }, f.path),
        bytes(f.size), h("code", { class: "digest" }, f.sha256)],
      (f, q) => has(f.path, q)),
    h("p", { class: "muted" }, "Each download asks the server for a presigned link valid for five minutes."),
    h("h2", {}, "History"),
    historyTable(history));
}

/// Downloads one file through a presigned link made for this click (getFileDownloadLink: valid briefly,
/// audited under the signed-in user).
async function download(vpath, file) {
  clearStatus();
  try {
    const link = await api("GET", path(...vpath, "download-link") + `?path=${enc(file)}`);
    if (!/^https?:\/\//.test(link.url)) throw new Error("The server returned no usable download link");
    const a = h("a", { href: link.url, download: file.split("/").pop(), rel: "noopener noreferrer", hidden: true });
    document.body.append(a);
    a.click();
    a.remove();
  } catch (err) {
    showError(err);
  }
}

async function diffPage(team, model, number, against) {
  const vpath = ["teams", team, "models", model, "versions"];
  const [d, to, from] = await Promise.all([
    api("GET", path(...vpath, number, "diff") + `?against=${enc(against)}`),
    api("GET", path(...vpath, number)),
    api("GET", path(...vpath, against)),
  ]);
  const base = `#/t/${enc(team)}/m/${enc(model)}`;
  const names = [...new Set([...Object.keys(from.metrics || {}), ...Object.keys(to.metrics || {})])].sort();
  const metricRows = names.map((k) => {
    const a = from.metrics?.[k];
    const b = to.metrics?.[k];
    const delta = typeof a === "number" && typeof b === "number" ? (b - a > 0 ? "+" : "") + Number((b - a).toPrecision(6)) : "";
    return [k, a === undefined ? "—" : JSON.stringify(a), b === undefined ? "—" : JSON.stringify(b), delta];
  });
  const fileRow = (f) => [h("span", { class: "name" }, f.path), bytes(f.size), h("code", { class: "digest" }, f.sha256)];
  render(`Diff of version ${d.from} → ${d.to}`,
    crumbs(["#/", "Teams"], [`#/t/${enc(team)}`, team], [base, model], [`${base}/v/${d.to}`, `version ${d.to}`], [null, `diff against ${d.from}`]),
    h("p", {}, `${d.added.length} added, ${d.removed.length} removed, ${d.changed.length} changed`),
    table("Added files", ["Path", "Size", "SHA-256"], d.added.map(fileRow), { id: "diff-added" }),
    table("Removed files", ["Path", "Size", "SHA-256"], d.removed.map(fileRow), { id: "diff-removed" }),
    table("Changed files", ["Path", "Size before", "Size after", "SHA-256 after"],
      d.changed.map((c) => [h("span", { class: "name" }, c.path), bytes(c.from.size), bytes(c.to.size), h("code", { class: "digest" }, c.to.sha256)]),
      { id: "diff-changed" }),
    table("Metrics", ["Metric", `Version ${d.from}`, `Version ${d.to}`, "Change"], metricRows, { id: "diff-metrics" }));
}

async function webhooksPage(team) {
  const hooks = await listAll(path("teams", team, "webhooks"));
  const sections = await Promise.all(hooks.map(async (w) => {
    const deliveries = await listAll(path("teams", team, "webhooks", w.id, "deliveries"), 50);
    return h("section", { class: "card" },
      h("h2", {}, h("span", { class: "name" }, w.url)),
      h("p", {}, `${w.enabled ? "enabled" : "disabled"} · events: ${w.event_types.join(", ") || "all"} · ${w.consecutive_failures} consecutive failures`),
      table("Recent deliveries", ["Event", "State", "Attempts", "Created", ""],
        deliveries.map((d) => [d.event_type, d.state, d.attempts, when(d.created_at),
          h("button", { type: "button", onclick: async () => {
            clearStatus();
            try { await api("POST", path("teams", team, "webhooks", w.id, "deliveries", d.id, "redeliver"), {}); route(); } catch (err) { showError(err); }
          } }, "Redeliver")])));
  }));
  render(`Webhooks of ${team}`, crumbs(["#/", "Teams"], [`#/t/${enc(team)}`, team], [null, "webhooks"]),
    hooks.length ? sections : h("p", { class: "muted" }, "No webhook subscriptions."));
}

async function auditPage(team) {
  // The API pages the log in chain order; the next page is fetched on request.
  const url = `/api/v1/audit?team=${enc(team)}&limit=200`;
  const rows = [];
  let cursor = null;
  const load = async () => {
    const page = await api("GET", url + (cursor ? `&cursor=${enc(cursor)}` : ""));
    rows.push(...(page.items || []));
    cursor = page.next_cursor;
  };
  await load();
  const draw = () => render(`Audit log of ${team}`, crumbs(["#/", "Teams"], [`#/t/${enc(team)}`, team], [null, "audit"]),
    pagedList("audit rows", ["When", "Actor", "Action", "Resource", "Outcome"], rows,
      (r) => [when(r.at), r.actor, r.action, h("span", { class: "name" }, r.resource), r.outcome],
      (r, q) => has(r.action, q) || has(r.actor, q) || has(r.resource, q)),
    cursor ? h("button", { type: "button", id: "audit-more", class: "more", onclick: async () => {
      clearStatus();
      try { await load(); draw(); } catch (err) { showError(err); }
    } }, "Load the next 200 rows") : null);
  draw();
}

async function usagePage() {
  const u = await api("GET", "/api/v1/usage");
  const saved = u.logical_bytes - u.physical_bytes;
  const pct = u.logical_bytes > 0 ? ((100 * saved) / u.logical_bytes).toFixed(1) : "0.0";
  render("Your storage", h("dl", { class: "facts", id: "usage" },
    h("dt", {}, "Buckets"), h("dd", {}, u.buckets),
    h("dt", {}, "Objects (versions)"), h("dd", {}, `${u.objects} (${u.versions})`),
    h("dt", {}, "Logical size"), h("dd", {}, bytes(u.logical_bytes)),
    h("dt", {}, "Stored after deduplication"), h("dd", {}, bytes(u.physical_bytes)),
    h("dt", {}, "Saved by deduplication"), h("dd", {}, `${bytes(saved)} (${pct} %)`)));
}

// ---- routing

const routes = [
  [/^#?\/?$/, teamsPage],
  [/^#\/usage$/, usagePage],
  [/^#\/t\/([^/]+)$/, teamPage],
  [/^#\/t\/([^/]+)\/webhooks$/, webhooksPage],
  [/^#\/t\/([^/]+)\/audit$/, auditPage],
  [/^#\/t\/([^/]+)\/m\/([^/]+)$/, modelPage],
  [/^#\/t\/([^/]+)\/m\/([^/]+)\/v\/([^/]+)$/, versionPage],
  [/^#\/t\/([^/]+)\/m\/([^/]+)\/v\/([^/]+)\/diff\/([^/]+)$/, diffPage],
];

async function route() {
  if (!me) return signInPage();
  const hash = location.hash || "#/";
  for (const [re, page] of routes) {
    const m = re.exec(hash);
    if (!m) continue;
    main().setAttribute("aria-busy", "true");
    try {
      await page(...m.slice(1).map(decodeURIComponent));
    } catch (err) {
      if (err instanceof ApiError && err.status === 401) {
        signedOut();
        signInPage();
      } else {
        render("Cannot show this page", h("p", { class: "muted" }, "The server said:"));
      }
      showError(err);
    } finally {
      main().removeAttribute("aria-busy");
      main().setAttribute("data-ready", hash);
    }
    return;
  }
  render("Not found", h("p", {}, "No such page. ", link("#/", "Back to the teams")));
}

async function start() {
  document.getElementById("sign-out").addEventListener("click", signOut);
  window.addEventListener("hashchange", () => { clearStatus(); route(); });
  try {
    signedIn(await api("GET", "/api/v1/sessions/current"));
  } catch {
    signedOut();
  }
  route();
}

start();
