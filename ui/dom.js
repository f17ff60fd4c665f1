// Builds DOM nodes from data. Text goes in as text nodes (never as HTML), so nothing a user or the server
// wrote can become markup or script.

export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else if (k === "class") el.className = v;
    else el.setAttribute(k, v === true ? "" : String(v));
  }
  for (const c of children.flat(Infinity)) {
    if (c === undefined || c === null || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

export function link(href, text, attrs = {}) {
  return h("a", { href, ...attrs }, text);
}

export function bytes(n) {
  if (n === null || n === undefined) return "";
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let v = Number(n);
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return i === 0 ? `${v} B` : `${v.toFixed(1)} ${units[i]}`;
}

export function when(iso) {
  if (!iso) return "";
  return iso.replace("T", " ").replace(/\.\d+Z$/, " UTC");
}

export function table(caption, columns, rows, attrs = {}) {
  return h("div", { class: "table-wrap" },
    h("table", attrs,
      h("caption", {}, caption),
      h("thead", {}, h("tr", {}, columns.map((c) => h("th", { scope: "col" }, c)))),
      h("tbody", {}, rows.length
        ? rows.map((r) => h("tr", {}, r.map((cell) => h("td", {}, cell))))
        : h("tr", {}, h("td", { colspan: columns.length, class: "muted" }, "Nothing here.")))));
}

/// A safe external link: only http(s) URLs become links; anything else stays text.
export function externalLink(url) {
  if (typeof url === "string" && /^https?:\/\//i.test(url))
    return h("a", { href: url, rel: "noopener noreferrer", target: "_blank" }, url);
  return url || "";
}
