// The Meta console's Memory panel: one ES module, no dependencies, no build step.
//
// Every value from the gateway reaches the DOM through textContent or an attribute set with
// setAttribute, never as parsed markup. The console token lives in sessionStorage (this tab
// only) and travels as "Authorization: Bearer" on every call, including the live timeline,
// which is read with fetch() streaming because EventSource cannot send that header.

const TOKEN_KEY = "meta-console-token";
// "open": the gateway's console takes calls without a token (none is configured): no sign-in.
const OPEN = document.body.dataset.auth === "open";
const RPC_PATH = "/console/rpc";
const STREAM_PATH = "/console/timeline/stream";
const TIMELINE_MAX_ROWS = 200;
const RECONNECT_MS = 2000;

// -- DOM helpers -------------------------------------------------------------------------

/** Build an element. `attrs` keys: class, text, on<Event>, and plain attributes. */
function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") node.className = value;
    else if (key === "text") node.textContent = String(value);
    else if (key.startsWith("on") && typeof value === "function") node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

const $ = (id) => document.getElementById(id);

function pad(n) {
  return String(n).padStart(2, "0");
}

function fmtTime(ms) {
  if (typeof ms !== "number") return "—";
  const d = new Date(ms);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

function fmtBytes(n) {
  if (typeof n !== "number") return "—";
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / (1024 * 1024)).toFixed(1)} MiB`;
}

function fmtCount(n) {
  return typeof n === "number" ? n.toLocaleString("en-US") : "—";
}

function badge(text, kind = String(text)) {
  return el("span", { class: `badge ${kind}`, text });
}

function scopeLabel(kind, key) {
  if (!kind) return "—";
  return key ? `${kind}: ${key}` : kind;
}

function authorLabel(author) {
  if (!author || typeof author !== "object") return "—";
  const who = author.identity || author.run_id || author.principal || "";
  return who ? `${author.author} (${who})` : String(author.author ?? "—");
}

function shortId(id) {
  return typeof id === "string" && id.length > 28 ? `${id.slice(0, 18)}…${id.slice(-6)}` : id;
}

function recordHref(realm, id) {
  return `#/record?${new URLSearchParams({ realm, id })}`;
}

/** A table with a header row, body rows, and an empty state when there are no rows. */
function table(columns, rows, emptyText, rowAttrs) {
  if (!rows.length) return el("div", { class: "card empty", text: emptyText });
  const head = el("tr", {}, columns.map((c) => el("th", { class: c.num ? "num" : undefined, text: c.label })));
  const body = el("tbody");
  for (const row of rows) {
    const tr = el("tr", rowAttrs ? rowAttrs(row) : {});
    for (const c of columns) {
      const value = c.render(row);
      const td = el("td", { class: [c.num ? "num" : "", c.cls || ""].join(" ").trim() || undefined });
      td.append(value instanceof Node ? value : document.createTextNode(value ?? "—"));
      tr.append(td);
    }
    body.append(tr);
  }
  return el("div", { class: "card table-wrap" }, el("table", {}, el("thead", {}, head), body));
}

// -- RPC -----------------------------------------------------------------------------------

class RpcError extends Error {
  constructor(method, error) {
    super(error.message || "error");
    this.method = method;
    this.code = error.code;
    this.data = error.data;
  }
}

class AuthError extends Error {}

let rpcId = 0;

async function rpc(method, params = {}) {
  const token = sessionStorage.getItem(TOKEN_KEY);
  const headers = { "Content-Type": "application/json" };
  if (token) headers.Authorization = `Bearer ${token}`;
  let response;
  try {
    response = await fetch(RPC_PATH, {
      method: "POST",
      headers,
      body: JSON.stringify({ jsonrpc: "2.0", id: ++rpcId, method, params }),
    });
  } catch (exc) {
    throw new RpcError(method, { message: `the gateway did not answer (${exc.message})` });
  }
  if (response.status === 401) {
    let reason = "invalid_token";
    try {
      reason = (await response.json()).error?.data?.reason || reason;
    } catch {
      // The status says enough.
    }
    throw new AuthError(`The gateway refused this console token (${reason}).`);
  }
  if (!response.ok) throw new RpcError(method, { message: `HTTP ${response.status}` });
  const reply = await response.json();
  if (reply.error) throw new RpcError(method, reply.error);
  return reply.result;
}

// The methods meta/capabilities offers this console, read once per sign-in: a read-only console
// leaves out its mutating methods, and access rules what the token could never take.
let offered = null;

/** Whether the gateway offers `method` to this console (false when that cannot be read). */
async function offers(method) {
  if (!offered) {
    try {
      offered = new Set((await rpc("meta/capabilities")).methods || []);
    } catch (exc) {
      if (exc instanceof AuthError) throw exc;
      return false;
    }
  }
  return offered.has(method);
}

/** The error box every view shows when a call fails. */
function errorBox(exc, what) {
  const box = el("div", { class: "error", role: "alert" });
  if (exc instanceof RpcError) {
    box.append(el("strong", { text: `${what || exc.method} failed: ` }), exc.message);
    const detail = [exc.code !== undefined ? `code ${exc.code}` : "", exc.data?.reason ? `reason ${exc.data.reason}` : ""]
      .filter(Boolean)
      .join(" · ");
    if (detail) box.append(" ", el("span", { class: "code", text: `(${detail})` }));
  } else {
    box.append(el("strong", { text: `${what || "Request"} failed: ` }), String(exc.message || exc));
  }
  return box;
}

// -- shell: sign-in, navigation, routing ---------------------------------------------------

function showSignin(message) {
  stopTimeline();
  $("app").hidden = true;
  $("signin").hidden = false;
  const err = $("signin-error");
  err.hidden = !message;
  err.textContent = message || "";
  $("token").focus();
}

function signOut(message) {
  sessionStorage.removeItem(TOKEN_KEY);
  offered = null;
  showSignin(message);
}

async function signIn(event) {
  event.preventDefault();
  const input = $("token");
  const token = input.value.trim();
  const button = event.submitter || $("signin-form").querySelector("button");
  button.disabled = true;
  sessionStorage.setItem(TOKEN_KEY, token);
  offered = null;
  try {
    offered = new Set((await rpc("meta/capabilities")).methods || []);
    input.value = "";
    $("signin").hidden = true;
    $("app").hidden = false;
    if (!location.hash || location.hash === "#") location.hash = "#/records";
    else route();
  } catch (exc) {
    sessionStorage.removeItem(TOKEN_KEY);
    showSignin(exc instanceof AuthError ? exc.message : `Sign-in failed: ${exc.message}`);
  } finally {
    button.disabled = false;
  }
}

function parseHash() {
  const raw = location.hash.replace(/^#\/?/, "");
  const [name, query = ""] = raw.split("?");
  return { name: name || "records", params: new URLSearchParams(query) };
}

const VIEWS = {
  records: viewRecords,
  record: viewRecord,
  quarantine: viewQuarantine,
  overview: viewOverview,
  dreams: viewDreams,
  proposals: viewProposals,
  harvests: viewHarvests,
  injections: viewInjections,
  audit: viewAudit,
  timeline: viewTimeline,
};

let renderSeq = 0;

async function route() {
  if (!OPEN && !sessionStorage.getItem(TOKEN_KEY)) return showSignin();
  const { name, params } = parseHash();
  const view = VIEWS[name] || viewRecords;
  const navName = name === "record" ? "records" : name;
  for (const link of document.querySelectorAll(".nav a")) {
    link.classList.toggle("active", link.dataset.view === navName);
    if (link.dataset.view === navName) link.setAttribute("aria-current", "page");
    else link.removeAttribute("aria-current");
  }
  if (name !== "timeline") stopTimeline();
  const main = $("main");
  const seq = ++renderSeq;
  const mount = el("div", { class: "view", "data-view": name });
  main.replaceChildren(mount);
  try {
    await view(mount, params, () => seq === renderSeq);
  } catch (exc) {
    if (exc instanceof AuthError) return signOut(exc.message);
    if (seq === renderSeq) mount.append(errorBox(exc));
  }
}

function pageHead(title, subtitle, ...extra) {
  return el(
    "div",
    { class: "page-head" },
    el("div", {}, el("h1", { text: title }), subtitle ? el("p", { class: "muted", text: subtitle }) : null),
    ...extra,
  );
}

/** Call a method and render its error in place of the view's content on failure. */
async function load(mount, method, params, live) {
  try {
    return await rpc(method, params);
  } catch (exc) {
    if (exc instanceof AuthError) throw exc;
    if (live()) mount.append(errorBox(exc));
    return null;
  }
}

// -- records --------------------------------------------------------------------------------

const SCOPES = ["identity", "mob", "operator", "realm"];
const STATUSES = ["active", "quarantined", "superseded", "tombstoned"];

function selectField(name, label, options, current) {
  const select = el("select", { name }, el("option", { value: "", text: "Any" }));
  for (const option of options) select.append(el("option", { value: option, text: option, selected: option === current }));
  return el("label", {}, label, select);
}

function textField(name, label, current, placeholder, attrs = {}) {
  return el("label", {}, label, el("input", { name, value: current || "", placeholder, spellcheck: "false", ...attrs }));
}

// The records' text filter: at most this many characters (the gateway refuses more).
const TEXT_MAX_CHARS = 200;

/** A record's title over a one-line preview of its body (none where the gateway withholds it). */
function titleCell(r) {
  const link = el("a", { href: recordHref(r.realm, r.memory_id), text: r.title || r.memory_id });
  const preview = typeof r.body_preview === "string" && r.body_preview ? el("div", { class: "preview", "data-field": "preview", title: r.body_preview, text: r.body_preview }) : null;
  return el("div", { class: "title-block" }, link, preview);
}

async function viewRecords(mount, query, live) {
  const filters = {};
  for (const key of ["text", "realm", "scope", "status", "identity"]) if (query.get(key)) filters[key] = query.get(key);
  // Active records unless asked otherwise ("any": every status, a record's versions side by side).
  const status = filters.status || "active";
  if (status === "any") delete filters.status;
  else filters.status = status;
  const cursor = query.get("cursor");
  const head = pageHead("Records", "Memory records, newest updated first, each with the start of its body. Open one to read it whole.");
  mount.append(head);
  takeFlash(mount);

  const form = el(
    "form",
    { class: "card filters", "aria-label": "Filters" },
    textField("text", "Search", filters.text, "title or body contains…", { type: "search", maxlength: TEXT_MAX_CHARS, class: "search" }),
    textField("realm", "Realm", filters.realm, "all realms"),
    selectField("scope", "Scope", SCOPES, filters.scope),
    el(
      "label",
      {},
      "Status",
      el(
        "select",
        { name: "status" },
        ...[...STATUSES, "any"].map((option) => el("option", { value: option, text: option, selected: option === status })),
      ),
    ),
    textField("identity", "Identity", filters.identity, "any identity"),
    el("button", { type: "submit", class: "primary", text: "Apply" }),
    el("button", { type: "button", text: "Clear", onclick: () => (location.hash = "#/records") }),
  );
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const next = new URLSearchParams();
    for (const [key, value] of new FormData(form)) if (String(value).trim()) next.set(key, String(value).trim());
    location.hash = `#/records?${next}`;
  });
  const purgeMessage = el("div");
  mount.append(form, purgeMessage);

  const limit = Number.parseInt(query.get("limit") || "", 10);
  if (limit > 0) filters.limit = String(limit);
  const params = { ...filters, limit: limit > 0 ? limit : 50 };
  if (cursor) params.cursor = cursor;
  const result = await load(mount, "meta/memory/panel/records", params, live);
  if (!result || !live()) return;
  const rows = result.records || [];
  const purgeable = Boolean(filters.identity) && (await offers(PURGE));
  if (!live()) return;
  if (purgeable) head.append(identityPurgeButton(filters.identity, filters.realm, rows, purgeMessage, () => live() && route()));
  mount.append(
    table(
      [
        { label: "Title", cls: "title-cell", render: titleCell },
        { label: "Scope", render: (r) => scopeLabel(r.scope_kind, r.scope_key) },
        { label: "Status", render: (r) => badge(r.status) },
        { label: "Trust", render: (r) => r.trust },
        { label: "Realm", render: (r) => r.realm },
        { label: "Size", num: true, render: (r) => fmtBytes(r.body_bytes) },
        { label: "Updated", cls: "nowrap", render: (r) => fmtTime(r.updated_at_ms) },
      ],
      rows,
      cursor ? "No more records" : "No records match these filters",
      (r) => ({ "data-memory-id": r.memory_id }),
    ),
  );
  const pager = el("div", { class: "pager" });
  const kept = status === "any" ? { ...filters, status: "any" } : filters;
  if (cursor) {
    const first = new URLSearchParams(kept);
    pager.append(el("a", { href: `#/records?${first}`, text: "First page" }));
  }
  pager.append(el("span", { class: "muted small", text: `${rows.length} shown` }));
  if (result.next_cursor) {
    const next = new URLSearchParams({ ...kept, cursor: result.next_cursor });
    pager.append(el("button", { type: "button", text: "Next page →", onclick: () => (location.hash = `#/records?${next}`) }));
  }
  mount.append(pager);
}

// -- a record's detail ------------------------------------------------------------------------

function statusOf(record) {
  const status = record.status;
  return typeof status === "object" && status !== null ? status : { status };
}

function scopeOf(record) {
  const scope = record.scope || {};
  const key = scope.identity || scope.mob || scope.scope_key || scope.key || "";
  return { kind: scope.scope, key };
}

async function viewRecord(mount, query, live) {
  const id = query.get("id");
  const realm = query.get("realm") || undefined;
  mount.append(el("p", {}, el("a", { href: "#/records", text: "← Records" })));
  takeFlash(mount);
  if (!id) {
    mount.append(el("div", { class: "error", text: "No record named: open one from the records list." }));
    return;
  }
  const result = await load(mount, "meta/memory/panel/record", { memory_id: id, realm }, live);
  if (!result || !live()) return;
  const record = result.record;
  const status = statusOf(record);
  const scope = scopeOf(record);
  // Only an identity's own records are purged by id (a shared scope's go with their identity).
  const purgeable = scope.kind === "identity" && scope.key && (await offers(PURGE));
  if (!live()) return;
  mount.append(pageHead(record.title || record.id, `${scopeLabel(scope.kind, scope.key)} · realm ${result.realm}`, badge(status.status)));

  const facts = el("dl", { class: "facts" });
  const fact = (label, value) => facts.append(el("dt", { text: label }), el("dd", {}, value ?? "—"));
  fact("Memory id", el("span", { class: "mono", text: record.id }));
  fact("Content hash", el("span", { class: "mono", "data-field": "content-hash", text: record.content_hash }));
  fact("Kind", record.kind);
  fact("Trust", record.trust);
  fact("Author", authorLabel(record.provenance?.author));
  if (status.reason || status.quarantine_reason) fact("Quarantine reason", status.reason || status.quarantine_reason);
  fact("Ever quarantined", record.ever_quarantined ? "yes" : "no");
  if (record.supersedes) fact("Supersedes", el("a", { class: "mono", href: recordHref(result.realm, record.supersedes), text: record.supersedes }));
  if (record.derived_from?.length) fact("Derived from", record.derived_from.join(", "));
  if (record.tags?.length) fact("Tags", record.tags.join(", "));
  fact("Created", fmtTime(record.created_at_ms));
  fact("Updated", fmtTime(record.updated_at_ms));
  fact("Size", fmtBytes(record.body_bytes));
  const usage = record.usage || {};
  const times = (n) => (n === 1 ? "once" : `${fmtCount(n)} times`);
  fact("Injected", usage.injected_count ? `${times(usage.injected_count)} · last ${fmtTime(usage.last_injected_at_ms ?? undefined)}` : "never");
  fact("Recalled", usage.explicit_recall_count ? times(usage.explicit_recall_count) : "never");

  const bodyCard = el("div", { class: "card" }, el("pre", { class: "body", "data-field": "body", text: record.body ?? "" }));
  mount.append(el("div", { class: "detail-grid" }, el("div", { class: "card" }, facts), bodyCard));

  if (status.status === "quarantined") {
    mount.append(
      el("h2", { text: "Review" }),
      reviewBox(
        { realm: result.realm, identity: scope.kind === "identity" ? scope.key : null, memory_id: record.id, content_hash: record.content_hash, title: record.title },
        () => {
          if (live()) route();
        },
      ),
    );
  }

  mount.append(el("h2", { text: "Supersede chain" }));
  mount.append(
    table(
      [
        { label: "Relation", render: (r) => r.relation || "—" },
        {
          label: "Title",
          render: (r) =>
            r.memory_id === record.id ? el("strong", { text: r.title || r.memory_id }) : el("a", { href: recordHref(r.realm, r.memory_id), text: r.title || r.memory_id }),
        },
        { label: "Status", render: (r) => badge(r.status) },
        { label: "Memory id", cls: "mono", render: (r) => shortId(r.memory_id) },
        { label: "Updated", cls: "nowrap", render: (r) => fmtTime(r.updated_at_ms) },
      ],
      result.chain || [],
      "No other versions",
    ),
  );

  mount.append(el("h2", { text: "Injection usage" }));
  mount.append(
    table(
      [
        { label: "Identity", render: (r) => r.identity },
        { label: "Session", cls: "mono", render: (r) => r.session_key },
        { label: "Surface", render: (r) => r.surface },
        { label: "At", cls: "nowrap", render: (r) => fmtTime(r.at_ms) },
      ],
      result.injections || [],
      "Never injected into a prompt",
    ),
  );

  if (purgeable) {
    const target = { realm: result.realm, identity: scope.key, memory_id: record.id, title: record.title };
    mount.append(
      el("h2", { text: "Purge" }),
      recordPurgeBox(target, () => {
        location.hash = `#/records?${new URLSearchParams({ realm: target.realm, identity: target.identity })}`;
      }),
    );
  }
}

// -- purge ---------------------------------------------------------------------------------------------

const PURGE = "meta/agent_memory/purge";

function plural(n, one, many = `${one}s`) {
  return `${fmtCount(n)} ${n === 1 ? one : many}`;
}

/** The notice a purge leaves: how many records it erased, and its receipt's id. */
function receiptText(receipt) {
  if (!receipt.receipt_id) return `Nothing to purge: realm ${receipt.realm} does not exist (no receipt).`;
  const what = receipt.memory_ids ? "lineage" : "whole identity";
  const records = plural((receipt.records || []).length, "record");
  return `Purged ${records} of ${receipt.identity} (${what}) in realm ${receipt.realm}. Receipt ${receipt.receipt_id}: ids and content hashes only.`;
}

/** The confirm dialog for a purge of `target` ({realm, identity, memory_id?, title?}; without a
 *  memory_id, everything of the identity): the identity's has its name typed first. */
function confirmPurge(target) {
  const where = target.realm ? `realm ${target.realm}` : "the gateway's default realm";
  const common = { ok: "Erase for good", okClass: "danger", rationale: false };
  if (!target.memory_id) {
    return askConfirm({
      ...common,
      title: `Purge identity ${target.identity}?`,
      text:
        `Everything of ${target.identity} in ${where} is erased for good: every record in its scope, whatever its status, ` +
        "what its agent wrote in shared scopes, what was made from either, and the sessions, injections, proposals and events " +
        "that name them. Only a receipt with ids and content hashes remains: nothing can be restored.",
      typed: target.identity,
    });
  }
  return askConfirm({
    ...common,
    title: "Purge this record?",
    text:
      `“${target.title || target.memory_id}” (${target.memory_id}) of ${target.identity} in ${where} is erased for good, with its ` +
      "whole lineage: its other versions, released successors, quarantined originals and promoted copies. Only a receipt " +
      "with ids and content hashes remains: nothing can be restored.",
  });
}

/** Confirm, then purge `target`; the receipt is flashed and onPurged called, an error shown in `message`. */
function purgeOnClick(button, target, message, onPurged) {
  button.addEventListener("click", async () => {
    const confirmed = await confirmPurge(target);
    if (!confirmed) return;
    button.disabled = true;
    message.replaceChildren();
    const params = { identity: target.identity };
    if (target.realm) params.realm = target.realm;
    if (target.memory_id) params.memory_id = target.memory_id;
    else params.all = true;
    try {
      const receipt = await rpc(PURGE, params);
      flash(receiptText(receipt));
      onPurged(receipt);
    } catch (exc) {
      if (exc instanceof AuthError) return signOut(exc.message);
      message.replaceChildren(errorBox(exc, "Purge"));
    } finally {
      button.disabled = false;
    }
  });
  return button;
}

/** "Purge…" for one record of an identity: its whole lineage. */
function recordPurgeBox(target, onPurged) {
  const message = el("div");
  const button = el("button", { type: "button", class: "danger", text: "Purge…" });
  return el(
    "div",
    { class: "card purge-box", "data-purge": target.memory_id },
    el("p", { text: "Erase this record and its whole lineage for good. Unlike a forget, which tombstones it, a purge leaves no text to restore." }),
    el("div", { class: "actions" }, purgeOnClick(button, target, message, onPurged)),
    message,
  );
}

/** "Purge identity…" over an identity's records: in the realm filtered on, or the one its rows
 *  are in (none listed: the gateway's default). Rows in several realms need a realm filter first. */
function identityPurgeButton(identity, realm, rows, message, onPurged) {
  const button = el("button", { type: "button", class: "danger", "data-purge-identity": identity, text: "Purge identity…" });
  const realms = [...new Set(rows.map((r) => r.realm))];
  if (!realm && realms.length > 1) {
    button.disabled = true;
    button.title = "These records are in several realms: filter by one realm to purge the identity there.";
    return button;
  }
  return purgeOnClick(button, { identity, realm: realm || realms[0] }, message, onPurged);
}

// -- quarantine review ----------------------------------------------------------------------------

const REFUSALS = {
  secret_detected: "The content matches a secret pattern, so it can never be released. Discard it instead.",
  content_mismatch: "The record changed since you read it. Reload it and review the current content.",
  successor_conflict: "Another record already holds this record's successor id; it was not released.",
  gate_pending: "A gated promotion of this record is waiting for approval; decide that first (or wait for it to expire).",
  not_quarantined: "The record is no longer quarantined (it was decided, promoted or forgotten).",
  stale_update: "This is an update whose earlier version is gone (missing, forgotten or replaced). Discard it instead.",
  read_only: "This console is read-only: decisions are refused.",
};

function refusalText(exc, refusals = REFUSALS) {
  const reason = exc.data?.reason;
  let text = refusals[reason] || exc.message;
  if (reason === "gate_pending" && typeof exc.data?.expires_at_ms === "number") text += ` The gate expires ${fmtTime(exc.data.expires_at_ms)}.`;
  return reason ? `Refused (${reason}): ${text}` : `${exc.method} failed: ${text}`;
}

/** The confirm dialog: resolves to {rationale} on confirm, null on cancel. */
function confirmDecision(verdict, target) {
  const release = verdict === "release";
  return askConfirm({
    title: release ? "Release this record?" : "Discard this record?",
    text: release
      ? `“${target.title || target.memory_id}” becomes active memory of ${target.identity}, capped at agent_observed trust.`
      : `“${target.title || target.memory_id}” is tombstoned and never recalled. Nothing is deleted.`,
    hash: target.content_hash,
    ok: release ? "Release" : "Discard",
    okClass: release ? "release" : "danger",
  });
}

// What the open confirm dialog asks to be typed before its button is enabled (null: nothing).
let confirmTyped = null;

/** The confirm dialog with the given texts, bound to a content hash when one is given. With
 *  `typed`, its button stays disabled until that text is typed exactly; `rationale: false` hides
 *  the rationale field (the call takes none). */
function askConfirm({ title, text, hash, ok: okText, okClass, typed = null, rationale = true }) {
  const dialog = $("confirm");
  $("confirm-title").textContent = title;
  $("confirm-text").textContent = text;
  $("confirm-hash").hidden = !hash;
  $("confirm-hash").textContent = hash ? `Bound to content hash ${hash}` : "";
  $("confirm-rationale-field").hidden = !rationale;
  $("confirm-rationale").value = "";
  confirmTyped = typed;
  $("confirm-typed-field").hidden = typed === null;
  $("confirm-typed-name").textContent = typed ?? "";
  $("confirm-typed").value = "";
  const ok = $("confirm-ok");
  ok.textContent = okText;
  ok.className = okClass;
  ok.disabled = typed !== null;
  return new Promise((resolve) => {
    dialog.addEventListener(
      "close",
      () => {
        const confirmed = dialog.returnValue === "ok" && (typed === null || $("confirm-typed").value === typed);
        confirmTyped = null;
        resolve(confirmed ? { rationale: rationale ? $("confirm-rationale").value.trim() : "" } : null);
      },
      { once: true },
    );
    dialog.returnValue = "";
    dialog.showModal();
  });
}

/** The confirm dialog's typed confirmation: its button waits for the exact text, and Enter in the
 *  field confirms once it matches (a form's implicit submission would press Cancel, its first). */
function watchConfirmTyped() {
  const input = $("confirm-typed");
  input.addEventListener("input", () => {
    $("confirm-ok").disabled = confirmTyped !== null && input.value !== confirmTyped;
  });
  input.addEventListener("keydown", (event) => {
    if (event.key !== "Enter") return;
    event.preventDefault();
    if (confirmTyped !== null && input.value === confirmTyped) $("confirm-ok").click();
  });
}

/** Release / Discard for one quarantined record, bound to the hash shown. */
function reviewBox(target, onDecided) {
  const box = el("div", { class: "card review-box", "data-review": target.memory_id });
  const message = el("div");
  box.append(el("div", {}, "Decision bound to content hash ", el("span", { class: "mono", text: target.content_hash })));
  if (!target.identity) {
    box.append(el("p", { class: "muted", text: "Mob-, operator- and realm-scoped quarantine is decided by the memory steward and the gating flow." }));
    return box;
  }
  const decide = async (verdict) => {
    const confirmed = await confirmDecision(verdict, target);
    if (!confirmed) return;
    for (const b of box.querySelectorAll("button")) b.disabled = true;
    message.replaceChildren();
    const params = {
      realm: target.realm,
      identity: target.identity,
      memory_id: target.memory_id,
      verdict,
      expected_content_hash: target.content_hash,
    };
    if (confirmed.rationale) params.rationale = confirmed.rationale;
    try {
      const result = await rpc("meta/memory/quarantine/decide", params);
      const successor = result.successor?.memory_id || result.successor?.id;
      const what = verdict === "release" ? `Released${successor ? ` as ${successor}` : ""}` : "Discarded";
      const replay = String(result.outcome || "").startsWith("already_") ? ` (already decided: ${result.outcome})` : "";
      flash(`${what}: “${target.title || target.memory_id}”${replay}.`);
      onDecided(result);
    } catch (exc) {
      if (exc instanceof AuthError) return signOut(exc.message);
      message.replaceChildren(el("div", { class: "error", role: "alert", text: exc instanceof RpcError ? refusalText(exc) : String(exc.message) }));
      for (const b of box.querySelectorAll("button")) b.disabled = false;
    }
  };
  const release = el("button", { type: "button", class: "release", text: "Release" });
  const discard = el("button", { type: "button", class: "danger", text: "Discard" });
  release.addEventListener("click", () => decide("release"));
  discard.addEventListener("click", () => decide("tombstone"));
  box.append(el("div", { class: "actions" }, release, discard), message);
  return box;
}

let flashText = null;

/** A success notice shown at the top of the next render of the current view. */
function flash(text) {
  flashText = text;
}

function takeFlash(mount) {
  if (flashText) mount.append(el("div", { class: "notice", role: "status", text: flashText }));
  flashText = null;
}

async function viewQuarantine(mount, query, live) {
  mount.append(pageHead("Quarantine", "Writes held for review. Open one to read it, then release or discard it."));
  takeFlash(mount);
  const result = await load(mount, "meta/memory/panel/quarantine", { limit: 100 }, live);
  if (!result || !live()) return;
  const rows = result.records || [];
  const notices = el("div");
  mount.append(notices);
  const columns = [
    { label: "Title", render: (r) => el("a", { href: recordHref(r.realm, r.memory_id), text: r.title || r.memory_id }) },
    { label: "Scope", render: (r) => scopeLabel(r.scope_kind, r.scope_key) },
    { label: "Reason", render: (r) => r.quarantine_reason || "—" },
    { label: "Author", render: (r) => authorLabel(r.author) },
    { label: "Realm", render: (r) => r.realm },
    { label: "Created", cls: "nowrap", render: (r) => fmtTime(r.created_at_ms) },
    { label: "", render: () => el("button", { type: "button", class: "review-toggle", text: "Review" }) },
  ];
  const queue = table(columns, rows, "No quarantined records", (r) => ({ "data-memory-id": r.memory_id, "data-realm": r.realm }));
  mount.append(queue);
  const emptyIfDone = () => {
    const body = queue.querySelector("tbody");
    if (body && !body.querySelector("tr[data-memory-id]")) queue.replaceWith(el("div", { class: "card empty", text: "No quarantined records" }));
  };
  rows.forEach((row, index) => {
    const tr = queue.querySelectorAll("tbody > tr")[index];
    const toggle = tr.querySelector(".review-toggle");
    toggle.addEventListener("click", async () => {
      const open = tr.nextElementSibling?.classList.contains("review-row") ? tr.nextElementSibling : null;
      if (open) {
        open.remove();
        toggle.textContent = "Review";
        return;
      }
      toggle.disabled = true;
      const cell = el("td", { colspan: columns.length });
      const reviewRow = el("tr", { class: "review-row" }, cell);
      tr.after(reviewRow);
      try {
        const detail = await rpc("meta/memory/panel/record", { memory_id: row.memory_id, realm: row.realm });
        const record = detail.record;
        const scope = scopeOf(record);
        cell.append(
          el("pre", { class: "body", "data-field": "body", text: record.body ?? "" }),
          reviewBox(
            { realm: detail.realm, identity: scope.kind === "identity" ? scope.key : null, memory_id: record.id, content_hash: record.content_hash, title: record.title },
            () => {
              notices.replaceChildren(el("div", { class: "notice", role: "status", text: flashText }));
              flashText = null;
              reviewRow.remove();
              tr.remove();
              emptyIfDone();
            },
          ),
        );
        toggle.textContent = "Close";
      } catch (exc) {
        if (exc instanceof AuthError) return signOut(exc.message);
        cell.append(errorBox(exc));
      } finally {
        toggle.disabled = false;
      }
    });
  });

  mount.append(el("h2", { text: "Pending gated promotions" }), el("p", { class: "muted small", text: "Decided through the gating flow (meta/gating/decide), not here." }));
  mount.append(
    table(
      [
        { label: "Pending id", cls: "mono", render: (r) => r.pending_id },
        { label: "Record", render: (r) => el("a", { class: "mono", href: recordHref(r.realm, r.record_id), text: shortId(r.record_id) }) },
        { label: "Target scope", render: (r) => scopeLabel(r.scope_kind, r.scope_key) },
        { label: "Rationale", render: (r) => r.rationale || "—" },
        { label: "Status", render: (r) => badge(r.status, r.status === "pending" ? "warn" : "") },
        { label: "Created", cls: "nowrap", render: (r) => fmtTime(r.created_at_ms) },
      ],
      result.pending_promotions || [],
      "No pending promotions",
    ),
  );
}

// -- realm-level listings ----------------------------------------------------------------------------

async function viewOverview(mount, query, live) {
  mount.append(pageHead("Overview", "Records and body bytes per scope, against the store's floors."));
  const result = await load(mount, "meta/memory/panel/overview", {}, live);
  if (!result || !live()) return;
  const scopes = result.scopes || [];
  const floors = result.floors || {};
  const sum = (key) => scopes.reduce((total, s) => total + (s[key] || 0), 0);
  const pressured = scopes.filter((s) => s.floor_pressure).length;
  const stat = (label, value, tone) => el("div", { class: `card stat${tone ? ` ${tone}` : ""}` }, el("div", { class: "value", text: value }), el("div", { class: "label", text: label }));
  mount.append(
    el(
      "div",
      { class: "stats" },
      stat("Active records", fmtCount(sum("active"))),
      stat("Quarantined", fmtCount(sum("quarantined")), sum("quarantined") > 0 ? "warn" : ""),
      stat("Body bytes", fmtBytes(sum("body_bytes"))),
      stat("Scopes under floor pressure", fmtCount(pressured), pressured > 0 ? "alert" : ""),
      stat("Record floor per scope", fmtCount(floors.records)),
      stat("Byte floor per scope", fmtBytes(floors.bytes)),
    ),
  );
  mount.append(
    table(
      [
        { label: "Realm", render: (s) => s.realm },
        { label: "Scope", render: (s) => scopeLabel(s.scope_kind, s.scope_key) },
        { label: "Active", num: true, render: (s) => fmtCount(s.active) },
        { label: "Quarantined", num: true, render: (s) => fmtCount(s.quarantined) },
        { label: "Superseded", num: true, render: (s) => fmtCount(s.superseded) },
        { label: "Tombstoned", num: true, render: (s) => fmtCount(s.tombstoned) },
        { label: "Body bytes", num: true, render: (s) => fmtBytes(s.body_bytes) },
        { label: "Floor pressure", render: (s) => (s.floor_pressure ? badge("pressure", "bad") : badge("ok", "ok")) },
      ],
      scopes,
      "No memory scopes yet",
    ),
  );
}

function withheldNotice(result) {
  return result.withheld_by_access
    ? el("div", { class: "notice info", text: "Some realms' dream history is withheld: it needs read access to every scope the realm names (and quarantine review while it holds quarantined content)." })
    : null;
}

async function viewDreams(mount, query, live) {
  mount.append(pageHead("Dream runs", "The memory steward's consolidation runs."));
  const runs = await load(mount, "meta/memory/panel/dream_runs", { limit: 50 }, live);
  if (runs && live()) {
    mount.append(withheldNotice(runs) || "");
    mount.append(
      table(
        [
          { label: "Run", cls: "mono", render: (r) => r.run_id },
          { label: "Realm", render: (r) => r.realm },
          { label: "Partition", render: (r) => r.partition || "—" },
          { label: "Started", cls: "nowrap", render: (r) => fmtTime(r.started_at_ms) },
          { label: "Completed", cls: "nowrap", render: (r) => fmtTime(r.completed_at_ms ?? undefined) },
          { label: "Ops committed", num: true, render: (r) => fmtCount(r.ops_committed) },
        ],
        runs.runs || [],
        "No dream runs",
      ),
    );
  }
  mount.append(el("h2", { text: "Dream operations" }), el("p", { class: "muted small", text: "Summaries reconstructed from the audit rows." }));
  const dreams = await load(mount, "meta/memory/panel/dreams", { limit: 50 }, live);
  if (!dreams || !live()) return;
  mount.append(
    table(
      [
        { label: "Run", cls: "mono", render: (r) => r.run_id },
        { label: "Realm", render: (r) => r.realm },
        { label: "Ops", num: true, render: (r) => fmtCount(r.ops) },
        { label: "Kinds", render: (r) => (r.op_kinds && typeof r.op_kinds === "object" ? Object.entries(r.op_kinds).map(([k, v]) => `${k} ${v}`).join(", ") : "—") },
        { label: "Quarantined ops", num: true, render: (r) => fmtCount(r.quarantined_ops) },
        { label: "First op", cls: "nowrap", render: (r) => fmtTime(r.first_op_at_ms) },
        { label: "Last op", cls: "nowrap", render: (r) => fmtTime(r.last_op_at_ms) },
      ],
      dreams.runs || [],
      "No dream operations",
    ),
  );
}

async function simpleList(mount, live, { title, subtitle, method, key, columns, empty, params = { limit: 100 } }) {
  mount.append(pageHead(title, subtitle));
  const result = await load(mount, method, params, live);
  if (!result || !live()) return;
  mount.append(table(columns, result[key] || [], empty));
}

// -- proposals --------------------------------------------------------------------------------------

const PROPOSAL_REFUSALS = {
  content_mismatch: "The proposal is not what you read. Reload it and decide on what it holds now.",
  already_decided: "The proposal was decided already (by the memory steward, or by an operator with the other verdict).",
  gate_pending: "A gated promotion of this proposal is waiting for approval; decide that first (or wait for it to expire).",
  operator_scope_off: "Operator scope is off ([agent_memory] operator_scope): this proposal can only be rejected.",
  unsupported_scope: "Only mob and operator proposals are decided here.",
  read_only: "This console is read-only: decisions are refused.",
};

/** Accept / Reject for one proposal, bound to the hash shown. */
function proposalBox(target, onDecided) {
  const box = el("div", { class: "card review-box", "data-proposal": target.proposal_id });
  const message = el("div");
  const where = scopeLabel(target.scope_kind, target.scope_key);
  box.append(el("div", {}, "Decision bound to content hash ", el("span", { class: "mono", text: target.content_hash })));
  if (target.tainted) {
    box.append(el("p", { class: "muted", text: "Tainted: its session had read untrusted content, so an accept waits on a gated promotion that another reviewer approves (meta/gating/decide)." }));
  }
  const decide = async (verdict) => {
    const accept = verdict === "accept";
    const confirmed = await askConfirm({
      title: accept ? "Accept this proposal?" : "Reject this proposal?",
      text: accept
        ? `“${target.title || target.proposal_id}” becomes shared memory of ${where}, at agent_observed trust${target.tainted ? ", once a second reviewer approves its gate" : ""}.`
        : `“${target.title || target.proposal_id}” is rejected: nothing is written to ${where}.`,
      hash: target.content_hash,
      ok: accept ? "Accept" : "Reject",
      okClass: accept ? "release" : "danger",
    });
    if (!confirmed) return;
    for (const b of box.querySelectorAll("button")) b.disabled = true;
    message.replaceChildren();
    const params = { realm: target.realm, proposal_id: target.proposal_id, verdict, expected_content_hash: target.content_hash };
    if (confirmed.rationale) params.rationale = confirmed.rationale;
    try {
      const result = await rpc("meta/memory/proposals/decide", params);
      const outcome = String(result.outcome || "").replace(/^already_/, "");
      const record = result.record?.memory_id;
      const what =
        outcome === "accepted"
          ? `Accepted into ${where}${record ? ` as ${record}` : ""}`
          : outcome === "gated"
            ? `Accepted: waiting on gated promotion ${result.pending_id || ""}`.trim()
            : "Rejected";
      const replay = String(result.outcome || "").startsWith("already_") ? ` (already decided: ${result.outcome})` : "";
      flash(`${what}: “${target.title || target.proposal_id}”${replay}.`);
      onDecided(result);
    } catch (exc) {
      if (exc instanceof AuthError) return signOut(exc.message);
      message.replaceChildren(el("div", { class: "error", role: "alert", text: exc instanceof RpcError ? refusalText(exc, PROPOSAL_REFUSALS) : String(exc.message) }));
      for (const b of box.querySelectorAll("button")) b.disabled = false;
    }
  };
  const accept = el("button", { type: "button", class: "release", text: "Accept" });
  const reject = el("button", { type: "button", class: "danger", text: "Reject" });
  accept.addEventListener("click", () => decide("accept"));
  reject.addEventListener("click", () => decide("reject"));
  box.append(el("div", { class: "actions" }, accept, reject), message);
  return box;
}

async function viewProposals(mount, query, live) {
  mount.append(pageHead("Proposals", "Mob and operator proposals waiting for a decision (pending, or held by a dream). Open one to read it, then accept or reject it."));
  takeFlash(mount);
  const result = await load(mount, "meta/memory/panel/proposals", { limit: 100 }, live);
  if (!result || !live()) return;
  const rows = result.proposals || [];
  const notices = el("div");
  mount.append(notices);
  const columns = [
    { label: "Title", render: (r) => r.title || "—" },
    { label: "Scope", render: (r) => scopeLabel(r.scope_kind, r.scope_key) },
    { label: "Kind", render: (r) => r.kind },
    { label: "Author", render: (r) => (typeof r.author === "object" ? authorLabel(r.author) : r.author) },
    { label: "Status", render: (r) => badge(r.status, r.status === "pending" ? "warn" : "") },
    { label: "Tainted", render: (r) => (r.tainted ? badge("tainted", "bad") : "no") },
    { label: "Realm", render: (r) => r.realm },
    { label: "Created", cls: "nowrap", render: (r) => fmtTime(r.created_at_ms) },
    { label: "", render: () => el("button", { type: "button", class: "review-toggle", text: "Review" }) },
  ];
  const list = table(columns, rows, "No proposals waiting", (r) => ({ "data-proposal-id": r.proposal_id, "data-realm": r.realm }));
  mount.append(list);
  const emptyIfDone = () => {
    const body = list.querySelector("tbody");
    if (body && !body.querySelector("tr[data-proposal-id]")) list.replaceWith(el("div", { class: "card empty", text: "No proposals waiting" }));
  };
  rows.forEach((row, index) => {
    const tr = list.querySelectorAll("tbody > tr")[index];
    const toggle = tr.querySelector(".review-toggle");
    toggle.addEventListener("click", async () => {
      const open = tr.nextElementSibling?.classList.contains("review-row") ? tr.nextElementSibling : null;
      if (open) {
        open.remove();
        toggle.textContent = "Review";
        return;
      }
      toggle.disabled = true;
      const cell = el("td", { colspan: columns.length });
      const reviewRow = el("tr", { class: "review-row" }, cell);
      tr.after(reviewRow);
      try {
        // The body is read here, with the hash the decision is bound to: the list withholds both.
        const detail = await rpc("meta/memory/panel/proposal", { proposal_id: row.proposal_id, realm: row.realm });
        const proposal = detail.proposal;
        cell.append(
          proposal.description ? el("p", { class: "muted", text: proposal.description }) : "",
          el("pre", { class: "body", "data-field": "body", text: proposal.body ?? "" }),
          proposalBox({ ...proposal, realm: detail.realm }, () => {
            notices.replaceChildren(el("div", { class: "notice", role: "status", text: flashText }));
            flashText = null;
            reviewRow.remove();
            tr.remove();
            emptyIfDone();
          }),
        );
        toggle.textContent = "Close";
      } catch (exc) {
        if (exc instanceof AuthError) return signOut(exc.message);
        cell.append(errorBox(exc));
      } finally {
        toggle.disabled = false;
      }
    });
  });
}

function viewHarvests(mount, query, live) {
  return simpleList(mount, live, {
    title: "Harvests",
    subtitle: "Exit-interview harvests waiting for the steward.",
    method: "meta/memory/panel/harvests",
    key: "harvests",
    empty: "No pending harvests",
    columns: [
      { label: "Identity", render: (r) => r.identity },
      { label: "Session", cls: "mono", render: (r) => r.session_key },
      { label: "Cause", render: (r) => r.cause },
      { label: "Realm", render: (r) => r.realm },
      { label: "Retired", cls: "nowrap", render: (r) => fmtTime(r.retired_at_ms) },
    ],
  });
}

function viewInjections(mount, query, live) {
  return simpleList(mount, live, {
    title: "Injections",
    subtitle: "Recent memory injections into prompts, newest first.",
    method: "meta/memory/panel/injections",
    key: "injections",
    empty: "No injections recorded",
    columns: [
      { label: "Record", render: (r) => el("a", { class: "mono", href: recordHref(r.realm, r.record_id), text: shortId(r.record_id) }) },
      { label: "Identity", render: (r) => r.identity },
      { label: "Session", cls: "mono", render: (r) => r.session_key },
      { label: "Surface", render: (r) => r.surface },
      { label: "Realm", render: (r) => r.realm },
      { label: "At", cls: "nowrap", render: (r) => fmtTime(r.at_ms) },
    ],
  });
}

function viewAudit(mount, query, live) {
  return simpleList(mount, live, {
    title: "Audit verdicts",
    subtitle: "Open usage-audit verdicts from dream runs, awaiting an operator.",
    method: "meta/memory/panel/audit_verdicts",
    key: "verdicts",
    empty: "No open audit verdicts",
    columns: [
      { label: "Record", render: (r) => el("a", { class: "mono", href: recordHref(r.realm, r.record_id), text: shortId(r.record_id) }) },
      { label: "Verdict", render: (r) => badge(r.verdict, r.verdict === "dead_weight" ? "warn" : "") },
      { label: "Rationale", render: (r) => r.rationale || "—" },
      { label: "Run", cls: "mono", render: (r) => r.run_id },
      { label: "Realm", render: (r) => r.realm },
      { label: "Created", cls: "nowrap", render: (r) => fmtTime(r.created_at_ms) },
    ],
  });
}

// -- live timeline ---------------------------------------------------------------------------------

let timelineAbort = null;

function stopTimeline() {
  if (timelineAbort) timelineAbort.abort();
  timelineAbort = null;
}

function summarize(data) {
  if (!data || typeof data !== "object") return "";
  return Object.entries(data)
    .map(([k, v]) => `${k}=${typeof v === "object" && v !== null ? JSON.stringify(v) : v}`)
    .join("  ");
}

/** Parse a text/event-stream body; calls onEvent({id, event, data}) per dispatched event. */
async function readEvents(body, signal, onEvent, onOpen) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  signal.addEventListener("abort", () => reader.cancel().catch(() => {}), { once: true });
  let buffer = "";
  let current = { data: [] };
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value;
    let nl;
    while ((nl = buffer.search(/\r\n|\r|\n/)) >= 0) {
      const line = buffer.slice(0, nl);
      buffer = buffer.slice(nl + (buffer[nl] === "\r" && buffer[nl + 1] === "\n" ? 2 : 1));
      if (line === "") {
        if (current.data.length) onEvent({ id: current.id, event: current.event, data: current.data.join("\n") });
        current = { data: [] };
      } else if (line.startsWith(":")) {
        onOpen();
      } else {
        const colon = line.indexOf(":");
        const field = colon < 0 ? line : line.slice(0, colon);
        const val = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
        if (field === "data") current.data.push(val);
        else if (field === "id") current.id = val;
        else if (field === "event") current.event = val;
      }
    }
  }
}

async function viewTimeline(mount, query, live) {
  stopTimeline();
  const status = el("span", { class: "live", "data-field": "live-status", text: "Connecting…" });
  mount.append(pageHead("Timeline", "Memory lifecycle events as they happen, newest first.", status));
  const errors = el("div");
  mount.append(errors);
  const empty = el("div", { class: "card empty", text: "No events yet" });
  const body = el("tbody");
  const head = el("tr", {}, ["Time", "Event", "Identity", "Details"].map((label) => el("th", { text: label })));
  const wrap = el("div", { class: "card table-wrap" }, el("table", {}, el("thead", {}, head), body));
  wrap.hidden = true;
  mount.append(empty, wrap);

  const seen = new Set();
  // "console-evt-0" replays the whole (empty) window, so nothing slips in before the stream opens.
  let lastId = "console-evt-0";
  const addEvent = (envelope, live) => {
    if (!envelope?.event_id || seen.has(envelope.event_id)) return;
    seen.add(envelope.event_id);
    lastId = envelope.event_id;
    const tr = el(
      "tr",
      { "data-event-id": envelope.event_id, class: live ? "fresh" : undefined },
      el("td", { class: "nowrap", text: fmtTime(envelope.timestamp_ms) }),
      el("td", {}, badge(envelope.event_type, envelope.event_type.includes("quarantine") ? "warn" : "")),
      el("td", { text: envelope.identity }),
      el("td", { class: "data", text: summarize(envelope.data) }),
    );
    body.prepend(tr);
    while (body.children.length > TIMELINE_MAX_ROWS) body.lastElementChild.remove();
    empty.hidden = true;
    wrap.hidden = false;
  };

  // History first: page through the stored window and keep its newest rows.
  let history = [];
  let after;
  for (let page = 0; page < 40; page++) {
    const result = await load(errors, "meta/timeline/query", after ? { after, limit: 500 } : { limit: 500 }, live);
    if (!result) break;
    history = history.concat(result.events || []).slice(-TIMELINE_MAX_ROWS);
    if (!result.next_after) break;
    after = result.next_after;
  }
  if (!live()) return;
  for (const envelope of history) addEvent(envelope, false);
  if (after) lastId = after;

  // Then live: resume after the last id seen, reconnecting with it when the stream ends.
  const controller = new AbortController();
  timelineAbort = controller;
  const setStatus = (text, cls) => {
    status.textContent = text;
    status.className = `live ${cls}`;
  };
  while (!controller.signal.aborted) {
    try {
      const headers = { Accept: "text/event-stream" };
      const token = sessionStorage.getItem(TOKEN_KEY);
      if (token) headers.Authorization = `Bearer ${token}`;
      if (lastId) headers["Last-Event-ID"] = lastId;
      const response = await fetch(STREAM_PATH, { headers, signal: controller.signal, cache: "no-store" });
      if (response.status === 401) return signOut("The gateway refused this console token (invalid_token).");
      if (!response.ok || !response.body) throw new Error(`HTTP ${response.status}`);
      errors.replaceChildren();
      await readEvents(
        response.body,
        controller.signal,
        (message) => {
          try {
            addEvent(JSON.parse(message.data), true);
          } catch {
            // A malformed event is skipped; the next one still renders.
          }
          setStatus("Live", "on");
        },
        () => setStatus("Live", "on"),
      );
    } catch (exc) {
      if (controller.signal.aborted) return;
      errors.replaceChildren(errorBox(exc, "Timeline stream"));
    }
    if (controller.signal.aborted) return;
    setStatus("Reconnecting…", "off");
    await new Promise((resolve) => setTimeout(resolve, RECONNECT_MS));
  }
}

// -- start -------------------------------------------------------------------------------------

function start() {
  $("signin-form").addEventListener("submit", signIn);
  watchConfirmTyped();
  $("signout").addEventListener("click", () => signOut());
  window.addEventListener("hashchange", route);
  if (OPEN) $("signout").hidden = true; // nothing to sign out of
  if (OPEN || sessionStorage.getItem(TOKEN_KEY)) {
    $("app").hidden = false;
    if (!location.hash || location.hash === "#") location.hash = "#/records";
    else route();
  } else {
    showSignin();
  }
}

start();
