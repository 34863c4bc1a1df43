// gtrain web console: renders the documents the server streams (server-sent
// events) into the page's tables and charts. No framework, no build step.
"use strict";

const body = document.body.dataset;
const $ = (sel) => document.querySelector(sel);

// el builds an element: el("td", {class: "num"}, "12").
function el(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v !== undefined && v !== null && v !== false) e.setAttribute(k, v === true ? "" : v);
  }
  for (const k of kids) e.append(k instanceof Node ? k : String(k ?? ""));
  return e;
}

function fmt(x, digits = 4) {
  if (x === null || x === undefined) return "–";
  if (Math.abs(x) >= 1e5 || (x !== 0 && Math.abs(x) < 1e-3)) return x.toExponential(2);
  return Number(x.toPrecision(digits)).toString();
}

function bytes(n) {
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) { n /= 1024; i++; }
  return `${Number(n.toFixed(1))} ${units[i]}`;
}

function stateCell(state) {
  return el("span", {class: `state s-${state}`}, state || "–");
}

function announce(msg) { $("#live").textContent = msg; }

function showProblem(p) {
  const box = $("#problem");
  if (!p || !p.message) { box.hidden = true; return; }
  if (p.code === "Unauthenticated") { location.href = "/login?next=" + encodeURIComponent(location.pathname); return; }
  box.textContent = p.message;
  box.hidden = false;
}

// stream opens the page's event stream and dispatches its events.
function stream(url, handlers) {
  const es = new EventSource(url);
  for (const [name, fn] of Object.entries(handlers)) {
    es.addEventListener(name, (e) => fn(JSON.parse(e.data)));
  }
  es.addEventListener("problem", (e) => showProblem(JSON.parse(e.data)));
  // The server ends a stream that cannot go on (not allowed, no such job)
  // or has nothing more to say (a finished log): no reconnecting.
  es.addEventListener("fatal", (e) => { es.close(); showProblem(JSON.parse(e.data)); });
  es.addEventListener("end", () => es.close());
  es.onerror = () => {
    if (es.readyState === EventSource.CLOSED) showProblem({message: "Disconnected from the agent: reload the page."});
  };
  return es;
}

// post sends a button's request with the session's CSRF token.
async function post(url, form) {
  const res = await fetch(url, {method: "POST", headers: {"X-CSRF-Token": body.csrf}, body: form || new FormData()});
  let out;
  try { out = await res.json(); } catch { out = {ok: false, message: `HTTP ${res.status}`}; }
  return out;
}

function fillBody(table, rows) {
  const tb = table.tBodies[0];
  tb.replaceChildren(...rows);
}

// ---- cluster ----
function clusterPage() {
  const admin = body.role === "admin";
  stream("/stream/nodes", {
    nodes(rows) {
      const down = rows.filter((r) => r.state === "down").length;
      const drain = rows.filter((r) => r.state === "draining").length;
      const live = rows.filter((r) => r.state !== "down");
      const cpu = live.reduce((s, r) => s + r.cpu, 0);
      const cpuFree = rows.filter((r) => r.state === "ready").reduce((s, r) => s + Math.max(0, r.cpu - r.cpu_used), 0);
      $("#summary").textContent = `${rows.length} nodes: ${rows.length - down - drain} ready, ${drain} draining, ${down} down; ${fmt(cpu)} CPUs on live nodes, ${fmt(cpuFree)} free on ready ones.`;
      fillBody($("#nodes"), rows.map((r) => {
        const tr = el("tr", {},
          el("th", {scope: "row"}, r.name), el("td", {}, stateCell(r.state)), el("td", {}, r.addr || "–"),
          el("td", {class: "num"}, `${fmt(r.cpu_used)} / ${fmt(r.cpu)}`), el("td", {class: "num"}, `${bytes(r.memory_used)} / ${bytes(r.memory)}`),
          el("td", {class: "num"}, `${r.gpus_used} / ${r.gpus}`),
          el("td", {}, Object.entries(r.labels || {}).map(([k, v]) => `${k}=${v}`).join(", ") || "–"),
          el("td", {}, r.roles.length ? `${r.roles.length}: ${r.roles.join(", ")}` : "–"));
        if (admin) {
          const drained = r.state === "draining";
          const b = el("button", {type: "button", class: "plain", "aria-label": `${drained ? "Undrain" : "Drain"} node ${r.name}`}, drained ? "Undrain" : "Drain");
          b.disabled = r.state === "down";
          b.onclick = async () => {
            const out = await post(`/nodes/${encodeURIComponent(r.name)}/${drained ? "undrain" : "drain"}`);
            announce(out.message);
            if (!out.ok) showProblem(out);
          };
          tr.append(el("td", {}, b));
        }
        return tr;
      }));
    },
  });
}

// ---- jobs ----
function jobsPage() {
  stream("/stream/jobs", {
    jobs(rows) {
      fillBody($("#jobs"), rows.map((r) => {
        const done = r.state === "SUCCEEDED" ? r.passes : r.pass;
        return el("tr", {},
          el("th", {scope: "row"}, el("a", {href: `/jobs/${encodeURIComponent(r.name)}`}, r.name)),
          el("td", {}, stateCell(r.state)), el("td", {class: "num"}, `${r.pass}/${r.passes}`),
          el("td", {}, el("progress", {max: r.passes || 1, value: done, "aria-label": `${r.name}: ${done} of ${r.passes} passes`})),
          el("td", {class: "num"}, fmt(r.loss)), el("td", {class: "num"}, r.age), el("td", {}, r.owner || "–"),
          el("td", {class: "num"}, r.trainers), el("td", {class: "num"}, r.pservers));
      }));
    },
  });
}

// ---- charts ----
const COLORS = ["#0b5cad", "#c2410c", "#1d6b2f", "#7e22ce"];

// chart draws series [{name, points: [[x, y]...], right}] into svg; a
// series with right set uses its own scale, labelled on the right.
function chart(svg, series, xlabel) {
  const W = 640, H = 280, L = 56, R = 56, T = 26, B = 34;
  const ns = "http://www.w3.org/2000/svg";
  const mk = (tag, attrs, text) => {
    const e = document.createElementNS(ns, tag);
    for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
    if (text !== undefined) e.textContent = text;
    return e;
  };
  const kids = [];
  const all = series.flatMap((s) => s.points);
  if (all.length === 0) {
    svg.replaceChildren(mk("text", {x: W / 2, y: H / 2, "text-anchor": "middle"}, "No data yet"));
    return;
  }
  const ext = (pts, i) => {
    let lo = Infinity, hi = -Infinity;
    for (const p of pts) { if (p[i] < lo) lo = p[i]; if (p[i] > hi) hi = p[i]; }
    if (lo === hi) { lo -= 1; hi += 1; }
    return [lo, hi];
  };
  const [x0, x1] = ext(all, 0);
  const X = (x) => L + (x - x0) / (x1 - x0) * (W - L - R);
  const scales = {};
  for (const side of ["left", "right"]) {
    const pts = series.filter((s) => (s.right ? "right" : "left") === side).flatMap((s) => s.points);
    if (pts.length) scales[side] = ext(pts, 1);
  }
  const Y = (side, y) => { const [lo, hi] = scales[side]; return H - B - (y - lo) / (hi - lo) * (H - T - B); };
  for (let i = 0; i <= 4; i++) {
    const y = T + i * (H - T - B) / 4;
    kids.push(mk("line", {class: "grid", x1: L, x2: W - R, y1: y, y2: y}));
    for (const side of Object.keys(scales)) {
      const [lo, hi] = scales[side];
      kids.push(mk("text", {x: side === "left" ? L - 4 : W - R + 4, y: y + 4, "text-anchor": side === "left" ? "end" : "start"}, fmt(hi - i * (hi - lo) / 4, 3)));
    }
  }
  kids.push(mk("line", {class: "axis", x1: L, x2: W - R, y1: H - B, y2: H - B}));
  kids.push(mk("line", {class: "axis", x1: L, x2: L, y1: T, y2: H - B}));
  for (let i = 0; i <= 4; i++) {
    const x = x0 + i * (x1 - x0) / 4;
    kids.push(mk("text", {x: X(x), y: H - B + 14, "text-anchor": "middle"}, fmt(x, 4)));
  }
  kids.push(mk("text", {x: (L + W - R) / 2, y: H - 4, "text-anchor": "middle"}, xlabel));
  let lx = L;
  series.forEach((s, i) => {
    if (!s.points.length) return;
    const side = s.right ? "right" : "left";
    const color = COLORS[i % COLORS.length];
    const pts = s.points.map((p) => `${X(p[0]).toFixed(1)},${Y(side, p[1]).toFixed(1)}`).join(" ");
    kids.push(mk("polyline", {points: pts, stroke: color, "stroke-dasharray": s.right ? "5 3" : "none"}));
    kids.push(mk("rect", {x: lx, y: 8, width: 12, height: 4, fill: color}));
    const label = `${s.name}${s.right ? " (right)" : ""}: ${fmt(s.points[s.points.length - 1][1])}`;
    kids.push(mk("text", {x: lx + 16, y: 14}, label));
    lx += 24 + label.length * 6;
  });
  svg.replaceChildren(...kids);
}

// ---- one job ----
function jobPage() {
  const job = body.job;
  const history = [];           // by pass
  let steps = [];               // [step, train loss] as the page saw them
  let status = null;
  let drawPending = false;
  const mine = (st) => body.role === "admin" || (body.role === "operator" && (st.owner || "").startsWith(body.user + " ("));

  function draw() {
    drawPending = false;
    const h = history.filter(Boolean);
    const pick = (k) => h.filter((p) => p[k] !== null && p[k] !== undefined).map((p) => [p.pass, p[k]]);
    const series = [{name: "train loss", points: pick("train_loss")}, {name: "test loss", points: pick("test_loss")}];
    const acc = pick("test_accuracy");
    if (acc.length) series.push({name: "test accuracy", points: acc, right: true});
    chart($("#chart-pass"), series, "pass");
    const perStep = h.filter((p) => p.train_loss !== null).map((p) => [p.step, p.train_loss]);
    const last = perStep.length ? perStep[perStep.length - 1][0] : -1;
    chart($("#chart-step"), [{name: "train loss", points: perStep.concat(steps.filter((p) => p[0] > last))}], "step");
  }
  const redraw = () => { if (!drawPending) { drawPending = true; requestAnimationFrame(draw); } };

  function renderStatus(st) {
    status = st;
    const s = $("#state");
    s.textContent = st.state; s.className = `state s-${st.state}`;
    $("#reason").hidden = !st.reason; $("#reason").textContent = st.reason || "";
    const done = st.state === "SUCCEEDED" ? st.passes : st.pass;
    $("#pass").textContent = `${st.pass}/${st.passes}`;
    $("#progress").max = st.passes || 1; $("#progress").value = done;
    $("#step").textContent = st.step;
    $("#train-loss").textContent = fmt(st.metrics.train_loss);
    $("#test-loss").textContent = fmt(st.metrics.test_loss);
    $("#test-accuracy").textContent = fmt(st.metrics.test_accuracy);
    const t = st.tasks;
    $("#tasks").textContent = `${t.todo} todo, ${t.pending} pending, ${t.done} done, ${t.failed} failed`;
    $("#trainers").textContent = `${st.trainers_current} running of ${st.trainers_count} (${st.trainers_min}–${st.trainers_max})`;
    $("#pservers").textContent = `${st.pservers_current} running of ${st.pservers_count}${st.pservers_resharding ? ", re-sharding" : ""}`;
    const used = Math.max(st.master.budget_used, ...st.trainers.map((w) => w.budget_used), ...st.pservers.map((w) => w.budget_used));
    $("#budget").textContent = `${st.restart_budget.limit} crashes per role in ${st.restart_budget.window}; most used ${used}`;
    $("#mode").textContent = st.mode || "–";
    $("#owner").textContent = st.owner || "–";
    $("#model-dir").textContent = st.model_dir || "–";
    const m = st.metrics.train_loss;
    if (m !== null && m !== undefined && (!steps.length || steps[steps.length - 1][0] < st.step)) {
      steps.push([st.step, m]);
      if (steps.length > 5000) steps = steps.filter((_, i) => i % 2 === 0);
    }
    const warn = st.warnings || [];
    $("#warnings-section").hidden = warn.length === 0;
    $("#warnings").replaceChildren(...warn.map((w) => el("li", {}, w)));
    renderWorkers(st);
    const act = $("#actions");
    if (act) {
      act.hidden = api_terminal(st.state) || !mine(st);
      const input = $("#scale-trainers");
      input.min = st.trainers_min; input.max = st.trainers_max;
      if (document.activeElement !== input) input.value = st.trainers_count;
      $("#scale").disabled = st.trainers_min === st.trainers_max;
    }
    redraw();
  }

  function renderWorkers(st) {
    const rows = [
      {name: st.master.name, node: st.master.node, pid: st.master.pid, restarts: st.master.restarts, budget_used: st.master.budget_used, master: true},
      ...st.pservers, ...st.trainers,
    ].filter((w) => w.name);
    fillBody($("#workers"), rows.map((w) => el("tr", {id: `w-${w.name}`},
      el("th", {scope: "row"}, w.name), el("td", {}, w.node || "–"), el("td", {class: "num"}, w.pid || "–"),
      el("td", {}, w.master ? "–" : stateCell(w.state), w.reason ? ` ${w.reason}` : ""),
      el("td", {class: "num restarts"}, w.restarts), el("td", {class: "num"}, `${w.budget_used}/${st.restart_budget.limit}`),
      el("td", {class: "num"}, w.step_ms === undefined || w.step_ms === null ? "–" : fmt(w.step_ms, 3)),
      el("td", {}, el("a", {href: `/jobs/${encodeURIComponent(job)}/logs/${encodeURIComponent(w.name)}`, "aria-label": `Log of ${w.name}`}, "log")))));
    const byNode = new Map();
    for (const w of rows) {
      const n = w.node || "(not placed)";
      if (!byNode.has(n)) byNode.set(n, []);
      byNode.get(n).push(w.name);
    }
    fillBody($("#placement"), [...byNode].sort().map(([n, ws]) => el("tr", {}, el("th", {scope: "row"}, n), el("td", {}, `${ws.length}: ${ws.join(", ")}`))));
  }

  stream(`/stream/jobs/${encodeURIComponent(job)}`, {
    status: renderStatus,
    history(entries) {
      for (const h of entries) history[h.pass] = h;
      redraw();
    },
    events(evs) {
      const list = $("#events");
      for (const e of evs) {
        const t = new Date(e.time);
        list.prepend(el("li", {}, el("time", {datetime: e.time}, t.toLocaleTimeString()), e.what));
      }
      announce(evs[evs.length - 1].what);
    },
  });

  const stop = $("#stop");
  if (stop) {
    stop.onclick = async () => {
      if (!confirm(`Stop job ${job}? What still runs is stopped; the model stays in its model dir.`)) return;
      const out = await post(`/jobs/${encodeURIComponent(job)}/stop`);
      $("#action-result").textContent = out.message;
    };
    $("#scale-form").onsubmit = async (e) => {
      e.preventDefault();
      const out = await post(`/jobs/${encodeURIComponent(job)}/scale`, new FormData(e.target));
      $("#action-result").textContent = out.message;
    };
  }
}

function api_terminal(state) { return state === "SUCCEEDED" || state === "FAILED" || state === "STOPPED"; }

// ---- a worker's log ----
function logPage() {
  const pre = $("#log");
  const MAX = 2000;
  const es = stream(`/stream/jobs/${encodeURIComponent(body.job)}/logs/${encodeURIComponent(body.worker)}`, {
    lines(chunk) {
      pre.append(chunk.text);
      let n = pre.textContent.split("\n").length;
      if (n > MAX) pre.textContent = pre.textContent.split("\n").slice(n - MAX).join("\n");
      if ($("#follow").checked) pre.scrollTop = pre.scrollHeight;
    },
    end() { $("#log-state").textContent = "The log has ended."; es.close(); },
  });
  es.onopen = () => { pre.textContent = ""; $("#log-state").textContent = ""; }; // a reconnect sends the tail again
}

({cluster: clusterPage, jobs: jobsPage, job: jobPage, log: logPage})[body.page]?.();
