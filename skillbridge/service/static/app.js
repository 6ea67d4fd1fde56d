// The page of `skillbridge serve`: one session, its events over SSE (read with fetch, so
// a bearer token can travel in a header), the plan and timeline as they fill in.
"use strict";
const $ = (id) => document.getElementById(id);
const token = (() => {
  const m = location.hash.match(/token=([^&]+)/);
  if (m) sessionStorage.setItem("skillbridge-token", decodeURIComponent(m[1]));
  return sessionStorage.getItem("skillbridge-token");
})();
const headers = () => ({ "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) });
let sid = null, state = "idle", asking = false, seq = 0, frames = 0;

async function api(method, path, body) {
  const r = await fetch(path, { method, headers: headers(), body: body === undefined ? undefined : JSON.stringify(body) });
  let data = null;
  try { data = await r.json(); } catch (e) { data = null; }
  if (!r.ok) throw new Error((data && data.detail) || `${r.status}`);
  return data;
}

function li(list, text, cls) {
  const e = document.createElement("li");
  e.textContent = text;
  if (cls) e.className = cls;
  $(list).appendChild(e);
  return e;
}
const fmt = (sg) => `${sg.skill}(${Object.entries(sg).filter(([k]) => k !== "skill").map(([k, v]) => `${k}=${v}`).join(", ")})`;

function setState(s) {
  state = s;
  $("status").textContent = s;
  $("send").textContent = asking ? "Answer" : s === "idle" ? "Run" : "Correct";
  $("stop").disabled = s === "idle";
  $("text").placeholder = asking ? "the red one" : s === "idle" ? "put the red block in the green bin" : "no, put it in the blue bin instead";
}

function showQuestion(q, candidates) {
  asking = true;
  $("question").hidden = false;
  $("qtext").textContent = q;
  const box = $("choices");
  box.textContent = "";
  for (const c of candidates || []) {
    const b = document.createElement("button");
    b.type = "button";
    b.textContent = c.replace(/_/g, " ");
    b.onclick = () => say("answer", `the ${c.split("_")[0]} one`);
    box.appendChild(b);
  }
  setState(state);
  $("text").focus();
}
function hideQuestion() { asking = false; $("question").hidden = true; setState(state); }

let timeline = {};
function onEvent(kind, ev) {
  const d = ev.data || {};
  switch (kind) {
    case "frame":
      $("frame").src = `data:${d.media_type || "image/jpeg"};base64,${d.data}`;
      frames += 1;
      $("frame").dataset.frames = String(frames);
      $("caption").textContent = `${d.why === "step" ? "live" : d.why} · step ${d.step}`;
      break;
    case "queued": setState("queued"); break;
    case "running": setState("running"); break;
    case "start":
      $("plan").textContent = ""; $("timeline").textContent = ""; timeline = {};
      $("result").hidden = true;
      break;
    case "plan":
      $("plan").textContent = "";
      for (const s of d.steps || []) li("plan", fmt(s));
      if (!(d.steps || []).length) li("plan", `(${d.decision}${d.refusal ? ": " + d.refusal : ""})`);
      break;
    case "bridge": li("turns", `bridge: ${d.proposer}#${d.attempt} ${d.decision}${(d.reasons || []).length ? " (" + d.reasons.join(", ") + ")" : ""}`, "robot"); break;
    case "subgoal_start": timeline[d.index] = li("timeline", fmt(d.subgoal), "run"); break;
    case "subgoal_end": {
      const e = timeline[d.index];
      if (e) { e.className = d.interrupted ? "cut" : d.success ? "ok" : "fail"; e.textContent += ` · ${d.steps} steps${d.reason ? " · " + d.reason : ""}`; }
      break;
    }
    case "question": showQuestion(d.question, d.candidates); break;
    case "answer": hideQuestion(); break;
    case "turn":
      // an answer is shown once: as the message that was said, not again as its reading
      if (d.kind === "answer" && d.data && d.data.message !== undefined) break;
      li("turns", `${d.role}: ${d.text}`, d.role);
      break;
    case "interjection": li("timeline", `interjection (${d.mode}): “${d.utterance}” → ${d.task || "stop"}`, "cut"); break;
    case "goal_check": li("timeline", `goal check: ${(d.evaluation || []).map((e) => (e.met ? "✓ " : "✗ ") + e.predicate).join(", ")}`, d.met ? "ok" : "fail"); break;
    case "done": {
      hideQuestion(); setState("idle");
      const r = d.result || {};
      const box = $("result");
      box.hidden = false;
      box.className = "result" + (r.success || r.status === "answered" || r.status === "stopped" ? "" : " bad");
      box.textContent = `${r.status}: ${r.message}${r.answer ? " — " + r.answer : ""}`;
      box.dataset.status = r.status;
      loadEpisodes();
      break;
    }
    case "replay_start": $("caption").textContent = `replaying ${d.episode}`; setState("replaying"); break;
    case "replay_end": case "scene": case "cancelled": setState("idle"); break;
    case "error": {
      hideQuestion(); setState("idle");
      const box = $("result"); box.hidden = false; box.className = "result bad";
      box.textContent = `error: ${d.error}`; box.dataset.status = "error";
      break;
    }
    case "post_refused": li("turns", `not taken: ${d.text} (${d.error})`, "robot"); break;
    default: break;
  }
}

async function stream() {
  // server-sent events over fetch: "event:" / "data:" lines, a blank line ends one
  for (;;) {
    try {
      const r = await fetch(`/sessions/${sid}/events?after=${seq}`, { headers: headers() });
      if (!r.ok) throw new Error(String(r.status));
      const reader = r.body.getReader();
      const dec = new TextDecoder();
      let buf = "", kind = "message", data = [];
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buf += dec.decode(value, { stream: true });
        let i;
        while ((i = buf.search(/\r?\n/)) >= 0) {
          const line = buf.slice(0, i);
          buf = buf.slice(buf[i] === "\r" ? i + 2 : i + 1);
          if (line === "") {
            if (data.length) {
              const ev = JSON.parse(data.join("\n"));
              seq = Math.max(seq, ev.seq);
              onEvent(kind, ev);
            }
            kind = "message"; data = [];
          } else if (line.startsWith("event:")) kind = line.slice(6).trim();
          else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
        }
      }
    } catch (e) {
      $("status").textContent = `reconnecting (${e.message})`;
    }
    await new Promise((ok) => setTimeout(ok, 1000));
  }
}

async function say(kind, text) {
  try {
    await api("POST", `/sessions/${sid}/messages`, { kind, text });
    if (kind === "answer") hideQuestion();
    $("text").value = "";
  } catch (e) {
    li("turns", `not sent: ${e.message}`, "robot");
  }
}

async function loadEpisodes() {
  try {
    const eps = await api("GET", "/episodes?limit=15");
    const ul = $("episodes");
    ul.textContent = "";
    for (const e of eps) {
      const item = li("episodes", `${e.task} · ${e.result || e.status}`);
      const b = document.createElement("button");
      b.type = "button"; b.className = "small"; b.textContent = "replay";
      b.onclick = () => api("POST", `/sessions/${sid}/replay`, { episode: e.name, fps: 10 }).catch((x) => li("turns", `replay: ${x.message}`, "robot"));
      item.appendChild(b);
    }
  } catch (e) { /* listed again after the next run */ }
}

$("say").addEventListener("submit", (e) => {
  e.preventDefault();
  const text = $("text").value.trim();
  if (!text) return;
  say(asking ? "answer" : state === "idle" ? "task" : "correction", text);
});
$("stop").addEventListener("click", () => say("stop", "stop"));
$("refresh").addEventListener("click", loadEpisodes);

(async () => {
  try {
    const q = new URLSearchParams(location.search);
    const s = await api("POST", "/sessions", { seed: Number(q.get("seed") || 0), fps: Number(q.get("fps") || 10) });
    sid = s.id;
    $("session").textContent = `session ${sid}`;
    document.body.dataset.session = sid;
    setState("idle");
    stream();
    api("POST", `/sessions/${sid}/look`).catch(() => {});
    loadEpisodes();
  } catch (e) {
    $("status").textContent = `no session: ${e.message}`;
  }
})();
