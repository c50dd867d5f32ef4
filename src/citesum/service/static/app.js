// citesum's page: ask, read the cited bullets, click a citation to see the sentence that supports it.
// Plain JavaScript, no dependencies; every text from the server is inserted as text, never as HTML.
"use strict";

const $ = (id) => document.getElementById(id);
let token = sessionStorage.getItem("citesum-token") || "";
let opener = null;  // what opened the document pane: the focus goes back to it when the pane closes

// an error's detail as a person reads it: its text, or an upload's refused files with their reasons
function detailText(detail) {
  if (typeof detail === "string") return detail;
  if (detail && Array.isArray(detail.refused)) {
    return `${detail.message}. ${detail.refused.map((r) => `${r.path}: ${r.reason}`).join("; ")}`;
  }
  return JSON.stringify(detail);
}

class ApiError extends Error {
  constructor(status, error, detail) {
    super(`${error}: ${detailText(detail)}`);
    this.status = status;
  }
}

// The service did not answer at all (stopped, or the network is down): said as such, not as "Failed to fetch"
class Unreachable extends Error {
  constructor() {
    super("The citesum service cannot be reached: it may have stopped, or the network is down. " +
          "Ask again once it is back.");
    this.name = "Unreachable";
  }
}

async function reach(path, init) {
  try {
    return await fetch(path, init);
  } catch (error) {
    if (error.name === "AbortError") throw error;
    throw new Unreachable();
  }
}

// A request's headers with the token, when one was given
function withToken(headers) {
  if (token) headers.set("Authorization", `Bearer ${token}`);
  return headers;
}

// A refused request's error, from its JSON body; refused for want of a (good) token, the page asks for one
async function refusal(response) {
  let body = null;
  try { body = await response.json(); } catch (_) { /* an empty or non-JSON answer */ }
  if (response.status === 401 || (response.status === 403 && body && body.error === "forbidden" &&
                                   String(body.detail).includes("token"))) {
    askForToken(response.status === 403 ? "The service refused this token." : "");
  }
  return new ApiError(response.status, (body && body.error) || response.statusText,
                      (body && body.detail) || `HTTP ${response.status}`);
}

async function api(path, options = {}) {
  const headers = withToken(new Headers(options.headers || {}));
  if (options.json !== undefined) {
    headers.set("Content-Type", "application/json");
    options = { ...options, body: JSON.stringify(options.json) };
  }
  const response = await reach(path, { ...options, headers });
  if (!response.ok) throw await refusal(response);
  try { return await response.json(); } catch (_) { return null; }  // an empty or non-JSON answer
}

function element(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attributes)) {
    if (key === "class") node.className = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value);
  }
  node.append(...children.filter((c) => c !== null && c !== undefined));
  return node;
}

// Each form has its own error box, so a message shows where the action was, not off-screen.
function showError(error, box = $("error")) {
  box.textContent = error ? String(error.message || error) : "";
  box.hidden = !error;
}

let busyTimer = null;

// ``message``, or nothing; with ``counting``, the seconds spent so far after it (a model on a CPU takes a while)
function setBusy(message, counting = false) {
  clearInterval(busyTimer);
  busyTimer = null;
  $("busy").textContent = message || "";
  if (!message || !counting) return;
  const started = Date.now();
  busyTimer = setInterval(() => {
    $("busy").textContent = `${message} ${Math.round((Date.now() - started) / 1000)} s`;
  }, 1000);
}

let summarizer = "";

// The token is asked for first, alone: the forms that need it come back once it is given (and the question that
// was refused for the want of it is asked again).
let askAgain = false;

function askForToken(message) {
  $("token-form").hidden = false;
  $("ask").hidden = true;
  $("upload").hidden = true;
  showError(message || null, $("token-error"));
  $("token").focus();
}

// Python counts characters by code point, JavaScript strings by UTF-16 unit: convert the server's offsets.
function utf16Offset(text, codePoints) {
  let units = 0;
  let seen = 0;
  for (const character of text) {
    if (seen === codePoints) break;
    units += character.length;
    seen += 1;
  }
  return units;
}

// The collection asked about: the one picked (kept for the next visit), or the service's first for this token;
// EVERY asks all the token's collections at once.
const EVERY = "*";
let heldCollections = [];

function collection() { return $("collection").value; }

// ``path`` with ``name`` (default: the collection picked) as its ``collection`` parameter (GET and upload
// requests name it so).
function inCollection(path, name = collection()) {
  if (!name || name === EVERY) return path;
  return path + (path.includes("?") ? "&" : "?") + "collection=" + encodeURIComponent(name);
}

// [collection, id] of a document named in an answer or a hit: an answer from every collection names it
// "COLLECTION/ID"; a hit from every collection says its collection.
function located(documentId, given) {
  if (given) return [given, documentId];
  if (collection() !== EVERY) return [collection(), documentId];
  const slash = documentId.indexOf("/");
  return [documentId.slice(0, slash), documentId.slice(slash + 1)];
}

// the request's collection, or its collections when every one is asked
function named(request) {
  if (collection() === EVERY) request.collections = heldCollections;
  else if (collection()) request.collection = collection();
  return request;
}

function showCollections(collections) {
  heldCollections = collections.map((c) => c.name);
  const wanted = new URLSearchParams(location.search).get("collection") || localStorage.getItem("citesum-collection");
  const choices = heldCollections.length > 1 ? [...heldCollections, EVERY] : heldCollections;
  fillSelect($("collection"), choices, { [EVERY]: "all of them" });
  if (wanted && choices.includes(wanted) && !$("collection").dataset.filled) $("collection").value = wanted;
  $("collection").dataset.filled = "1";
  $("collection-label").hidden = heldCollections.length < 2;  // one collection: nothing to pick
  const shown = collections.find((c) => c.name === collection());
  if (shown) return shown;
  // every collection: their documents and passages added up, the first one's offers
  const sum = (key) => collections.reduce((total, c) => total + c[key], 0);
  return { ...collections[0], documents: sum("documents"), units: sum("units") };
}

async function refreshStatus() {
  try {
    const health = await api("/health");
    summarizer = health.summarizer;
    const model = health.model || {};
    const shown = health.collections && health.collections.length ? showCollections(health.collections) : health;
    $("status").textContent = `${shown.documents} documents · ${shown.units} passages · ` +
      `summarizer: ${health.summarizer}` + (model.window ? ` (window ${model.window} tokens)` : "") +
      (model.budget_note ? ` · ${model.budget_note}` : "");
    $("upload").hidden = health.role === "read";  // a read token may not add documents
    // the service's default budget (lowered for a slow model) applies unless one is typed in
    const budget = $("budget");
    budget.placeholder = health.limits.budget;
    budget.max = health.limits.max_budget;
    $("bullets").max = health.limits.max_bullets;
    $("words").placeholder = health.limits.words;
    $("words").min = health.limits.min_words;
    $("words").max = health.limits.max_words;
    $("query").dataset.maxChars = health.limits.max_query_chars;
    $("k").max = health.limits.max_k;
    $("files").accept = health.limits.extensions.join(",");  // the picker offers the formats the service reads
    if (shown.offers) showOffers(shown.offers);
  } catch (error) {
    $("status").textContent = error.status === 503 ? `index unavailable: ${error.message}`
      : error.status === 401 || error.status === 403 ? "waiting for an access token" : "not connected";
  }
}

// What this service offers (its /health says): the retrievers, the writers, Summary RAG. A choice already made
// is kept when the lists are filled again.
const WRITERS = { llm: "the model", extractive: "sentences of the documents", readagent: "ReadAgent" };

function fillSelect(select, values, labels = {}) {
  const chosen = select.value;
  select.replaceChildren(...values.map((value) => {
    const option = document.createElement("option");
    option.value = value;
    option.textContent = labels[value] || value;
    return option;
  }));
  if (values.includes(chosen)) select.value = chosen;
}

// The retrievers as a reader knows them: what each matches (the name the API and the CLI take, after it)
const RETRIEVERS = {
  hybrid: "words and meaning (hybrid)", bm25: "words (bm25)", "bm25-rm3": "words, widened (bm25-rm3)",
  dense: "meaning (dense)", "dense-prf": "meaning, widened (dense-prf)", keywords: "keywords",
  lightpal: "passage graph (lightpal)", promptrank: "a language model's reading (promptrank)",
  random: "random passages (a baseline)", raptor: "tree of summaries (raptor)",
};

function showOffers(offers) {
  fillSelect($("retriever"), offers.retrievers, RETRIEVERS);
  if (!$("retriever").dataset.filled) { $("retriever").value = "hybrid"; $("retriever").dataset.filled = "1"; }
  fillSelect($("summarizer"), offers.summarizers, WRITERS);
  $("summary-index-label").hidden = !offers.summary_index || mode() === "search";
  $("summary-index-label").dataset.offered = offers.summary_index ? "1" : "";
  showMode();
}

function mode() { return document.querySelector("input[name=mode]:checked").value; }

function showMode() {
  const searching = mode() === "search";
  for (const label of document.querySelectorAll(".for-summarize")) label.hidden = searching;
  if (!$("summary-index-label").dataset.offered) $("summary-index-label").hidden = true;
  // RAPTOR's tree answers questions; a search ranks passages, which the tree's summaries are not
  const raptor = $("retriever").querySelector("option[value=raptor]");
  if (raptor) {
    raptor.disabled = searching;
    if (searching && $("retriever").value === "raptor") $("retriever").value = "hybrid";
  }
  for (const label of document.querySelectorAll(".for-search")) label.hidden = !searching;
  $("ask-button").textContent = searching ? "Search" : "Ask";
}

// The question asked last, and the request under way: a question asked while another is answered replaces it
// (the earlier one is cancelled, and its answer, should it still come, is not shown under the new question).
let turn = 0;
let underWay = null;
let stoppedByUser = false;

// Cancels the request under way (a new question, Back to the empty page, another collection): nothing of it is
// shown after; returns the new turn.
function cancelAsking() {
  turn += 1;
  if (underWay) underWay.abort();
  underWay = null;
  setBusy("");
  $("stop-button").hidden = true;
  $("ask-button").disabled = false;
  return turn;
}

async function ask(event) {
  event.preventDefault();
  const query = $("query").value;
  if (!query.trim()) { showError("Type a question first."); return; }
  const linked = fromLink;
  fromLink = false;
  const mine = cancelAsking();
  showError(null);
  $("answer").hidden = true;  // no answer to the previous question stays on screen meanwhile
  $("results").hidden = true;
  hideDocument();  // nor the document one of its citations opened
  const most = Number($("query").dataset.maxChars);
  const characters = [...query].length;  // as the service counts them: by code point
  if (most && characters > most) {  // said before it is sent
    showError(`The question has ${characters.toLocaleString()} characters; this service takes at most ` +
              `${most.toLocaleString()}.`);
    return;
  }
  const controller = new AbortController();
  underWay = controller;
  stoppedByUser = false;
  $("ask-button").disabled = true;
  const searching = mode() === "search";
  // the service's model writes unless the sentences of the documents are asked for
  const byModel = summarizer.startsWith("llm:") && $("summarizer").value !== "extractive";
  if (searching) setBusy("Searching…");
  else if (byModel) setBusy("Waiting for the model to write the summary…", true);
  else setBusy("Reading the documents and writing the summary…");
  const current = () => mine === turn;
  try {
    if (searching) {
      const request = named({ query, retriever: $("retriever").value, k: Number($("k").value) || 10 });
      const hits = await api("/search", { method: "POST", json: request, signal: controller.signal });
      if (current()) renderHits(hits);
    } else {
      const request = named({ query, retriever: $("retriever").value, bullets: Number($("bullets").value) || 5 });
      if ($("budget").value) request.budget = Number($("budget").value);
      if ($("words").value) request.words = Number($("words").value);
      if ($("summarizer").value) request.summarizer = $("summarizer").value;
      if (!$("summary-index-label").hidden && $("summary-index").checked) request.summary_index = true;
      // a streamed answer reads one collection: an answer from all of them comes whole
      const answer = request.collections ? await wholeSummary(request, controller.signal, current)
        : await streamSummary(request, controller, current);
      if (answer && current()) showKeep(answer, request, linked);
      if (byModel && current()) refreshStatus();  // the model's pace may have lowered the default budget
    }
    if (current()) setBusy("");
  } catch (error) {
    if (!current()) return;  // a newer question replaced this one: what became of it is no news
    setBusy("");
    if (error.name === "AbortError") return;
    if (error.status === 401 || error.status === 403 && !$("token-form").hidden) {
      askAgain = true;  // asked again once a token is given: the token form says what is wrong
      return;
    }
    showError(error);
    if (error instanceof Unreachable) $("status").textContent = "not connected";
  } finally {
    if (current()) {
      underWay = null;
      $("ask-button").disabled = false;
    }
  }
}

// The summary as the service writes it (server-sent events): the sources first, each bullet as soon as it is
// written and its citations checked, then the whole answer. Stop cancels the request, and the model's writing.
// ``current`` tells whether the question is still the one asked last: nothing is shown for one that is not.
async function wholeSummary(request, signal, current) {
  const answer = await api("/summarize", { method: "POST", json: request, signal });
  if (!current()) return null;
  startAnswer();
  renderSummary(answer);
  return answer;
}

async function streamSummary(request, controller, current) {
  $("stop-button").hidden = false;
  const headers = withToken(new Headers({ "Content-Type": "application/json" }));
  let started = false;
  try {
    const response = await reach("/summarize/stream", { method: "POST", headers, body: JSON.stringify(request),
                                                         signal: controller.signal });
    if (!response.ok) throw await refusal(response);  // refused before it began: JSON, as for any request
    let sources = {};
    let numbering = new Map();
    let done = null;
    for await (const [name, data] of serverEvents(response.body)) {
      if (!current()) return null;
      if (name === "context") {
        sources = data.sources;
        numbering = new Map();
        startAnswer();
        started = true;
      } else if (name === "bullet") {
        $("bullets-list").append(bulletItem(data, $("bullets-list").children.length, sources, numbering));
      } else if (name === "done") {
        renderSummary(data);
        done = data;
      } else if (name === "error") {
        throw new ApiError(data.status, data.error, data.detail);
      }
    }
    // the stream ended without its answer (a proxy's time limit, a worker that died): say so, not a short answer
    if (!done) throw new Error("The answer was cut off before it was complete; ask again.");
    return done;
  } catch (error) {
    if (!current()) return null;
    if (error.name === "TypeError") {  // the connection broke while the answer came
      throw new Error("The answer was cut off before it was complete: the service stopped answering; ask again.");
    }
    if (error.name !== "AbortError" || !stoppedByUser) throw error;
    if (!started) startAnswer();
    $("notes").textContent = $("bullets-list").children.length
      ? "Stopped: the bullets above are those written before you stopped."
      : "Stopped before the first bullet was written.";
    return null;
  } finally {
    if (current()) $("stop-button").hidden = true;
  }
}

// [name, data] of each event of a server-sent event stream
async function* serverEvents(body) {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += decoder.decode(value, { stream: true });
    let end;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let name = "message";
      let data = "";
      for (const line of block.split("\n")) {
        if (line.startsWith("event: ")) name = line.slice(7);
        else if (line.startsWith("data: ")) data += line.slice(6);
      }
      yield [name, JSON.parse(data)];
    }
  }
}

function startAnswer() {
  $("results").hidden = true;
  $("keep").hidden = true;
  $("bullets-list").textContent = "";
  $("leads").textContent = "";
  $("leads-section").hidden = true;
  $("sources").textContent = "";
  $("notes").textContent = "";
  $("notes").classList.remove("abstained");
  $("answer").hidden = false;
}

// Sources are numbered as a reader meets them: 1 for the first document the answer cites, and so on. The
// service's numbers are the context's (an answer may cite only its fourth document); the chips keep those in
// data-number.
function readerNumbers(items, numbering = new Map()) {
  for (const item of items) {
    for (const number of item.numbers || []) if (!numbering.has(number)) numbering.set(number, numbering.size + 1);
  }
  return numbering;
}

// the page a PDF's evidence is on, as a reader finds it: the number printed on it, when print has one
function printedPage(evidence) { return evidence.page_label || evidence.page; }

function bulletItem(bullet, index, sources, numbering) {
  readerNumbers([bullet], numbering);
  const chips = (bullet.evidence || []).map((evidence) => {
      const source = sources[String(evidence.number)] || {};
      const printed = printedPage(evidence);
      const page = evidence.page ? `, page ${printed}` : "";
      const readerNumber = readerNumbers([{ numbers: [evidence.number] }], numbering).get(evidence.number);
      const label = `Source ${readerNumber}: ${source.title || evidence.document_id}${page}` +
        (evidence.supported ? "" : " (does not clearly state this)");
      return element("button", {
        type: "button", class: evidence.supported ? "chip" : "chip unsupported", "aria-pressed": "false",
        "aria-label": label, title: label, "data-bullet": String(index), "data-number": String(evidence.number),
        "data-document": evidence.document_id,
        onclick: (event) => openDocument(evidence.document_id, {
          start: evidence.char_start, end: evidence.char_end, from: event.currentTarget,
          page: evidence.page, pageLabel: evidence.page_label, evidence: evidence.text,
          note: (evidence.supported ? "Highlighted: the sentence that supports the bullet"
                                    : "Highlighted: the closest sentence; it does not clearly state the bullet") +
                (evidence.page ? ` (page ${printed}).` : "."),
        }),
      }, evidence.page ? `[${readerNumber}, p. ${printed}]` : `[${readerNumber}]`);
    });
  return element("li", {}, bullet.text, ...chips, introducedCode(bullet));
}

// The code a bullet's sentence introduces ("... add the following line to your proftpd.conf:"), shown under
// it as the document shows it; null when there is none.
function introducedCode(bullet) {
  return bullet.code ? element("pre", { class: "introduced-code" }, element("code", {}, bullet.code)) : null;
}

// An answer people keep: Markdown with numbered references naming each document (and its page), and a link
// whose URL holds the question and the settings, which asks it again when opened.
function answerMarkdown(answer) {
  const leads = answer.bullets.length ? [] : answer.leads || [];
  const renumber = readerNumbers([...answer.bullets, ...leads]);
  const lines = [`**${answer.query.trim()}**`, ""];
  // each bullet's marks name the page its own evidence is on: two bullets may cite one book on two pages
  const listed = (item) => {
    const pages = new Map((item.evidence || item.places || []).filter((e) => e.page)
      .map((e) => [e.number, printedPage(e)]));
    lines.push(`- ${item.text} ` + item.numbers.map((n) =>
      pages.has(n) ? `[${renumber.get(n)}, p. ${pages.get(n)}]` : `[${renumber.get(n)}]`).join(""));
    if (item.code) lines.push("", ...["```", ...item.code.split("\n"), "```"].map((line) => `  ${line}`), "");
  };
  answer.bullets.forEach(listed);
  if (!answer.bullets.length) lines.push(`_${answer.notes.join(" ") || "No passage answers this."}_`);
  if (leads.length) lines.push("", "Closest passages (not answers):", "");
  leads.forEach(listed);
  if (renumber.size) lines.push("");
  for (const [number, readerNumber] of renumber) {
    const source = answer.sources[String(number)] || {};
    lines.push(`${readerNumber}. ${source.title || source.document_id} (${source.source || source.document_id})`);
  }
  return lines.join("\n") + "\n";
}

// The settings a link may give, each with its value when the link does not: a link asks as it says, whatever
// was chosen before it (Back to an earlier question asks it as it was asked).
const LINK_SETTINGS = [["retriever", "hybrid"], ["bullets", "5"], ["budget", ""], ["words", ""], ["summarizer", ""]];

function answerLink(request) {
  const url = new URL(location.pathname, location.origin);
  url.searchParams.set("q", request.query);
  for (const key of ["collection", ...LINK_SETTINGS.map(([setting]) => setting)]) {
    if (request[key] !== undefined) url.searchParams.set(key, String(request[key]));
  }
  if (request.collections) url.searchParams.set("collection", EVERY);
  if (request.summary_index) url.searchParams.set("summary_index", "1");
  return url.toString();
}

function showKeep(answer, request, linked) {
  const markdown = answerMarkdown(answer);
  $("markdown").value = markdown;
  $("markdown").hidden = true;
  $("kept").textContent = "";
  const link = answerLink(request);
  $("answer-link").href = link;
  // the address bar holds it too: a reload asks again, and Back goes to the question before (an answer to a
  // link, opened or gone Back to, keeps the link's entry)
  if (linked) history.replaceState(null, "", link);
  else history.pushState(null, "", link);
  const took = answer.timings && answer.timings.total_s;
  $("took").textContent = took === undefined ? "" : `Answered in ${took < 10 ? took.toFixed(1) : Math.round(took)} s.`;
  $("copy-markdown").onclick = async () => {
    try {
      await navigator.clipboard.writeText(markdown);
      $("kept").textContent = "Copied.";
    } catch (_) {  // no clipboard here (a page served over plain HTTP to another machine): select it to copy
      $("markdown").hidden = false;
      $("markdown").select();
      $("kept").textContent = "Select and copy the text below.";
    }
  };
  $("keep").hidden = false;
}

// A link to an answer (see answerLink) fills the form with its question and settings, and asks it.
let fromLink = false;  // the question asked comes from the address: its answer keeps that history entry

function askFromLink() {
  const params = new URLSearchParams(location.search);
  const query = params.get("q");
  if (!query) return;
  $("query").value = query;
  for (const [key, otherwise] of LINK_SETTINGS) {
    const value = params.get(key) ?? otherwise;
    const field = $(key);
    if (field.tagName === "SELECT" && value && ![...field.options].some((o) => o.value === value)) {
      field.append(element("option", { value }, value));  // a setting this service does not list: asked as is
    }
    field.value = value;
    // a list the link does not set shows the service's default, its first choice (it had shown nothing)
    if (field.tagName === "SELECT" && !value) field.selectedIndex = 0;
  }
  $("summary-index").checked = params.get("summary_index") === "1";
  const named = params.get("collection");
  if (named && [...$("collection").options].some((o) => o.value === named)) $("collection").value = named;
  document.querySelector("input[name=mode][value=summarize]").checked = true;
  showMode();
  fromLink = true;
  $("ask").requestSubmit();
}

function renderSummary(answer) {
  $("results").hidden = true;
  const list = $("bullets-list");
  list.textContent = "";
  const leads = answer.leads || [];
  const numbering = readerNumbers([...answer.bullets, ...leads]);
  answer.bullets.forEach((bullet, index) => list.append(bulletItem(bullet, index, answer.sources, numbering)));
  $("notes").textContent = [...answer.notes, ...(answer.dropped_citations.length
    ? [`Removed citations to documents that were not in the context: ${answer.dropped_citations.join(", ")}`] : [])]
    .join(" ");
  if (!answer.bullets.length && !answer.notes.length) $("notes").textContent = "No summary could be written.";
  // Nothing answers the question: the note says so first, then the closest sentences, apart from the answers,
  // as leads to follow up, never as cited bullets.
  const leadList = $("leads");
  leadList.textContent = "";
  for (const lead of leads) {
    // where the lead is in each document (and on which printed page of a PDF), as a bullet's evidence is
    const places = new Map((lead.places || []).map((place) => [place.number, place]));
    const chips = lead.numbers.map((number, i) => {
      const place = places.get(number) || {};
      const printed = place.page ? printedPage(place) : "";
      const label = `Open source ${numbering.get(number)}` + (printed ? `, page ${printed}` : "");
      return element("button", {
        type: "button", class: "chip", title: label, "aria-label": label, "data-number": String(number),
        onclick: (event) => openDocument(lead.citations[i], {
          from: event.currentTarget, quote: lead.text, start: place.char_start, end: place.char_end,
          page: place.page, pageLabel: place.page_label, evidence: lead.text,
          note: "A lead: the question's closest sentence, marked, is in this document" +
                (printed ? ` (page ${printed}).` : "."),
        }),
      }, printed ? `[${numbering.get(number)}, p. ${printed}]` : `[${numbering.get(number)}]`);
    });
    leadList.append(element("li", {}, lead.text, ...chips, introducedCode(lead)));
  }
  $("leads-section").hidden = !leads.length;
  $("notes").classList.toggle("abstained", Boolean(answer.abstained));
  const sources = $("sources");
  sources.textContent = "";
  for (const [number, readerNumber] of numbering) {
    const source = answer.sources[String(number)];
    if (!source) continue;
    sources.append(element("li", { value: String(readerNumber) },
      element("button", { type: "button", class: "link",
                          onclick: (event) => openDocument(source.document_id, { from: event.currentTarget }) },
        source.title || source.document_id),
      " ", element("span", { class: "meta" }, source.source),
      // an answer from every collection: which one holds the document (two may hold a file of the same name)
      collection() === EVERY ? element("span", { class: "meta" }, ` · in ${located(source.document_id)[0]}`)
        : null));
  }
  $("answer").hidden = false;
}

function renderHits(result) {
  $("answer").hidden = true;
  const list = $("hits");
  list.textContent = "";
  for (const hit of result.hits) {
    list.append(element("li", {},
      element("button", { type: "button", class: "link", onclick: (event) => openDocument(hit.document_id, {
        start: hit.char_start, end: hit.char_end, from: event.currentTarget, collection: hit.collection,
        note: "Highlighted: the passage found by the search." }) },
        hit.title || hit.document_id),
      " ", element("span", { class: "meta" }, `${hit.source} · score ${hit.score.toFixed(3)}`),
      element("span", { class: "snippet" }, hit.text)));
  }
  if (!result.hits.length) list.append(element("li", {}, "No passage matched."));
  $("results").hidden = false;
}

// A document's text as a reader sees it: the code fences that extraction puts around a block of code (a web
// page's <pre>, as Markdown writes it) are not shown. Applied to each piece of the text cut at the evidence.
// A piece of a document's text as the pane shows it: without the code fences the text marks code with, nor the
// permalink mark ("¶") that Sphinx and MkDocs end a heading with ("Summary¶")
function shown(text) {
  return text.replace(/^[ \t]*```[\w+-]*[ \t]*(?:\r\n|\n|\r|$)/gm, "").replace(/[\u00b6\uf0c1][ \t]*$/gm, "");
}

// A paragraph of prose that its file wraps at a fixed width (a README's lines cut at 72 characters), joined into
// one line for the pane to wrap at its own: wrapped twice, it showed ragged lines. Only prose: its lines are set
// in alike (a list item's go on under its text), none opens a list item, none is a table's row or code (a
// column's gap, a tab, a fence, a prompt), each but the last is long and does not end on a colon, and it ends a
// sentence. Returns the text and ``at``, which takes an offset of ``text`` to the same place in the result (the
// evidence is marked there: the whole paragraph is joined, the marked sentence in it too).
const WRAPPED_LINE = 40;
const LIST_MARK = /^(?:[-*+•]|\d{1,3}[.)])\s+/;
const NOT_PROSE = /\S {3,}\S|\t|^\s*(?:```|\||\$ |> |#)/;

function reflowed(text) {
  const joins = [];  // [start, end, what replaces it]: a line break and the indent after it
  let fenced = false;  // inside a fenced block: its lines are code
  let offset = 0;
  for (const [i, part] of text.split(/(\n[ \t]*\n)/).entries()) {
    const at = offset;
    offset += part.length;
    if (i % 2) continue;  // a blank line between paragraphs
    const lines = part.split("\n");
    const fences = lines.filter((line) => /^\s*```/.test(line)).length;
    const inCode = fenced || fences > 0;
    if (fences % 2) fenced = !fenced;
    if (inCode || lines.length < 2 || lines.some((line) => NOT_PROSE.test(line))) continue;
    const indent = (line) => line.length - line.trimStart().length;
    const opening = lines[0].trimStart().match(LIST_MARK);
    const under = indent(lines[0]) + (opening ? opening[0].length : 0);  // where the text of its lines starts
    const rest = lines.slice(1);
    if (under >= 8 || rest.some((line) => indent(line) !== under || LIST_MARK.test(line.trimStart()))) continue;
    if (lines.slice(0, -1).some((line) => line.trim().length < WRAPPED_LINE || /:\s*$/.test(line))) continue;
    // prose ends a sentence, and is words: code set in as deep rarely does either
    const words = part.replace(/[^\p{L}\s]/gu, "").length / part.length;
    if (!/[.!?]["')\]]?\s*$/.test(part) || words < 0.8) continue;
    let end = at;
    for (const line of lines.slice(0, -1)) {
      end += line.length;
      const kept = line.trimEnd().length - line.length;  // (negative: the spaces ending the line go too)
      // (a word cut at its hyphen, "application-" over "provided", is joined without a space)
      joins.push([end + kept, end + 1 + under, /\p{L}-$/u.test(line.trimEnd()) ? "" : " "]);
      end += 1;
    }
  }
  let result = "";
  let from = 0;
  for (const [start, end, joint] of joins) {
    result += text.slice(from, start) + joint;
    from = end;
  }
  result += text.slice(from);
  const at = (position) => {
    let shift = 0;
    for (const [start, end, joint] of joins) {
      if (position <= start) break;
      if (position < end) return start - shift + joint.length;  // inside a join: where it ends
      shift += end - start - joint.length;
    }
    return position - shift;
  };
  return { text: result, at };
}

function idPath(documentId) { return documentId.split("/").map(encodeURIComponent).join("/"); }

// Where the sentence ``quote`` (as an answer quotes it: its line breaks made spaces) stands in ``text``, as
// [from, to] in the string's own units; null when it is not found.
function quoted(text, quote) {
  const words = (quote || "").trim().split(/\s+/).filter(Boolean)
    .map((word) => word.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
  if (!words.length) return null;
  const found = new RegExp(words.join("\\s+")).exec(text);
  return found ? [found.index, found.index + found[0].length] : null;
}

async function openDocument(cited, { start, end, quote, from, note, page, pageLabel, evidence, collection: given }) {
  showError(null);
  const [name, documentId] = located(cited, given);
  try {
    const doc = await api(inCollection("/documents/" + idPath(documentId), name));
    $("doc-title").textContent = doc.title || doc.id;
    $("doc-source").textContent = doc.source;
    $("doc-note").textContent = note || "";
    const body = $("doc-text");
    body.textContent = "";
    let mark = null;
    // the evidence's offsets (code points, as the service counts), or a lead's sentence found in the text
    let span = null;
    if (start !== undefined && end !== undefined && end > start) {
      const from = utf16Offset(doc.text, start);
      span = [from, from + utf16Offset(doc.text.slice(from), end - start)];
    } else if (quote) {
      span = quoted(doc.text, quote);
    }
    if (span) {
      const [from, to] = span;
      const flowed = reflowed(doc.text);
      const [start, end] = [flowed.at(from), flowed.at(to)];
      mark = element("mark", { id: "evidence" }, shown(flowed.text.slice(start, end)));
      body.append(shown(flowed.text.slice(0, start)), mark, shown(flowed.text.slice(end)));
    } else {
      body.append(shown(reflowed(doc.text).text));
    }
    for (const pressed of document.querySelectorAll(".chip[aria-pressed=true]")) {
      pressed.setAttribute("aria-pressed", "false");
    }
    opener = from || null;
    if (opener && opener.classList.contains("chip")) opener.setAttribute("aria-pressed", "true");
    document.querySelector(".layout").classList.add("with-document");
    const pane = $("document");
    pane.hidden = false;
    pane.focus({ preventScroll: true });
    // a PDF's citation with a page: the page as printed, the sentence marked where it is printed
    const printable = doc.format === "pdf" && Boolean(page);
    $("doc-views").hidden = !printable;
    showView(printable ? "page" : "text");
    // the focus in what is shown, so that the keys that scroll (Page Down, the arrows, Space) scroll the document
    // (on the pane they scrolled the window); Escape still closes it
    $(printable ? "doc-page" : "doc-text").focus({ preventScroll: true });
    if (printable) await showPrintedPage(documentId, page, evidence, note, name, pageLabel);
    if (!printable) {
      if (mark) mark.scrollIntoView({ block: "center" });
      else body.scrollTop = 0;
    }
  } catch (error) {
    showError(error);
  }
}

// how large the printed page is drawn, as a share of the pane's width: a page of small print is not read at a
// pane's 400 pixels. The size stays from one page to the next, as a reader leaves it
const ZOOMS = [1, 1.5, 2, 2.5];
let pageZoom = 1;

function zoomPage(step) {
  const at = ZOOMS.indexOf(pageZoom);
  const next = ZOOMS[Math.min(ZOOMS.length - 1, Math.max(0, at + step))];
  if (next === pageZoom) return;  // at a limit: the reader's place stays as it is
  // the page grows around what the reader looks at: the marked sentence when it is in sight, else the middle
  // of the pane
  const pane = $("doc-page");
  const box = pane.querySelector(".box");
  const seen = pane.getBoundingClientRect();
  const marked = box && box.getBoundingClientRect();
  const inSight = marked && marked.right > seen.left && marked.left < seen.right
    && marked.bottom > seen.top && marked.top < seen.bottom;
  const middle = [(pane.scrollLeft + pane.clientWidth / 2) / pane.scrollWidth,
                  (pane.scrollTop + pane.clientHeight / 2) / pane.scrollHeight];
  pageZoom = next;
  showZoom();
  if (inSight) {
    box.scrollIntoView({ block: "center", inline: "center" });
  } else {
    pane.scrollLeft = middle[0] * pane.scrollWidth - pane.clientWidth / 2;
    pane.scrollTop = middle[1] * pane.scrollHeight - pane.clientHeight / 2;
  }
}

function showZoom() {
  $("doc-page").style.setProperty("--zoom", String(pageZoom));
  $("zoom-level").textContent = `${Math.round(pageZoom * 100)}%`;
  // (not disabled: a disabled button loses the focus, and the keys that zoom with it)
  $("zoom-out").setAttribute("aria-disabled", String(pageZoom === ZOOMS[0]));
  $("zoom-in").setAttribute("aria-disabled", String(pageZoom === ZOOMS[ZOOMS.length - 1]));
}

function showView(view) {
  $("doc-page").hidden = view !== "page";
  $("doc-text").hidden = view !== "text";
  $("doc-views").querySelector(".zoom").hidden = view !== "page";
  $("view-page").setAttribute("aria-pressed", String(view === "page"));
  $("view-text").setAttribute("aria-pressed", String(view === "text"));
  if (view === "text" && $("evidence")) $("evidence").scrollIntoView({ block: "center" });
}

let pageImage = null;  // the object URL of the page shown, released when another is

async function showPrintedPage(documentId, page, evidence, note, name, pageLabel) {
  const sheet = $("doc-page");
  sheet.textContent = "";
  try {
    const query = new URLSearchParams({ page: String(page) });
    if (evidence) query.set("evidence", evidence);
    const printed = await api(inCollection(`/printed/${idPath(documentId)}?${query}`, name));
    // drawn as wide as the pane shows it at the largest size, on this screen's pixels (the service draws 2,000 at
    // most)
    const width = Math.min(2000, Math.max(600, Math.round(sheet.clientWidth * ZOOMS[ZOOMS.length - 1]
                                                          * (window.devicePixelRatio || 1))));
    const response = await fetch(inCollection(`/printed-image/${idPath(documentId)}?page=${page}&width=${width}`, name),
                                 { headers: withToken(new Headers()) });
    if (!response.ok) throw new Error(`the page could not be drawn (HTTP ${response.status})`);
    if (pageImage) URL.revokeObjectURL(pageImage);
    pageImage = URL.createObjectURL(await response.blob());
    // the number printed on the page, and its place in the file when print numbers the pages otherwise
    const which = pageLabel && pageLabel !== String(page)
      ? `Page ${pageLabel} (page ${page} of ${printed.pages} in the file)` : `Page ${page} of ${printed.pages}`;
    const image = element("img", { id: "doc-page-image", src: pageImage, "data-page": String(page),
                                   alt: `${which}, as printed` });
    const boxes = printed.boxes.map(([x0, y0, x1, y1]) => {
      const box = element("div", { class: "box", "data-box": [x0, y0, x1, y1].join(",") });
      Object.assign(box.style, { left: `${x0 * 100}%`, top: `${y0 * 100}%`,
                                 width: `${(x1 - x0) * 100}%`, height: `${(y1 - y0) * 100}%` });
      return box;
    });
    sheet.append(element("div", { class: "sheet" }, image, ...boxes));
    $("doc-note").textContent = boxes.length
      ? `${which}, as printed: the sentence is marked where it is printed.`
      : `${which}, as printed. The sentence could not be found on the printed page: ` +
        "the Text view marks it.";
    if (boxes.length) {
      image.addEventListener("load", () => boxes[0].scrollIntoView({ block: "center", inline: "center" }));
    }
  } catch (error) {  // the file is gone or changed: the extracted text still shows the sentence
    $("doc-views").hidden = true;
    showView("text");
    $("doc-note").textContent = `${note || ""} (The printed page cannot be shown: ${error.message}.)`;
  }
}

function hideDocument() {
  $("document").hidden = true;
  document.querySelector(".layout").classList.remove("with-document");
}

function closeDocument() {
  hideDocument();
  if (opener) {
    if (opener.classList.contains("chip")) opener.setAttribute("aria-pressed", "false");
    opener.focus();
  }
}

async function upload(event) {
  event.preventDefault();
  const files = $("files").files;
  const box = $("upload-error");
  if (!files.length) { showError("Choose one or more files first.", box); return; }
  if (collection() === EVERY) { showError("Pick the collection to add the files to.", box); return; }
  showError(null, box);
  const form = new FormData();
  for (const file of files) form.append("files", file);
  $("upload-button").disabled = true;
  const status = $("job");
  status.textContent = "Uploading…";
  try {
    const accepted = await api(inCollection("/documents"), { method: "POST", body: form });
    await followJob(accepted.job, status);
    $("files").value = "";
    refreshStatus();
  } catch (error) {
    status.textContent = "";
    showError(error, box);
  } finally {
    $("upload-button").disabled = false;
  }
}

async function followJob(id, status) {
  for (;;) {
    const job = await api(`/jobs/${encodeURIComponent(id)}`);
    const { stage, done, total } = job.progress;
    status.textContent = `Job ${job.state}: ${stage}${total ? ` (${done}/${total})` : ""}`;
    if (job.state === "committed" || job.state === "failed") {
      // every file of the upload: indexed, skipped when read, or refused before (a format not read, a name)
      const report = element("ul", {}, ...job.files.map((file) => element("li",
        { class: file.status === "ingested" ? "" : "skipped", "data-status": file.status },
        `${file.path}: ${file.status === "ingested" ? `${file.documents} document(s)` : file.status}` +
        (file.reason ? ` — ${file.reason}` : ""))));
      status.textContent = job.state === "committed"
        ? `Indexed: ${job.stats.added} added, ${job.stats.updated} updated; searchable now.`
        : `Upload failed: ${job.error}`;
      status.append(report);
      return job;
    }
    await new Promise((resolve) => setTimeout(resolve, 400));
  }
}

async function useToken(event) {
  event.preventDefault();
  token = $("token").value.trim();
  sessionStorage.setItem("citesum-token", token);
  $("token-form").hidden = true;
  $("ask").hidden = false;
  showError(null);
  showError(null, $("token-error"));
  await refreshStatus();
  if (askAgain && $("token-form").hidden) {  // the token was taken
    askAgain = false;
    if ($("query").value.trim()) $("ask").requestSubmit();
  }
}

document.addEventListener("DOMContentLoaded", () => {
  $("ask").addEventListener("submit", ask);
  $("stop-button").addEventListener("click", () => {
    if (!underWay) return;
    stoppedByUser = true;
    underWay.abort();
  });
  // the browser's own checks (a budget under the minimum...) block a send: the last error is no longer news
  $("ask").addEventListener("invalid", () => showError(null), true);
  $("query").addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey) { event.preventDefault(); $("ask").requestSubmit(); }
  });
  for (const radio of document.querySelectorAll("input[name=mode]")) radio.addEventListener("change", showMode);
  $("collection").addEventListener("change", () => {
    localStorage.setItem("citesum-collection", collection());
    cancelAsking();  // an answer from another collection is not this one's, nor is one under way
    $("answer").hidden = true;
    $("results").hidden = true;
    refreshStatus();
  });
  $("upload").addEventListener("submit", upload);
  $("token-form").addEventListener("submit", useToken);
  $("close-doc").addEventListener("click", closeDocument);
  $("view-page").addEventListener("click", () => showView("page"));
  $("view-text").addEventListener("click", () => showView("text"));
  $("zoom-in").addEventListener("click", () => zoomPage(1));
  $("zoom-out").addEventListener("click", () => zoomPage(-1));
  // "+" and "-" on the printed page, as in a viewer of PDFs ("=" is "+" without Shift)
  $("doc-page").addEventListener("keydown", (event) => {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    const step = { "+": 1, "=": 1, "-": -1 }[event.key];
    if (step) { event.preventDefault(); zoomPage(step); }
  });
  showZoom();
  document.addEventListener("keydown", (event) => {
    if (event.key === "Escape" && !$("document").hidden) closeDocument();
  });
  // Back and Forward go through the questions asked here: each is asked again (an answer is not stored)
  window.addEventListener("popstate", () => {
    if (new URLSearchParams(location.search).get("q")) askFromLink();
    else {
      cancelAsking();
      $("query").value = "";
      $("answer").hidden = true;
      $("results").hidden = true;
      hideDocument();
    }
  });
  showMode();
  if (!new URLSearchParams(location.search).get("q")) $("query").focus();
  refreshStatus().then(askFromLink);  // the lists are filled first: a link's settings can then be chosen
});
