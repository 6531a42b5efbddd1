// Herald's web console: plain DOM code, no framework, no build step. Every call is same-origin and
// carries the session's CSRF token; the session itself is an HttpOnly cookie this script never sees.
"use strict";

const state = { csrf: null, app: null, installationsCursor: null, audienceTimer: null, audienceSeq: 0 };
const $ = (id) => document.getElementById(id);

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === null || value === undefined) continue;
    if (key === "class") node.className = value;
    else if (key === "text") node.textContent = value;
    else node.setAttribute(key, value);
  }
  for (const child of children) {
    if (child === null || child === undefined) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

function badge(text, kind) { return el("span", { class: "badge " + (kind || text) }, text); }
function when(value) {
  if (!value) return "–";
  const date = new Date(value);
  return date.toISOString().replace("T", " ").replace(/\.\d+Z$/, "Z");
}
function short(id) { return id ? "…" + id.slice(-12) : "–"; }
function list(text) { return text.split(",").map((s) => s.trim()).filter((s) => s.length > 0); }

class APIError extends Error {
  constructor(status, body) {
    const error = (body && body.error) || {};
    super(error.message || "HTTP " + status);
    this.status = status;
    this.code = error.code;
    this.field = error.field;
  }
}

async function api(method, path, body) {
  const headers = { "Accept": "application/json" };
  if (state.csrf) headers["X-CSRF-Token"] = state.csrf;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const response = await fetch(path, {
    method, headers, credentials: "same-origin", body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  const json = text ? JSON.parse(text) : null;
  if (!response.ok) {
    if (response.status === 401 && path !== "/console/session") signedOut();
    throw new APIError(response.status, json);
  }
  return json;
}

// MARK: Session

function signedIn(session) {
  state.csrf = session.csrf_token;
  state.app = session.app;
  $("session-app").textContent = session.app;
  $("session").hidden = false;
  $("nav").hidden = false;
  if (!location.hash || location.hash === "#/sign-in") location.hash = "#/installations";
  else route();
}

function signedOut() {
  state.csrf = null;
  state.app = null;
  $("session").hidden = true;
  $("nav").hidden = true;
  show("sign-in");
}

async function signIn(event) {
  event.preventDefault();
  $("sign-in-error").hidden = true;
  try {
    const session = await api("POST", "/console/session", { server_key: $("server-key").value });
    $("server-key").value = "";
    signedIn(session);
  } catch (error) {
    $("sign-in-error").textContent = error.message;
    $("sign-in-error").hidden = false;
  }
}

async function signOut() {
  await api("DELETE", "/console/session").catch(() => {});
  location.hash = "";
  signedOut();
}

// MARK: Pages

const pages = ["sign-in", "installations", "history", "send", "notifications", "health", "webhooks", "templates", "dialects"];

function show(page) {
  for (const name of pages) $("page-" + name).hidden = name !== page;
  const navPage = page === "history" ? "installations" : page;
  for (const link of document.querySelectorAll("nav a")) {
    link.classList.toggle("active", link.dataset.page === navPage);
  }
  document.body.dataset.page = page;
}

function route() {
  if (!state.csrf) { signedOut(); return; }
  const [path, query] = location.hash.replace(/^#/, "").split("?");
  const parts = path.split("/").filter((part) => part.length > 0);
  const params = new URLSearchParams(query || "");
  const page = parts[0] || "installations";
  if (page === "installations" && parts[1]) { show("history"); loadHistory(decodeURIComponent(parts[1])); return; }
  if (!pages.includes(page) || page === "sign-in") { location.hash = "#/installations"; return; }
  show(page);
  if (page === "installations") searchInstallations();
  if (page === "send") openSend(params);
  if (page === "notifications") loadNotifications();
  if (page === "health") loadHealth();
  if (page === "webhooks") loadWebhooks(params.get("endpoint"));
  if (page === "templates") loadTemplates(params.get("name"));
  if (page === "dialects") loadDialects();
}

// Installations

function installationQuery() {
  const params = new URLSearchParams({ limit: "50" });
  const fields = { user_id: "filter-user", channel: "filter-channel", platform: "filter-platform", valid: "filter-valid" };
  for (const [name, id] of Object.entries(fields)) {
    const value = $(id).value.trim();
    if (value) params.set(name, value);
  }
  return params;
}

async function searchInstallations(event, more) {
  if (event) event.preventDefault();
  const body = $("installations-table").tBodies[0];
  const params = installationQuery();
  if (more && state.installationsCursor) params.set("cursor", state.installationsCursor);
  else body.replaceChildren();
  try {
    const page = await api("GET", "/v1/installations?" + params.toString());
    for (const item of page.data) {
      body.append(el("tr", { "data-id": item.id },
        el("td", {}, el("a", { href: "#/installations/" + encodeURIComponent(item.id), title: item.id }, el("code", {}, short(item.id)))),
        el("td", {}, item.user_id || "–"),
        el("td", {}, item.platform),
        el("td", {}, item.service + (item.environment === "sandbox" ? " (sandbox)" : "")),
        el("td", {}, (item.channels || []).join(", ") || "–"),
        el("td", {}, el("code", {}, "…" + item.token_suffix)),
        el("td", {}, item.valid ? badge("valid") : badge("invalid")),
        el("td", {}, when(item.last_delivered_at)),
        el("td", {}, el("a", { href: "#/send?installation=" + encodeURIComponent(item.id) }, "Test push"))));
    }
    state.installationsCursor = page.next_cursor;
    $("installations-more").hidden = !page.next_cursor;
    $("installations-empty").hidden = body.rows.length > 0;
  } catch (error) { toast(error.message); }
}

async function loadHistory(id) {
  $("history-id").textContent = id;
  $("history-send").setAttribute("href", "#/send?installation=" + encodeURIComponent(id));
  const facts = $("history-facts");
  const body = $("history-table").tBodies[0];
  facts.replaceChildren();
  body.replaceChildren();
  try {
    const page = await api("GET", "/console/api/installations/" + encodeURIComponent(id) + "/history?limit=100");
    const item = page.installation;
    const rows = [
      ["User", item.user_id || "–"], ["Platform", item.platform], ["Service", item.service + " · " + item.environment],
      ["Token", "…" + item.token_suffix], ["Channels", (item.channels || []).join(", ") || "–"],
      ["Status", item.valid ? badge("valid") : badge("invalid")], ["App version", item.app_version || "–"],
      ["Device", item.device_model || "–"], ["Failures", String(item.failure_count)],
      ["Last failure", item.last_failure_reason ? item.last_failure_reason + " at " + when(item.last_failure_at) : "–"],
      ["Last delivered", when(item.last_delivered_at)], ["Registered", when(item.created_at)],
    ];
    for (const [name, value] of rows) facts.append(el("dt", {}, name), el("dd", {}, value));
    for (const entry of page.data) {
      body.append(el("tr", {},
        el("td", {}, when(entry.at)),
        el("td", {}, el("code", { title: entry.notification_id }, short(entry.notification_id))),
        el("td", {}, entry.service),
        el("td", {}, badge(entry.outcome)),
        el("td", {}, entry.reason || "–"),
        el("td", { class: "num" }, entry.attempts),
        el("td", {}, entry.provider_id ? el("code", {}, entry.provider_id) : "–")));
    }
    $("history-empty").hidden = page.data.length > 0;
  } catch (error) { toast(error.status === 404 ? "No such installation." : error.message); }
}

// Send

function sendMode() { return document.querySelector("input[name=mode]:checked").value; }

function openSend(params) {
  const installation = params.get("installation");
  if (installation) {
    document.querySelector("input[name=mode][value=device]").checked = true;
    $("send-installation").value = installation;
  }
  modeChanged();
}

function modeChanged() {
  const device = sendMode() === "device";
  $("target-device").hidden = !device;
  $("target-query").hidden = device;
  $("send-value").disabled = $("send-audience").value === "all";
  scheduleAudience();
}

function sendTarget() {
  if (sendMode() === "device") {
    const id = $("send-installation").value.trim();
    return id ? { installation_ids: [id] } : null;
  }
  const audience = $("send-audience").value;
  const value = $("send-value").value.trim();
  const target = {};
  if (audience === "all") target.all = true;
  else if (audience === "where") {
    if (!value) return null;
    target.where = JSON.parse(value);
  } else {
    const values = list(value);
    if (values.length === 0) return null;
    target[audience] = values;
  }
  const platforms = list($("send-platforms").value);
  if (platforms.length > 0) target.platforms = platforms;
  return target;
}

function sendPayload() {
  const payload = {};
  const title = $("send-title").value.trim();
  const body = $("send-body").value.trim();
  if (title) payload.title = title;
  if (body) payload.body = body;
  return payload;
}

function scheduleAudience() {
  clearTimeout(state.audienceTimer);
  state.audienceTimer = setTimeout(updateAudience, 300);
}

// The live audience: a dry run of the same request counts who it would reach now.
async function updateAudience() {
  const seq = ++state.audienceSeq;
  const count = $("audience-count");
  const detail = $("audience-detail");
  let target;
  try { target = sendTarget(); } catch (error) { count.textContent = "–"; detail.textContent = "the query is not valid JSON"; return; }
  if (!target) { count.textContent = "–"; detail.textContent = ""; return; }
  try {
    const result = await api("POST", "/v1/notifications", { target, payload: { title: "dry run" }, dry_run: true });
    if (seq !== state.audienceSeq) return;
    count.textContent = String(result.targeted);
    const services = Object.entries(result.by_service).map(([service, n]) => service + " " + n);
    detail.textContent = services.length ? "(" + services.join(", ") + ")" : "";
    document.body.dataset.audience = String(result.targeted);
  } catch (error) {
    if (seq !== state.audienceSeq) return;
    count.textContent = "–";
    detail.textContent = error.message;
  }
}

async function send(event) {
  event.preventDefault();
  $("send-error").hidden = true;
  $("send-result").hidden = true;
  try {
    const target = sendTarget();
    if (!target) throw new Error("Choose a target first.");
    const result = await api("POST", "/v1/notifications", { target, payload: sendPayload() });
    $("send-result").replaceChildren("Accepted: ", el("a", { href: "#/notifications", id: "sent-link" }, result.id),
      " (" + result.status + ")");
    $("send-result").dataset.id = result.id;
    $("send-result").hidden = false;
  } catch (error) {
    $("send-error").textContent = error.message;
    $("send-error").hidden = false;
  }
}

// Notifications

async function loadNotifications() {
  const body = $("notifications-table").tBodies[0];
  body.replaceChildren();
  try {
    const [page, overview] = await Promise.all([
      api("GET", "/v1/notifications?limit=50"), api("GET", "/console/api/overview"),
    ]);
    for (const item of page.data) {
      const counts = item.counts || {};
      const skipped = (counts.skipped_preferences || 0) + (counts.skipped_expired || 0);
      body.append(el("tr", { "data-id": item.id },
        el("td", {}, when(item.created_at)),
        el("td", {}, el("code", { title: item.id }, short(item.id))),
        el("td", {}, (item.payload && item.payload.title) || "–"),
        el("td", {}, badge(item.status)),
        el("td", { class: "num" }, counts.targeted || 0),
        el("td", { class: "num" }, counts.sent || 0),
        el("td", { class: "num" }, counts.failed || 0),
        el("td", { class: "num" }, counts.invalid || 0),
        el("td", { class: "num" }, skipped),
        el("td", { class: "num" }, counts.opened === undefined ? "–" : counts.opened)));
    }
    $("notifications-empty").hidden = page.data.length > 0;
    drawChart(overview.series);
  } catch (error) { toast(error.message); }
}

const SVG = "http://www.w3.org/2000/svg";
function svg(tag, attrs) {
  const node = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, String(value));
  return node;
}

// A stacked bar per hour of the last 24: sent, failed, invalid, skipped.
function drawChart(series) {
  const width = 1100, height = 220, left = 40, bottom = 24, top = 10;
  const start = Date.parse(series.since);
  const hours = [];
  for (let i = 0; i < 25; i++) hours.push({ hour: start + i * 3600e3, sent: 0, failed: 0, invalid: 0, skipped: 0 });
  for (const bucket of series.hours) {
    const index = Math.round((Date.parse(bucket.hour) - start) / 3600e3);
    if (index >= 0 && index < hours.length) Object.assign(hours[index], bucket, { hour: hours[index].hour });
  }
  // Whole-number gridlines: the scale's top is a multiple of the four steps.
  const max = Math.ceil(Math.max(1, ...hours.map((h) => h.sent + h.failed + h.invalid + h.skipped)) / 4) * 4;
  const chart = svg("svg", { viewBox: `0 0 ${width} ${height}`, role: "img", "aria-label": "Outcomes per hour" });
  const plot = height - bottom - top;
  for (let i = 0; i <= 4; i++) {
    const y = top + plot - (plot * i) / 4;
    chart.append(svg("line", { x1: left, x2: width, y1: y, y2: y, class: i === 0 ? "axis" : "grid" }));
    const label = svg("text", { x: left - 6, y: y + 4, "text-anchor": "end" });
    label.textContent = String((max * i) / 4);
    chart.append(label);
  }
  const step = (width - left) / hours.length;
  hours.forEach((h, i) => {
    let y = top + plot;
    for (const [key, cls] of [["sent", "sent"], ["failed", "failedbar"], ["invalid", "invalidbar"], ["skipped", "skippedbar"]]) {
      const value = h[key];
      if (!value) continue;
      const barHeight = (plot * value) / max;
      y -= barHeight;
      const bar = svg("rect", { x: left + i * step + 3, y, width: Math.max(2, step - 6), height: barHeight, class: cls });
      const title = svg("title", {});
      title.textContent = `${new Date(h.hour).toISOString().slice(11, 16)}Z ${key}: ${value}`;
      bar.append(title);
      chart.append(bar);
    }
    if (i % 3 === 0) {
      const label = svg("text", { x: left + i * step + step / 2, y: height - 6, "text-anchor": "middle" });
      label.textContent = new Date(h.hour).toISOString().slice(11, 16);
      chart.append(label);
    }
  });
  $("chart").replaceChildren(chart);
  const legend = $("chart-legend");
  legend.replaceChildren();
  const totals = { sent: 0, failed: 0, invalid: 0, skipped: 0 };
  for (const h of hours) for (const key of Object.keys(totals)) totals[key] += h[key];
  for (const [key, cls] of [["sent", "sent"], ["failed", "failedbar"], ["invalid", "invalidbar"], ["skipped", "skippedbar"]]) {
    legend.append(el("li", { "data-key": key }, el("span", { class: "swatch " + cls }), `${key} ${totals[key]}`));
  }
}

// Provider health and dialects

async function loadHealth() {
  try {
    const overview = await api("GET", "/console/api/overview");
    const providers = $("providers");
    providers.replaceChildren();
    for (const provider of overview.providers) {
      providers.append(el("li", {}, el("strong", {}, provider.service), " ",
        provider.paused_until ? badge("paused until " + when(provider.paused_until), "bad") : badge("active", "ok"),
        ...(provider.paused_origins || []).flatMap((pause) =>
          [" ", badge(pause.origin + " paused until " + when(pause.until), "bad")]),
        provider.pool ? " " + provider.pool.connections + " connections, " + provider.pool.streams_in_use +
          " streams in use, " + provider.pool.waiting + " waiting" : ""));
    }
    if (overview.providers.length === 0) providers.append(el("li", {}, "No provider configured for this app."));
    const body = $("failures-table").tBodies[0];
    body.replaceChildren();
    for (const failure of overview.failures) {
      body.append(el("tr", {},
        el("td", {}, failure.service), el("td", {}, badge(failure.outcome)), el("td", {}, failure.reason || "–"),
        el("td", { class: "num" }, failure.count), el("td", {}, when(failure.last_at))));
    }
    $("failures-empty").hidden = overview.failures.length > 0;
  } catch (error) { toast(error.message); }
}

// Webhooks: each endpoint's health, and one endpoint's recent events with their attempts.

async function loadWebhooks(selected) {
  const body = $("webhooks-table").tBodies[0];
  body.replaceChildren();
  $("webhook-attempts-card").hidden = true;
  try {
    const page = await api("GET", "/v1/webhooks");
    for (const endpoint of page.data) {
      const state = endpoint.enabled ? badge("enabled", "ok") : badge("disabled: " + endpoint.disabled_reason, "bad");
      const failing = endpoint.failing_since ? badge(when(endpoint.failing_since), "bad") : "–";
      const link = el("a", { href: "#/webhooks?endpoint=" + encodeURIComponent(endpoint.id) }, endpoint.id);
      body.append(el("tr", { "data-id": endpoint.id },
        el("td", {}, link, endpoint.configured ? " " : "", endpoint.configured ? badge("configured") : ""),
        el("td", {}, el("code", {}, endpoint.url)),
        el("td", {}, endpoint.events.join(", ")),
        el("td", { class: "state" }, state),
        el("td", {}, endpoint.last_success_at ? when(endpoint.last_success_at) : "–"),
        el("td", { class: "failing" }, failing),
        el("td", { class: "num backlog" }, endpoint.backlog)));
    }
    $("webhooks-empty").hidden = page.data.length > 0;
    if (selected) await loadWebhookAttempts(selected);
  } catch (error) { toast(error.message); }
}

async function loadWebhookAttempts(id) {
  const page = await api("GET", "/v1/webhooks/" + encodeURIComponent(id) + "/deliveries?limit=50");
  $("webhook-attempts-id").textContent = id;
  const body = $("webhook-attempts-table").tBodies[0];
  body.replaceChildren();
  for (const row of page.data) {
    const tone = row.state === "delivered" ? "ok" : row.state === "pending" ? "" : "bad";
    body.append(el("tr", { "data-event": row.event_id },
      el("td", {}, when(row.created_at)),
      el("td", {}, el("code", { title: row.event_id }, short(row.event_id))),
      el("td", {}, row.type),
      el("td", { class: "state" }, badge(row.state, tone)),
      el("td", { class: "num" }, row.attempts),
      el("td", {}, row.last_status === null ? "–" : String(row.last_status)),
      el("td", {}, row.last_error || "–")));
  }
  $("webhook-attempts-card").hidden = false;
}

// Templates: the app's templates, and a preview of one rendered with sample values (nothing is sent).

async function loadTemplates(selected) {
  const body = $("templates-table").tBodies[0];
  body.replaceChildren();
  $("preview-form").hidden = true;
  try {
    const page = await api("GET", "/v1/templates");
    for (const template of page.data) {
      const link = el("a", { href: "#/templates?name=" + encodeURIComponent(template.name) }, template.name);
      const languages = ["default"].concat(Object.keys(template.localizations || {}));
      body.append(el("tr", { "data-name": template.name },
        el("td", {}, link, template.configured ? " " : "", template.configured ? badge("configured") : ""),
        el("td", { class: "num" }, template.revision),
        el("td", {}, el("code", {}, template.title || "–")),
        el("td", {}, languages.join(", ")),
        el("td", {}, template.strict ? badge("strict") : "lenient"),
        el("td", {}, when(template.updated_at))));
    }
    $("templates-empty").hidden = page.data.length > 0;
    if (selected && page.data.some((template) => template.name === selected)) {
      $("preview-name").textContent = selected;
      $("preview-result").hidden = true;
      $("preview-error").hidden = true;
      $("preview-form").hidden = false;
    }
  } catch (error) { toast(error.message); }
}

async function preview(event) {
  event.preventDefault();
  $("preview-error").hidden = true;
  $("preview-result").hidden = true;
  try {
    const body = {
      variables: JSON.parse($("preview-variables").value || "{}"),
      recipient: JSON.parse($("preview-recipient").value || "{}"),
    };
    const locale = $("preview-locale").value.trim();
    if (locale) body.locale = locale;
    const name = $("preview-name").textContent;
    const rendered = await api("POST", "/v1/templates/" + encodeURIComponent(name) + "/render", body);
    $("preview-localization").textContent = rendered.localization || "default";
    for (const field of ["title", "subtitle", "body"]) $("preview-" + field).textContent = rendered[field] ?? "–";
    $("preview-data").textContent = JSON.stringify(rendered.data);
    $("preview-missing").replaceChildren(...(rendered.missing.length
      ? rendered.missing.map((name) => badge(name, rendered.strict ? "bad" : "")) : ["none"]));
    $("preview-result").hidden = false;
  } catch (error) {
    $("preview-error").textContent = error.message;
    $("preview-error").hidden = false;
  }
}

async function loadDialects() {
  try {
    const overview = await api("GET", "/console/api/overview");
    const body = $("dialects-table").tBodies[0];
    body.replaceChildren();
    for (const dialect of overview.dialects) {
      body.append(el("tr", { "data-key": dialect.key },
        el("td", {}, el("strong", {}, dialect.name)), el("td", {}, el("code", {}, dialect.routes)),
        el("td", {}, dialect.enabled ? badge("on") : badge("off")), el("td", {}, dialect.detail)));
    }
  } catch (error) { toast(error.message); }
}

function toast(message) {
  const node = $("toast");
  node.textContent = message;
  node.hidden = false;
  clearTimeout(node.timer);
  node.timer = setTimeout(() => { node.hidden = true; }, 4000);
}

// MARK: Start

document.addEventListener("DOMContentLoaded", async () => {
  $("sign-in-form").addEventListener("submit", signIn);
  $("sign-out").addEventListener("click", signOut);
  $("search-form").addEventListener("submit", (event) => searchInstallations(event, false));
  $("installations-more").addEventListener("click", () => searchInstallations(null, true));
  $("send-form").addEventListener("submit", send);
  $("preview-form").addEventListener("submit", preview);
  for (const input of document.querySelectorAll("input[name=mode]")) input.addEventListener("change", modeChanged);
  $("send-audience").addEventListener("change", modeChanged);
  for (const id of ["send-installation", "send-value", "send-platforms"]) {
    $(id).addEventListener("input", scheduleAudience);
    $(id).addEventListener("change", scheduleAudience);
  }
  window.addEventListener("hashchange", route);
  try {
    signedIn(await api("GET", "/console/session"));
  } catch (error) {
    signedOut();
  }
});
