// The dashboard: the status arrives over SSE every two seconds; the audit
// trail is searched on demand. Everything a server or client named is
// written as text, never as HTML.
"use strict";

const $ = (selector) => document.querySelector(selector);
let status = null;

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (key === "class") node.className = value;
    else node.setAttribute(key, value);
  }
  for (const child of children) {
    if (child === null || child === undefined) continue;
    node.append(child instanceof Node ? child : String(child));
  }
  return node;
}

function rows(tbody, items, empty, columns, row) {
  const body = $(tbody);
  body.replaceChildren();
  if (!items.length) {
    body.append(el("tr", {}, el("td", { colspan: columns, class: "empty-row" }, empty)));
    return;
  }
  for (const item of items) body.append(...[].concat(row(item)));
}

function ms(value) {
  if (value >= 1000) return (value / 1000).toFixed(2) + " s";
  if (value >= 10) return value.toFixed(0) + " ms";
  return value.toFixed(1) + " ms";
}

function rate(value) {
  return value >= 10 ? value.toFixed(0) : value >= 1 ? value.toFixed(1) : value.toFixed(2);
}

function figure(label, value) {
  return el("div", {}, el("dt", {}, label), el("dd", {}, value));
}

function render() {
  if (!status || !status.servers) return;
  const servers = status.servers;
  const ready = servers.filter((s) => s.state === "ready").length;
  const pending = status.approvalsPending || 0;
  $("#figures").replaceChildren(
    figure("Requests / s", rate(status.rates.requestsPerSecond)),
    figure("Tool calls / s", rate(status.rates.callsPerSecond)),
    figure("Sessions", status.clients.length),
    figure("Servers ready", `${ready} of ${servers.length}`),
    figure("Approvals waiting", pending ? el("a", { href: "/" }, pending) : "0"),
  );

  rows("#servers tbody", servers, "No servers configured.", 5, (server) => {
    const state = el("span", { class: "badge " + server.state }, server.state);
    const cell = el("td", {}, state);
    if (server.reason) {
      cell.append(el("details", {}, el("summary", {}, "why"), el("pre", {}, server.reason)));
    }
    const sandbox = server.sandbox || "—";
    const sandboxCell = el("td", { class: sandbox.startsWith("UNSANDBOXED") ? "unsandboxed mono" : "mono" }, sandbox);
    return el("tr", {}, el("td", { class: "mono" }, server.name), cell,
      el("td", { class: "num" }, server.connections), el("td", { class: "num" }, server.restarts), sandboxCell);
  });

  rows("#clients tbody", status.clients, "No client is connected.", 4, (client) =>
    el("tr", {}, el("td", { class: "mono" }, client.client || "(not initialized)"), el("td", {}, client.front),
      el("td", {}, client.protocolVersion || "—"), el("td", {}, client.principal || "—")));

  const name = document.querySelector("input[name=window]:checked").value;
  const chosen = status.tools[name] || { tools: [], spanSecs: 0 };
  rows("#tools tbody", chosen.tools, "No tool calls in this window.", 7, (tool) =>
    el("tr", {}, el("td", { class: "mono" }, tool.tool), el("td", { class: "mono" }, tool.server),
      el("td", { class: "num" }, tool.calls),
      el("td", { class: "num" + (tool.errors ? " unsandboxed" : "") }, (tool.errorRate * 100).toFixed(1) + "%"),
      el("td", { class: "num" }, ms(tool.p50Ms)), el("td", { class: "num" }, ms(tool.p95Ms)),
      el("td", { class: "num" }, ms(tool.p99Ms))));
  const span = chosen.spanSecs;
  $("#tools-span").textContent = `Over the last ${span < 120 ? span + " s" : Math.round(span / 60) + " min"}; times from the client's request to Warden's answer.`;

  const security = status.security;
  const refusals = security.policy.concat(security.limits);
  rows("#refusals tbody", refusals, "Nothing denied or escalated.", 3, (row) =>
    el("tr", {}, el("td", {}, el("span", { class: "verdict " + row.decision }, row.decision)),
      el("td", { class: "mono" }, row.rule || "—"), el("td", { class: "num" }, row.count)));
  const guarded = [].concat(
    security.sandbox.map((row) => ["sandbox: " + row.kind, row.server, row.count]),
    security.pinDrift.map((row) => ["pin drift", row.server, row.count]),
    security.approvals.map((row) => ["approval " + row.outcome, row.channel, row.count]),
  );
  rows("#guarded tbody", guarded, "No sandbox refusal, drift or approval.", 3, ([what, where, count]) =>
    el("tr", {}, el("td", {}, what), el("td", { class: "mono" }, where), el("td", { class: "num" }, count)));
}

function live(on, text) {
  $("#dot").classList.toggle("on", on);
  $("#livetext").textContent = text;
}

function listen() {
  const source = new EventSource("/api/status/events");
  source.addEventListener("status", (event) => {
    status = JSON.parse(event.data);
    live(true, "live");
    render();
  });
  source.onerror = () => live(false, "reconnecting…");
}

// The audit trail.
function auditRow(record) {
  const decision = record.decision || {};
  const client = [record.principal, record.client].filter(Boolean).join(" · ") || "—";
  const call = `${record.server} / ${record.name}`;
  const expand = el("button", { type: "button", class: "expand", "aria-expanded": "false" }, record.time);
  const row = el("tr", { class: "record" },
    el("td", { class: "mono" }, expand),
    el("td", {}, el("span", { class: "verdict " + decision.verdict }, decision.verdict)),
    el("td", { class: "mono" }, call), el("td", { class: "mono" }, decision.rule || "—"),
    el("td", {}, client), el("td", {}, record.outcome + (record.outcomeDetail ? ": " + record.outcomeDetail : "")));
  const shown = {
    arguments: record.arguments, result: record.result, reason: decision.reason,
    approval: record.approval, session: record.session, method: record.method, seq: record.seq,
    durationMs: record.durationMs,
  };
  const detail = el("tr", { class: "detail", hidden: "" }, el("td", { colspan: 6 }, el("pre", {}, JSON.stringify(shown, null, 2))));
  const toggle = () => {
    const open = detail.hidden;
    detail.hidden = !open;
    expand.setAttribute("aria-expanded", String(open));
  };
  row.addEventListener("click", toggle);
  return [row, detail];
}

async function search(event) {
  if (event) event.preventDefault();
  const params = new URLSearchParams();
  for (const [key, value] of new FormData($("#audit-form"))) if (value) params.append(key, value);
  const note = $("#audit-status");
  note.textContent = "searching…";
  const response = await fetch("/api/audit?" + params.toString());
  const answer = await response.json().catch(() => ({}));
  if (!response.ok) {
    note.textContent = answer.error || `the search failed (${response.status})`;
    rows("#audit tbody", [], "—", 6, () => []);
    return;
  }
  const records = answer.records.slice().reverse();
  note.textContent = `${records.length} record${records.length === 1 ? "" : "s"}, newest first${records.length >= answer.limit ? ` (the most recent ${answer.limit})` : ""}. Select one for its arguments and result.`;
  rows("#audit tbody", records, "No record matches.", 6, auditRow);
}

async function verify() {
  const chain = $("#chain");
  chain.className = "chain";
  chain.textContent = "checking the chain…";
  const response = await fetch("/api/audit/verify");
  const answer = await response.json().catch(() => ({}));
  if (!answer.configured) {
    chain.textContent = "no audit log is configured";
  } else if (answer.intact) {
    chain.className = "chain intact";
    chain.textContent = `hash chain intact (${answer.records} records)`;
  } else {
    chain.className = "chain broken";
    chain.textContent = answer.brokenAt
      ? `hash chain BROKEN at line ${answer.brokenAt.line}: ${answer.brokenAt.reason}`
      : `cannot check the chain: ${answer.error}`;
  }
}

$("#window").addEventListener("change", render);
$("#audit-form").addEventListener("submit", search);
$("#verify").addEventListener("click", verify);
listen();
search();
verify();
