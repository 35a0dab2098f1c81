"use strict";
const csrf = document.querySelector('meta[name="csrf-token"]').content;
let pending = [];
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

async function decide(approval, action, reason) {
  const status = document.getElementById("status");
  const buttons = document.querySelectorAll(`[data-id="${approval.id}"] button`);
  buttons.forEach((b) => (b.disabled = true));
  const response = await fetch(`/api/approvals/${approval.id}/${action}`, {
    method: "POST",
    headers: { "Content-Type": "application/json", "X-CSRF-Token": csrf },
    body: JSON.stringify({ reason: reason || null }),
    credentials: "same-origin",
  });
  const body = await response.json().catch(() => ({}));
  status.textContent = response.ok
    ? `${approval.server}/${approval.tool} ${body.approval.state}.`
    : `Could not ${action}: ${body.error || response.status}`;
  await refresh();
}

function likeThis(approval) {
  const parts = [];
  for (const id of approval.identifiers || []) {
    if (id.kind === "path") parts.push(`paths within ${id.value.replace(/\/[^/]*$/, "") || "/"}`);
    else { try { parts.push(`URLs on ${new URL(id.value).hostname}`); } catch (_) { parts.push(id.value); } }
  }
  return `${approval.server}/${approval.tool} in session ${approval.session} with ${parts.length ? [...new Set(parts)].join(" and ") : "any arguments"}`;
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

function card(approval) {
  const reason = el("input", { type: "text", placeholder: "Reason (optional)", "aria-label": "Reason for denying" });
  const approve = el("button", { class: "approve", type: "button" }, "Approve");
  approve.addEventListener("click", () => decide(approval, "approve"));
  const session = el("button", { class: "session", type: "button", title: `Also approve ${likeThis(approval)}` }, "Approve for this session");
  session.addEventListener("click", () => decide(approval, "approve-session"));
  const deny = el("button", { class: "deny", type: "button" }, "Deny");
  deny.addEventListener("click", () => decide(approval, "deny", reason.value));
  return el(
    "article",
    { class: "card pending", "data-id": approval.id, "aria-label": `${approval.server} ${approval.tool}` },
    el("div", { class: "top" },
      el("span", { class: "tool" }, `${approval.server} / ${approval.tool}`),
      el("span", { class: "mono" }, approval.id.slice(0, 8)),
      el("span", { class: "left", "data-expires": approval.expiresMs }, left(approval))),
    el("div", { class: "rule" }, "Rule ", el("b", {}, approval.rule), ": ", approval.reason),
    el("div", { class: "meta" },
      el("span", {}, `session ${approval.session}`),
      el("span", {}, approval.client || "unknown client"),
      ...(approval.principal ? [el("span", {}, `token ${approval.principal}`)] : []),
      el("span", {}, `asked ${when(approval.createdMs)}`),
      el("span", { class: "mono", title: approval.argsDigest }, `sha256 ${approval.argsDigest.slice(0, 12)}`)),
    el("pre", { class: "arguments", "aria-label": "Arguments" }, JSON.stringify(approval.arguments, null, 2)),
    el("div", { class: "actions" }, approve, session, deny, reason),
    el("div", { class: "hint" }, `“Approve for this session” also approves ${likeThis(approval)}, until revoked.`),
  );
}

function render(data) {
  pending = data.pending;
  const list = document.getElementById("pending");
  list.replaceChildren(...(pending.length ? pending.map(card) : [el("p", { class: "empty" }, "Nothing is waiting for approval.")]));
  const rows = data.recent.map((a) => {
    const d = a.decided || {};
    return el("tr", {},
      el("td", {}, d.atMs ? when(d.atMs) : ""),
      el("td", { class: `state ${a.state}` }, a.state),
      el("td", { class: "mono" }, `${a.server}/${a.tool}`),
      el("td", {}, a.rule),
      el("td", {}, `${d.by || ""}${d.channel ? ` (${d.channel})` : ""}${d.note ? `: ${d.note}` : ""}`));
  });
  document.getElementById("history").replaceChildren(...(rows.length ? rows : [el("tr", {}, el("td", { colspan: "5", class: "empty" }, "No decisions yet."))]));
  const grants = (data.grants || []).map((grant) => {
    const button = el("button", { type: "button", "aria-label": `Revoke ${grant.scope}` }, "Revoke");
    button.addEventListener("click", () => revoke(grant));
    return el("li", { class: "grant" }, el("span", {}, grant.scope, el("span", { class: "by" }, ` (by ${grant.by})`)), button);
  });
  document.getElementById("grants").replaceChildren(...(grants.length ? grants : [el("li", { class: "empty" }, "No calls are approved for a whole session.")]));
  document.title = pending.length ? `(${pending.length}) Warden approvals` : "Warden approvals";
}

async function refresh() {
  const response = await fetch("/api/approvals", { credentials: "same-origin" });
  if (response.status === 401) { location.reload(); return; }
  const data = await response.json();
  skew = data.nowMs - Date.now();
  render(data);
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
}, 1000);
refresh();
live();
