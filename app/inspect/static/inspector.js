// Answer inspector (docs/INSPECTOR.md). Plain JavaScript, no build step, no third-party code; it
// talks to this service only (the page's Content-Security-Policy allows nothing else). Everything
// received is inserted as text (never as HTML).
"use strict";

(() => {
  const KEY_STORE = "ga-inspector-key"; // sessionStorage only: the tab forgets it when closed
  const STAGES = ["route", "plan", "search", "fetch", "select", "gate", "answerability", "compose", "cite", "verify"];
  const FATES = {
    cited: ["cited in the answer", "good"],
    evidence: ["evidence, not cited", "good"],
    not_used: ["read, no passage selected", "neutral"],
    over_budget: ["over budget (not fetched)", "neutral"],
    invalid_url: ["invalid URL", "drop"],
    excluded_domain: ["dropped: excluded domain", "drop"],
    duplicate: ["dropped: duplicate", "drop"],
    stale: ["dropped: stale", "drop"],
    same_domain: ["dropped: same domain", "drop"],
    robots: ["skipped: robots.txt", "skip"],
    blocked_address: ["skipped: blocked address", "skip"],
    blocked_scheme: ["skipped: blocked scheme", "skip"],
    blocked_port: ["skipped: blocked port", "skip"],
    timeout: ["skipped: timeout", "skip"],
    too_large: ["skipped: too large", "skip"],
    too_many_redirects: ["skipped: too many redirects", "skip"],
    unsupported_type: ["skipped: unsupported type", "skip"],
    http_error: ["skipped: HTTP error", "skip"],
    network_error: ["skipped: network error", "skip"],
    empty_extraction: ["skipped: nothing extracted", "skip"],
  };

  const state = { key: sessionStorage.getItem(KEY_STORE) || "", model: null, trace: null, rid: "", pinned: null };

  // --- tiny DOM helpers ---------------------------------------------------------------------
  const $ = (id) => document.getElementById(id);

  function h(tag, attrs, ...kids) {
    const el = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === null || v === undefined || v === false) continue;
      if (k === "class") el.className = v;
      else if (k === "text") el.textContent = v;
      else if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
      else el.setAttribute(k, v === true ? "" : String(v));
    }
    for (const kid of kids.flat(Infinity)) {
      if (kid === null || kid === undefined || kid === false) continue;
      el.append(kid instanceof Node ? kid : String(kid));
    }
    return el;
  }

  const fmtMs = (v) => (typeof v === "number" ? `${v < 10 ? v.toFixed(2) : Math.round(v)} ms` : "—");
  const fmtUsd = (v) => (typeof v === "number" ? `$${v.toFixed(6)}` : "—");
  const fmtScore = (v) => (typeof v === "number" ? v.toFixed(3) : "—");
  const domainOf = (url) => {
    try {
      return new URL(url).hostname;
    } catch {
      return url;
    }
  };

  function link(url, text) {
    // Links to sources open in a new tab with no referrer; the page itself never loads them.
    const safe = /^https?:\/\//i.test(url || "") ? url : null;
    return safe
      ? h("a", { href: safe, target: "_blank", rel: "noopener noreferrer" }, text || url)
      : h("span", {}, text || url || "");
  }

  let sections = 0; // both views are in the document at once: every heading id is unique
  function section(title, ...kids) {
    const id = "s-" + title.toLowerCase().replace(/[^a-z0-9]+/g, "-") + "-" + ++sections;
    return h("section", { class: "block", "aria-labelledby": id }, h("h3", { id }, title), ...kids);
  }

  function table(caption, head, rows, opts = {}) {
    const t = h(
      "table",
      { class: opts.class || "" },
      h("caption", { class: opts.showCaption ? "" : "visually-hidden" }, caption),
      h("thead", {}, h("tr", {}, head.map((c) => h("th", { scope: "col" }, c)))),
      h("tbody", {}, rows)
    );
    // In a narrow window, "stack" tables become one card per row (each cell labelled by its
    // column); the others scroll inside a focusable region.
    t.querySelectorAll("tbody tr").forEach((tr) =>
      Array.from(tr.children).forEach((cell, i) => cell.setAttribute("data-label", head[i] || ""))
    );
    return h("div", { class: "table-wrap", role: "region", "aria-label": caption, tabindex: "0" }, t);
  }

  function setStatus(text, kind) {
    const el = $("status");
    el.textContent = text || "";
    el.className = "status" + (kind ? " " + kind : "");
  }

  // --- the API, with the key ----------------------------------------------------------------
  class ApiError extends Error {
    constructor(status, message) {
      super(message);
      this.status = status;
    }
  }

  async function api(path, init = {}) {
    const headers = new Headers(init.headers || {});
    if (state.key) headers.set("Authorization", "Bearer " + state.key);
    const res = await fetch(path, { ...init, headers, cache: "no-store", credentials: "omit", referrerPolicy: "no-referrer" });
    if (res.ok) return res;
    let message = `HTTP ${res.status}`;
    try {
      const body = await res.json();
      if (body && body.error && body.error.message) message = body.error.message;
    } catch {
      /* not JSON */
    }
    if (res.status === 401) showKeyPanel(state.key ? "That key was refused: " + message : "This service asks for an API key.");
    throw new ApiError(res.status, message);
  }

  function showKeyState() {
    $("key-state").textContent = state.key ? "API key set (this tab only)" : "No API key";
    $("key-change").textContent = state.key ? "Change key" : "Set key";
  }

  function showKeyPanel(reason) {
    $("key-reason").textContent = reason;
    $("key-panel").hidden = false;
    $("key-input").focus();
  }

  // --- views and the address bar --------------------------------------------------------------
  function showView(name, focus = true) {
    for (const v of ["ask", "read", "trace"]) {
      $("view-" + v).hidden = v !== name;
      const tab = $("tab-" + v);
      if (v === name) tab.setAttribute("aria-current", "page");
      else tab.removeAttribute("aria-current");
    }
    const hash = name === "ask" || !state.rid ? "#" + name : `#${name}/${encodeURIComponent(state.rid)}`;
    if (location.hash !== hash) history.replaceState(null, "", hash);
    hideTip();
    if (focus) $(name + "-title").focus({ preventScroll: false });
  }

  // --- normalise a response body or a stored trace into one model ----------------------------
  function modelFromBody(body, trace, question) {
    const g = body.grounding || {};
    return {
      rid: g.request_id,
      status: g.status,
      composer: g.composer,
      question: (trace && trace.plan && trace.plan.question) || question || "",
      content: body.choices && body.choices[0] ? body.choices[0].message.content || "" : "",
      claims: g.claims || [],
      dropped: g.dropped_claims || [],
      sources: g.sources || [],
      citations: body.citations || [],
      abstention: g.abstention,
      conflicts: g.conflicts || [],
      groundedness: g.groundedness,
      verification: (trace && trace.options && trace.options.verification) || null,
      evidence: (trace && trace.evidence) || [],
      servedFrom: trace && trace.served_from,
      cost: g.cost,
      cache: g.cache,
      traceMissing: !trace,
    };
  }

  function modelFromTrace(t) {
    return {
      rid: t.request_id,
      status: t.status,
      composer: t.composer || "",
      question: (t.plan && t.plan.question) || "",
      content: t.content || "",
      claims: t.claims || [],
      dropped: t.dropped_claims || [],
      sources: t.sources || [],
      citations: t.citations || [],
      abstention: t.abstention,
      conflicts: t.conflicts || [],
      groundedness: t.groundedness ?? null,
      verification: (t.options && t.options.verification) || null,
      evidence: t.evidence || [],
      servedFrom: t.served_from,
      cost: t.cost,
      cache: t.cache,
      traceMissing: false,
    };
  }

  // --- Read view ------------------------------------------------------------------------------
  const END = /[.!?]+["')\]]*$/;

  function unsupportedReason(c) {
    if (!c.span_ids || !c.span_ids.length) return "uncited: it cites no evidence";
    if (c.judged === false) return `unsupported: the judge found no support (lexical ${fmtScore(c.support_score)})`;
    return `unsupported: support ${fmtScore(c.support_score)} is below the threshold`;
  }

  function renderClaim(m, claim, index) {
    const text = claim.text || "";
    const mt = text.match(END);
    const body = mt ? text.slice(0, mt.index) : text;
    const end = mt ? mt[0] : ".";
    const markers = (claim.source_ids || []).map((n) =>
      h(
        "button",
        {
          type: "button",
          class: "marker",
          "data-n": n,
          "data-claim": index,
          "aria-label": `Citation ${n}: show the supporting quote and source`,
          "aria-expanded": "false",
          "aria-controls": "citation-detail",
        },
        `[${n}]`
      )
    );
    const flagged = claim.factual !== false && claim.supported === false;
    const sentence = h("span", { class: "claim" + (flagged ? " flagged" : ""), "data-claim": index });
    if (flagged) {
      sentence.append(
        h("del", {}, body),
        markers.length ? " " : "",
        ...markers,
        h("del", {}, end),
        h("span", { class: "why" }, ` (${unsupportedReason(claim)})`)
      );
    } else {
      sentence.append(body, markers.length ? " " : "", ...markers, end);
    }
    return sentence;
  }

  function sourceFor(m, n) {
    return m.sources.find((s) => s.id === n) || { url: m.citations[n - 1], title: "", domain: domainOf(m.citations[n - 1]) };
  }

  function dateLine(src) {
    const date = src.published_at ? src.published_at : "no publication date";
    const how = src.date_source && src.date_source !== "unknown" ? `date from ${src.date_source}` : "date source: unknown";
    return `${date} (${how})`;
  }

  // The evidence span that backs marker [n] of a claim, with the quote located in it.
  function passageFor(m, claim, n) {
    const url = m.citations[n - 1];
    const spans = m.evidence.filter((e) => e.url === url);
    const cited = spans.filter((e) => (claim.span_ids || []).includes(e.span_id));
    const quote = (claim.quote || "").trim();
    const holds = (e) => quote && norm(e.text).includes(norm(quote));
    const span = cited.find(holds) || spans.find(holds) || cited[0] || spans[0] || null;
    return { span, quoteHere: !!(span && holds(span)) };
  }

  const norm = (s) => (s || "").replace(/\s+/g, " ").trim();

  function highlighted(text, quote) {
    // The span text with the quote marked; whitespace may differ between the two.
    const flat = norm(text);
    const q = norm(quote);
    const at = q ? flat.indexOf(q) : -1;
    if (at < 0) return [flat];
    return [flat.slice(0, at), h("mark", {}, flat.slice(at, at + q.length)), flat.slice(at + q.length)];
  }

  function citationCard(m, claimIndex, n, full) {
    const claim = m.claims[claimIndex];
    const src = sourceFor(m, n);
    const { span, quoteHere } = passageFor(m, claim, n);
    const quote = (claim.quote || "").trim();
    const card = h("div", { class: "card" });
    card.append(
      h("p", { class: "card-label" }, `[${n}] supports:`),
      h("p", { class: "claim-text" }, claim.text),
      h("p", { class: "card-label" }, "Supporting quote"),
      quote ? h("blockquote", { class: "quote" }, quote) : h("p", { class: "empty" }, "No quote recorded for this sentence."),
      h(
        "dl",
        { class: "source-facts" },
        h("dt", {}, "Source"),
        h("dd", { class: "source-title" }, src.title || src.url || "—"),
        h("dt", {}, "Domain"),
        h("dd", { class: "source-domain" }, src.domain || domainOf(src.url)),
        h("dt", {}, "Published"),
        h("dd", { class: "source-date" }, dateLine(src)),
        full ? [h("dt", {}, "URL"), h("dd", {}, link(src.url))] : null,
        full && typeof claim.support_score === "number"
          ? [h("dt", {}, "Support"), h("dd", {}, `${fmtScore(claim.support_score)} lexical` + (claim.judged === null || claim.judged === undefined ? "" : `, judge: ${claim.judged ? "supported" : "not supported"}`))]
          : null
      )
    );
    if (!full) return card;
    card.append(h("h4", { id: "passage-title" }, "Passage in context"));
    if (span) {
      card.append(
        h(
          "p",
          { class: "span-meta" },
          `${span.span_id} · ${span.section ? "section “" + span.section + "” · " : ""}score ${fmtScore(span.score)} · ${span.tokens} tokens`
        ),
        h("div", { class: "passage", tabindex: "0", role: "region", "aria-labelledby": "passage-title" }, highlighted(span.text, quoteHere ? quote : "")),
        ...(quoteHere ? [] : [h("p", { class: "hint" }, "The quote comes from another cited passage of this answer.")])
      );
    } else {
      card.append(
        h("p", { class: "empty" }, m.traceMissing ? "The trace could not be loaded, so the passage text is not available." : "The passage is not in the trace.")
      );
    }
    return card;
  }

  function renderRead(m) {
    const root = $("read-body");
    root.replaceChildren();
    state.pinned = null;
    const badge = h("span", { class: "badge status-" + m.status, id: "answer-status" }, m.status || "unknown");
    const meta = h(
      "p",
      { class: "meta" },
      badge,
      " ",
      m.composer ? h("span", {}, `composer ${m.composer}`) : null,
      m.groundedness !== null && m.groundedness !== undefined ? h("span", {}, ` · groundedness ${m.groundedness}`) : null,
      m.verification ? h("span", {}, ` · verification ${m.verification}`) : null,
      m.servedFrom ? h("span", {}, ` · served from ${m.servedFrom}`) : null,
      " · ",
      h("span", {}, "request "),
      h("code", { id: "read-rid" }, m.rid || "—"),
      " ",
      h("button", { type: "button", class: "link-button", onclick: () => showView("trace") }, "Open the trace")
    );
    root.append(meta);
    if (m.question) root.append(h("p", { class: "question" }, h("span", { class: "label" }, "Question: "), m.question));

    if (m.status === "abstained" && m.abstention) {
      root.append(renderAbstention(m));
    } else {
      const answer = h("div", { class: "answer", id: "answer" });
      if (m.claims.length) {
        m.claims.forEach((c, i) => {
          if (i) answer.append(" ");
          answer.append(renderClaim(m, c, i));
        });
      } else {
        answer.append(m.content || "(empty answer)");
      }
      root.append(section("Answer", answer, h("div", { id: "citation-detail", class: "citation-detail", "aria-live": "polite" })));
      wireMarkers(m, answer);
    }
    if (m.dropped.length) {
      root.append(
        section(
          "Removed by verification",
          h("p", { class: "hint" }, "These sentences of the draft were not supported by the evidence and were left out."),
          h(
            "ul",
            { class: "dropped", id: "dropped-claims" },
            m.dropped.map((c) => h("li", {}, h("del", {}, c.text), h("span", { class: "why" }, ` (${unsupportedReason(c)})`)))
          )
        )
      );
    }
    if (m.conflicts.length) root.append(renderConflicts(m.conflicts));
    if (m.sources.length) root.append(renderSources(m));
  }

  function renderAbstention(m) {
    const a = m.abstention;
    const box = h(
      "div",
      { class: "abstention", id: "abstention" },
      h("p", { class: "abstention-title" }, "Abstained: ", h("code", { id: "abstention-reason" }, a.reason)),
      h("p", { id: "abstention-message" }, a.message || m.content)
    );
    const list = (title, items, render) =>
      h("div", { class: "ab-list" }, h("h4", {}, title), items && items.length ? h("ul", {}, items.map((x) => h("li", {}, render(x)))) : h("p", { class: "empty" }, "none"));
    box.append(
      list("Failed checks", a.failed_checks, (x) => h("code", { class: "failed-check" }, x)),
      list("Queries run", a.queries_run, (x) => x),
      list("Links found", a.links_found, (x) => link(x))
    );
    const out = section("Why there is no answer", box);
    if (m.claims.length) {
      out.append(
        h("h4", {}, "The withheld draft"),
        h("ul", { class: "draft" }, m.claims.map((c) => h("li", {}, c.text, c.supported === false ? h("span", { class: "why" }, ` (${unsupportedReason(c)})`) : null)))
      );
    }
    return out;
  }

  function renderConflicts(conflicts) {
    return section(
      "Conflicts",
      conflicts.map((c) =>
        h(
          "div",
          { class: "conflict" },
          h("p", {}, `The sources disagree on ${c.attribute} (policy: ${c.policy || "—"}).`),
          h(
            "ul",
            {},
            (c.values || []).map((v) =>
              h("li", {}, h("strong", {}, String(v.value)), ` — ${(v.domains || []).join(", ")}`, v.published_at ? ` (${v.published_at})` : "", v.primary ? " · primary" : "")
            )
          )
        )
      )
    );
  }

  function renderSources(m) {
    const rows = m.sources.map((s) =>
      h(
        "li",
        { class: "source" },
        h("span", { class: "num" }, s.id ? `[${s.id}]` : "—"),
        " ",
        link(s.url, s.title || s.url),
        h(
          "span",
          { class: "source-sub" },
          ` ${s.domain} · ${dateLine(s)} · score ${fmtScore(s.score)}`,
          s.primary ? " · primary" : "",
          s.via === "snippet" ? " · from the search snippet (page not read)" : "",
          s.also_reported_by && s.also_reported_by.length ? ` · also reported by ${s.also_reported_by.length}` : "",
          s.id ? "" : " · in the evidence, not cited"
        )
      )
    );
    return section("Sources", h("ul", { class: "sources" }, rows));
  }

  // --- markers: hover / focus shows a tooltip, click / Enter pins the passage --------------------
  function wireMarkers(m, answer) {
    answer.querySelectorAll("button.marker").forEach((btn) => {
      const n = Number(btn.dataset.n);
      const ci = Number(btn.dataset.claim);
      btn.addEventListener("mouseenter", () => showTip(m, btn, ci, n));
      btn.addEventListener("focus", () => showTip(m, btn, ci, n));
      btn.addEventListener("mouseleave", () => hideTip());
      btn.addEventListener("blur", () => hideTip());
      btn.addEventListener("click", () => pin(m, btn, ci, n));
      btn.addEventListener("keydown", (e) => {
        if (e.key === "Escape") hideTip();
      });
    });
  }

  function showTip(m, btn, ci, n) {
    const tip = $("cite-tip");
    tip.replaceChildren(citationCard(m, ci, n, false));
    tip.hidden = false;
    btn.setAttribute("aria-describedby", "cite-tip");
    const r = btn.getBoundingClientRect();
    const width = Math.min(420, window.innerWidth - 16);
    tip.style.width = width + "px";
    const left = Math.max(8, Math.min(r.left + window.scrollX, window.scrollX + window.innerWidth - width - 8));
    tip.style.left = left + "px";
    tip.style.top = r.bottom + window.scrollY + 6 + "px";
  }

  function hideTip() {
    const tip = $("cite-tip");
    if (!tip || tip.hidden) return;
    tip.hidden = true;
    document.querySelectorAll("button.marker[aria-describedby]").forEach((b) => b.removeAttribute("aria-describedby"));
  }

  function pin(m, btn, ci, n) {
    hideTip();
    document.querySelectorAll("button.marker").forEach((b) => {
      b.setAttribute("aria-expanded", "false");
      b.classList.remove("active");
    });
    document.querySelectorAll(".claim.active").forEach((c) => c.classList.remove("active"));
    btn.setAttribute("aria-expanded", "true");
    btn.classList.add("active");
    const claimEl = btn.closest(".claim");
    if (claimEl) claimEl.classList.add("active");
    const detail = $("citation-detail");
    detail.replaceChildren(
      h("h4", { id: "citation-detail-title" }, `Citation [${n}]`),
      citationCard(m, ci, n, true),
      h("button", { type: "button", class: "secondary", onclick: () => closeDetail(btn) }, "Close")
    );
    detail.setAttribute("aria-labelledby", "citation-detail-title");
    const mark = detail.querySelector("mark");
    (mark || detail).scrollIntoView({ block: "nearest", behavior: "smooth" });
    state.pinned = { ci, n };
  }

  function closeDetail(btn) {
    $("citation-detail").replaceChildren();
    btn.setAttribute("aria-expanded", "false");
    btn.classList.remove("active");
    document.querySelectorAll(".claim.active").forEach((c) => c.classList.remove("active"));
    btn.focus();
  }

  // --- Trace view -----------------------------------------------------------------------------
  function renderTrace(t) {
    const root = $("trace-body");
    root.replaceChildren();
    if (!t) {
      root.append(h("p", { class: "empty" }, "No trace for this request (expired, another key's, or not recorded)."));
      return;
    }
    root.append(
      h(
        "p",
        { class: "meta" },
        h("span", { class: "badge status-" + t.status }, t.status || "unknown"),
        " request ",
        h("code", { id: "trace-rid" }, t.request_id || "—"),
        t.served_from ? ` · answer served from ${t.served_from} (the run of ${t.original_request_id} is shown)` : "",
        " ",
        h("button", { type: "button", class: "link-button", onclick: () => showView("read") }, "Read the answer")
      )
    );
    root.append(renderPlan(t), renderWaterfall(t), renderQueries(t), renderResults(t));
    if (t.conflicts && t.conflicts.length) root.append(renderConflicts(t.conflicts));
    root.append(renderCost(t), renderCache(t), renderClaimsTable(t), renderEvidence(t));
  }

  function renderPlan(t) {
    const p = t.plan || {};
    const r = t.route || {};
    const o = t.options || {};
    const dl = h(
      "dl",
      { class: "facts" },
      h("dt", {}, "Route"),
      h("dd", {}, `${r.needs_search ? "search" : "no search"} — ${r.reason || "—"} (by ${r.by || "—"})`),
      h("dt", {}, "Question"),
      h("dd", {}, p.question || "—"),
      h("dt", {}, "Plan"),
      h("dd", {}, `${(p.queries || []).length} queries by ${p.by || "—"}, freshness ${p.freshness_days ?? "—"} days`),
      o.verification ? [h("dt", {}, "Options"), h("dd", {}, `verification ${o.verification}, min sources ${o.min_sources}, max fetches ${o.max_fetches}` + (o.include_domains && o.include_domains.length ? `, include ${o.include_domains.join(", ")}` : "") + (o.exclude_domains && o.exclude_domains.length ? `, exclude ${o.exclude_domains.join(", ")}` : ""))] : null,
      t.answerability ? [h("dt", {}, "Answerability"), h("dd", {}, `${fmtScore(t.answerability.score)} — ${(t.answerability.reasons || []).join("; ") || "—"}`)] : null,
      t.abstention ? [h("dt", {}, "Abstention"), h("dd", {}, h("code", {}, t.abstention.reason), " — ", (t.abstention.failed_checks || []).join("; "))] : null,
      t.search_errors && t.search_errors.length ? [h("dt", {}, "Search errors"), h("dd", {}, t.search_errors.join("; "))] : null
    );
    return section("Route and plan", dl);
  }

  function renderWaterfall(t) {
    const tm = t.timings_ms || {};
    const total = tm.total || Object.values(tm).reduce((a, b) => a + b, 0) || 1;
    const names = [...STAGES.filter((s) => s in tm), ...Object.keys(tm).filter((k) => !STAGES.includes(k) && k !== "extract" && k !== "total")];
    let offset = 0;
    const rows = [];
    let fetchStart = null;
    for (const name of names) {
      const ms = tm[name];
      if (name === "fetch") fetchStart = offset;
      rows.push(bar(name, offset, ms, total, ""));
      offset += ms;
      if (name === "fetch" && "extract" in tm) {
        rows.push(bar("extract", fetchStart, Math.min(tm.extract, tm.fetch || tm.extract), total, "summed over pages, runs inside fetch", tm.extract));
      }
    }
    rows.push(h("tr", { class: "total" }, h("th", { scope: "row" }, "total"), h("td", { class: "num" }, fmtMs(tm.total)), h("td", {})));
    return section(
      "Stage timings",
      h("p", { class: "hint" }, "Stages run one after another; bars are drawn to scale against the total. Extraction runs inside fetch, as pages arrive."),
      table("Stage timings (waterfall)", ["Stage", "Time", "Waterfall"], rows, { class: "waterfall" })
    );
  }

  function bar(name, start, ms, total, note, shown) {
    const left = Math.max(0, Math.min(100, (start / total) * 100));
    const width = Math.max(0.5, Math.min(100 - left, (ms / total) * 100));
    return h(
      "tr",
      { "data-stage": name },
      h("th", { scope: "row" }, name, note ? h("span", { class: "hint" }, ` (${note})`) : null),
      h("td", { class: "num" }, fmtMs(shown ?? ms)),
      h("td", { class: "bar-cell", "aria-hidden": "true" }, h("span", { class: "bar" + (note ? " nested" : ""), style: null, "data-left": left, "data-width": width }))
    );
  }

  function renderQueries(t) {
    const rows = (t.search || []).map((s) =>
      h(
        "tr",
        {},
        h("td", {}, s.query),
        h("td", {}, s.provider),
        h("td", { class: "num" }, String((s.hits || []).length)),
        h("td", { class: "num" }, fmtMs(s.elapsed_ms)),
        h("td", {}, (s.unresponsive_engines || []).map((e) => (Array.isArray(e) ? e.join(": ") : String(e))).join(", "))
      )
    );
    const planned = (t.plan && t.plan.queries) || [];
    const body = rows.length
      ? table("Search queries", ["Query", "Provider", "Results", "Time", "Unresponsive engines"], rows, { class: "stack" })
      : h("p", { class: "empty" }, planned.length ? `Planned but not searched: ${planned.join("; ")}` : "No search was run.");
    return section("Queries", body);
  }

  function renderResults(t) {
    const results = t.results;
    if (!results) return section("Search results", h("p", { class: "empty" }, "This trace does not record per-result fates (it predates them)."), renderRawFetches(t));
    const counts = {};
    for (const r of results) counts[r.fate] = (counts[r.fate] || 0) + 1;
    const filter = h(
      "select",
      { id: "fate-filter", "aria-controls": "results-table" },
      h("option", { value: "" }, `all (${results.length})`),
      Object.keys(counts).map((f) => h("option", { value: f }, `${(FATES[f] || [f])[0]} (${counts[f]})`))
    );
    const firstRow = {};
    results.forEach((r, i) => {
      if (r.fate !== "duplicate" && !(r.url in firstRow)) firstRow[r.url] = i + 1;
    });
    const rows = results.map((r, i) => {
      let [label, kind] = FATES[r.fate] || [r.fate, "neutral"];
      if (r.fate === "duplicate" && r.stage === "search") {
        const of = (r.reason || "").replace(/^duplicate_url_of:/, "");
        [label, kind] = [firstRow[of] ? `repeat of #${firstRow[of]}` : "repeat (same URL)", "neutral"];
      }
      return h(
        "tr",
        { "data-fate": r.fate, "data-url": r.url },
        h("td", { class: "num" }, String(i + 1)),
        h("td", {}, link(r.url, r.title || r.url), h("div", { class: "sub" }, domainOf(r.url))),
        h("td", { class: "query" }, r.query, h("div", { class: "sub" }, `${r.provider} #${r.rank + 1}`)),
        h("td", {}, h("span", { class: "fate fate-" + kind }, label)),
        h("td", { class: "reason" }, h("code", { title: r.reason || "" }, r.fate === "duplicate" && r.stage === "search" ? "duplicate_url" : r.reason || ""), h("div", { class: "sub" }, r.stage ? `decided at ${r.stage}` : "")),
        h("td", { class: "num" }, r.candidate === null || r.candidate === undefined ? "—" : `#${r.candidate + 1}`),
        h("td", { class: "num" }, fmtScore(r.score))
      );
    });
    const tbl = table("Search results and their fates", ["#", "Result", "Query", "Fate", "Reason", "Ranked", "Score"], rows, { class: "results stack" });
    tbl.querySelector("table").id = "results-table";
    filter.addEventListener("change", () => {
      tbl.querySelectorAll("tbody tr").forEach((tr) => {
        tr.hidden = !!filter.value && tr.dataset.fate !== filter.value;
      });
    });
    return section(
      "Search results",
      h("p", { class: "hint" }, "Every result of every query, in the order the search stage merged them; a URL another query already returned is a repeat (its fate is on its first row). Ranked: place in the project's ranking (pages are fetched from the top). Score: the page's best evidence passage."),
      h("div", { class: "row" }, h("label", { for: "fate-filter" }, "Show "), filter),
      tbl
    );
  }

  function renderRawFetches(t) {
    const rows = (t.fetches || []).map((f) => h("tr", {}, h("td", {}, link(f.url)), h("td", {}, f.outcome), h("td", { class: "num" }, String(f.status || "—"))));
    const sel = (t.selection || []).map((d) => h("tr", {}, h("td", {}, link(d.url)), h("td", {}, d.decision), h("td", {}, d.reason)));
    return h("div", {}, table("Fetches", ["URL", "Outcome", "HTTP"], rows, { showCaption: true }), table("Selection", ["URL", "Decision", "Reason"], sel, { showCaption: true }));
  }

  function renderCost(t) {
    const c = t.cost || {};
    const stages = Object.entries(c.by_stage_usd || {}).map(([k, v]) => h("tr", {}, h("th", { scope: "row" }, k), h("td", { class: "num" }, fmtUsd(v))));
    const models = Object.entries(c.tokens || {}).map(([k, v]) =>
      h("tr", {}, h("th", { scope: "row" }, k), h("td", { class: "num" }, String(v.prompt)), h("td", { class: "num" }, String(v.completion)))
    );
    return section(
      "Tokens and cost",
      h("p", {}, `Total ${fmtUsd(c.usd)} · ${c.prompt_tokens ?? 0} prompt + ${c.completion_tokens ?? 0} completion tokens · ${c.search_calls ?? 0} search calls · ${c.fetches ?? 0} fetches · evidence block ${t.evidence_tokens ?? 0} tokens`),
      stages.length ? table("Cost per stage", ["Stage", "USD"], stages, { showCaption: true }) : h("p", { class: "empty" }, "No stage cost anything."),
      models.length
        ? table("Model tokens (plan: planner model; compose: composer model; verify: judge model)", ["Model", "Prompt tokens", "Completion tokens"], models, { showCaption: true })
        : h("p", { class: "empty" }, "No model was called (extractive composer).")
    );
  }

  function renderCache(t) {
    const entries = Object.entries(t.cache || {});
    const rows = entries.map(([k, v]) => h("tr", {}, h("th", { scope: "row" }, k), h("td", {}, h("span", { class: "fate " + (v === "hit" || v === "revalidated" || v === "coalesced" ? "fate-good" : "fate-neutral") }, v))));
    return section("Cache", entries.length ? table("Cache outcome per layer", ["Layer", "Outcome"], rows) : h("p", { class: "empty" }, "No cache layer was consulted."), t.served_from ? h("p", {}, `This answer was served from the ${t.served_from}.`) : null);
  }

  function renderClaimsTable(t) {
    const all = [...(t.claims || []).map((c) => [c, "kept"]), ...(t.dropped_claims || []).map((c) => [c, "dropped"])];
    if (!all.length) return section("Claim verdicts", h("p", { class: "empty" }, "No draft sentences."));
    const rows = all.map(([c, where]) =>
      h(
        "tr",
        {},
        h("td", {}, where === "dropped" ? h("del", {}, c.text) : c.text),
        h("td", {}, (c.span_ids || []).join(", ") || "—"),
        h("td", {}, c.factual === false ? "not factual" : c.supported ? "supported" : "unsupported"),
        h("td", { class: "num" }, fmtScore(c.support_score)),
        h("td", {}, c.judged === null || c.judged === undefined ? "—" : c.judged ? "yes" : "no"),
        h("td", {}, where)
      )
    );
    return section("Claim verdicts", table("Claim verdicts", ["Sentence", "Spans", "Verdict", "Support", "Judge", "Kept"], rows, { class: "stack" }));
  }

  function renderEvidence(t) {
    const ev = t.evidence || [];
    return section(
      "Evidence",
      h("p", { class: "hint" }, `${ev.length} passages shown to the composer, best first.`),
      ev.map((e) =>
        h(
          "details",
          { class: "evidence", id: "ev-" + e.span_id },
          h("summary", {}, h("strong", {}, e.span_id), ` ${e.title || e.url} · ${e.kind} · score ${fmtScore(e.score)} · ${e.tokens} tokens`),
          h("p", { class: "sub" }, link(e.url), e.section ? ` · ${e.section}` : ""),
          h("p", { class: "passage" }, e.text)
        )
      )
    );
  }

  // Bars are positioned with CSSOM (inline style attributes would need 'unsafe-inline' in the CSP).
  function placeBars() {
    document.querySelectorAll(".bar[data-left]").forEach((b) => {
      b.style.marginLeft = b.dataset.left + "%";
      b.style.width = b.dataset.width + "%";
    });
  }

  // --- actions --------------------------------------------------------------------------------
  async function loadTrace(rid) {
    const res = await api("/v1/traces/" + encodeURIComponent(rid));
    return res.json();
  }

  function splitDomains(v) {
    return v
      .split(/[\s,]+/)
      .map((d) => d.trim())
      .filter(Boolean);
  }

  async function ask(e) {
    e.preventDefault();
    const q = $("q").value.trim();
    if (!q) return;
    const g = { verification: $("opt-verification").value, cache: $("opt-cache").value };
    const fresh = $("opt-freshness").value.trim();
    if (fresh) g.freshness_days = Number(fresh);
    const minSources = $("opt-min-sources").value.trim();
    if (minSources) g.min_sources = Number(minSources);
    const inc = splitDomains($("opt-include").value);
    const exc = splitDomains($("opt-exclude").value);
    if (inc.length) g.include_domains = inc;
    if (exc.length) g.exclude_domains = exc;
    const button = $("ask-button");
    button.disabled = true;
    setStatus("Searching, reading and composing…", "busy");
    try {
      const res = await api("/v1/grounded-answers", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ model: "grounded-answer", messages: [{ role: "user", content: q }], grounding: g }),
      });
      const body = await res.json();
      const rid = (body.grounding && body.grounding.request_id) || res.headers.get("x-request-id") || "";
      let trace = null;
      try {
        trace = await loadTrace(rid);
      } catch (err) {
        trace = null;
      }
      show(modelFromBody(body, trace, q), trace, "read");
      setStatus(`Answered: ${body.grounding.status} (request ${rid}).`, "ok");
    } catch (err) {
      setStatus(`The request failed: ${err.message}`, "error");
    } finally {
      button.disabled = false;
    }
  }

  function show(model, trace, view) {
    state.model = model;
    state.trace = trace;
    state.rid = model.rid || (trace && trace.request_id) || "";
    $("rid").value = state.rid;
    renderRead(model);
    renderTrace(trace);
    placeBars();
    showView(view);
  }

  async function open(rid, view = "read") {
    rid = rid.trim();
    if (!rid) return;
    setStatus(`Opening ${rid}…`, "busy");
    try {
      const trace = await loadTrace(rid);
      show(modelFromTrace(trace), trace, view);
      setStatus(`Opened request ${rid}.`, "ok");
    } catch (err) {
      setStatus(err.status === 404 ? `No trace for ${rid}: expired, never recorded, or asked with another key.` : `Could not open ${rid}: ${err.message}`, "error");
    }
  }

  async function probeKey() {
    // Does this service want a key (and is the one we hold accepted)?
    try {
      await api("/v1/models");
      if (!state.key) $("key-state").textContent = "No API key needed";
      return true;
    } catch (err) {
      return false;
    }
  }

  function route() {
    const m = location.hash.match(/^#(ask|read|trace)(?:\/(.+))?$/);
    const view = m ? m[1] : "ask";
    const rid = m && m[2] ? decodeURIComponent(m[2]) : "";
    if (rid && rid !== state.rid) open(rid, view);
    else showView(view, false);
  }

  function init() {
    showKeyState();
    $("key-form").addEventListener("submit", async (e) => {
      e.preventDefault();
      state.key = $("key-input").value.trim();
      if (state.key) sessionStorage.setItem(KEY_STORE, state.key);
      $("key-input").value = "";
      showKeyState();
      if (await probeKey()) {
        $("key-panel").hidden = true;
        setStatus("Key accepted.", "ok");
        // A request named in the address (#read/<id>, #trace/<id>) that waited for the key opens now.
        if (/^#(read|trace)\/./.test(location.hash) && !state.model) route();
        else $("q").focus();
      }
    });
    $("key-forget").addEventListener("click", () => {
      state.key = "";
      sessionStorage.removeItem(KEY_STORE);
      showKeyState();
      setStatus("Key forgotten.", "ok");
    });
    $("key-change").addEventListener("click", () => showKeyPanel(state.key ? "Type another key, or forget this one." : "Type the API key for this service."));
    $("ask-form").addEventListener("submit", ask);
    $("q").addEventListener("keydown", (e) => {
      if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) $("ask-form").requestSubmit();
    });
    $("open-form").addEventListener("submit", (e) => {
      e.preventDefault();
      open($("rid").value);
    });
    for (const v of ["ask", "read", "trace"]) {
      $("tab-" + v).addEventListener("click", (e) => {
        e.preventDefault();
        showView(v);
      });
    }
    for (const v of ["ask", "read", "trace"]) $(v + "-title").setAttribute("tabindex", "-1");
    document.addEventListener("keydown", (e) => {
      if (e.key === "Escape") hideTip();
    });
    window.addEventListener("hashchange", route);
    window.addEventListener("resize", hideTip);
    probeKey();
    route();
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();
