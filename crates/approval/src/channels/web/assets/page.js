"use strict";
const csrf = document.querySelector('meta[name="csrf-token"]').content;
// A card's buttons arm only after it has been on screen this long, so a
// card that moves under the pointer cannot take a click meant for another.
const ARM_MS = 800;
// A decided card stays in place at least this long (and while the pointer
// is over the list), so the next card never slides under a second click.
const KEEP_DECIDED_MS = 3000;
// Longer strings show their start and "N more characters / show all".
const SHOW_CHARS = 2000;
const cards = new Map(); // id → {node, approval, decidedAt}
let skew = 0;

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (key === "class") node.className = value; else node.setAttribute(key, value);
  }
  for (const child of children) node.append(child);
  return node;
}

function left(approval) {
  const ms = approval.expiresMs - (Date.now() + skew);
  if (ms <= 0) return "expiring";
  const s = Math.ceil(ms / 1000);
  return s >= 60 ? `${Math.floor(s / 60)} min ${String(s % 60).padStart(2, "0")} s left` : `${s} s left`;
}

function when(ms) {
  return new Date(ms).toLocaleTimeString();
}

// Characters that move, hide or reorder text are drawn as visible escapes;
// inside quoted strings, quotes and backslashes are escaped as in JSON, so
// no value can pose as more members.
const HIDDEN = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u00ad\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]|["\\]/g;

function visible(text, quoted) {
  const out = [];
  let at = 0;
  for (const match of text.matchAll(HIDDEN)) {
    const c = match[0];
    if (!quoted && (c === "\"" || c === "\\")) continue;
    if (match.index > at) out.push(text.slice(at, match.index));
    if (c === "\"" || c === "\\") {
      out.push(el("span", { class: "q" }, `\\${c}`));
    } else {
      const code = c.codePointAt(0).toString(16).padStart(4, "0");
      out.push(el("span", { class: "esc", title: "an invisible or control character" }, `\\u${code}`));
    }
    at = match.index + c.length;
  }
  if (at < text.length) out.push(text.slice(at));
  return out;
}

// A string value: its lines as lines, long text cut with "show all".
function plain(text) {
  const span = el("span", { class: "str" });
  if (text.length <= SHOW_CHARS) {
    span.append(...visible(text, true));
    return span;
  }
  const rest = text.length - SHOW_CHARS;
  const more = el("button", { type: "button", class: "more" }, `${rest} more characters / show all`);
  more.addEventListener("click", () => { span.replaceChildren(...visible(text, true)); });
  span.append(...visible(text.slice(0, SHOW_CHARS), true), "… ", more);
  return span;
}

function secret(part) {
  const length = [...part.secret].length;
  const marker = el("button", { type: "button", class: "secret", "aria-label": `masked ${part.kind}, ${length} characters: show it` },
    `[${part.kind}: ${length} chars, show]`);
  marker.addEventListener("click", () => marker.replaceWith(el("span", { class: "revealed", title: `${part.kind}, revealed` }, ...visible(part.secret, true))));
  return marker;
}

// The arguments as an indented tree; strings in quotes, with their lines.
function tree(value, pointer, masked, depth) {
  const pad = "  ".repeat(depth);
  if (typeof value === "string") {
    const parts = masked.get(pointer);
    const body = parts ? parts.map((p) => (p.secret !== undefined ? secret(p) : plain(p.text))) : [plain(value)];
    return [el("span", { class: "q" }, "\""), ...body, el("span", { class: "q" }, "\"")];
  }
  if (Array.isArray(value)) {
    if (!value.length) return ["[]"];
    const out = ["[\n"];
    value.forEach((item, i) => out.push(pad + "  ", ...tree(item, `${pointer}/${i}`, masked, depth + 1), i + 1 < value.length ? ",\n" : "\n"));
    out.push(pad + "]");
    return out;
  }
  if (value && typeof value === "object") {
    const keys = Object.keys(value);
    if (!keys.length) return ["{}"];
    const out = ["{\n"];
    keys.forEach((key, i) => {
      const escaped = key.replace(/~/g, "~0").replace(/\//g, "~1");
      out.push(pad + "  ", el("span", { class: "key" }, "\"", ...visible(key, true), "\""), ": ",
        ...tree(value[key], `${pointer}/${escaped}`, masked, depth + 1), i + 1 < keys.length ? ",\n" : "\n");
    });
    out.push(pad + "}");
    return out;
  }
  return [JSON.stringify(value)];
}

function argumentsBlock(approval) {
  const masked = new Map((approval.masked || []).map((m) => [m.pointer, m.parts]));
  return el("pre", { class: "arguments", "aria-label": "Arguments" }, ...tree(approval.arguments, "", masked, 0));
}

function maskNotice(approval) {
  const count = (approval.masked || []).reduce((n, m) => n + m.parts.filter((p) => p.secret !== undefined).length, 0);
  if (!count) return [];
  const all = el("button", { type: "button", class: "more" }, "show all");
  const notice = el("div", { class: "masked-notice", role: "note" },
    `${count} secret-like ${count === 1 ? "span is" : "spans are"} masked below; everything else is shown exactly as it will run. `, all);
  all.addEventListener("click", () => notice.parentElement.querySelectorAll("button.secret").forEach((b) => b.click()));
  return [notice];
}

// Every button that decides: the actions row and the widened approval.
const DECIDING = ".actions button, .widen button";

function buttonsOf(id) {
  const entry = cards.get(id);
  return entry ? [...entry.node.querySelectorAll(DECIDING)] : [];
}

async function decide(approval, action, reason, patterns) {
  const entry = cards.get(approval.id);
  if (!entry || entry.pressed || !entry.armed) return;
  // One press decides: every button of this card is off before anything else.
  entry.pressed = true;
  buttonsOf(approval.id).forEach((b) => (b.disabled = true));
  const status = document.getElementById("status");
  const response = await fetch(`/api/approvals/${approval.id}/${action}`, {
    method: "POST",
    headers: { "Content-Type": "application/json", "X-CSRF-Token": csrf },
    body: JSON.stringify({ reason: reason || null, digest: approval.argsDigest, patterns: patterns || {} }),
    credentials: "same-origin",
  });
  const body = await response.json().catch(() => ({}));
  if (response.ok) {
    status.textContent = `${approval.server}/${approval.tool} ${body.approval.state}.`;
    settle(approval.id, body.approval);
  } else {
    status.textContent = `Could not ${action}: ${body.error || response.status}`;
  }
  await refresh();
}

// Shows a card as decided, in place; it leaves later (see sweep).
function settle(id, approval) {
  const entry = cards.get(id);
  if (!entry || entry.decidedAt) return;
  entry.decidedAt = Date.now();
  entry.pressed = true;
  const state = approval ? approval.state : "decided";
  entry.node.classList.remove("pending");
  entry.node.classList.add("decided", state);
  buttonsOf(id).forEach((b) => (b.disabled = true));
  const done = entry.node.querySelector(".outcome");
  const word = state === "executed" ? "approved" : state;
  done.textContent = `${word[0].toUpperCase()}${word.slice(1)}${state === "approved" || state === "executed" ? " — undo not possible" : ""}.`;
}

// Decided cards leave once they have been shown long enough and the
// pointer is not over the list (so nothing moves under it).
function sweep() {
  const list = document.getElementById("pending");
  if (list.matches(":hover")) return;
  for (const [id, entry] of cards) {
    if (entry.decidedAt && Date.now() - entry.decidedAt >= KEEP_DECIDED_MS) {
      entry.node.remove();
      cards.delete(id);
    }
  }
  empty();
}

function empty() {
  const list = document.getElementById("pending");
  const none = list.querySelector(".empty");
  if (cards.size && none) none.remove();
  if (!cards.size && !none) list.append(el("p", { class: "empty" }, "Nothing is waiting for approval."));
}

const watcher = "IntersectionObserver" in window ? new IntersectionObserver((seen) => {
  for (const item of seen) {
    const entry = cards.get(item.target.dataset.id);
    if (!entry) continue;
    clearTimeout(entry.timer);
    if (item.isIntersecting && !entry.armed) entry.timer = setTimeout(() => arm(entry), ARM_MS);
  }
}) : null;

function arm(entry) {
  entry.armed = true;
  entry.node.classList.add("armed");
  if (!entry.pressed) entry.node.querySelectorAll(DECIDING).forEach((b) => (b.disabled = false));
}

// "Approve for this session" with string arguments widened to patterns the
// person writes: each starts as the pattern of its exact value; only the
// edited ones are sent, and the call shown must match what is written.
function widen(approval) {
  const editable = approval.sessionEditable || [];
  if (!editable.length) return [];
  const inputs = editable.map(({ name, pattern }) => {
    const input = el("input", { type: "text", class: "pattern", "data-name": name, spellcheck: "false", "aria-label": `Pattern for ${name}` });
    input.value = pattern;
    input.dataset.exact = pattern;
    return el("label", {}, el("span", { class: "mono" }, ...visible(name)), input);
  });
  const grant = el("button", { class: "session-pattern", type: "button", disabled: "" }, "Approve for this session with these patterns");
  grant.addEventListener("click", () => {
    const patterns = {};
    for (const input of grant.parentElement.querySelectorAll("input.pattern")) {
      if (input.value !== input.dataset.exact) patterns[input.dataset.name] = input.value;
    }
    decide(approval, "approve-session", null, patterns);
  });
  return [el("details", { class: "widen" },
    el("summary", {}, "Widen “approve for this session”…"),
    el("p", {}, "Later calls must have these values exactly, unless you edit one into a pattern: ",
      el("code", {}, "*"), " matches any text, ", el("code", {}, "?"), " one character (",
      el("code", {}, "\\"), " escapes). The call above must match what you write."),
    ...inputs,
    grant)];
}

function card(approval) {
  const reason = el("input", { type: "text", class: "reason", placeholder: "Reason (optional)", "aria-label": "Reason for denying" });
  const approve = el("button", { class: "approve", type: "button", disabled: "" }, "Approve");
  approve.addEventListener("click", () => decide(approval, "approve"));
  const scope = approval.sessionScope || `${approval.server}/${approval.tool} in this session`;
  const session = el("button", { class: "session", type: "button", disabled: "", title: `Also approve ${scope}` }, "Approve for this session");
  session.addEventListener("click", () => decide(approval, "approve-session"));
  const deny = el("button", { class: "deny", type: "button", disabled: "" }, "Deny");
  deny.addEventListener("click", () => decide(approval, "deny", reason.value));
  return el(
    "article",
    { class: "card pending", "data-id": approval.id, "aria-label": `${approval.server} ${approval.tool}` },
    el("div", { class: "top" },
      el("span", { class: "tool" }, ...visible(`${approval.server} / ${approval.tool}`)),
      el("span", { class: "mono" }, approval.id.slice(0, 8)),
      el("span", { class: "left", "data-expires": approval.expiresMs }, left(approval))),
    el("div", { class: "rule" }, "Rule ", el("b", {}, ...visible(approval.rule)), ": ", ...visible(approval.reason)),
    el("div", { class: "meta" },
      el("span", {}, ...visible(`session ${approval.session}`)),
      el("span", {}, ...visible(approval.client || "unknown client")),
      ...(approval.principal ? [el("span", {}, ...visible(`token ${approval.principal}`))] : []),
      el("span", {}, `asked ${when(approval.createdMs)}`),
      el("span", { class: "mono", title: approval.argsDigest }, `sha256 ${approval.argsDigest.slice(0, 12)}`)),
    ...maskNotice(approval),
    argumentsBlock(approval),
    el("div", { class: "actions" }, approve, session, deny, reason),
    el("div", { class: "outcome", role: "status" }),
    el("div", { class: "hint" }, "“Approve for this session” also approves ", el("b", { class: "scope" }, ...visible(scope)), ", until revoked."),
    ...widen(approval),
  );
}

// Cards are added and settled one by one; a card never re-renders, so
// what a person typed or revealed stays, and nothing moves above it.
function renderPending(pending, recent) {
  const list = document.getElementById("pending");
  const live = new Set(pending.map((a) => a.id));
  for (const approval of pending) {
    if (cards.has(approval.id)) continue;
    const node = card(approval);
    const entry = { node, approval, armed: false, pressed: false, decidedAt: 0 };
    cards.set(approval.id, entry);
    list.append(node);
    if (watcher) watcher.observe(node); else entry.timer = setTimeout(() => arm(entry), ARM_MS);
  }
  for (const [id, entry] of cards) {
    if (!live.has(id) && !entry.decidedAt) settle(id, recent.find((a) => a.id === id));
  }
  empty();
}

function render(data) {
  renderPending(data.pending, data.recent);
  const rows = data.recent.map((a) => {
    const d = a.decided || {};
    return el("tr", {},
      el("td", {}, d.atMs ? when(d.atMs) : ""),
      el("td", { class: `state ${a.state}` }, a.state),
      el("td", { class: "mono" }, ...visible(`${a.server}/${a.tool}`)),
      el("td", {}, ...visible(a.rule)),
      el("td", {}, ...visible(`${d.by || ""}${d.channel ? ` (${d.channel})` : ""}${d.note ? `: ${d.note}` : ""}`)));
  });
  document.getElementById("history").replaceChildren(...(rows.length ? rows : [el("tr", {}, el("td", { colspan: "5", class: "empty" }, "No decisions yet."))]));
  const grants = (data.grants || []).map((grant) => {
    const button = el("button", { type: "button", "aria-label": `Revoke ${grant.scope}` }, "Revoke");
    button.addEventListener("click", () => revoke(grant));
    return el("li", { class: "grant" }, el("span", {}, ...visible(grant.scope), el("span", { class: "by" }, ...visible(` (by ${grant.by})`))), button);
  });
  document.getElementById("grants").replaceChildren(...(grants.length ? grants : [el("li", { class: "empty" }, "No calls are approved for a whole session.")]));
  document.title = data.pending.length ? `(${data.pending.length}) Warden approvals` : "Warden approvals";
}

async function revoke(grant) {
  const response = await fetch(`/api/grants/${grant.id}/revoke`, {
    method: "POST",
    headers: { "X-CSRF-Token": csrf },
    credentials: "same-origin",
  });
  document.getElementById("status").textContent = response.ok ? `Revoked: ${grant.scope}.` : "Could not revoke.";
  await refresh();
}

let refreshing = null;
async function refresh() {
  // One refresh at a time; a change during one asks for one more.
  if (refreshing) { refreshing.again = true; return refreshing.done; }
  const state = { again: false };
  state.done = (async () => {
    do {
      state.again = false;
      const response = await fetch("/api/approvals", { credentials: "same-origin" });
      if (response.status === 401) { location.reload(); return; }
      const data = await response.json();
      skew = data.nowMs - Date.now();
      render(data);
    } while (state.again);
  })().finally(() => { refreshing = null; });
  refreshing = state;
  return state.done;
}

function live() {
  const events = new EventSource("/api/events");
  const dot = document.getElementById("dot");
  const text = document.getElementById("livetext");
  events.onopen = () => { dot.classList.add("on"); text.textContent = "live"; refresh(); };
  events.onmessage = () => refresh();
  events.onerror = () => { dot.classList.remove("on"); text.textContent = "reconnecting…"; };
}

setInterval(() => {
  for (const node of document.querySelectorAll("[data-expires]")) {
    node.textContent = left({ expiresMs: Number(node.dataset.expires) });
  }
  sweep();
}, 1000);
// Other Wardens on this config send no events here: look again now and then.
setInterval(() => refresh(), 3000);
refresh();
live();
